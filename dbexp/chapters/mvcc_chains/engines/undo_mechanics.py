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
4. **Updated in place.** Step 1's table, its clustered index's pages in the buffer pool (``INNODB_BUFFER_PAGE``,
   the table's own tablespace, page type INDEX) counted before and after its 4,000 updates: the newest version
   stays where the row was, so the count should not change while the undo grows.
5. **One counter for ids and commit numbers.** 20 transactions each update a row of a table of their own and
   commit, one after another, InnoDB's transaction counter (SHOW ENGINE INNODB STATUS: "Trx id counter") read
   before and after each; then 20 that roll back, and 20 that only lock the row (``SELECT ... FOR UPDATE``: an
   id, no undo) and commit. Where a commit draws its commit number (``trx_no``) from the counter that gives out
   ids, a committed write moves it by 2 (its id and its number), a transaction with no undo to order by less. A
   rollback moves it by 2 as well: InnoDB ends a rollback with its commit (``trx_rollback_finish`` calls
   ``trx_commit``), which gives the emptied undo a number too.
6. **A transaction sees its own changes.** A consistent snapshot is taken; another session then commits a change
   of one row, and the snapshot's transaction changes another (its first write: a read-only transaction turned
   read-write). It should see its own change and not the other session's.
7. **LOB updates.** 100 rows of a JSON document of about 66 KB (stored off the page: several LOB pages each);
   with a consistent snapshot open (so nothing is freed), every row's 50-byte string is replaced by another of
   the same length, then every row's 2,000-byte string; after each, the table's LOB pages in the buffer pool
   (page types BLOB, LOB_FIRST, LOB_DATA, LOB_INDEX) and the rollback segments' size are read, and at the end
   the snapshot must still read every row's document as it was (their CRC32s summed) and a new read the changed
   one. With partial update (MySQL from 8.0.3, JSON_REPLACE of a value by one no longer), a change of at most 100
   bytes is written in place, its old bytes to undo (no new LOB page), and a larger one copies only the pages it
   touches; without it (5.7, MariaDB), any change writes the whole LOB anew and undo keeps only the reference.
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
IDS = 20  # transactions per kind (committed, rolled back) whose ids are read (step 5)
LOB_ROWS = 100
LOB_BIG = 64000  # bytes of the document's large string: with the rest, about 66 KB, several LOB pages
LOB_SMALL, LOB_LARGE = 50, 2000  # the replaced strings: at most 100 bytes changed, and more than 100
# InnoDB's large-object page types (INNODB_BUFFER_PAGE): 5.7 and MariaDB write BLOB pages, 8.0 and later a LOB's
# first page, its data pages and its index pages
LOB_PAGE_TYPES = ("BLOB", "LOB_FIRST", "LOB_DATA", "LOB_INDEX")


def _metric(conn, name: str) -> float:
    return float(query(conn, "SELECT count FROM information_schema.innodb_metrics WHERE name = %s", (name,))[0][0])


def _lag(conn) -> float:
    """Transaction numbers (an id and a commit number per transaction) drawn since the last one purge has done (SHOW ENGINE INNODB STATUS: the trx id counter
    less "Purge done for trx's n:o <"): the history list's length is truncated lazily, in batches, so it lags
    purge by seconds; this does not."""
    return innodb_purge_state(query(conn, "SHOW ENGINE INNODB STATUS")[0][2])["purge_lag_trx"]


def _space(conn, database: str, table: str) -> int:
    """The tablespace id of ``database.table`` (INNODB_TABLES from MySQL 8.0, INNODB_SYS_TABLES before it and in
    MariaDB: whichever information_schema has)."""
    have = {str(r[0]).upper() for r in query(
        conn, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'information_schema' "
              "AND TABLE_NAME IN ('INNODB_TABLES', 'INNODB_SYS_TABLES')")}
    view = "INNODB_TABLES" if "INNODB_TABLES" in have else "INNODB_SYS_TABLES"
    rows = query(conn, f"SELECT SPACE FROM information_schema.{view} WHERE NAME = %s", (f"{database}/{table}",))
    if not rows:
        raise RuntimeError(f"information_schema.{view} has no tablespace for {database}/{table}")
    return int(rows[0][0])


def _pages(conn, space: int) -> dict[str, int]:
    """The tablespace's pages in the buffer pool, by page type (INNODB_BUFFER_PAGE)."""
    rows = query(conn, "SELECT PAGE_TYPE, COUNT(*) FROM information_schema.INNODB_BUFFER_PAGE WHERE SPACE = %s "
                       "GROUP BY PAGE_TYPE", (space,))
    return {str(t): int(n) for t, n in rows}


def _lob_pages(conn, space: int) -> int:
    return sum(n for t, n in _pages(conn, space).items() if t in LOB_PAGE_TYPES)


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

        # 1. undo per row: the integer, then the string (4. the clustered index's pages before and after)
        space = _space(admin, database, TABLE)
        m["index_pages_before"] = (float(_pages(admin, space).get("INDEX", 0)), "pages")
        snap = server.connect(database, autocommit=False)
        others.append(snap)
        query(snap, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
        query(snap, f"SELECT v FROM {TABLE} WHERE id = 1")
        for name, sql in (("int", f"UPDATE {TABLE} SET v = v + 1"), ("string", f"UPDATE {TABLE} SET pad = REPEAT('y', {PAD})")):
            before = _metric(admin, "trx_rseg_current_size")
            query(admin, sql)
            m[f"undo_{name}_bytes_per_row"] = ((_metric(admin, "trx_rseg_current_size") - before) * PAGE_BYTES / ROWS,
                                               "bytes")
        m["index_pages_after"] = (float(_pages(admin, space).get("INDEX", 0)), "pages")
        m["updates_in_place"] = (float(2 * ROWS), "updates")
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

        _ids(server, admin, m, database)
        _own_changes(admin, reader, m)
        _lob(admin, reader, m, database)
    finally:
        for conn in others:
            conn.close()
        admin.close()
    return m


def _counter(conn) -> int:
    """InnoDB's transaction counter (SHOW ENGINE INNODB STATUS: "Trx id counter"), read where no cache lags it
    (information_schema.INNODB_TRX is refreshed at most every 0.1 s)."""
    return int(innodb_purge_state(query(conn, "SHOW ENGINE INNODB STATUS")[0][2])["trx_id_counter"])


def _ids(server, admin, m: dict, database: str) -> None:
    """5. What one transaction draws from the counter that gives out ids: a write committed, a write rolled back, a
    locking read committed (see the module's docstring), the counter read before and after each."""
    query(admin, "DROP TABLE IF EXISTS mech_ids")
    # no persistent statistics: their background updates would draw ids of their own
    query(admin, "CREATE TABLE mech_ids (id int PRIMARY KEY, v int NOT NULL) ENGINE=InnoDB STATS_PERSISTENT=0")
    query(admin, "INSERT INTO mech_ids VALUES (1, 0)")
    conn = server.connect(database, autocommit=False)
    try:
        drawn = {}
        for kind, sql, end in (("commit", "UPDATE mech_ids SET v = v + 1 WHERE id = 1", "commit"),
                               ("rollback", "UPDATE mech_ids SET v = v + 1 WHERE id = 1", "rollback"),
                               ("locking", "SELECT v FROM mech_ids WHERE id = 1 FOR UPDATE", "commit")):
            drawn[kind] = []
            for _ in range(IDS):
                before = _counter(admin)
                query(conn, sql)  # its first statement: a write (or a locking read) takes an id
                getattr(conn, end)()
                drawn[kind].append(_counter(admin) - before)
    finally:
        conn.close()
    for end, g in drawn.items():
        m[f"id_gap_after_{end}"] = (float(sorted(g)[len(g) // 2]), "ids")  # the median
        m[f"id_gaps_{end}_min"] = (float(min(g)), "ids")
        m[f"id_gaps_{end}_max"] = (float(max(g)), "ids")
    m["id_transactions"] = (float(IDS), "transactions")


def _own_changes(admin, reader, m: dict) -> None:
    """6. A consistent snapshot's transaction sees its own first write, not another session's later commit."""
    before = {i: query(admin, f"SELECT v FROM {TABLE} WHERE id = {i}")[0][0] for i in (4, 5)}
    query(reader, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
    query(reader, f"SELECT v FROM {TABLE} WHERE id = 4")  # the view, before either change
    query(admin, f"UPDATE {TABLE} SET v = v + 7 WHERE id = 4")  # another session's, committed
    query(reader, f"UPDATE {TABLE} SET v = v + 9 WHERE id = 5")  # its own first write
    m["own_change_seen"] = (float(query(reader, f"SELECT v FROM {TABLE} WHERE id = 5")[0][0] == before[5] + 9), "bool")
    m["other_change_hidden"] = (float(query(reader, f"SELECT v FROM {TABLE} WHERE id = 4")[0][0] == before[4]), "bool")
    reader.rollback()


def _lob(admin, snap, m: dict, database: str) -> None:
    """7. LOB pages and undo written by a small and a large change of a large JSON document (see the module's
    docstring), with a consistent snapshot open."""
    query(admin, "DROP TABLE IF EXISTS mech_lob")
    query(admin, "CREATE TABLE mech_lob (id int PRIMARY KEY, j JSON NOT NULL) ENGINE=InnoDB ROW_FORMAT=DYNAMIC")
    doc = (f"JSON_OBJECT('s', REPEAT('s', {LOB_SMALL}), 'm', REPEAT('m', {LOB_LARGE}), "
           f"'big', REPEAT('b', {LOB_BIG}))")
    query(admin, "INSERT INTO mech_lob VALUES " + ",".join(f"({i}, {doc})" for i in range(1, LOB_ROWS + 1)))
    _drained(admin, LAG_DONE, PURGE_WAIT_S)
    space = _space(admin, database, "mech_lob")
    pages = _lob_pages(admin, space)
    m["lob_rows"] = (float(LOB_ROWS), "rows")
    m["lob_doc_bytes"] = (float(query(admin, "SELECT LENGTH(j) FROM mech_lob WHERE id = 1")[0][0]), "bytes")
    m["lob_pages_per_row"] = (pages / LOB_ROWS, "pages")
    digest = "SELECT SUM(CRC32(j)), COUNT(*) FROM mech_lob"  # every document as its reader sees it
    query(snap, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
    first = query(snap, digest)[0]
    for name, key, size, fill in (("small", "s", LOB_SMALL, "t"), ("large", "m", LOB_LARGE, "n")):
        undo = _metric(admin, "trx_rseg_current_size")
        query(admin, f"UPDATE mech_lob SET j = JSON_REPLACE(j, '$.{key}', REPEAT('{fill}', {size}))")
        now = _lob_pages(admin, space)
        m[f"lob_{name}_new_pages_per_row"] = ((now - pages) / LOB_ROWS, "pages")
        m[f"lob_{name}_undo_bytes_per_row"] = ((_metric(admin, "trx_rseg_current_size") - undo) * PAGE_BYTES / LOB_ROWS,
                                               "bytes")
        m[f"lob_{name}_changed_bytes"] = (float(size), "bytes")
        pages = now
    m["lob_snapshot_sees_old"] = (float(tuple(query(snap, digest)[0]) == tuple(first)), "bool")
    m["lob_fresh_sees_new"] = (float(tuple(query(admin, digest)[0]) != tuple(first)), "bool")
    snap.rollback()
