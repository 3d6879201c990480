"""What a row's visibility check costs against the size of the view (the visibility runs).

A consistent read checks every row version it meets against its view. InnoDB's check
(ReadView::changes_visible) returns at once for a row written by a transaction older than the view's
lowest listed id, and otherwise, where the writer is inside the view's range, searches the view's sorted
ids for it (a binary search); PostgreSQL's (XidInMVCCSnapshot) returns at once for an xid below the
snapshot's xmin and otherwise looks for it in the snapshot's array of running xids (an element at a time,
SIMD-assisted from 16). So two tables of the same rows are scanned in turns, with the point's H prepared
transactions held open:

- *old*: written when the server's session began, before any holder: every row older than the lowest
  listed id, the check's early return;
- *new*: emptied and written again by one committed transaction at the start of every run, after the
  holders began: every row inside the view's range and not listed, a search of the H ids.

Each scan (``SELECT SUM(v)``, the clustered index or the heap read row by row) is its own statement and
view; the client times each and the run stores the medians. Their difference over the rows is what the
search adds per row at this H; it costs nothing at H = 0, where the view lists nothing. A connection
holds a snapshot taken before the copy for the whole run, so that neither purge (MariaDB resets a row's
DB_TRX_ID once its history is purged) nor pruning turns the new rows into old ones during the scans.
"""

from __future__ import annotations

import statistics
import time
from contextlib import closing

from dbexp.experiments.measure import client_pinned
from dbexp.servers.sql import query

OLD, NEW = "dbexp_vis_old", "dbexp_vis_new"
ROWS = 4000  # rows of each table: each scan checks them all


def install(server, part, database: str, rows: int = ROWS) -> int:
    """Create both tables on ``server`` (its engine part ``part``) with ``rows`` rows, the old one's written now
    (before any holder): the id of the transaction that wrote it."""
    with closing(server.connect(database)) as conn:
        for table in (OLD, NEW):
            query(conn, f"DROP TABLE IF EXISTS {table}")
            query(conn, part.scan_table(table))
        return part.committed_write(conn, f"INSERT INTO {OLD} (id, v) SELECT n, 1 FROM ({part.numbers(rows)}) AS s")


def measure(server, part, database: str, seconds: float, cpuset: str | None, old_id: int | None) -> dict:
    """One visibility run on ``server`` with the point's holders already held: the holders' ids as the server
    lists them, the new table written again (its writer's id), a snapshot held open from before that write, then
    scans of the two tables in turns for ``seconds``: the measurements (name -> (value, unit))."""
    with closing(server.connect(database)) as conn, closing(server.connect(database)) as keeper:
        held = part.held_ids(conn)
        part.begin(keeper, snapshot=True)  # holds purge (and pruning) back from the rows written next
        new_id = part.refill(conn, NEW, OLD)
        rows = int(query(conn, f"SELECT COUNT(*) FROM {OLD}")[0][0])
        times: dict[str, list[int]] = {OLD: [], NEW: []}
        sums_ok = 0
        with client_pinned(cpuset):
            cur = conn.cursor()
            try:
                started = time.perf_counter()
                while time.perf_counter() - started < seconds or not times[OLD]:
                    for table in (NEW, OLD):
                        t0 = time.perf_counter_ns()
                        cur.execute(f"SELECT SUM(v) FROM {table}")
                        total = cur.fetchall()[0][0]
                        times[table].append(time.perf_counter_ns() - t0)
                        sums_ok += int(total or 0) == rows
            finally:
                cur.close()
        query(keeper, "COMMIT")
    old_ns, new_ns = statistics.median(times[OLD]), statistics.median(times[NEW])
    ordered = old_id is not None and (not held or (old_id < held[0] and held[-1] < new_id))
    return {"vis_rows": (float(rows), "count"), "vis_scans": (float(len(times[OLD]) + len(times[NEW])), "count"),
            "vis_sums_ok": (float(sums_ok), "count"),
            "vis_old_ns": (float(old_ns), "ns"), "vis_new_ns": (float(new_ns), "ns"),
            "vis_extra_ns_per_row": ((new_ns - old_ns) / rows, "ns"),
            "vis_old_ns_per_row": (old_ns / rows, "ns"),
            "vis_held": (float(len(held)), "count"), "vis_ids_ordered": (float(ordered), "bool"),
            "vis_old_id": (float(old_id) if old_id is not None else None, "count"),
            "vis_new_id": (float(new_id), "count"),
            "vis_held_min": (float(held[0]) if held else None, "count"),
            "vis_held_max": (float(held[-1]) if held else None, "count")}
