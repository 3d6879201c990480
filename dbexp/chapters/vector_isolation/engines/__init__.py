"""What the chapter asks of an engine's vector index (:class:`VectorIndex`), one module per engine:
pgvector's HNSW on PostgreSQL (:mod:`.postgres`) and MariaDB's HNSW (:mod:`.mariadb`).

A part is built with the server's flavor (see :mod:`dbexp.servers.engines`). The chapter's table is
``items (id integer primary key, embedding <vector of dims>)`` with an HNSW index for Euclidean distance;
readers ask ``ORDER BY distance(embedding, q) LIMIT k``. All SQL of an engine lives in its part; the
measurement (:mod:`..measure`) only calls these methods.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

DATABASE = "vectors"
TABLE = "items"


@dataclass(frozen=True)
class Search:
    """How a reader searches: k rows, the HNSW candidate list (pgvector's ``hnsw.ef_search``, MariaDB's
    ``mhnsw_ef_search``), pgvector 0.8's iterative scan (``off``, ``relaxed_order``, ``strict_order``;
    ``off`` where the engine has none), or an exact scan that bypasses the index (the control)."""

    k: int
    ef_search: int
    iterative: str = "off"
    exact: bool = False


class VectorIndex(abc.ABC):
    """One engine's answers to the chapter's questions."""

    label = ""  # the index as the source and the page name it: "pgvector", "MariaDB"
    variant = ""  # the catalog variant a server needs for this part (postgres:17+pgvector), "" for none
    search_setting = ""  # the server's name for the candidate-list size
    iterative_modes: tuple[str, ...] = ("off",)  # the iterative-scan settings this engine knows
    shows_pages = False  # whether a client can read the index's pages (its neighbour lists, its B-tree entries)

    def __init__(self, flavor):
        self.flavor = flavor

    @classmethod
    def serves(cls, build) -> bool:
        """Whether a catalog build has this engine's vector index (default: the builds of ``variant``)."""
        return build.variant == cls.variant

    def start_settings(self) -> dict[str, str]:
        """Server start-up settings the chapter needs beyond the lab's comparable baseline: commits that
        do not wait for the disk (a writer's rate is then the index's work, not the VM's fsync; the
        visibility of a committed row does not depend on it)."""
        return self.flavor.capability("relaxed_commit").settings()

    # --- the data set ----------------------------------------------------------------------------
    @abc.abstractmethod
    def prepare(self, server, rows, m: int, ef_construction: int) -> dict[str, float]:
        """Make the pristine data set (``rows``: id i is rows[i - 1]) with its HNSW index, keep it where
        :meth:`restore` can copy it from; returns facts to store (build seconds, index bytes)."""

    @abc.abstractmethod
    def restore(self, server) -> None:
        """Put the table back to the pristine data set and index (every point starts from it)."""

    @abc.abstractmethod
    def state(self, conn) -> dict[str, float]:
        """The table's state as the server reports it: ``rows``, ``max_id``, ``checksum`` (sum of the
        first coordinates, see dataset.checksum) and ``index_valid`` (1 where the HNSW index exists)."""

    def connect(self, server, autocommit: bool = True):
        return server.connect(DATABASE, autocommit=autocommit)

    # --- readers ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def begin_repeatable_read(self, conn) -> None:
        """Begin a REPEATABLE READ transaction whose snapshot is taken now."""

    @abc.abstractmethod
    def set_search(self, conn, search: Search) -> None:
        """Session settings for ``search`` (candidate list, iterative scan, index or exact scan)."""

    @abc.abstractmethod
    def knn(self, conn, q: str, search: Search) -> list[int]:
        """The ids of the ``search.k`` nearest rows to ``q`` (a vector literal), nearest first, as
        ``search`` (and the session's settings from :meth:`set_search`) searches them."""

    @abc.abstractmethod
    def plan(self, conn, q: str, search: Search) -> str:
        """What the server's plan for that query reads: the vector index's name, or 'exact'."""

    def visible(self, conn, ids: list[int]) -> int:
        """How many of ``ids`` the transaction's snapshot sees."""
        if not ids:
            return 0
        with conn.cursor() as cur:
            cur.execute(f"SELECT count(*) FROM {TABLE} WHERE id IN ({','.join(str(int(i)) for i in ids)})")
            return int(cur.fetchone()[0])

    def max_id(self, conn) -> int:
        with conn.cursor() as cur:
            cur.execute(f"SELECT max(id) FROM {TABLE}")
            return int(cur.fetchone()[0])

    def snapshot_state(self, conn) -> tuple[int, int]:
        """(rows, largest id) as the connection's snapshot sees the table."""
        with conn.cursor() as cur:
            cur.execute(f"SELECT count(*), max(id) FROM {TABLE}")
            rows, top = cur.fetchone()
            return int(rows), int(top)

    @abc.abstractmethod
    def distance_sql(self, column: str) -> str:
        """The engine's Euclidean distance between ``column`` and a vector literal parameter (%s)."""

    def nearer_than(self, conn, q: str, radius_id: int, above_id: int) -> int:
        """How many rows with an id above ``above_id`` lie nearer ``q`` than row ``radius_id`` does, as
        ``conn`` sees the table (an exact count, no index): asked after a reader's transaction, the rows
        its snapshot could not see that belonged among its first answer."""
        d = self.distance_sql
        with conn.cursor() as cur:
            cur.execute(f"SELECT count(*) FROM {TABLE} t WHERE t.id > %s AND {d('t.embedding')} < "
                        f"(SELECT {d('r.embedding')} FROM {TABLE} r WHERE r.id = %s)",
                        (int(above_id), q, q, int(radius_id)))
            return int(cur.fetchone()[0])

    # --- writers ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def insert(self, conn, row_id: int, v: str) -> None: ...

    @abc.abstractmethod
    def update(self, conn, row_id: int, v: str) -> None: ...

    def delete(self, conn, row_id: int) -> None:
        with conn.cursor() as cur:
            cur.execute(f"DELETE FROM {TABLE} WHERE id = %s", (row_id,))

    # --- the index under the reader ----------------------------------------------------------------
    def index_mark(self, conn):
        """A mark of the index's state now (None where the engine shows none)."""
        return None

    def index_changed_since(self, conn, mark) -> tuple[float, float] | None:
        """(index pages written since ``mark``, index pages in all), or None where the engine shows none."""
        return None

    def graph_rows_updated(self, conn) -> float | None:
        """A counter of rows of the graph's own table updated in place so far (the server's total), or None
        where the graph is not a table of rows."""
        return None

    # --- the ann-benchmarks comparison (seed 002): its own table, an index per storage and m ------------------
    ann_storages: tuple[str, ...] = ()  # how the index stores the vectors, as this engine offers it

    @classmethod
    def ann_label(cls, storage: str) -> str:
        """The algorithm's name on the page ('pgvector halfvec', 'MariaDB')."""
        return cls.label if len(cls.ann_storages) == 1 else f"{cls.label} {storage}"

    def ann_connect(self, server, autocommit: bool = True):
        return server.connect(ANN_DATABASE, autocommit=autocommit)

    def ann_load(self, server, rows) -> None:
        """The ann set's table (``rows``: id i is rows[i - 1]) in a database of its own, without an index."""
        raise NotImplementedError(f"{self.label} has no ann-benchmarks part")

    def ann_build(self, server, storage: str, m: int, ef_construction: int) -> dict[str, float]:
        """Build the table's HNSW index for ``storage`` and ``m`` anew (the one before dropped): its build's
        seconds (``index_build_s``) and its bytes (``index_bytes``)."""
        raise NotImplementedError(f"{self.label} has no ann-benchmarks part")

    def ann_knn(self, conn, q: str, storage: str, k: int) -> list[int]:
        raise NotImplementedError(f"{self.label} has no ann-benchmarks part")

    def ann_plan(self, conn, q: str, storage: str, k: int) -> str:
        """What the ann query's plan reads: the index's name, or 'exact'."""
        raise NotImplementedError(f"{self.label} has no ann-benchmarks part")

    # --- a B-tree under the same trials (seed 000: 1853, 1889): table keyed (id, grp) with an index on grp ------
    def keyed_make(self, conn, rows: int, groups: int) -> None:
        """The table ``keyed`` made anew: ids 1..rows, grp = id * KEYED_STEP mod ``groups`` (a non-unique key, about
        rows / groups rows each), and a B-tree index on grp."""
        with conn.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {KEYED}")
            cur.execute(f"CREATE TABLE {KEYED} (id integer PRIMARY KEY, grp integer NOT NULL)")
            for start in range(1, rows + 1, 1000):
                values = ",".join(f"({i}, {i * KEYED_STEP % groups})" for i in range(start, min(rows, start + 999) + 1))
                cur.execute(f"INSERT INTO {KEYED} (id, grp) VALUES {values}")
            cur.execute(f"CREATE INDEX {KEYED_INDEX} ON {KEYED} (grp)")
        self.keyed_analyze(conn)

    def keyed_analyze(self, conn) -> None:
        with conn.cursor() as cur:
            cur.execute(f"ANALYZE TABLE {KEYED}")
            cur.fetchall()

    def keyed_sql(self, k: int, index: bool) -> str:
        """The rows at or below a grp value, highest grp first: through the B-tree (a backward scan) or, with
        ``index`` False, another plan (the whole table read and sorted)."""
        return f"SELECT id, grp FROM {KEYED} WHERE grp <= %s ORDER BY grp DESC LIMIT {int(k)}"

    def keyed_other_plan(self, conn) -> None:
        """Turn the B-tree off for the rest of the reader's transaction (engines that take a hint instead: none)."""

    def keyed_rows(self, conn, x: int, k: int, index: bool = True) -> list[tuple[int, int]]:
        with conn.cursor() as cur:
            cur.execute(self.keyed_sql(k, index), (int(x),))
            return [(int(a), int(b)) for a, b in cur.fetchall()]

    @abc.abstractmethod
    def keyed_plan(self, conn, x: int, k: int, index: bool = True) -> str:
        """'btree' where the plan reads keyed_grp, else 'sort'."""

    def keyed_insert(self, conn, row_id: int, grp: int) -> None:
        with conn.cursor() as cur:
            cur.execute(f"INSERT INTO {KEYED} (id, grp) VALUES (%s, %s)", (int(row_id), int(grp)))

    def keyed_count(self, conn, lo: int, hi: int, above_id: int = 0) -> int:
        """Rows with lo <= grp <= hi and an id above ``above_id``, as ``conn`` sees the table."""
        with conn.cursor() as cur:
            cur.execute(f"SELECT count(*) FROM {KEYED} WHERE grp BETWEEN %s AND %s AND id > %s",
                        (int(lo), int(hi), int(above_id)))
            return int(cur.fetchone()[0])

    def keyed_entries(self, conn) -> set | None:
        """The B-tree's leaf entries as (key, heap row) pairs, posting lists expanded, or None where the engine
        shows no index page."""
        return None

    # --- the graph's neighbour lists as the index pages hold them (pgvector) ------------------------------------
    def neighbor_lists(self, conn) -> dict | None:
        """{(block, offset) of a neighbour list: frozenset of the (block, offset) of the elements it lists}, read
        from the index's pages, or None where the engine shows none."""
        return None


ANN_DATABASE = "ann"
ANN_TABLE = "ann"
KEYED = "keyed"
KEYED_INDEX = "keyed_grp"
KEYED_STEP = 7919  # a prime: grp = id * step mod groups spreads consecutive ids over the key's values
