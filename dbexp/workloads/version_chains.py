"""Version chains on purpose: a few hot rows, an old snapshot, V committed updates, timed readers.

MySQL and MariaDB keep the newest version of a row in the clustered index and reach
older ones through undo records (new to old); PostgreSQL keeps every version in the
heap and reaches them from the oldest through a HOT chain or index entries (old to
new). With an old snapshot held open, neither engine may remove the old versions.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np

from dbexp.errors import DbexpError, choices
from dbexp.servers.flavor import Flavor

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


_q = Flavor.query  # (conn, sql, params=None) -> rows


def reset_table(server, spec: ChainSpec, database: str = "sbtest") -> None:
    conn = server.connect(database)
    try:
        pg = server.flavor.name == "postgres"
        _q(conn, f"DROP TABLE IF EXISTS {TABLE}")
        with_ff = f" WITH (fillfactor = {spec.fillfactor})" if pg else ""
        _q(conn, f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v INTEGER NOT NULL, "
                 f"pad CHAR(120) NOT NULL){with_ff}")
        _q(conn, f"CREATE INDEX {TABLE}_k ON {TABLE} (k)")
        values = ",".join(f"({i},{i},0,'x')" for i in range(1, spec.rows + 1))
        _q(conn, f"INSERT INTO {TABLE} (id, k, v, pad) VALUES {values}")
        if pg:
            _q(conn, f"VACUUM (ANALYZE) {TABLE}")
        else:
            _q(conn, f"ANALYZE TABLE {TABLE}")
    finally:
        conn.close()


def reader_setup(server, conn) -> None:
    """Fix the access path: a primary-key index lookup, whatever the statistics say."""
    if server.flavor.name == "postgres":
        _q(conn, "SET enable_seqscan = off")
        _q(conn, "SET enable_bitmapscan = off")


@contextlib.contextmanager
def old_snapshot(server, database: str = "sbtest"):
    """A REPEATABLE READ transaction whose snapshot is taken now and kept until the block ends."""
    conn = server.connect(database, autocommit=False)
    reader_setup(server, conn)
    try:
        if server.flavor.name == "postgres":
            _q(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ")
        else:
            _q(conn, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            _q(conn, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
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


def timed_reads(conn, spec: ChainSpec, samples: int) -> np.ndarray:
    """Latency (microseconds, at the client) of ``samples`` point selects of the hot rows."""
    ids = spec.hot_ids()
    out = np.empty(samples)
    cur = conn.cursor()
    for i in range(samples):
        t0 = time.perf_counter_ns()
        cur.execute(f"SELECT v, k FROM {TABLE} WHERE id = {ids[i % len(ids)]}")
        cur.fetchall()
        out[i] = (time.perf_counter_ns() - t0) / 1000.0
    cur.close()
    return out


def fresh_reader(server, database: str = "sbtest"):
    conn = server.connect(database, autocommit=True)  # every statement: a new view of the latest data
    reader_setup(server, conn)
    return conn


def read_value(conn, hot_id: int) -> int:
    return int(_q(conn, f"SELECT v + k FROM {TABLE} WHERE id = {hot_id}")[0][0])


def garbage(server, database: str = "sbtest") -> dict[str, float]:
    """The engine's own measure of unreclaimed old versions."""
    conn = server.connect(database)
    try:
        if server.flavor.name == "postgres":
            _q(conn, "SELECT pg_stat_clear_snapshot()")
            row = _q(conn, "SELECT n_dead_tup, n_live_tup, COALESCE(autovacuum_count, 0), "
                           f"pg_relation_size('{TABLE}') FROM pg_stat_user_tables WHERE relname = '{TABLE}'")
            dead, live, av, size = row[0] if row else (0, 0, 0, 0)
            return {"n_dead_tup": float(dead), "n_live_tup": float(live), "autovacuum_count": float(av),
                    "relation_bytes": float(size)}
        state = innodb_purge_state(_q(conn, "SHOW ENGINE INNODB STATUS")[0][2])
        # the history list length from InnoDB's metrics table; the status text prints the same counter
        hll = _q(conn, "SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'")
        if hll:
            state["history_list_length"] = float(hll[0][0])
        return state
    finally:
        conn.close()


def innodb_purge_state(status: str) -> dict[str, float]:
    """From SHOW ENGINE INNODB STATUS: the history list length (undo logs not yet freed, which
    InnoDB truncates lazily, in batches) and the purge lag: transactions committed since the last
    one whose old versions purge has removed ("Purge done for trx's n:o < N")."""
    import re

    def num(pattern: str) -> float:
        m = re.search(pattern, status)
        return float(m.group(1)) if m else float("nan")

    counter = num(r"Trx id counter (\d+)")
    done = num(r"Purge done for trx's n:o < (\d+)")
    return {"history_list_length": num(r"History list length (\d+)"), "trx_id_counter": counter,
            "purge_done_no": done, "purge_lag_trx": max(0.0, counter - done)}


def chain_on_page(server, conn_old, database: str = "sbtest") -> list[dict]:
    """PostgreSQL: the heap tuples of hot row id=1 on its page, followed from the version the old
    snapshot sees along t_ctid (pageinspect's heap_page_items)."""
    ctid = _q(conn_old, f"SELECT ctid::text FROM {TABLE} WHERE id = 1")[0][0]
    block, lp = (int(x) for x in ctid.strip("()").split(","))
    conn = server.connect(database)
    try:
        _q(conn, "CREATE EXTENSION IF NOT EXISTS pageinspect")
        rows = _q(conn, "SELECT lp, lp_flags, t_xmin::text::bigint, t_xmax::text::bigint, t_ctid::text, "
                        "t_infomask2 FROM heap_page_items(get_raw_page(%s, %s))", (TABLE, block))
    finally:
        conn.close()
    items = {r[0]: r for r in rows}
    chain, seen = [], set()
    cur = lp
    while cur in items and cur not in seen:
        seen.add(cur)
        lp_, flags, xmin, xmax, tctid, infomask2 = items[cur]
        nb, nl = (int(x) for x in (tctid or "(0,0)").strip("()").split(","))
        chain.append({"lp": lp_, "lp_flags": flags, "t_xmin": xmin, "t_xmax": xmax, "ctid_block": nb,
                      "ctid_lp": nl, "hot_updated": int(bool((infomask2 or 0) & 0x4000)),
                      "heap_only": int(bool((infomask2 or 0) & 0x8000)), "block": block})
        if nb != block or nl == cur:
            break  # the chain leaves the page (not HOT) or ends
        cur = nl
    return chain


def settle_garbage(server, database: str = "sbtest", timeout_s: float = 20.0) -> None:
    """Wait until InnoDB's purge has caught up with earlier work, so a point's garbage is its own.
    PostgreSQL's dead tuples are counted per table, and the table is new."""
    if server.flavor.name == "postgres":
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and garbage(server, database)["purge_lag_trx"] > 2:
        time.sleep(0.25)
