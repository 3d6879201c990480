"""The chapter's two kinds of run.

- **Curve** (:class:`CurvePoint`): inside the backend, the pinbench extension's functions time buffer
  operations at each N of the source's list, one run holding the whole curve (so the ratios between
  two N, the step past the array's 8 entries and the growth to 10,000, are paired within a run):
  ``cycle`` pins N distinct buffers and releases them first in, first out (the source's benchmark);
  ``hold`` keeps N pinned while it reads and releases others, ``hold_lock`` the same with a share
  content lock and unlock between, ``hold_cold`` the same with a cache-evicting walk before each
  operation. Each N is called ``calls`` times in a run, in rounds over every N; the fastest call is kept.
- **Pins** (:class:`PinPoint`): a query shape run ``executions`` times on one connection while the
  uprobes of pin_probe count, for that backend only, how many buffers it holds at each new pin and
  how many content locks fall inside each pin. ``cold``: the server restarted and the host's page
  cache dropped just before (reset), so a sequential scan reads from disk and its read stream can
  look ahead.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from dbexp.chapters.buffer_pins import pin_probe, queries
from dbexp.errors import DbexpError, choices
from dbexp.experiments.measure import Measured, client_pinned, cpu_window
from dbexp.metrics import procfs, uprobe

KINDS = ("cycle", "hold", "hold_lock", "hold_cold")
# hold_cold's operations per call: each walks cold_kb KiB first, so a call times ops x this / cold_kb of them
# (at 2 MiB and 50,000 ops: 122 operations, each timed alone)
COLD_OPS_PER_KB = 5
PATTERNS = ("random", "sequential")
TABLE = "pinbench_blocks"


@dataclass(frozen=True)
class CurvePoint:
    kind: str
    pattern: str
    ns: tuple[int, ...]  # the pins held (hold) or pinned per round (cycle), each timed in this run
    ops: int  # timed operations per call (hold_cold: a fiftieth, each timed alone)
    calls: int  # calls per N, in rounds over every N; the fastest is kept
    loop_blocks: int  # hold: the blocks read and released while N stay pinned
    cold_kb: int  # hold_cold: KiB walked before each operation (0 for the other kinds)
    # how the run keeps its calls: 2, every call as a series row, so that two N are divided within a round
    # (1 kept per N only its fastest call and median); part of the point's key, so a run of 1 is never reused
    method: int = 2

    def __post_init__(self):
        if self.kind not in KINDS:
            raise DbexpError(f"bad curve kind {self.kind!r}; valid are {choices(KINDS)}")
        if self.pattern not in PATTERNS:
            raise DbexpError(f"bad pattern {self.pattern!r}; valid are {choices(PATTERNS)}")

    @property
    def blocks(self) -> int:
        """The table's pages every call of this point needs."""
        return max(self.ns) + self.loop_blocks


@dataclass(frozen=True)
class PinPoint:
    shape: str
    eic: int  # effective_io_concurrency for the session
    cold: bool  # restarted server, host page cache dropped
    executions: int
    rows: int  # sbtest1's rows
    client_cpus: str

    def __post_init__(self):
        queries.shape(self.shape)


def call_sql(p: CurvePoint, n: int) -> tuple[str, tuple]:
    """The SQL of one timed call at ``n``, and its parameters."""
    if p.kind == "cycle":
        return "SELECT pinbench_cycle(%s::regclass, %s, %s, %s)", (TABLE, n, max(1, p.ops // n), p.pattern)
    lock = p.kind == "hold_lock"
    cold, ops = (p.cold_kb, max(1, p.ops * COLD_OPS_PER_KB // max(p.cold_kb, 1))) if p.kind == "hold_cold" else (0, p.ops)
    return ("SELECT pinbench_hold(%s::regclass, %s, %s, %s, %s, %s, %s)",
            (TABLE, n, p.loop_blocks, ops, p.pattern, lock, cold))


def measure_curve(server, p: CurvePoint) -> Measured:
    """Every N called ``calls`` times, in rounds that visit every N once (each round starting one N further
    on). Every call is kept as a series row (t = its round, name ``ns_N``; a cold run's warm twin ``warm_N``):
    the analysis divides two N within a round, calls a few milliseconds apart, whose machine is the same even
    when the host's speed drifts or halves for seconds, and takes the median over the rounds. Per N also the
    fastest call (``ns_N``), the median (``median_N``) and the calls' spread ((max - min) / median). A cold
    run times each N warm right after each cold call."""
    m: dict[str, tuple[float | None, str]] = {}
    got: dict[int, list[float]] = {n: [] for n in p.ns}
    warm: dict[int, list[float]] = {n: [] for n in p.ns}
    series: list[tuple] = []  # (round, "pinbench", ns_N or warm_N, ns)
    conn = server.connect()
    try:
        with conn.cursor() as cur, cpu_window(server, None) as window:
            cur.execute("SELECT pinbench_prewarm(%s::regclass)", (TABLE,))
            for r in range(p.calls):
                for i in range(len(p.ns)):
                    n = p.ns[(i + r) % len(p.ns)]
                    sql, args = call_sql(p, n)
                    cur.execute(sql, args)
                    got[n].append(float(cur.fetchone()[0]))
                    series.append((float(r), "pinbench", f"ns_{n}", got[n][-1]))
                    if p.kind == "hold_cold":  # the same N warm, right after: cold over warm paired in the run
                        sql, args = call_sql(replace(p, kind="hold"), n)
                        cur.execute(sql, args)
                        warm[n].append(float(cur.fetchone()[0]))
                        series.append((float(r), "pinbench", f"warm_{n}", warm[n][-1]))
        m.update(window)
    finally:
        conn.close()
    for n, values in got.items():
        if not all(v > 0 for v in values):
            raise DbexpError(f"pinbench {p.kind} at N = {n} gave {values} ns: a time must be positive")
        mid = statistics.median(values)
        m[f"ns_{n}"] = (min(values), "ns")
        m[f"median_{n}"] = (mid, "ns")
        m[f"spread_{n}"] = ((max(values) - min(values)) / mid, "ratio")
    for n, values in warm.items():
        if values:
            m[f"warm_{n}"] = (min(values), "ns")
    m["calls_per_n"] = (float(p.calls), "count")
    sql, _ = call_sql(p, p.ns[0])
    return Measured(m, [], series, sql)


def backend_host_pid(server, conn) -> int:
    """The host's pid of this connection's backend (pg_backend_pid() is the container's numbering)."""
    with conn.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        inside = int(cur.fetchone()[0])
    main = server.main_pid()
    for pid in procfs.descendants(main):
        if procfs.namespace_id(pid, pid) == inside:
            return pid
    raise DbexpError(f"no process under the server's pid {main} is backend {inside}")


def measure_pins(server, p: PinPoint) -> Measured:
    s = queries.shape(p.shape)
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            for name, value in s.settings + (("effective_io_concurrency", str(p.eic)),):
                cur.execute(f"SET {name} = {value}")
            # plan once without running it: the catalogs in the backend's caches, not the table's pages
            cur.execute("EXPLAIN " + s.sql, (1,) * s.sql.count("%s"))
            cur.fetchall()
            backend = backend_host_pid(server, conn)
            path = uprobe.server_binary(server.main_pid(), ("postgres",))
            hits = reads = 0
            nodes: set[str] = set()
            with client_pinned(p.client_cpus), cpu_window(server, p.client_cpus) as window:
                with pin_probe.PinProbe(path, backend, pin=p.client_cpus) as probe:
                    for i in range(p.executions):
                        start = 1 + (i * 7919 * max(s.span, 1)) % max(p.rows - s.span, 1) if s.span else 0
                        got, hit, read = queries.explained(cur, s, start)
                        if s.plan not in got:
                            raise DbexpError(f"{p.shape}: the plan used {' > '.join(got)}, not the {s.plan} "
                                             "its settings force")
                        nodes.update(got)
                        hits, reads = hits + hit, reads + read
    finally:
        conn.close()
    c: pin_probe.PinCounts = probe.result
    if c.pins == 0:
        raise DbexpError(f"{p.shape}: the probe counted no pin in {p.executions} executions")
    m = {"pins": (float(c.pins), "count"),
         "pins_per_execution": (c.pins / p.executions, "count"), "released": (float(c.released), "count"),
         "unmatched": (float(c.unmatched), "count"), "lock_calls": (float(c.lock_calls), "count"),
         "blocks_hit": (float(hits), "count"), "blocks_read": (float(reads), "count"),
         "held_max": (float(max(c.held)), "count"),
         "others_le2_share": (sum(v for k, v in c.held.items() if k <= 3) / c.pins, "ratio"),  # 0-2 held before it
         "locked_pin_share": (sum(v for k, v in c.locks.items() if k >= 1) / max(c.released, 1), "ratio"),
         "relocked_pin_share": (sum(v for k, v in c.locks.items() if k >= 2) / max(c.released, 1), "ratio"),
         **window}
    counters = ([{"source": "held_at_pin", "name": str(k), "before": 0, "after": v, "delta": v}
                 for k, v in sorted(c.held.items())]
                + [{"source": "locks_per_pin", "name": str(k), "before": 0, "after": v, "delta": v}
                   for k, v in sorted(c.locks.items())])
    return Measured(m, counters, [], f"{s.sql} [{', '.join(f'{k}={v}' for k, v in s.settings)}, "
                                     f"effective_io_concurrency={p.eic}; plan: {', '.join(sorted(nodes))}]")
