"""MariaDB's HNSW vector index (11.7 and later: ``VECTOR(n)`` columns, ``VECTOR INDEX``), on InnoDB.

The index's graph is stored in a hidden InnoDB table beside the data. The pristine rows are kept in a
table without an index (``items_base``); every point starts from ``items`` made anew from it and its index
built anew by the same inserts in id order. MariaDB shows nothing of the graph's pages to a client; what a
writer rewrote of it is counted as the rows of the graph's table it updated (its session's Handler_update)."""

from __future__ import annotations

import time

from dbexp.chapters.vector_isolation.engines import DATABASE, TABLE, Search, VectorIndex
from dbexp.errors import DbexpError

BASE = f"{TABLE}_base"
INDEX = "embedding_hnsw"
FIRST_VECTOR_INDEX = (11, 7)  # the release that brought VECTOR INDEX


def _run(conn, sql: str, params=None) -> None:
    with conn.cursor() as cur:
        cur.execute(sql, params)


def _one(conn, sql: str, params=None):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchone()


class MariaDBVector(VectorIndex):
    label = "MariaDB"
    search_setting = "mhnsw_ef_search"

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
        from dbexp.chapters.vector_isolation.dataset import literal

        self.dims, self.m = int(rows.shape[1]), int(m)
        server.ensure_database(DATABASE)
        conn = self.connect(server)
        try:
            _run(conn, f"DROP TABLE IF EXISTS {BASE}")
            _run(conn, f"CREATE TABLE {BASE} (id INT PRIMARY KEY, embedding VECTOR({self.dims}) NOT NULL) "
                       "ENGINE=InnoDB")
            batch = 500
            for start in range(0, len(rows), batch):
                chunk = rows[start:start + batch]
                values = ",".join(f"({start + j + 1}, VEC_FromText('{literal(v)}'))" for j, v in enumerate(chunk))
                _run(conn, f"INSERT INTO {BASE} (id, embedding) VALUES {values}")
            self._create(conn)
            # the graph's hidden table (items#i#01), by its tablespace's name ('#' is '@0023' on disk)
            size = _one(conn, "SELECT COALESCE(SUM(file_size), 0) FROM information_schema.innodb_sys_tablespaces "
                              "WHERE name LIKE %s OR name LIKE %s",
                        (f"{DATABASE}/{TABLE}#i#%", f"{DATABASE}/{TABLE}@0023i@0023%"))[0]
        finally:
            conn.close()
        return {"index_build_s": self.build_s, "index_bytes": float(size or 0)}

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
