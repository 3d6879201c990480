"""One point: REPEATABLE READ trials that ask the same k-NN query twice while a writer commits rows between.

Each trial is one reader transaction with a query vector of its own (drawn for that trial alone: no two
trials of any point, server or instance share one), on one connection:

1. it begins REPEATABLE READ (the snapshot is taken at once) and reads the table's row count and largest id
   as its snapshot sees them: the trial's starting state, checked against what the lab wrote so far (the
   writes of the trials before it make every trial's state a new one);
2. it asks the k-NN query (``q1``) and notes its plan (``EXPLAIN`` right after it);
3. a writer connection commits ``gap_writes`` rows, one per transaction, paced at ``rate`` rows per second
   (the same pace on every engine, so the same rows and the same time lie between the two searches): rows
   drawn from the data set's mixture (``insert``), around the trial's query as its cluster spreads
   (``near``: rows written in the neighbourhood the query searches), or updates or deletes of base rows;
   with no writer the reader waits as long;
4. optionally (``reader_between``) another connection, with a snapshot of its own taken after the writes,
   asks the same query;
5. it asks the query again (``q2``, and its plan), then the exact answer in the same snapshot (no vector
   index: the snapshot's true k nearest), and looks up the rows ``q1`` returned and ``q2`` did not by id;
6. it commits; a monitor connection then counts the rows the snapshot could not see (ids above its largest)
   that lie nearer the query than ``q1``'s farthest row (they belonged among the first answer, had they been
   visible), and, where the engine shows them, the index pages written (pgvector: pages whose LSN passed the
   WAL position taken at the snapshot) or graph rows rewritten (MariaDB: the writer's own ``Handler_update``).

Every trial's record is stored as a series (source ``txn``, ``t`` the trial), so each changed answer is
classified from what was stored with it: cut short (fewer than k rows) or replaced (as many rows, others in
place of the lost ones), whether every lost row is still visible and among the exact answer, and whether rows
the snapshot could not see lay inside the first answer's radius.

Before the first trial the table is put back to the pristine data set (the same rows and, on PostgreSQL, the
same graph), and the state is checked: the rows, their checksum, the largest id and the index. A point whose
check fails is not measured: it raises, and the lab measures it again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from dbexp.chapters.vector_isolation import dataset
from dbexp.chapters.vector_isolation.engines import Search, VectorIndex
from dbexp.errors import DbexpError, RetryableError
from dbexp.experiments.measure import Measured, client_pinned, cpu_window

WRITERS = ("none", "insert", "near", "update", "delete")
KINDS = ("readers", "query_rate", "insert_rate", "graph")  # graph: the index's neighbour lists around the writes
NEW_ROWS = ("insert", "near")  # writers whose rows are new ids, above every id a snapshot saw
WARMUP_QUERIES = 20  # k-NN queries before the first trial: the copied index into the server's buffers
RATE_ALONE_STREAM = 500_000  # the rows the insert-rate point writes (no reader)


@dataclass(frozen=True)
class VectorPoint:
    kind: str  # readers: trials that ask twice; query_rate / insert_rate: throughput alone
    writer: str  # none | insert | near | update | delete: what the writer commits between a trial's two searches
    gap_writes: int  # rows the writer commits between them (with no writer: the reader waits as long)
    rate: float  # the writer's pace, rows per second (the same on every engine)
    k: int
    ef_search: int
    iterative: str  # pgvector's hnsw.iterative_scan (off where the engine has none)
    exact: bool  # True: the readers bypass the index (the control that must never differ)
    reader_between: bool  # another reader asks the same query after the writes, before the second search
    transactions: int  # trials (readers), or 0
    seconds: float  # throughput points: how long they run
    rows: int
    dims: int
    m: int
    ef_construction: int
    instance: int  # which independently started server this point ran on (0, 1, ...)
    client_cpus: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise DbexpError(f"bad point kind {self.kind!r}; valid are {', '.join(KINDS)}")
        if self.writer not in WRITERS:
            raise DbexpError(f"bad writer {self.writer!r}; valid are {', '.join(WRITERS)}")
        if not self.rate > 0:
            raise DbexpError(f"bad writer rate {self.rate!r}: expected rows per second above 0")

    @property
    def search(self) -> Search:
        return Search(self.k, self.ef_search, self.iterative, self.exact)

    @property
    def gap_s(self) -> float:
        """The time between a trial's two searches the pace sets (with no writer, the reader's wait)."""
        return self.gap_writes / self.rate


def point_stream(spec: str, p: VectorPoint, measured_before: int) -> int:
    """The random stream of one measurement of ``p`` on server ``spec``: every trial's query and rows derive
    from it and the trial's number, so no two trials of any point, server, instance or repeat share them
    (``measured_before``: how often this point was measured on this server already)."""
    return dataset.stream(spec, p.instance, p.kind, p.writer, p.gap_writes, p.k, p.ef_search, p.iterative,
                          p.exact, p.reader_between, p.m, p.rows, p.dims, measured_before)


class Writer:
    """One autocommit connection that commits rows, one per transaction, paced at ``p.rate`` rows per second;
    it knows what it wrote, so a trial's starting state can be checked against it."""

    def __init__(self, part: VectorIndex, server, p: VectorPoint, stream: int):
        self.part, self.p = part, p
        self.conn = part.connect(server)
        self.next_id = p.rows + 1  # insert / near: ids above every base row, growing
        order = np.random.default_rng([dataset.SEED, stream, 7]).permutation(np.arange(1, p.rows + 1))
        self.targets = order  # update / delete: base rows, each once
        self.count = 0

    def expected_state(self) -> tuple[int, int]:
        """(rows, largest id) the table holds after what this writer committed."""
        if self.p.writer in NEW_ROWS:
            return self.p.rows + self.count, self.p.rows + self.count
        if self.p.writer == "delete":
            gone = set(int(t) for t in self.targets[:self.count])
            return self.p.rows - self.count, max(i for i in range(self.p.rows, 0, -1) if i not in gone)
        return self.p.rows, self.p.rows

    def write(self, q: np.ndarray, stream: int) -> tuple[int, float]:
        """Commit ``p.gap_writes`` rows at the pace; (rows written, seconds they took). ``q``: the trial's
        query (the near writer's rows lie around it)."""
        p, n = self.p, self.p.gap_writes
        vectors = (dataset.near(q, n, stream) if p.writer == "near" else dataset.draw(p.dims, n, stream))
        t0 = time.perf_counter()
        for i in range(n):
            slot = t0 + i / p.rate
            wait = slot - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            v = dataset.literal(vectors[i])
            if p.writer in NEW_ROWS:
                self.part.insert(self.conn, self.next_id, v)
                self.next_id += 1
            elif p.writer == "update":
                self.part.update(self.conn, int(self.targets[self.count % len(self.targets)]), v)
            else:
                if self.count >= len(self.targets):
                    raise DbexpError(f"the delete writer ran out of rows after {self.count} deletes")
                self.part.delete(self.conn, int(self.targets[self.count]))
            self.count += 1
        end = t0 + n / p.rate  # the pace's last slot ends here: a writer on time takes exactly the gap
        left = end - time.perf_counter()
        if left > 0:
            time.sleep(left)
        return n, time.perf_counter() - t0

    def close(self) -> None:
        self.conn.close()


def check_state(part: VectorIndex, conn, p: VectorPoint, want_checksum: float) -> dict[str, float]:
    """The precondition: the pristine rows (count, largest id, checksum) and a valid index; raises a
    RetryableError naming what differs, else returns what was read."""
    st = part.state(conn)
    wrong = []
    if st["rows"] != p.rows or st["max_id"] != p.rows:
        wrong.append(f"{st['rows']:.0f} rows up to id {st['max_id']:.0f}, not {p.rows}")
    if abs(st["checksum"] - want_checksum) > 0.011:
        wrong.append(f"checksum {st['checksum']:.2f}, not {want_checksum:.2f}")
    if st["index_valid"] != 1:
        wrong.append("no valid HNSW index")
    if wrong:
        raise RetryableError("the table is not the pristine data set: " + "; ".join(wrong))
    return st


def classify(ids1: list[int], ids2: list[int], k: int) -> dict[str, float]:
    """What a trial's two answers say by themselves: whether the set changed, and how: cut short (the second
    answer holds fewer rows than the first and fewer than k) or replaced (as many rows, others in place of the
    lost ones); the rows lost and gained; whether the second answer is the first one's head (the same rows in
    the same order, cut off)."""
    s1, s2 = set(ids1), set(ids2)
    changed = s1 != s2
    short = changed and len(ids2) < len(ids1) and len(ids2) < k
    return {
        "rows1": float(len(ids1)), "rows2": float(len(ids2)),
        "set_changed": float(changed),
        "changed_shorter": float(short),
        "changed_replaced": float(changed and not short),
        "order_changed": float(ids1 != ids2),
        "order_only": float(ids1 != ids2 and not changed),
        "head_kept": float(changed and ids2 == ids1[:len(ids2)]),
        "lost": float(len(s1 - s2)), "gained": float(len(s2 - s1)),
    }


def _trial(part: VectorIndex, conns: dict, writer: Writer | None, p: VectorPoint, stream: int, j: int,
           pages: bool) -> dict[str, float]:
    conn, monitor = conns["reader"], conns["monitor"]
    s = p.search
    qv = dataset.draw(p.dims, 1, dataset.stream(stream, j, "query"))[0]
    q = dataset.literal(qv)
    part.begin_repeatable_read(conn)
    start_rows, snap_max = part.snapshot_state(conn)
    want = writer.expected_state() if writer else (p.rows, p.rows)
    if (start_rows, snap_max) != want:
        raise RetryableError(f"trial {j} began on {start_rows} rows up to id {snap_max}, not the {want[0]} rows "
                             f"up to id {want[1]} the lab wrote")
    mark = part.index_mark(monitor) if pages else None
    t0 = time.perf_counter()
    ids1 = part.knn(conn, q, s)
    t1 = time.perf_counter()
    plan1 = part.plan(conn, q, s)
    updated0 = part.graph_rows_updated(writer.conn) if writer else None
    if writer is not None:
        written, took = writer.write(qv, dataset.stream(stream, j, "rows"))
    else:
        time.sleep(p.gap_s)
        written, took = 0, p.gap_s
    updated1 = part.graph_rows_updated(writer.conn) if writer else None
    between = part.knn(conns["between"], q, s) if p.reader_between else []
    t2 = time.perf_counter()
    ids2 = part.knn(conn, q, s)
    t3 = time.perf_counter()
    plan2 = part.plan(conn, q, s)
    if s.exact:
        exact = ids1
    else:
        exact = part.knn(conn, q, replace(s, exact=True))
        how = part.plan(conn, q, replace(s, exact=True))
        if how != "exact":
            raise DbexpError(f"the exact answer inside the transaction was read through {how!r}, not an exact scan")
    rec = {"start_rows": float(start_rows), "start_max_id": float(snap_max)} | classify(ids1, ids2, p.k)
    lost = sorted(set(ids1) - set(ids2))
    rec |= {
        # the lost rows as the same snapshot sees them: by id, and among its exact k nearest
        "lost_visible": float(part.visible(conn, lost)),
        "lost_in_exact": float(len(set(lost) & set(exact))),
        "gained_in_exact": float(len(set(ids2) - set(ids1) & set(exact))),
        "leaked": float(sum(1 for i in ids1 + ids2 if i > snap_max)) if p.writer != "update" else float("nan"),
        "recall1": len(set(ids1) & set(exact)) / p.k, "recall2": len(set(ids2) & set(exact)) / p.k,
        "plan_changed": float(plan1 != plan2), "plan_is_index": float(plan1 != "exact"),
        "q1_ms": (t1 - t0) * 1e3, "q2_ms": (t3 - t2) * 1e3,
        "writes_between": float(written), "gap_s": took, "write_rate": written / took if written else 0.0,
        "between_rows": float(len(between)) if p.reader_between else float("nan"),
    }
    conn.commit()
    if mark is not None:
        written_pages, all_pages = part.index_changed_since(monitor, mark)
        rec["index_pages_written"], rec["index_pages"] = written_pages, all_pages
    if updated0 is not None:
        rec["graph_rows_updated"] = updated1 - updated0
    # the rows the snapshot could not see that belonged among its first answer (new ids only)
    rec["new_nearer"] = (float(part.nearer_than(monitor, q, ids1[-1], snap_max))
                         if ids1 and p.writer in NEW_ROWS else float("nan"))
    return rec


SUMS = ("set_changed", "changed_shorter", "changed_replaced", "order_changed", "order_only", "head_kept",
        "plan_changed", "leaked", "lost", "gained", "lost_visible", "lost_in_exact")


def _readers(part, server, p: VectorPoint, stream: int, m: dict, series: list) -> None:
    conns = {"reader": part.connect(server, autocommit=False), "monitor": part.connect(server)}
    if p.reader_between:
        conns["between"] = part.connect(server)
    writer = Writer(part, server, p, stream) if p.writer != "none" else None
    try:
        pages = part.index_mark(conns["monitor"]) is not None
        part.set_search(conns["reader"], p.search)
        conns["reader"].commit()
        if p.reader_between:
            part.set_search(conns["between"], p.search)
        recs = []
        for j in range(p.transactions):
            rec = _trial(part, conns, writer, p, stream, j, pages)
            recs.append(rec)
            series += [(float(j), "txn", name, float(value)) for name, value in rec.items()]
    finally:
        if writer is not None:
            writer.close()
        for c in conns.values():
            c.close()
    col = {k: np.array([r.get(k, np.nan) for r in recs], dtype=float) for k in recs[0]}
    m["reader_transactions"] = (float(len(recs)), "count")
    for name in SUMS:
        m[name] = (float(np.nansum(col[name])), "count")
    m["short_answers"] = (float(np.sum((col["rows1"] < p.k) | (col["rows2"] < p.k))), "count")
    m["new_nearer_trials"] = (float(np.sum(col["new_nearer"] > 0)), "count")
    m["plan_is_index"] = (float(np.mean(col["plan_is_index"])), "share")
    m["rows_mean"] = (float(np.mean(np.r_[col["rows1"], col["rows2"]])), "rows")
    m["recall"] = (float(np.mean(np.r_[col["recall1"], col["recall2"]])), "share")
    m["query_ms"] = (float(np.median(np.r_[col["q1_ms"], col["q2_ms"]])), "ms")
    m["writes_between"] = (float(np.mean(col["writes_between"])), "rows")
    m["gap_s"] = (float(np.mean(col["gap_s"])), "s")
    # the writer's pace: rows per second over the gaps, every trial's together
    m["writes_per_s"] = (float(np.sum(col["writes_between"]) / np.sum(col["gap_s"])) if p.writer != "none"
                         else 0.0, "1/s")
    m["end_rows"] = (float(col["start_rows"][-1] + col["writes_between"][-1]), "rows")
    for name in ("index_pages_written", "index_pages", "graph_rows_updated"):
        if name in col:
            m[name] = (float(np.mean(col[name])), "pages" if name.startswith("index") else "rows")


def neighbour_changes(before: dict, after: dict) -> dict[str, float]:
    """What a writer did to the graph's neighbour lists (pgvector's pages read before and after): lists that were
    there before and changed, neighbours dropped from them (an entry gone from a list that is still there: the
    post's D evicted from T's list), neighbours added to them, and lists appended (the new rows' own)."""
    kept = [loc for loc in before if loc in after]
    return {
        "lists_before": float(len(before)),
        "lists_changed": float(sum(before[loc] != after[loc] for loc in kept)),
        "neighbours_dropped": float(sum(len(before[loc] - after[loc]) for loc in kept)),
        "neighbours_added": float(sum(len(after[loc] - before[loc]) for loc in kept)),
        "lists_gone": float(len(before) - len(kept)),
        "lists_appended": float(len(after) - len(kept)),
    }


def _graph(part, server, p: VectorPoint, stream: int, m: dict, series: list) -> None:
    """Trials without a reader: the neighbour lists read from the index's pages, ``gap_writes`` rows written
    around a query of the trial's own by the paced writer, the lists read again (neighbour_changes)."""
    monitor = part.connect(server)
    writer = Writer(part, server, p, stream)
    try:
        recs = []
        for j in range(p.transactions):
            qv = dataset.draw(p.dims, 1, dataset.stream(stream, j, "query"))[0]
            before = part.neighbor_lists(monitor)
            if before is None:
                raise DbexpError(f"{part.label} shows no index page: its graph cannot be read")
            written, took = writer.write(qv, dataset.stream(stream, j, "rows"))
            rec = neighbour_changes(before, part.neighbor_lists(monitor)) | {
                "writes_between": float(written), "gap_s": took}
            recs.append(rec)
            series += [(float(j), "graph", name, value) for name, value in rec.items()]
    finally:
        writer.close()
        monitor.close()
    m["graph_trials"] = (float(len(recs)), "count")
    for name in ("lists_changed", "neighbours_dropped", "neighbours_added", "lists_appended", "lists_gone",
                 "writes_between"):
        m[name] = (float(sum(r[name] for r in recs)), "count")


def _query_rate(part, server, p: VectorPoint, stream: int, m: dict) -> None:
    queries = dataset.draw(p.dims, 256, stream)
    conn = part.connect(server)
    try:
        part.set_search(conn, p.search)
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < p.seconds:
            part.knn(conn, dataset.literal(queries[n % len(queries)]), p.search)
            n += 1
        m["queries_per_s"] = (n / (time.perf_counter() - t0), "1/s")
    finally:
        conn.close()


def _insert_rate(part, server, p: VectorPoint, m: dict) -> None:
    """Rows per second one connection inserts alone, as fast as it goes (the cost of an insert, not paced)."""
    vectors = dataset.draw(p.dims, 4096, RATE_ALONE_STREAM)
    conn = part.connect(server)
    try:
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < p.seconds:
            part.insert(conn, p.rows + 1 + n, dataset.literal(vectors[n % len(vectors)]))
            n += 1
        m["writes_per_s"] = (n / (time.perf_counter() - t0), "1/s")
    finally:
        conn.close()


def measure_point(part: VectorIndex, server, p: VectorPoint, pristine_checksum: float, dirty: bool,
                  stream: int) -> Measured:
    """Measure ``p`` with random stream ``stream`` (point_stream); ``dirty``: a writer changed the table since
    it was last made pristine (then it is restored first; a table no writer touched is the pristine one, and
    the check below says so)."""
    m: dict[str, tuple[float | None, str]] = {}
    series: list[tuple] = []
    with client_pinned(p.client_cpus):
        if dirty:
            t0 = time.perf_counter()
            part.restore(server)
            m["restore_s"] = (time.perf_counter() - t0, "s")
        m["restored"] = (float(dirty), "bool")
        warm = dataset.draw(p.dims, WARMUP_QUERIES, dataset.stream(stream, "warm-up"))
        conn = part.connect(server)
        try:
            st = check_state(part, conn, p, pristine_checksum)
            part.set_search(conn, p.search)
            for v in warm:
                part.knn(conn, dataset.literal(v), p.search)
            plan = part.plan(conn, dataset.literal(warm[0]), p.search)
        finally:
            conn.close()
        if (plan == "exact") != p.exact:
            raise DbexpError(f"the plan reads {plan!r} where the point asks for "
                             f"{'an exact scan' if p.exact else 'the vector index'}")
        m["precondition_ok"] = (1.0, "bool")
        m.update({f"state_{k}": (v, "count") for k, v in st.items()})
        m["active_servers"] = (1.0, "count")
        with cpu_window(server, p.client_cpus) as cpu:
            if p.kind == "readers":
                _readers(part, server, p, stream, m, series)
            elif p.kind == "query_rate":
                _query_rate(part, server, p, stream, m)
            elif p.kind == "graph":
                _graph(part, server, p, stream, m, series)
            else:
                _insert_rate(part, server, p, m)
        m.update(cpu)
    between = (f"{p.writer} writer committing {p.gap_writes} rows at {p.rate:g} rows/s" if p.writer != "none"
               else f"no writer, {p.gap_s:g} s")
    what = (f"{p.transactions} REPEATABLE READ trials, each its own query, k={p.k}, ef_search={p.ef_search}, "
            f"iterative {p.iterative}{', exact scan' if p.exact else ''}; {between} between the two searches"
            f"{'; another reader between' if p.reader_between else ''}"
            if p.kind == "readers" else
            f"{p.transactions} trials of the neighbour lists around {p.gap_writes} rows written near a query"
            if p.kind == "graph" else f"{p.kind} for {p.seconds:g} s")
    return Measured(m, [], series, what)
