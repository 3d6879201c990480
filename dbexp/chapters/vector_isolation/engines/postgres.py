"""pgvector's HNSW index on PostgreSQL (the lab's npm server with Debian's pgvector module laid in:
catalog variant ``postgres:17+pgvector``).

The pristine data set is a database of its own (``vectors_pristine``); every point starts from a copy
of it made with ``CREATE DATABASE ... TEMPLATE``, so every point's graph is the same graph, node for
node. Index pages written under a reader are the pages whose LSN passed the WAL position taken when
its snapshot began (``pageinspect``)."""

from __future__ import annotations

import struct
import time

from dbexp.chapters.vector_isolation.engines import (ANN_DATABASE, ANN_TABLE, DATABASE, KEYED, KEYED_INDEX, TABLE,
                                                      Search, VectorIndex)
from dbexp.errors import DbexpError

PRISTINE = f"{DATABASE}_pristine"
INDEX = f"{TABLE}_hnsw"
ANN_INDEX = f"{ANN_TABLE}_hnsw"
PAGE = 8192
LP_NORMAL = 1
NEIGHBOR_TUPLE = 2  # pgvector's HNSW_NEIGHBOR_TUPLE_TYPE: a tuple listing an element's neighbours (src/hnsw.h)


def page_items(page: bytes):
    """(offset number, tuple bytes) of each used line pointer of a PostgreSQL page (storage/bufpage.h: a 24-byte
    header whose pd_lower ends the line pointers; each pointer 32 bits: offset 15, flags 2, length 15)."""
    lower = struct.unpack_from("<H", page, 12)[0]
    for i in range((lower - 24) // 4):
        v = struct.unpack_from("<I", page, 24 + 4 * i)[0]
        off, flags, length = v & 0x7FFF, (v >> 15) & 3, v >> 17
        if flags == LP_NORMAL and length:
            yield i + 1, page[off:off + length]


def neighbour_tids(tup: bytes) -> frozenset:
    """The valid (block, offset) entries of a pgvector neighbour tuple: type (1 byte), version (1), count (2), then
    count item pointers of 6 bytes (block as two 16-bit halves, offset); an unused slot's offset is 0."""
    count = struct.unpack_from("<H", tup, 2)[0]
    out = set()
    for j in range(count):
        hi, lo, off = struct.unpack_from("<HHH", tup, 4 + 6 * j)
        if off:
            out.add(((hi << 16) | lo, off))
    return frozenset(out)


def _one(conn, sql: str, params=None):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchone()


def _run(conn, sql: str, params=None) -> None:
    with conn.cursor() as cur:
        cur.execute(sql, params)


def _plan_index(node: dict) -> str | None:
    """The first index a JSON plan node (or a node under it) scans."""
    if node.get("Index Name"):
        return str(node["Index Name"])
    for child in node.get("Plans", []):
        found = _plan_index(child)
        if found:
            return found
    return None


class Pgvector(VectorIndex):
    variant = "pgvector"
    label = "pgvector"
    search_setting = "hnsw.ef_search"
    iterative_modes = ("off", "relaxed_order", "strict_order")
    shows_pages = True  # pageinspect: get_raw_page, bt_page_items
    ann_storages = ("vector", "halfvec")  # float32, or float16 in the index only (the table keeps float32)

    def _recreate(self, admin, name: str, template: str | None = None) -> None:
        # WITH (FORCE) (13+): a connection a failed run left behind cannot keep the old copy alive
        _run(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        _run(admin, f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))

    def prepare(self, server, rows, m: int, ef_construction: int) -> dict[str, float]:
        from dbexp.chapters.vector_isolation.dataset import literal

        admin = server.connect()
        try:
            self._recreate(admin, PRISTINE)
        finally:
            admin.close()
        conn = server.connect(PRISTINE)
        try:
            _run(conn, "CREATE EXTENSION vector")
            _run(conn, "CREATE EXTENSION pageinspect")
            _run(conn, f"CREATE TABLE {TABLE} (id integer PRIMARY KEY, embedding vector({rows.shape[1]}) NOT NULL)")
            with conn.cursor() as cur, cur.copy(f"COPY {TABLE} (id, embedding) FROM STDIN") as copy:
                for i, v in enumerate(rows, start=1):
                    copy.write_row((i, literal(v)))
            _run(conn, "SET maintenance_work_mem = '512MB'")  # the graph is built in memory
            t0 = time.perf_counter()
            _run(conn, f"CREATE INDEX {INDEX} ON {TABLE} USING hnsw (embedding vector_l2_ops) "
                       f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)})")
            build_s = time.perf_counter() - t0
            _run(conn, f"VACUUM (ANALYZE) {TABLE}")
            _run(conn, "CHECKPOINT")
            size = _one(conn, "SELECT pg_relation_size(%s)", (INDEX,))[0]
        finally:
            conn.close()
        self.restore(server)  # the table the points read: a copy of the pristine database
        return {"index_build_s": build_s, "index_bytes": float(size)}

    def restore(self, server) -> None:
        admin = server.connect()
        try:
            self._recreate(admin, DATABASE, template=PRISTINE)
        finally:
            admin.close()

    def state(self, conn) -> dict[str, float]:
        rows, max_id, checksum = _one(conn, f"SELECT count(*), max(id), round(sum(embedding[1])::numeric, 2) "
                                            f"FROM (SELECT id, embedding::real[] AS embedding FROM {TABLE}) t")
        valid = _one(conn, "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                           "WHERE c.relname = %s AND i.indisvalid", (INDEX,))[0]
        return {"rows": float(rows), "max_id": float(max_id), "checksum": float(checksum),
                "index_valid": float(valid)}

    def begin_repeatable_read(self, conn) -> None:
        _run(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ")
        _run(conn, "SELECT 1")  # the snapshot is taken at the transaction's first statement

    def set_search(self, conn, search: Search) -> None:
        if search.iterative not in self.iterative_modes:
            raise DbexpError(f"bad iterative scan {search.iterative!r}; pgvector knows "
                             f"{', '.join(self.iterative_modes)}")
        _run(conn, "LOAD 'vector'")  # its settings exist once the module is loaded
        _run(conn, f"SET hnsw.ef_search = {int(search.ef_search)}")
        _run(conn, f"SET hnsw.iterative_scan = {search.iterative}")
        _run(conn, f"SET enable_indexscan = {'off' if search.exact else 'on'}")

    def distance_sql(self, column: str) -> str:
        return f"({column} <-> %s::vector)"

    def _sql(self, k: int) -> str:
        return f"SELECT id FROM {TABLE} ORDER BY embedding <-> %s::vector LIMIT {int(k)}"

    def _exact_here(self, cur, search: Search) -> None:
        """An exact search inside a reader's transaction: no index scan for the rest of it (the session's
        setting comes back at its end; set_search turns it off for a whole exact-scan point)."""
        if search.exact:
            cur.execute("SET LOCAL enable_indexscan = off")

    def knn(self, conn, q: str, search: Search) -> list[int]:
        with conn.cursor() as cur:
            self._exact_here(cur, search)
            cur.execute(self._sql(search.k), (q,))
            return [int(r[0]) for r in cur.fetchall()]

    def plan(self, conn, q: str, search: Search) -> str:
        with conn.cursor() as cur:
            self._exact_here(cur, search)
        doc = _one(conn, "EXPLAIN (FORMAT JSON) " + self._sql(search.k), (q,))[0]
        doc = doc[0] if isinstance(doc, list) else doc
        return _plan_index(doc["Plan"]) or "exact"

    def insert(self, conn, row_id: int, v: str) -> None:
        _run(conn, f"INSERT INTO {TABLE} (id, embedding) VALUES (%s, %s::vector)", (row_id, v))

    def update(self, conn, row_id: int, v: str) -> None:
        _run(conn, f"UPDATE {TABLE} SET embedding = %s::vector WHERE id = %s", (v, row_id))

    def index_mark(self, conn):
        return str(_one(conn, "SELECT pg_current_wal_insert_lsn()")[0])

    def index_changed_since(self, conn, mark) -> tuple[float, float]:
        written, pages = _one(conn, "SELECT count(*) FILTER (WHERE (page_header(get_raw_page(%s, b::int))).lsn > %s::pg_lsn), "
                                    "count(*) FROM generate_series(0, pg_relation_size(%s) / 8192 - 1) b",
                              (INDEX, mark, INDEX))
        return float(written), float(pages)

    # --- the ann-benchmarks comparison ----------------------------------------------------------------------------
    def ann_load(self, server, rows) -> None:
        from dbexp.chapters.vector_isolation.dataset import literal

        self.ann_dims = int(rows.shape[1])
        admin = server.connect()
        try:
            self._recreate(admin, ANN_DATABASE)
        finally:
            admin.close()
        conn = self.ann_connect(server)
        try:
            _run(conn, "CREATE EXTENSION vector")
            _run(conn, f"CREATE TABLE {ANN_TABLE} (id integer PRIMARY KEY, embedding vector({self.ann_dims}) NOT NULL)")
            with conn.cursor() as cur, cur.copy(f"COPY {ANN_TABLE} (id, embedding) FROM STDIN") as copy:
                for i, v in enumerate(rows, start=1):
                    copy.write_row((i, literal(v)))
            _run(conn, f"VACUUM (ANALYZE) {ANN_TABLE}")
        finally:
            conn.close()

    def _ann_expr(self, storage: str) -> tuple[str, str, str]:
        """(indexed expression, operator class, the query vector's cast) for ``storage``."""
        if storage == "vector":
            return "embedding", "vector_l2_ops", "%s::vector"
        if storage == "halfvec":
            d = int(self.ann_dims)
            return f"(embedding::halfvec({d}))", "halfvec_l2_ops", f"%s::halfvec({d})"
        raise DbexpError(f"bad storage {storage!r}; pgvector's ann part knows {', '.join(self.ann_storages)}")

    def ann_build(self, server, storage: str, m: int, ef_construction: int) -> dict[str, float]:
        expr, ops, _ = self._ann_expr(storage)
        conn = self.ann_connect(server)
        try:
            _run(conn, f"DROP INDEX IF EXISTS {ANN_INDEX}")
            _run(conn, "CHECKPOINT")
            _run(conn, "SET maintenance_work_mem = '512MB'")  # the graph is built in memory
            _run(conn, "SET max_parallel_maintenance_workers = 0")  # as the post's runs: no parallel build
            t0 = time.perf_counter()
            _run(conn, f"CREATE INDEX {ANN_INDEX} ON {ANN_TABLE} USING hnsw ({expr} {ops}) "
                       f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)})")
            build_s = time.perf_counter() - t0
            size = _one(conn, "SELECT pg_relation_size(%s)", (ANN_INDEX,))[0]
        finally:
            conn.close()
        return {"index_build_s": build_s, "index_bytes": float(size)}

    def _ann_sql(self, storage: str, k: int) -> str:
        expr, _, cast = self._ann_expr(storage)
        return f"SELECT id FROM {ANN_TABLE} ORDER BY {expr} <-> {cast} LIMIT {int(k)}"

    def ann_knn(self, conn, q: str, storage: str, k: int) -> list[int]:
        with conn.cursor() as cur:
            cur.execute(self._ann_sql(storage, k), (q,))
            return [int(r[0]) for r in cur.fetchall()]

    def ann_plan(self, conn, q: str, storage: str, k: int) -> str:
        doc = _one(conn, "EXPLAIN (FORMAT JSON) " + self._ann_sql(storage, k), (q,))[0]
        doc = doc[0] if isinstance(doc, list) else doc
        return _plan_index(doc["Plan"]) or "exact"

    # --- the B-tree ----------------------------------------------------------------------------------------------
    def keyed_analyze(self, conn) -> None:
        _run(conn, f"VACUUM (ANALYZE) {KEYED}")

    def _keyed_off(self, cur, index: bool) -> None:
        """Another plan for the rest of the transaction: no index scan of any kind (a sequential scan and a sort)."""
        if not index:
            for setting in ("enable_indexscan", "enable_bitmapscan", "enable_indexonlyscan"):
                cur.execute(f"SET LOCAL {setting} = off")

    def keyed_rows(self, conn, x: int, k: int, index: bool = True) -> list[tuple[int, int]]:
        with conn.cursor() as cur:
            self._keyed_off(cur, index)
            cur.execute(self.keyed_sql(k, index), (int(x),))
            return [(int(a), int(b)) for a, b in cur.fetchall()]

    def keyed_plan(self, conn, x: int, k: int, index: bool = True) -> str:
        with conn.cursor() as cur:
            self._keyed_off(cur, index)
        doc = _one(conn, "EXPLAIN (FORMAT JSON) " + self.keyed_sql(k, index), (int(x),))[0]
        doc = doc[0] if isinstance(doc, list) else doc
        return "btree" if _plan_index(doc["Plan"]) == KEYED_INDEX else "sort"

    def keyed_entries(self, conn) -> set:
        """(key bytes, heap row) of every leaf entry (pageinspect's bt_page_items, a posting list expanded by its
        tids, a plain entry its htid; the high key of a page with a right sibling left out: a copy of a key, not an
        entry)."""
        with conn.cursor() as cur:
            cur.execute(f"SELECT i.data, h FROM generate_series(1, pg_relation_size('{KEYED_INDEX}') / {PAGE} - 1) b, "
                        f"LATERAL bt_page_stats('{KEYED_INDEX}', b::int) s, "
                        f"LATERAL bt_page_items('{KEYED_INDEX}', b::int) i, "
                        "LATERAL unnest(COALESCE(i.tids, ARRAY[i.htid])) h "
                        "WHERE (s.type = 'l' OR (s.type = 'r' AND s.btpo_level = 0)) "
                        "AND NOT (s.btpo_next <> 0 AND i.itemoffset = 1) AND h IS NOT NULL")
            return {(str(d), str(h)) for d, h in cur.fetchall()}

    def neighbor_lists(self, conn) -> dict:
        with conn.cursor() as cur:
            cur.execute(f"SELECT b, get_raw_page('{INDEX}', b::int) FROM "
                        f"generate_series(1, pg_relation_size('{INDEX}') / {PAGE} - 1) b")
            out = {}
            for blk, page in cur.fetchall():
                for off, tup in page_items(bytes(page)):
                    if tup[0] == NEIGHBOR_TUPLE:
                        out[(int(blk), off)] = neighbour_tids(tup)
            return out
