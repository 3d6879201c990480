"""MariaDB's HNSW vector index (11.7 and later: ``VECTOR(n)`` columns, ``VECTOR INDEX``), on InnoDB.

The index's graph is stored in a hidden InnoDB table beside the data. The pristine rows are kept in a
table without an index (``items_base``); every point starts from ``items`` made anew from it and its index
built anew by the same inserts in id order. MariaDB shows nothing of the graph's pages to a client; what a
writer rewrote of it is counted as the rows of the graph's table it updated (its session's Handler_update)."""

from __future__ import annotations

import time

from dbexp.chapters.vector_isolation.engines import (ANN_DATABASE, ANN_TABLE, DATABASE, KEYED, KEYED_INDEX, TABLE,
                                                      Search, VectorIndex)
from dbexp.errors import DbexpError

BASE = f"{TABLE}_base"
ANN_BASE = f"{ANN_TABLE}_base"
ANN_INDEX = "ann_hnsw"
INDEX = "embedding_hnsw"
FIRST_VECTOR_INDEX = (11, 7)  # the release that brought VECTOR INDEX


def _run(conn, sql: str, params=None) -> None:
    with conn.cursor() as cur:
        cur.execute(sql, params)


def _one(conn, sql: str, params=None):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchone()


def _fill(conn, table: str, rows) -> None:
    """``table`` made anew without an index, ids 1.. holding ``rows``."""
    from dbexp.chapters.vector_isolation.dataset import literal

    dims = int(rows.shape[1])
    _run(conn, f"DROP TABLE IF EXISTS {table}")
    _run(conn, f"CREATE TABLE {table} (id INT PRIMARY KEY, embedding VECTOR({dims}) NOT NULL) ENGINE=InnoDB")
    batch = 500
    for start in range(0, len(rows), batch):
        chunk = rows[start:start + batch]
        values = ",".join(f"({start + j + 1}, VEC_FromText('{literal(v)}'))" for j, v in enumerate(chunk))
        _run(conn, f"INSERT INTO {table} (id, embedding) VALUES {values}")


def _graph_bytes(conn, database: str, table: str) -> float:
    """The bytes on disk of the graph's hidden table (table#i#01), by its tablespace's name ('#' is '@0023' on disk):
    InnoDB extends a file in steps (a megabyte and more), so a small graph's file holds free space too."""
    size = _one(conn, "SELECT COALESCE(SUM(file_size), 0) FROM information_schema.innodb_sys_tablespaces "
                      "WHERE name LIKE %s OR name LIKE %s",
                (f"{database}/{table}#i#%", f"{database}/{table}@0023i@0023%"))[0]
    return float(size or 0)


class MariaDBVector(VectorIndex):
    label = "MariaDB"
    search_setting = "mhnsw_ef_search"
    ann_storages = ("mhnsw",)  # one storage: the index quantizes every vector itself (no setting)

    def __init__(self, flavor):
        super().__init__(flavor)
        self.dims = 0
        self.m = 0

    @classmethod
    def serves(cls, build) -> bool:
        """Builds of 11.7 and later (VECTOR INDEX came in 11.7)."""
        have = tuple(int(p) for p in build.version.split(".")[:2] if p.isdigit())
        return not build.variant and len(have) == 2 and have >= FIRST_VECTOR_INDEX

    def _create(self, conn) -> None:
        _run(conn, f"DROP TABLE IF EXISTS {TABLE}")
        _run(conn, f"CREATE TABLE {TABLE} (id INT PRIMARY KEY, embedding VECTOR({self.dims}) NOT NULL, "
                   f"VECTOR INDEX {INDEX} (embedding) M={self.m} DISTANCE=euclidean) ENGINE=InnoDB")
        t0 = time.perf_counter()
        _run(conn, f"INSERT INTO {TABLE} SELECT id, embedding FROM {BASE} ORDER BY id")
        self.build_s = time.perf_counter() - t0

    def prepare(self, server, rows, m: int, ef_construction: int) -> dict[str, float]:
        self.dims, self.m = int(rows.shape[1]), int(m)
        server.ensure_database(DATABASE)
        conn = self.connect(server)
        try:
            _fill(conn, BASE, rows)
            self._create(conn)
            size = _graph_bytes(conn, DATABASE, TABLE)
        finally:
            conn.close()
        return {"index_build_s": self.build_s, "index_bytes": size}

    def restore(self, server) -> None:
        if not self.dims:
            raise DbexpError("restore before prepare: the pristine rows were never made on this server")
        conn = self.connect(server)
        try:
            self._create(conn)
        finally:
            conn.close()

    def state(self, conn) -> dict[str, float]:
        rows, max_id = _one(conn, f"SELECT count(*), max(id) FROM {TABLE}")
        # the first coordinate of a VECTOR: its text form's first number
        checksum = _one(conn, f"SELECT ROUND(SUM(CAST(SUBSTRING_INDEX(SUBSTRING(VEC_ToText(embedding), 2), ',', 1) "
                              f"AS DOUBLE)), 2) FROM {TABLE}")[0]
        valid = _one(conn, "SELECT count(*) FROM information_schema.statistics WHERE table_schema = %s "
                           "AND table_name = %s AND index_name = %s", (DATABASE, TABLE, INDEX))[0]
        return {"rows": float(rows), "max_id": float(max_id), "checksum": float(checksum),
                "index_valid": float(valid > 0)}

    def begin_repeatable_read(self, conn) -> None:
        _run(conn, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        _run(conn, "START TRANSACTION WITH CONSISTENT SNAPSHOT")

    def set_search(self, conn, search: Search) -> None:
        if search.iterative != "off":
            raise DbexpError(f"bad iterative scan {search.iterative!r}: MariaDB's vector index has none (valid: off)")
        _run(conn, f"SET SESSION mhnsw_ef_search = {int(search.ef_search)}")

    def distance_sql(self, column: str) -> str:
        return f"VEC_DISTANCE_EUCLIDEAN({column}, VEC_FromText(%s))"

    def graph_rows_updated(self, conn) -> float:
        """The connection's own count of rows it updated (its session's Handler_update): a plain INSERT into the
        table updates none of the table's rows, so what an inserting writer's count grows by is rows of the
        graph's hidden table rewritten, the neighbour lists of nodes already in the graph
        (sql/vector_mhnsw.cc: update_second_degree_neighbors saves each changed neighbour)."""
        return float(_one(conn, "SHOW SESSION STATUS LIKE 'Handler_update'")[1])

    def _sql(self, search: Search) -> str:
        hint = f" IGNORE INDEX ({INDEX})" if search.exact else ""
        return (f"SELECT id FROM {TABLE}{hint} ORDER BY VEC_DISTANCE_EUCLIDEAN(embedding, VEC_FromText(%s)) "
                f"LIMIT {int(search.k)}")

    def knn(self, conn, q: str, search: Search) -> list[int]:
        with conn.cursor() as cur:
            cur.execute(self._sql(search), (q,))
            return [int(r[0]) for r in cur.fetchall()]

    def plan(self, conn, q: str, search: Search) -> str:
        with conn.cursor() as cur:
            cur.execute("EXPLAIN " + self._sql(search), (q,))
            names = [d[0] for d in cur.description]
            row = dict(zip(names, cur.fetchone()))
        return str(row.get("key") or "exact")

    def insert(self, conn, row_id: int, v: str) -> None:
        _run(conn, f"INSERT INTO {TABLE} (id, embedding) VALUES (%s, VEC_FromText(%s))", (row_id, v))

    def update(self, conn, row_id: int, v: str) -> None:
        _run(conn, f"UPDATE {TABLE} SET embedding = VEC_FromText(%s) WHERE id = %s", (v, row_id))

    # --- the ann-benchmarks comparison ----------------------------------------------------------------------------
    def ann_load(self, server, rows) -> None:
        self.ann_dims = int(rows.shape[1])
        server.ensure_database(ANN_DATABASE)
        conn = self.ann_connect(server)
        try:
            _fill(conn, ANN_BASE, rows)
        finally:
            conn.close()

    def ann_build(self, server, storage: str, m: int, ef_construction: int) -> dict[str, float]:
        """The indexed table made anew and filled from the plain one in id order (MariaDB builds its graph as the
        rows go in; it has no ef_construction); the same fill into a table without the index, timed just
        before, is the rows' own part of it (``table_fill_s``)."""
        if storage not in self.ann_storages:
            raise DbexpError(f"bad storage {storage!r}; MariaDB's ann part knows {', '.join(self.ann_storages)}")
        conn = self.ann_connect(server)
        try:
            d = int(self.ann_dims)
            _run(conn, f"DROP TABLE IF EXISTS {ANN_TABLE}")
            _run(conn, f"CREATE TABLE {ANN_TABLE} (id INT PRIMARY KEY, embedding VECTOR({d}) NOT NULL) ENGINE=InnoDB")
            t0 = time.perf_counter()
            _run(conn, f"INSERT INTO {ANN_TABLE} SELECT id, embedding FROM {ANN_BASE} ORDER BY id")
            fill_s = time.perf_counter() - t0
            _run(conn, f"DROP TABLE {ANN_TABLE}")
            _run(conn, f"CREATE TABLE {ANN_TABLE} (id INT PRIMARY KEY, embedding VECTOR({d}) NOT NULL, "
                       f"VECTOR INDEX {ANN_INDEX} (embedding) M={int(m)} DISTANCE=euclidean) ENGINE=InnoDB")
            t0 = time.perf_counter()
            _run(conn, f"INSERT INTO {ANN_TABLE} SELECT id, embedding FROM {ANN_BASE} ORDER BY id")
            build_s = time.perf_counter() - t0
            size = _graph_bytes(conn, ANN_DATABASE, ANN_TABLE)
        finally:
            conn.close()
        return {"index_build_s": build_s, "index_bytes": size, "table_fill_s": fill_s}

    def _ann_sql(self, k: int) -> str:
        return (f"SELECT id FROM {ANN_TABLE} ORDER BY VEC_DISTANCE_EUCLIDEAN(embedding, VEC_FromText(%s)) "
                f"LIMIT {int(k)}")

    def ann_knn(self, conn, q: str, storage: str, k: int) -> list[int]:
        with conn.cursor() as cur:
            cur.execute(self._ann_sql(k), (q,))
            return [int(r[0]) for r in cur.fetchall()]

    def ann_plan(self, conn, q: str, storage: str, k: int) -> str:
        with conn.cursor() as cur:
            cur.execute("EXPLAIN " + self._ann_sql(k), (q,))
            names = [d[0] for d in cur.description]
            row = dict(zip(names, cur.fetchone()))
        return str(row.get("key") or "exact")

    # --- the B-tree ----------------------------------------------------------------------------------------------
    def keyed_sql(self, k: int, index: bool) -> str:
        hint = "" if index else f" IGNORE INDEX ({KEYED_INDEX})"
        return f"SELECT id, grp FROM {KEYED}{hint} WHERE grp <= %s ORDER BY grp DESC LIMIT {int(k)}"

    def keyed_plan(self, conn, x: int, k: int, index: bool = True) -> str:
        with conn.cursor() as cur:
            cur.execute("EXPLAIN " + self.keyed_sql(k, index), (int(x),))
            names = [d[0] for d in cur.description]
            row = dict(zip(names, cur.fetchone()))
        return "btree" if row.get("key") == KEYED_INDEX else "sort"
