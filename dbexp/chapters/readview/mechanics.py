"""When a transaction's snapshot is taken and when it gets its id, tried on the server (the mechanics
runs): no timing, counts of what each trial saw.

A trial uses three connections: A, whose transaction is tried; B, another session that writes; C, a
fresh autocommit session that checks what is committed.

1. *Snapshot at BEGIN or at the first read.* A begins a REPEATABLE READ transaction and reads nothing;
   B commits a new row; C sees it committed; then A reads it. A sees the row where its snapshot was taken
   at its first read, not at BEGIN. The control does the same with the snapshot taken at BEGIN (MySQL's
   and MariaDB's START TRANSACTION WITH CONSISTENT SNAPSHOT; PostgreSQL's first statement, a SELECT 1):
   there A must not see it, which shows the trial can tell the two apart.
2. *An id at BEGIN or at the first write.* A, having only read, is asked for its id (none where it has
   none yet); B, begun after A, writes and takes an id (and, where SQL shows a snapshot's ids, C's
   snapshot is read while B is open: does it hold B as running, and only B? PostgreSQL's holds the newest
   running xid by its xmax without listing it); B commits; then A writes and is asked
   for its id again. An id taken at BEGIN would be smaller than B's; one taken at the first write larger.

The counts of a run (``mech_*``) are stored as its measurements.
"""

from __future__ import annotations

from contextlib import closing

from dbexp.servers.sql import query

TABLE = "dbexp_mechanics"
TRIALS = 10  # trials of the one mechanics run per server at default scale (each both parts and the control)
COUNTS = ("trials", "committed", "seen_after_begin", "control", "control_committed", "control_seen",
          "repeatable", "reader_no_id", "writer_id", "writer_listed", "only_writers_listed", "snapshot_read",
          "write_id", "later_id")


def _seen(conn, row: int) -> bool:
    return int(query(conn, f"SELECT COUNT(*) FROM {TABLE} WHERE id = {row}")[0][0]) == 1


def trials(server, part, n: int, database: str) -> dict[str, int]:
    """Run ``n`` trials of both parts and the control on ``server`` (its engine part ``part``): the counts
    of COUNTS (``writer_listed``, ``only_writers_listed`` and ``snapshot_read`` stay 0 where SQL shows no
    snapshot's ids)."""
    out = dict.fromkeys(COUNTS, 0)
    with closing(server.connect(database)) as a, closing(server.connect(database)) as b, \
            closing(server.connect(database)) as c:
        query(c, f"DROP TABLE IF EXISTS {TABLE}")
        query(c, f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
        for i in range(n):
            base = 10 * i + 1
            # 1. the snapshot: BEGIN, another session's commit, then the first read
            part.begin(a, snapshot=False)
            query(b, f"INSERT INTO {TABLE} (id, v) VALUES ({base}, 0)")
            out["committed"] += _seen(c, base)
            out["seen_after_begin"] += _seen(a, base)
            out["repeatable"] += part.isolation(a) == "repeatable read"
            # 2. the id: none after reading; a later transaction's write, then this one's
            out["reader_no_id"] += part.trx_id(a) is None
            part.begin(b, snapshot=False)
            query(b, f"INSERT INTO {TABLE} (id, v) VALUES ({base + 1}, 0)")
            other = part.trx_id(b)
            out["writer_id"] += other is not None
            listed = part.snapshot_ids(c, [other] if other is not None else [])
            if listed is not None:
                out["snapshot_read"] += 1
                out["writer_listed"] += other in listed
                out["only_writers_listed"] += listed == [other]
            query(b, "COMMIT")
            query(a, f"INSERT INTO {TABLE} (id, v) VALUES ({base + 2}, 0)")
            mine = part.trx_id(a)
            out["write_id"] += mine is not None
            out["later_id"] += mine is not None and other is not None and mine > other
            query(a, "COMMIT")
            # the control: the snapshot taken at BEGIN
            part.begin(a, snapshot=True)
            query(b, f"INSERT INTO {TABLE} (id, v) VALUES ({base + 3}, 0)")
            out["control_committed"] += _seen(c, base + 3)
            out["control_seen"] += _seen(a, base + 3)
            query(a, "COMMIT")
            out["control"] += 1
            out["trials"] += 1
    return out
