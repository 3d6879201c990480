"""The counted part (issue 48): instructions, simulated data-cache misses and branch mispredictions per buffer
operation of the chapter's timing functions, counted by valgrind's callgrind with its simulated caches and branch
predictor (dbexp.metrics.callgrind, ``callgrind-sim``), a cost that is the same on every x86-64 machine.

A :class:`CountedPoint` is one curve (a pinbench function and a key pattern) at each of its N on one counted server
start. The server starts natively (the tables made at full speed: the chapter's reset), is restarted under valgrind
(callgrind.instrument), and one connection reads the timing table into shared buffers and calls the function once at
every N (a warm-up no count reads). Then at each N two passes, each one call of the function on a connection of its
own, a warm call first (the same in both): a short one of ``head`` buffer operations and a long one of ``head + ops``
(callgrind.count_passes, no warm-up pass of its own). The long pass less the short one is the function's timed loop alone, ``ops`` more operations:
the statement, the login, opening the table, pinning the N held buffers, shuffling the blocks, the clock reads and
the witness's walk are in both passes and cancel (for ``cycle`` the short call already walks every block of the
table, so that its witness's walk is the same in both). What is divided out is the function's own count of
operations (measure.timed_ops: ``cycle`` pins whole rounds of N). ``hold_cold`` is not counted: its walk between
operations is the work it adds, not the buffer manager's.

Measurements per N (suffix ``_N``): callgrind.PER_OP's figures (``instructions_per_op_N``, ``d1_misses_per_op_N``,
``ll_misses_per_op_N``, ``branch_mispredicts_per_op_N``, ...), the instructions and operations counted, the entry's
share, the pace; counters: the functions of the difference, inclusive and exclusive, their calls
(``callgrind_inclusive_N``, ``callgrind_exclusive_N``, ``callgrind_calls_N``, ``callgrind_total_N``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from dbexp.chapters.buffer_pins import queries
from dbexp.chapters.buffer_pins.measure import KINDS, PATTERNS, TABLE, CurvePoint, call_sql, timed_ops
from dbexp.errors import DbexpError, choices
from dbexp.experiments.measure import Measured
from dbexp.metrics import callgrind

COUNTED_KINDS = tuple(k for k in KINDS if k != "hold_cold")  # the curves whose loop is the buffer manager's work
STARTS = 2  # separately started servers per counted point (issue 48)
WARM_OPS = 1000  # a warm call's operations (cycle: whole rounds of N), in every pass before the counted call
MODE = "callgrind-sim"  # instructions, and the simulated caches' misses and the branch predictor's
# the figures kept per N (callgrind.PER_OP's, those a callgrind-sim count has), then the count's own
PER_N = tuple(callgrind.PER_OP) + ("instructions_counted", "ops_counted", "entry_share", "count_ops_per_s", "count_s")


@dataclass(frozen=True)
class CountedPoint:
    """A curve counted under callgrind on one server start: fields of its own (``count_kind``, not a CurvePoint's
    ``kind``), so that the timed runs' tables never read a counted run as a curve, and the timed points' keys are
    what they were before the counted part existed."""

    count_kind: str
    count_pattern: str
    count_ns: tuple[int, ...]
    count_ops: int  # buffer operations counted at each N: the long call's less the short call's
    loop_blocks: int  # hold's other blocks (the timing table's size: max N + loop_blocks)
    count_start: int  # which of the STARTS separately started servers (its group's: instance 0, then 1)
    count_mode: str = MODE
    method: int = 1  # part of the point's key, so that a changed way of counting never reuses an older run

    def __post_init__(self):
        if self.count_kind not in COUNTED_KINDS:
            raise DbexpError(f"bad counted kind {self.count_kind!r}; valid are {choices(COUNTED_KINDS)}")
        if self.count_pattern not in PATTERNS:
            raise DbexpError(f"bad pattern {self.count_pattern!r}; valid are {choices(PATTERNS)}")
        if self.count_ops < 1 or not self.count_ns or min(self.count_ns) < 1:
            raise DbexpError(f"a count needs ops >= 1 and every N >= 1, not ops {self.count_ops} and ns "
                             f"{list(self.count_ns)}")

    @property
    def blocks(self) -> int:
        """The timing table's pages (as a curve's: max N + loop_blocks)."""
        return max(self.count_ns) + self.loop_blocks

    def head(self, n: int) -> int:
        """The short call's operations at ``n``: ``count_ops``; for ``cycle`` at least whole rounds of ``n`` that walk
        every block of the table (its witness walks the blocks its loop touched, up to the table's: the same in both
        calls only where both walk them all)."""
        if self.count_kind != "cycle":
            return self.count_ops
        return max(self.count_ops, -(-self.blocks // n) * n)

    def curve(self, ops: int) -> CurvePoint:
        """The timed curve whose call this count makes, with ``ops`` operations."""
        return CurvePoint(self.count_kind, self.count_pattern, self.count_ns, ops, 1, self.loop_blocks, 0)


def _pass(server, p: CountedPoint, n: int, ops: int) -> callgrind.Ran:
    """One pass: a connection of its own, its backend's pid asked for, a call of WARM_OPS operations at ``n`` (the
    same in every pass: it cancels, and the simulated caches are warm for the counted call's setup, whose misses
    would otherwise be the two passes' noise), then the counted call of ``ops`` operations at ``n``."""
    q = p.curve(ops)
    sql, args = call_sql(q, n)
    started = time.monotonic()
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_backend_pid()")
            pid = int(cur.fetchone()[0])
            cur.execute(*call_sql(p.curve(WARM_OPS), n))
            cur.fetchone()
            cur.execute(sql, args)
            row = cur.fetchone()
    finally:
        conn.close()
    held = int(row[1])
    if p.count_kind != "cycle" and held != n:  # the witness: the loop ran with N pins held
        raise DbexpError(f"pinbench {p.count_kind} at N = {n} held {held} buffers, not {n}")
    done = timed_ops(q, n)
    return callgrind.Ran(done, 1, 3, time.monotonic() - started, sql % tuple(repr(a) for a in args), pid)


def warm(server, p: CountedPoint) -> float:
    """The warm-up no count reads: the table read into shared buffers (emptied by the restart under valgrind) and
    one call of WARM_OPS operations at every N (the backends' caches of the catalogs written once), on one connection,
    then the calls again on another; its seconds."""
    started = time.monotonic()
    for i in range(2):  # twice: the first count's passes came out apart in misses after one warm-up connection alone
        conn = server.connect()
        try:
            with conn.cursor() as cur:
                if i == 0:
                    cur.execute("SELECT pinbench_prewarm(%s::regclass)", (TABLE,))
                    cur.fetchone()
                for n in p.count_ns:
                    cur.execute(*call_sql(p.curve(WARM_OPS), n))
                    cur.fetchone()
        finally:
            conn.close()
    return time.monotonic() - started


def measure_counted(server, p: CountedPoint) -> Measured:
    """Every N of ``p`` counted (the module's docstring): its figures and function table with the suffix ``_N``, the
    start under valgrind (``valgrind_start_s``, on the start's first run) and the warm-up's seconds."""
    restart_s = callgrind.instrument(server)
    m: dict[str, tuple[float | None, str]] = {"warm_s": (warm(server, p), "s"),
                                               "valgrind_start_s": (restart_s or None, "s")}
    counters: list[dict] = []
    commands = []
    for n in p.count_ns:
        done = callgrind.count_passes(server, lambda name, ops, seed, n=n: _pass(server, p, n, ops), p.count_ops,
                                      warmup=0, head=p.head(n))
        for name in PER_N:
            if name in done.measurements:
                m[f"{name}_{n}"] = done.measurements[name]
        m.setdefault("simulated_caches", done.measurements["simulated_caches"])
        counters += [{**row, "source": f"{row['source']}_{n}"} for row in done.counters]
        m[f"head_ops_{n}"] = (float(p.head(n)), "count")
        commands.append(done.command)
    return Measured(m, counters, [], commands[-1] if commands else "")


# --- a query that looks at data, counted the same way (issue 44: the microbenchmark's cache hit ratios against a
# query's) -----------------------------------------------------------------------------------------------------------

# the query shapes counted (queries.SHAPES), the statements counted (the long pass's less the short one's) and the
# short pass's: a whole-table sequential scan reads every page of sbtest1, a point select an index's root and leaf
# and a heap page, its id drawn from a fixed walk over the table. The short pass runs 11 statements: psycopg prepares a
# statement at its 6th execution and the server plans its first five executions each (custom plans), so the
# statements the long pass adds run one generic plan, the same in every one of them
QUERY_OPS = {"seq_scan": (6, 11), "point_select": (1000, 11)}
COUNTED_QUERIES = tuple(QUERY_OPS)


@dataclass(frozen=True)
class CountedQuery:
    """A query shape (queries.SHAPES) counted under callgrind on one counted server start, after its pinbench curves
    (the last point of its group): fields of its own (``count_query``), so that neither the timed runs' tables nor
    the curves' counts read it as theirs."""

    count_query: str
    count_rows: int  # sbtest1's rows
    count_statements: int  # statements counted: the long pass's less the short one's
    count_head: int  # the short pass's statements (the long one runs as many first: the caches warm in both)
    count_start: int
    table_blocks: int = 0  # the timing table's pages the group's curves need (made here if this point comes first)
    count_mode: str = MODE
    method: int = 1

    def __post_init__(self):
        if self.count_query not in QUERY_OPS:
            raise DbexpError(f"bad counted query {self.count_query!r}; valid are {choices(QUERY_OPS)}")
        if self.count_statements < 1 or self.count_head < 1 or self.count_rows < 1000:
            raise DbexpError(f"a counted query needs statements and head >= 1 and rows >= 1000, not "
                             f"{self.count_statements}, {self.count_head} and {self.count_rows}")

    @property
    def blocks(self) -> int:
        return self.table_blocks

    def start(self, i: int) -> int:
        """Statement ``i``'s parameter: a point select's id (a fixed walk over the table: 7919 is prime), a scan's 0."""
        s = queries.shape(self.count_query)
        return 1 + (i * 7919) % self.count_rows if s.span else 0


def query_point(shape: str, rows: int, start: int, table_blocks: int = 0) -> CountedQuery:
    ops, head = QUERY_OPS[shape]
    return CountedQuery(shape, rows, ops, head, start, table_blocks)


def native_for_tables(server) -> None:
    """A counted server running under valgrind started again natively (its data directory kept), so that a table is
    made at full speed, and the valgrind run's output files removed; the next count restarts it under valgrind
    (callgrind.instrument)."""
    under = callgrind.valgrind_of(server)
    if under.native:
        return
    under.native = True
    server.restart(timeout_s=60)
    # the valgrind run's output files, read already: the next run under valgrind numbers its processes from the
    # start again, and a backend whose pid an earlier one had would write a file a count does not see as new
    for old in under.out.glob("callgrind.out.*"):
        old.unlink()


def _set(cur, s) -> None:
    for name, value in s.settings:
        cur.execute(f"SET {name} = {value}")


def _node_rows(plan: dict, node: str) -> int:
    """The rows the first plan node of type ``node`` returned (depth first; 0 where none is)."""
    if plan.get("Node Type") == node:
        return int(plan.get("Actual Rows", 0))
    for child in plan.get("Plans", []) or []:
        got = _node_rows(child, node)
        if got:
            return got
    return 0


def explained_query(server, p: CountedQuery) -> dict[str, tuple[float | None, str]]:
    """The witness, on a connection of its own before the count: the plan each counted statement uses (checked: the
    shape's node) and the shared buffers one statement touches (EXPLAIN (ANALYZE, BUFFERS): hits and reads; every
    page is in shared buffers, so reads are 0) and the rows its scan node returns, over the first statements of a
    pass."""
    s = queries.shape(p.count_query)
    conn = server.connect()
    hit = read = rows = 0
    k = min(p.count_head, 10)
    try:
        with conn.cursor() as cur:
            _set(cur, s)
            for i in range(k):
                params = (p.start(i),) * s.sql.count("%s")
                cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) " + s.sql, params)
                doc = cur.fetchone()[0]
                doc = doc[0] if isinstance(doc, list) else doc
                top = doc["Plan"]
                nodes = queries.plan_nodes(top)
                if s.plan not in nodes:
                    raise DbexpError(f"counted {p.count_query}: the plan used {' > '.join(nodes)}, not the {s.plan} "
                                     "its settings force")
                hit += int(top.get("Shared Hit Blocks", 0))
                read += int(top.get("Shared Read Blocks", 0))
                rows += _node_rows(top, s.plan)
    finally:
        conn.close()
    return {"buffers_per_statement": (hit / k, "count"), "buffers_read_per_statement": (read / k, "count"),
            "rows_per_statement": (rows / k, "count"), "explained_statements": (float(k), "count")}


def measure_query(server, p: CountedQuery) -> Measured:
    """The query counted (its group's server, restarted under valgrind where it is not yet): sbtest1 and its primary
    key read into shared buffers, the witness (:func:`explained_query`), then a short pass of ``count_head``
    statements and a long one of ``count_head + count_statements``, each on a connection of its own whose shape
    settings are set first (callgrind.count_loop; the settings and the login cancel in the difference). Figures per
    statement (callgrind.PER_OP's: instructions, data reads and writes, D1 and LL misses, ...), and per buffer the
    statement touched (``instructions_per_buffer``: over the witness's buffers per statement)."""
    restart_s = callgrind.instrument(server)
    s = queries.shape(p.count_query)
    started = time.monotonic()
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            for rel in ("sbtest1", "sbtest1_pkey"):
                cur.execute("SELECT pinbench_prewarm(%s::regclass)", (rel,))
                cur.fetchone()
    finally:
        conn.close()
    m: dict[str, tuple[float | None, str]] = {"valgrind_start_s": (restart_s or None, "s")}
    m.update(explained_query(server, p))
    m["warm_s"] = (time.monotonic() - started, "s")

    def run(conn, i: int) -> None:
        with conn.cursor() as cur:
            if i == 0:
                _set(cur, s)
            cur.execute(s.sql, (p.start(i),) * s.sql.count("%s"))
            cur.fetchall()

    done = callgrind.count_loop(server, run, p.count_statements, warmup=0, head=p.count_head)
    for name in PER_N + ("statements_sent", "statements_seen", "count_tries", "head_ops"):
        if name in done.measurements:
            m[name] = done.measurements[name]
    m["simulated_caches"] = done.measurements["simulated_caches"]
    buffers = m["buffers_per_statement"][0]
    ins = done.measurements["instructions_per_op"][0]
    m["instructions_per_buffer"] = (ins / buffers if buffers else None, "count")
    return Measured(m, done.counters, [], done.command)
