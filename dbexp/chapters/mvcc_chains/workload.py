"""Version chains on purpose: a ``chains`` table with a few hot rows, an old snapshot, V committed
updates, and point selects timed at the client and by the server's clock. What differs between
engines is asked of the server's engine part (``part``: ``chapter.PARTS.of(server.flavor)``, see
:mod:`dbexp.chapters.mvcc_chains.engines`), which the caller passes in."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np

from dbexp import waits
from dbexp.errors import DbexpError, RetryableError, choices
from dbexp.servers.sql import query

TABLE = "chains"
COLUMNS = ("v", "k")  # v: not indexed (HOT-eligible in PostgreSQL); k: indexed (never HOT)


@dataclass(frozen=True)
class ChainSpec:
    rows: int = 1000  # the table: cold rows around the hot ones
    hot: int = 2  # hot rows, spread over different pages
    column: str = "v"
    fillfactor: int = 100  # PostgreSQL only

    def __post_init__(self):
        if self.column not in COLUMNS:
            raise DbexpError(f"bad updated column {self.column!r}: valid are {choices(COLUMNS)}")
        if not 10 <= self.fillfactor <= 100:
            raise DbexpError(f"bad fillfactor {self.fillfactor!r}: expected 10 to 100")
        if not 1 <= self.hot <= self.rows:
            raise DbexpError(f"bad number of hot rows {self.hot!r}: expected 1 to {self.rows}")

    def hot_ids(self) -> list[int]:
        step = self.rows // self.hot
        return [1 + i * step for i in range(self.hot)]

    def cold_ids(self) -> list[int]:
        """A never-updated neighbour of each hot row (the next id, on the same page): what a read of
        that page costs with no versions to walk, measured beside the hot rows, in the same run."""
        hot = set(self.hot_ids())
        return [i + 1 if i + 1 not in hot and i + 1 <= self.rows else i - 1 for i in self.hot_ids()]


_q = query  # (conn, sql, params=None) -> rows


def reset_table(server, part, spec: ChainSpec, database: str = "sbtest") -> None:
    conn = server.connect(database)
    try:
        _q(conn, f"DROP TABLE IF EXISTS {TABLE}")
        _q(conn, f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v INTEGER NOT NULL, "
                 f"pad CHAR(120) NOT NULL){part.table_options(spec.fillfactor)}")
        _q(conn, f"CREATE INDEX {TABLE}_k ON {TABLE} (k)")
        values = ",".join(f"({i},{i},0,'x')" for i in range(1, spec.rows + 1))
        _q(conn, f"INSERT INTO {TABLE} (id, k, v, pad) VALUES {values}")
        part.analyze(conn, TABLE)
    finally:
        conn.close()


@contextlib.contextmanager
def old_snapshot(server, part, database: str = "sbtest"):
    """A REPEATABLE READ transaction whose snapshot is taken now and kept until the block ends."""
    conn = server.connect(database, autocommit=False)
    part.pin_index_access(conn)
    try:
        part.begin_snapshot(conn)
        _q(conn, f"SELECT v FROM {TABLE} WHERE id = 1")  # PostgreSQL takes the snapshot at the first read
        yield conn
    finally:
        with contextlib.suppress(Exception):
            conn.rollback()
        conn.close()


def update_hot_rows(server, spec: ChainSpec, versions: int, database: str = "sbtest") -> float:
    """Apply ``versions`` committed updates to each hot row, round-robin; returns seconds taken."""
    conn = server.connect(database, autocommit=True)
    try:
        cur = conn.cursor()
        started = time.perf_counter()
        for _ in range(versions):
            for hot_id in spec.hot_ids():
                cur.execute(f"UPDATE {TABLE} SET {spec.column} = {spec.column} + 1 WHERE id = {hot_id}")
        cur.close()
        return time.perf_counter() - started
    finally:
        conn.close()


@dataclass
class Reads:
    """One reader's timed point selects: latency at the client (one loopback round trip in it),
    time at the server by the server's own clock, (PostgreSQL) shared-buffer accesses per lookup and the
    primary-key index scans per lookup that each statement's checked plan ran (1: every lookup an index
    probe), and which statements read a hot row (the others read its cold neighbour)."""
    client_us: np.ndarray
    server_us: np.ndarray
    buffers: np.ndarray | None = None
    hot: np.ndarray | None = None  # bool per statement; None: every statement read a hot row
    probes: np.ndarray | None = None

    def part(self, hot: bool) -> "Reads":
        """The statements that read hot rows (or, ``hot=False``, their cold neighbours)."""
        mask = np.ones(len(self.client_us), bool) if self.hot is None else (self.hot if hot else ~self.hot)
        return Reads(self.client_us[mask], self.server_us[mask],
                     None if self.buffers is None else self.buffers[mask], None,
                     None if self.probes is None else self.probes[mask])

    @staticmethod
    def joined(parts: list["Reads"]) -> "Reads":
        def cat(name):
            got = [getattr(p, name) for p in parts if getattr(p, name) is not None]
            return np.concatenate(got) if got else None
        return Reads(cat("client_us"), cat("server_us"), cat("buffers"), cat("hot"), cat("probes"))


SELECT = f"SELECT v, k FROM {TABLE} WHERE id = "  # every timed read begins so (the clock finds them by it)


def timed_reads(conn, spec: ChainSpec, samples: int, clock, cold: bool = False) -> Reads:
    """``samples`` point selects of the hot rows, round-robin, each timed at the client and by
    ``clock`` at the server (see :mod:`dbexp.chapters.mvcc_chains.engines`); with ``cold``, every other select
    reads a hot row's cold neighbour instead (:meth:`ChainSpec.cold_ids`)."""
    hot_ids, cold_ids = spec.hot_ids(), spec.cold_ids()
    client = np.empty(samples)
    is_hot = np.array([not cold or i % 2 == 0 for i in range(samples)])
    cur = conn.cursor()
    clock.begin()
    for i in range(samples):
        k = (i // 2 if cold else i) % len(hot_ids)
        sql = clock.wrap(f"{SELECT}{(hot_ids if is_hot[i] else cold_ids)[k]}")
        t0 = time.perf_counter_ns()
        cur.execute(sql)
        rows = cur.fetchall()
        client[i] = (time.perf_counter_ns() - t0) / 1000.0 / getattr(clock, "loop", 1)  # per lookup
        clock.after(rows)
    cur.close()
    got = clock.end(samples)
    return Reads(client, got["server_us"], got.get("buffers"), is_hot if cold else None, got.get("probes"))


def fresh_reader(server, part, database: str = "sbtest"):
    conn = server.connect(database, autocommit=True)  # every statement: a new view of the latest data
    part.pin_index_access(conn)
    return conn


def update_kinds(server, part, commits: int, database: str = "sbtest", timeout_s: float = 10.0) -> dict[str, tuple[float, str]]:
    """How many of the point's ``commits`` updates the engine made, and how many of them were HOT, by its own
    counters (:meth:`~dbexp.chapters.mvcc_chains.engines.VersionStore.update_kinds`; empty where it has none),
    once they count them all (they arrive a moment after the writer's commits: a RetryableError after
    ``timeout_s``)."""
    conn = server.connect(database)
    try:
        seen: list[dict[str, float]] = []

        def counted() -> bool:
            seen.append(part.update_kinds(conn, TABLE))
            return not seen[-1] or seen[-1]["updates"] >= commits

        if not waits.poll(counted, timeout_s, interval_s=0.1):
            raise RetryableError(f"the server counted {seen[-1]['updates']:.0f} of the {commits} updates "
                                 f"within {timeout_s:.0f} s: cannot tell how many were HOT")
        return {name: (value, "count") for name, value in seen[-1].items()}
    finally:
        conn.close()


def read_value(conn, hot_id: int) -> int:
    return int(_q(conn, f"SELECT v + k FROM {TABLE} WHERE id = {hot_id}")[0][0])


def garbage(server, part, database: str = "sbtest") -> dict[str, float]:
    """The engine's own measure of unreclaimed old versions."""
    conn = server.connect(database)
    try:
        return part.garbage(conn, TABLE)
    finally:
        conn.close()


def chain_on_page(server, part, conn_old, database: str = "sbtest") -> list[dict]:
    """Heap engines: the stored versions of hot row id=1, from the one the old snapshot sees."""
    conn = server.connect(database)
    try:
        return part.version_chain(conn_old, conn, TABLE, 1)
    finally:
        conn.close()


def held_versions(server, part, hold_s: float = 3.0, database: str = "sbtest") -> dict[str, tuple[float, str]]:
    """Ask the collector to reclaim the table's old versions now; how many it could not remove."""
    conn = server.connect(database)
    try:
        return part.held_versions(conn, TABLE, hold_s)
    finally:
        conn.close()


def settle_garbage(server, part, database: str = "sbtest", timeout_s: float = 20.0) -> bool:
    """Wait until the collector has caught up with earlier work, so a point's garbage is its own;
    returns False when it had not within ``timeout_s``."""
    return bool(waits.poll(lambda: part.garbage_settled(garbage(server, part, database)), timeout_s, interval_s=0.25))
