"""One point: REPEATABLE READ readers that ask the same k-NN query twice while a writer changes the table.

Each reader transaction, on its own connection:

1. begins REPEATABLE READ (the snapshot is taken at once) and reads ``max(id)``: the largest id its
   snapshot sees (the writer's ids only grow, so a returned id above it is a row the snapshot must not see);
2. asks the k-NN query (``q1``), waits ``gap_s`` while the writer goes on, asks it again (``q2``), and
   notes the plan of each (``EXPLAIN`` right after it, in the same transaction);
3. asks the exact answer in the same transaction (no vector index: the snapshot's true k nearest), and
   counts how many of the rows ``q1`` returned and ``q2`` did not are still visible to the snapshot;
4. commits. Where the engine shows its index pages, a second connection counts the pages written since
   the transaction began.

Before the first reader the table is put back to the pristine data set (the same rows and, on
PostgreSQL, the same graph), and the state is checked: the rows, their checksum, the largest id and the
index. A point whose check fails is not measured: it raises, and the lab measures it again.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, replace

import numpy as np

from dbexp.chapters.vector_isolation import dataset
from dbexp.chapters.vector_isolation.engines import Search, VectorIndex
from dbexp.errors import DbexpError, RetryableError
from dbexp.experiments.measure import Measured, client_pinned, cpu_window

WRITERS = ("none", "insert", "update", "delete")
KINDS = ("readers", "query_rate", "insert_rate")
WAIT_WRITES_S = 60.0  # a writer slower than this between two queries fails the run
WARMUP_QUERIES = 20  # k-NN queries before the first reader: the copied index into the server's buffers


@dataclass(frozen=True)
class VectorPoint:
    kind: str  # readers: transactions that ask twice; query_rate / insert_rate: throughput alone
    writer: str  # none | insert | update | delete: what the writer does (one connection, as fast as it goes)
    gap_writes: int  # rows the writer commits between a reader's two queries (0: no writer, wait gap_s)
    k: int
    ef_search: int
    iterative: str  # pgvector's hnsw.iterative_scan (off where the engine has none)
    exact: bool  # True: the readers bypass the index (the control that must never differ)
    transactions: int  # reader transactions (readers), or 0
    gap_s: float  # with no writer: seconds between a transaction's two queries
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

    @property
    def search(self) -> Search:
        return Search(self.k, self.ef_search, self.iterative, self.exact)

    @property
    def stream(self) -> int:
        """The random stream of this point's queries and written vectors (1 and up; 0 is the data set)."""
        key = repr((self.kind, self.writer, self.gap_writes, self.k, self.ef_search, self.iterative, self.exact))
        return 1 + int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 1_000_000


class Writer(threading.Thread):
    """One connection that inserts, updates or deletes rows, one per autocommit transaction, as fast as it
    goes, until stopped. An error stops it and is raised again by :meth:`finish` (a failed writer fails the
    run)."""

    def __init__(self, part: VectorIndex, server, p: VectorPoint):
        super().__init__(daemon=True)
        self.part, self.server, self.p = part, server, p
        self.count = 0
        self.error: BaseException | None = None
        self._halt = threading.Event()
        self.started_at = self.ended_at = 0.0

    def run(self) -> None:
        p = self.p
        rng = np.random.default_rng([dataset.SEED, p.stream, 7])
        vectors = dataset.draw(p.dims, 4096, p.stream + 500_000)
        targets = rng.permutation(np.arange(1, p.rows + 1))  # update / delete: base rows, each once
        conn = self.part.connect(self.server)
        try:
            self.started_at = time.perf_counter()
            while not self._halt.is_set():
                i = self.count
                v = dataset.literal(vectors[i % len(vectors)])
                if p.writer == "insert":
                    self.part.insert(conn, p.rows + 1 + i, v)
                elif p.writer == "update":
                    self.part.update(conn, int(targets[i % len(targets)]), v)
                else:
                    if i >= len(targets):
                        raise DbexpError(f"the delete writer ran out of rows after {i} deletes")
                    self.part.delete(conn, int(targets[i]))
                self.count = i + 1
        except BaseException as exc:  # handed to finish(), which raises it in the measuring thread
            self.error = exc
        finally:
            self.ended_at = time.perf_counter()
            conn.close()

    def wait_for(self, count: int, timeout_s: float = WAIT_WRITES_S) -> None:
        """Return once ``count`` rows are written; raise if the writer failed or is that slow."""
        deadline = time.perf_counter() + timeout_s
        while self.count < count:
            if self.error is not None or not self.is_alive():
                self.finish()  # raises the writer's error
            if time.perf_counter() > deadline:
                raise RetryableError(f"the {self.p.writer} writer reached {self.count} of {count} rows in "
                                     f"{timeout_s:g} s")
            time.sleep(0.002)

    def stop(self) -> None:
        """Stop and wait (a reader failed: its error is the run's)."""
        self._halt.set()
        self.join(timeout=60)

    def finish(self) -> float:
        """Stop, wait, raise the writer's error if it had one; returns the rows per second it wrote."""
        self.stop()
        if self.is_alive():
            raise RetryableError("the writer did not stop within 60 s")
        if self.error is not None:
            raise DbexpError(f"the {self.p.writer} writer failed: {self.error}") from self.error
        span = self.ended_at - self.started_at
        return self.count / span if span > 0 else 0.0


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


def _transaction(part, conn, monitor, p: VectorPoint, q: str, writer: Writer | None) -> dict[str, float]:
    s = p.search
    part.begin_repeatable_read(conn)
    snap_max = part.max_id(conn)
    mark = part.index_mark(monitor) if monitor is not None else None
    t0 = time.perf_counter()
    ids1 = part.knn(conn, q, s)
    t1 = time.perf_counter()
    plan1 = part.plan(conn, q, s)
    w1 = writer.count if writer else 0
    if writer is not None:
        writer.wait_for(w1 + p.gap_writes)
    else:
        time.sleep(p.gap_s)
    w2 = writer.count if writer else 0
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
    lost = sorted(set(ids1) - set(ids2))
    rec = {
        "rows1": len(ids1), "rows2": len(ids2),
        "set_changed": float(set(ids1) != set(ids2)),
        # how: the second answer came back shorter (candidates crowded out by rows the snapshot cannot see),
        # or as long with other visible rows in place of the lost ones (the search walked another way)
        "changed_shorter": float(set(ids1) != set(ids2) and len(ids2) < len(ids1)),
        "changed_replaced": float(set(ids1) != set(ids2) and len(ids2) >= len(ids1)),
        "order_changed": float(ids1 != ids2),
        "order_only": float(ids1 != ids2 and set(ids1) == set(ids2)),
        "lost": len(lost), "gained": len(set(ids2) - set(ids1)),
        "lost_visible": part.visible(conn, lost),
        "lost_in_exact": len(set(lost) & set(exact)),
        "leaked": sum(1 for i in ids1 + ids2 if i > snap_max),
        "recall1": len(set(ids1) & set(exact)) / p.k, "recall2": len(set(ids2) & set(exact)) / p.k,
        "plan_changed": float(plan1 != plan2), "plan_is_index": float(plan1 != "exact"),
        "q1_ms": (t1 - t0) * 1e3, "q2_ms": (t3 - t2) * 1e3,
        "writes_between": float(w2 - w1),
    }
    conn.commit()
    if mark is not None:
        written, pages = part.index_changed_since(monitor, mark)
        rec["index_pages_written"], rec["index_pages"] = written, pages
    return rec


def _readers(part, server, p: VectorPoint, queries: np.ndarray, m: dict, series: list) -> None:
    conn = part.connect(server, autocommit=False)
    monitor = part.connect(server)
    writer = Writer(part, server, p) if p.writer != "none" else None
    try:
        shows_pages = part.index_mark(monitor) is not None
        part.set_search(conn, p.search)
        conn.commit()
        if writer:
            writer.start()
            writer.wait_for(1)  # under way before the first reader
        recs = []
        for j in range(p.transactions):
            rec = _transaction(part, conn, monitor if shows_pages else None, p,
                               dataset.literal(queries[j % len(queries)]), writer)
            recs.append(rec)
            series += [(float(j), "txn", name, float(value)) for name, value in rec.items()]
        m["writes_per_s"] = (writer.finish() if writer else 0.0, "1/s")
        writer = None
    finally:
        if writer is not None:  # a reader failed: stop the writer; the reader's error is the run's
            writer.stop()
        conn.close()
        monitor.close()
    n = len(recs)
    col = {k: np.array([r.get(k, np.nan) for r in recs], dtype=float) for k in recs[0]}
    m["reader_transactions"] = (float(n), "count")
    for name in ("set_changed", "changed_shorter", "changed_replaced", "order_changed", "order_only", "plan_changed",
                 "leaked", "lost", "lost_visible", "lost_in_exact"):
        m[name] = (float(np.nansum(col[name])), "count")
    m["short_answers"] = (float(np.sum((col["rows1"] < p.k) | (col["rows2"] < p.k))), "count")
    m["plan_is_index"] = (float(np.mean(col["plan_is_index"])), "share")
    m["rows_mean"] = (float(np.mean(np.r_[col["rows1"], col["rows2"]])), "rows")
    m["recall"] = (float(np.mean(np.r_[col["recall1"], col["recall2"]])), "share")
    m["query_ms"] = (float(np.median(np.r_[col["q1_ms"], col["q2_ms"]])), "ms")
    m["writes_between"] = (float(np.mean(col["writes_between"])), "rows")
    if "index_pages_written" in col:
        m["index_pages_written"] = (float(np.mean(col["index_pages_written"])), "pages")
        m["index_pages"] = (float(np.mean(col["index_pages"])), "pages")


def _query_rate(part, server, p: VectorPoint, queries: np.ndarray, m: dict) -> None:
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


def measure_point(part: VectorIndex, server, p: VectorPoint, pristine_checksum: float, dirty: bool) -> Measured:
    """Measure ``p``; ``dirty``: a writer changed the table since it was last made pristine (then it is
    restored first; a table no writer touched is the pristine one, and the check below says so)."""
    m: dict[str, tuple[float | None, str]] = {}
    series: list[tuple] = []
    queries = dataset.draw(p.dims, max(p.transactions, 256), p.stream)
    with client_pinned(p.client_cpus):
        if dirty:
            t0 = time.perf_counter()
            part.restore(server)
            m["restore_s"] = (time.perf_counter() - t0, "s")
        m["restored"] = (float(dirty), "bool")
        conn = part.connect(server)
        try:
            st = check_state(part, conn, p, pristine_checksum)
            part.set_search(conn, p.search)
            for j in range(WARMUP_QUERIES):
                part.knn(conn, dataset.literal(queries[j % len(queries)]), p.search)
            plan = part.plan(conn, dataset.literal(queries[0]), p.search)
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
                _readers(part, server, p, queries, m, series)
            elif p.kind == "query_rate":
                _query_rate(part, server, p, queries, m)
            else:
                writer = Writer(part, server, p)
                writer.start()
                time.sleep(p.seconds)
                m["writes_per_s"] = (writer.finish(), "1/s")
        m.update(cpu)
    between = f"{p.gap_writes} rows written" if p.writer != "none" else f"{p.gap_s:g} s"
    what = (f"{p.transactions} REPEATABLE READ readers, k={p.k}, ef_search={p.ef_search}, iterative {p.iterative}"
            f"{', exact scan' if p.exact else ''}; writer {p.writer}, {between} between the two queries"
            if p.kind == "readers" else f"{p.kind} for {p.seconds:g} s")
    return Measured(m, [], series, what)
