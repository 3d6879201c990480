"""pgvector's HNSW index on PostgreSQL (the lab's npm server with Debian's pgvector module laid in:
catalog variant ``postgres:17+pgvector``).

The pristine data set is a database of its own (``vectors_pristine``); every point starts from a copy
of it made with ``CREATE DATABASE ... TEMPLATE``, so every point's graph is the same graph, node for
node. Index pages written under a reader are the pages whose LSN passed the WAL position taken when
its snapshot began (``pageinspect``)."""

from __future__ import annotations

import time

from dbexp.chapters.vector_isolation.engines import DATABASE, TABLE, Search, VectorIndex
from dbexp.errors import DbexpError

PRISTINE = f"{DATABASE}_pristine"
INDEX = f"{TABLE}_hnsw"


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
