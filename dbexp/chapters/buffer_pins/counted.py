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
