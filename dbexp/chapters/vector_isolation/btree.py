"""The post's B-tree case (seed 000, lines 1853-1859) and its discussion of plans (1889), run as trials like the
vector index's: a REPEATABLE READ transaction asks the same ordered query twice through a B-tree while a writer
commits rows inside the range the first answer covered, then asks it once more with another plan.

The table ``keyed (id, grp)`` is made anew for each point (ids 1..rows, grp a non-unique key: about rows / groups
rows share each value) with a B-tree index on grp. Each trial, one transaction with a grp value ``x`` of its own:

1. it begins REPEATABLE READ and reads the row count and largest id its snapshot sees (checked against what the
   lab wrote: the table grows by every trial's rows);
2. it asks ``grp <= x ORDER BY grp DESC LIMIT k`` through the index (a backward B-tree scan; the plan recorded);
3. where the engine shows its index pages, a monitor reads every leaf entry of the index (key, heap row);
4. a writer commits ``gap_writes`` rows whose grp lies inside the first answer's range (from its last row's grp
   up to ``x``), one row per transaction, at the same pace as the vector trials' writer;
5. the monitor reads the leaf entries again: entries that were there before and are gone (an index that only
   ever adds entries loses none) and entries added;
6. the reader asks the same query again through the index, then once more with another plan (no index: the rows
   read and sorted), and counts the rows its snapshot sees that share the first answer's last grp (the ties the
   LIMIT cut through);
7. after it commits, the monitor counts the rows the snapshot could not see inside the first answer's range:
   rows an ordered scan must pass on its way to the k-th row (the post's row B).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from dbexp.chapters.vector_isolation import dataset
from dbexp.chapters.vector_isolation.engines import VectorIndex
from dbexp.errors import DbexpError, RetryableError
from dbexp.experiments.measure import Measured, client_pinned, cpu_window


@dataclass(frozen=True)
class KeyedPoint:
    rows: int
    groups: int  # distinct grp values
    k: int
    transactions: int
    gap_writes: int
    rate: float  # the writer's pace, rows per second
    instance: int
    client_cpus: str
    kind: str = "btree"

    def __post_init__(self):
        if self.kind != "btree":
            raise DbexpError(f"bad kind {self.kind!r} for a B-tree point: expected 'btree'")
        if not 1 <= self.groups <= self.rows:
            raise DbexpError(f"bad groups {self.groups!r}: expected 1 to the rows ({self.rows})")
        if not self.rate > 0:
            raise DbexpError(f"bad writer rate {self.rate!r}: expected rows per second above 0")


def _paced(part: VectorIndex, conn, first_id: int, grps: np.ndarray, rate: float) -> float:
    """Insert one row per grp value, ids from ``first_id``, one per transaction at ``rate`` rows/s; the seconds."""
    t0 = time.perf_counter()
    for i, g in enumerate(grps):
        wait = t0 + i / rate - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        part.keyed_insert(conn, first_id + i, int(g))
    left = t0 + len(grps) / rate - time.perf_counter()
    if left > 0:
        time.sleep(left)
    return time.perf_counter() - t0


def _trial(part: VectorIndex, reader, monitor, writer, p: KeyedPoint, stream: int, j: int,
           pages: bool) -> dict[str, float]:
    rng = np.random.default_rng([dataset.SEED, stream, j])
    x = int(rng.integers(p.groups // 2, p.groups))
    written = j * p.gap_writes
    part.begin_repeatable_read(reader)
    start_rows, snap_max = _state(reader)
    if (start_rows, snap_max) != (p.rows + written, p.rows + written):
        raise RetryableError(f"B-tree trial {j} began on {start_rows} rows up to id {snap_max}, not the "
                             f"{p.rows + written} the lab wrote")
    first = part.keyed_rows(reader, x, p.k)
    plan1 = part.keyed_plan(reader, x, p.k)
    if len(first) < p.k:
        raise DbexpError(f"B-tree trial {j}: {len(first)} rows at grp <= {x}, fewer than k = {p.k}")
    lowest = first[-1][1]
    before = part.keyed_entries(monitor) if pages else None
    grps = np.random.default_rng([dataset.SEED, stream, j, 1]).integers(lowest, x + 1, p.gap_writes)
    took = _paced(part, writer, p.rows + written + 1, grps, p.rate)
    after = part.keyed_entries(monitor) if pages else None
    second = part.keyed_rows(reader, x, p.k)
    plan2 = part.keyed_plan(reader, x, p.k)
    ties = part.keyed_count(reader, lowest, lowest)
    other = part.keyed_rows(reader, x, p.k, index=False)  # last: another plan for the rest of the transaction
    plan_other = part.keyed_plan(reader, x, p.k, index=False)
    reader.commit()
    ids1, ids2, ids3 = [r[0] for r in first], [r[0] for r in second], [r[0] for r in other]
    rec = {
        "start_rows": float(start_rows), "x": float(x), "lowest": float(lowest),
        "set_changed": float(set(ids1) != set(ids2)), "order_changed": float(ids1 != ids2),
        "leaked": float(sum(1 for i in ids1 + ids2 if i > snap_max)),
        "plan_btree": float(plan1 == "btree" and plan2 == "btree"), "plan_changed": float(plan1 != plan2),
        "other_plan_sort": float(plan_other == "sort"),
        "other_set_differs": float(set(ids3) != set(ids1)), "other_order_differs": float(ids3 != ids1),
        "ties_straddle": float(ties > sum(1 for _, g in first if g == lowest)),
        "unseen_inside": float(part.keyed_count(monitor, lowest, x, snap_max)),
        "writes_between": float(len(grps)), "gap_s": took,
    }
    if before is not None:
        rec["entries_before"] = float(len(before))
        rec["entries_removed"] = float(len(before - after))
        rec["entries_added"] = float(len(after - before))
    return rec


def _state(conn) -> tuple[int, int]:
    with conn.cursor() as cur:
        cur.execute("SELECT count(*), max(id) FROM keyed")
        n, top = cur.fetchone()
        return int(n), int(top)


def measure_keyed(part: VectorIndex, server, p: KeyedPoint, stream: int) -> Measured:
    """The point's trials on a table made anew (see the module's docstring)."""
    m: dict[str, tuple[float | None, str]] = {}
    series: list[tuple] = []
    with client_pinned(p.client_cpus):
        monitor = part.connect(server)
        reader = part.connect(server, autocommit=False)
        writer = part.connect(server)
        try:
            part.keyed_make(monitor, p.rows, p.groups)
            if _state(monitor) != (p.rows, p.rows):
                raise RetryableError(f"the keyed table holds {_state(monitor)} rows and largest id, not {p.rows}")
            m["precondition_ok"] = (1.0, "bool")
            pages = part.keyed_entries(monitor) is not None
            recs = []
            with cpu_window(server, p.client_cpus) as cpu:
                for j in range(p.transactions):
                    rec = _trial(part, reader, monitor, writer, p, stream, j, pages)
                    recs.append(rec)
                    series += [(float(j), "btree", name, float(v)) for name, v in rec.items()]
            m.update(cpu)
        finally:
            for c in (reader, writer, monitor):
                c.close()
    for name in ("set_changed", "order_changed", "leaked", "plan_btree", "plan_changed", "other_set_differs",
                 "ties_straddle", "other_plan_sort"):
        m[f"btree_{name}"] = (float(sum(r[name] for r in recs)), "count")
    m["reader_transactions"] = (float(len(recs)), "count")
    if pages:
        m["entries_removed"] = (float(sum(r["entries_removed"] for r in recs)), "count")
        m["entries_added"] = (float(sum(r["entries_added"] for r in recs)), "count")
    m["active_servers"] = (1.0, "count")
    what = (f"{p.transactions} REPEATABLE READ trials through a B-tree on {p.rows:,} rows of {p.groups:,} keys, "
            f"k={p.k}; {p.gap_writes} rows inside the first answer's range at {p.rate:g} rows/s between")
    return Measured(m, [], series, what)
