"""InnoDB's undo step by step (MySQL, MariaDB): what the source says of undo records and purge, observed on
one table of the server under test with the server's own counters (``information_schema.INNODB_METRICS``).

1. **Undo keeps the changed columns.** 2,000 rows of an integer and a 400-byte string; with a consistent
   snapshot open (so purge frees nothing), one statement updates every row's integer, another every row's
   string. The rollback segments' size (``trx_rseg_current_size``, pages of 16 KiB) grows by the undo each
   wrote: per row, a record of the changed column and the key (tens of bytes) for the integer, of the old
   400 bytes for the string. A copy of the row would make the two alike.
2. **Purge follows commits, not transaction starts.** The snapshot ends and purge catches up. A transaction
   updates one row and stays open, without a read view (an update reads the latest version); 300 other
   transactions commit updates of another row; purge's lag (SHOW ENGINE INNODB STATUS: the transaction
   counter less "Purge done for trx's n:o <", in transaction numbers, about 2 per commit: an id and a
   commit number; the history list's length is truncated lazily and lags by seconds), polled every 0.1 s
   for up to 10 s, should fall back, purge not held by the older, still open transaction. This tests the
   consequence the source draws from purge's commit order, not the order itself; and the status line is
   where purge's reader has got to, not what it has freed. The control:
   the same 300 commits while a consistent snapshot is open, which holds them for 3 s.
3. **Readers and writers do not wait for each other.** As on PostgreSQL (engines/page_mechanics.py): a read
   of a row a writer holds gets the committed value; an update of a row a consistent snapshot read commits
   (a lock wait timeout of 2 s), and the snapshot still sees the old value.
"""

from __future__ import annotations

import time

from dbexp.servers.sql import query

from .innodb import innodb_purge_state

TABLE = "mech"
ROWS = 2000
PAD = 400
PAGE_BYTES = 16384
COMMITS = 300
PURGE_WAIT_S = 10.0
HELD_WAIT_S = 3.0
LAG_DONE = 30  # purge's lag (transactions) below which it has caught up: a few in flight, not the 300


def _metric(conn, name: str) -> float:
    return float(query(conn, "SELECT count FROM information_schema.innodb_metrics WHERE name = %s", (name,))[0][0])


def _lag(conn) -> float:
    """Transaction numbers (an id and a commit number per transaction) drawn since the last one purge has done (SHOW ENGINE INNODB STATUS: the trx id counter
    less "Purge done for trx's n:o <"): the history list's length is truncated lazily, in batches, so it lags
    purge by seconds; this does not."""
    return innodb_purge_state(query(conn, "SHOW ENGINE INNODB STATUS")[0][2])["purge_lag_trx"]


def _drained(conn, below: float, timeout_s: float) -> tuple[float, float]:
    """Wait until purge's lag is below ``below`` (or ``timeout_s``): (the smallest lag seen, seconds)."""
    t = time.monotonic()
    least = _lag(conn)
    while least >= below and time.monotonic() - t < timeout_s:
        time.sleep(0.1)
        least = min(least, _lag(conn))
    return least, time.monotonic() - t


def observe(server, database: str = "sbtest") -> dict[str, tuple[float, str]]:
    """The three steps on ``server``: {measurement: (value, unit)}."""
    admin = server.connect(database, autocommit=True)
    m: dict[str, tuple[float, str]] = {}
    others = []
    try:
        query(admin, "SET GLOBAL innodb_monitor_enable = 'trx_rseg_current_size'")
        query(admin, f"DROP TABLE IF EXISTS {TABLE}")
        query(admin, f"CREATE TABLE {TABLE} (id int PRIMARY KEY, v int NOT NULL, pad varchar({PAD}) NOT NULL) "
                     "ENGINE=InnoDB")
        query(admin, f"INSERT INTO {TABLE} VALUES " + ",".join(f"({i}, 0, REPEAT('x', {PAD}))" for i in range(1, ROWS + 1)))
        base, _ = _drained(admin, LAG_DONE, PURGE_WAIT_S)
        # the declared starting state: the table's rows, and purge caught up with earlier work
        count = query(admin, f"SELECT COUNT(*) FROM {TABLE}")[0][0]
        m["precondition_ok"] = (float(count == ROWS and base < LAG_DONE), "bool")

        # 1. undo per row: the integer, then the string
        snap = server.connect(database, autocommit=False)
        others.append(snap)
        query(snap, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
        query(snap, f"SELECT v FROM {TABLE} WHERE id = 1")
        for name, sql in (("int", f"UPDATE {TABLE} SET v = v + 1"), ("string", f"UPDATE {TABLE} SET pad = REPEAT('y', {PAD})")):
            before = _metric(admin, "trx_rseg_current_size")
            query(admin, sql)
            m[f"undo_{name}_bytes_per_row"] = ((_metric(admin, "trx_rseg_current_size") - before) * PAGE_BYTES / ROWS,
                                               "bytes")
        snap.rollback()
        _drained(admin, LAG_DONE, PURGE_WAIT_S)

        # 2. purge with an older writer open, then with an older reader
        writer = server.connect(database, autocommit=False)
        others.append(writer)
        query(writer, f"UPDATE {TABLE} SET v = v + 1 WHERE id = 1")  # a transaction id, no read view
        for _ in range(COMMITS):
            query(admin, f"UPDATE {TABLE} SET v = v + 1 WHERE id = 2")
        m["lag_after_commits"] = (_lag(admin), "transactions")
        least, took = _drained(admin, LAG_DONE, PURGE_WAIT_S)
        m["lag_older_writer"] = (least, "transactions")
        m["purge_older_writer_s"] = (took, "s")
        writer.rollback()
        _drained(admin, LAG_DONE, PURGE_WAIT_S)
        reader = server.connect(database, autocommit=False)
        others.append(reader)
        query(reader, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
        query(reader, f"SELECT v FROM {TABLE} WHERE id = 1")
        for _ in range(COMMITS):
            query(admin, f"UPDATE {TABLE} SET v = v + 1 WHERE id = 2")
        least, _ = _drained(admin, LAG_DONE, HELD_WAIT_S)
        m["lag_older_reader"] = (least, "transactions")
        m["commits"] = (float(COMMITS), "transactions")
        reader.rollback()

        # 3. readers and writers
        committed = query(admin, f"SELECT v FROM {TABLE} WHERE id = 3")[0][0]
        query(writer, f"UPDATE {TABLE} SET v = v + 100 WHERE id = 3")  # locked, not committed
        t = time.monotonic()
        seen = query(admin, f"SELECT v FROM {TABLE} WHERE id = 3")[0][0]
        m["read_under_write_ms"] = ((time.monotonic() - t) * 1000, "ms")
        m["read_saw_committed"] = (float(seen == committed), "bool")
        writer.rollback()
        query(reader, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
        query(reader, f"SELECT v FROM {TABLE} WHERE id = 3")
        query(admin, "SET SESSION innodb_lock_wait_timeout = 2")
        t = time.monotonic()
        query(admin, f"UPDATE {TABLE} SET v = v + 1 WHERE id = 3")
        m["write_under_read_ms"] = ((time.monotonic() - t) * 1000, "ms")
        m["reader_still_sees_old"] = (float(query(reader, f"SELECT v FROM {TABLE} WHERE id = 3")[0][0] == committed), "bool")
        reader.rollback()
    finally:
        for conn in others:
            conn.close()
        admin.close()
    return m
