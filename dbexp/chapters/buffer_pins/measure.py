"""The chapter's kinds of run.

- **Curve** (:class:`CurvePoint`): inside the backend, the pinbench extension's functions time buffer
  operations at each N of the source's list, one run holding the whole curve (so the ratios between
  two N, the step past the array's 8 entries and the growth to 10,000, are paired within a run):
  ``fifo`` holds N pins and pins and releases one more buffer, the same one every time (the thread's
  benchmark as its author describes it); ``cycle`` pins N distinct buffers and releases them first in,
  first out, walking the whole table; ``hold`` keeps N pinned while it reads and releases 64 others,
  ``hold_lock`` the same with a share content lock and unlock between, ``hold_cold`` the same with a
  cache-evicting walk before each operation (each timed alone: the median operation less the median pair of
  clock reads timed beside it, alternately in one loop). Each N is called ``calls`` times in a run, in rounds over every
  N. Every call also returns what its timed loop touched (the witness: the buffers held, the blocks and
  buffers pinned, how often the previous operation's buffer was pinned again, blocks that moved), kept per N.
- **Array windows** (:func:`measure_curves_together`): the same curve on the builds of one source whose arrays
  differ, measured in one window: each round calls every N on every build in turn, one call at a time, so that
  two builds' raw times are divided within a round, calls milliseconds apart.
- **The overflow table alone** (:class:`HashPoint`, :func:`measure_hash`): pinbench_hash's simplehash keyed by
  buffer number, hashed by the number itself and by murmurhash32, both called in turn at each N of a round (so that
  their times are divided within a round); each call also returns the table's shape once its keys are in (buckets,
  growths, distances of the entries from their buckets), the same in every call.
- **Pins** (:class:`PinPoint`): a query shape run ``executions`` times on one connection while the
  uprobes of pin_probe count, for that backend only, how many buffers it holds at each new pin,
  how many content locks fall inside each pin, the new pins whose slot modulo 32 a held buffer had,
  and StartBufferIO's reads and writes (the ``flush`` shape: pages written by the backend itself,
  pinbench_flush). ``cold``: the server restarted and the host's page cache dropped just before
  (reset), so a sequential scan reads from disk and its read stream can look ahead.
"""

from __future__ import annotations

import statistics
import time
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

from dbexp.chapters.buffer_pins import pin_probe, queries
from dbexp.errors import DbexpError, choices
from dbexp.experiments.measure import Measured, client_pinned, cpu_window
from dbexp.metrics import procfs, uprobe
from dbexp.servers.config import cpus_of

KINDS = ("fifo", "cycle", "hold", "hold_lock", "hold_cold")
# hold_cold's operations per call: each walks cold_kb KiB first, so a call times ops x this / cold_kb of them
# (at 2 MiB and 50,000 ops: 122 operations, each timed alone)
COLD_OPS_PER_KB = 5
PATTERNS = ("random", "sequential")
TABLE = "pinbench_blocks"
# what every pinbench timing function returns after the time, in its order (pinbench--1.0.sql)
WITNESS = ("held_buffers", "touched_blocks", "touched_buffers", "repeats", "moved", "held_slots32",
           "touched_in_held_slots32")
# how a run keeps a witness column over its calls at one N: the least or the most any call saw (so that "every
# call held N buffers" reads min == N, "no call pinned more than one block" max == 1, "none moved" max == 0)
KEPT = {"held_buffers": min, "touched_blocks": max, "touched_buffers": max, "repeats": min, "moved": max,
        "held_slots32": min, "touched_in_held_slots32": max}


@dataclass(frozen=True)
class CurvePoint:
    kind: str
    pattern: str
    ns: tuple[int, ...]  # the pins held (fifo, hold) or pinned per round (cycle), each timed in this run
    ops: int  # timed operations per call (hold_cold: a fiftieth, each timed alone)
    calls: int  # calls per N, in rounds over every N
    loop_blocks: int  # hold: the blocks read and released while N stay pinned
    cold_kb: int  # hold_cold: KiB walked before each operation (0 for the other kinds)
    # how the run keeps its calls: 5, every call as a series row and each N's witness (what its loops touched), a
    # cold call's time the median operation less the median clock pair, the two timed alternately in one loop (4:
    # the clock in a loop of its own after the operations; 3: their sums, which one switched-out clock read made
    # -563 ns once); 2 kept no witness, 1 only the fastest call and median per N;
    # part of the point's key, so an older run is never reused
    method: int = 5

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
    # 2: the probe also counts StartBufferIO's reads and writes and the pins whose slot mod 32 was taken, and the
    # blocks written and planning's buffers are read; part of the point's key, so an older run is never reused
    method: int = 2

    def __post_init__(self):
        queries.shape(self.shape)


HASHES = ("identity", "murmur")  # the overflow table's hash of a buffer number: none (the thread's v1), murmurhash32
HASH_PATTERNS = ("sequential", "random", "stride")
# what pinbench_hash returns after the time, in its order (pinbench--1.0.sql)
HASH_WITNESS = ("keys", "size", "grows", "max_dib", "mean_dib", "fifo_dib")


@dataclass(frozen=True)
class HashPoint:
    """The overflow table alone (pinbench_hash): ``ns`` keys held in a simplehash keyed by buffer number, one more
    pinned and released again and again, with each hash in turn at each N of a round (so that murmur over
    identity is divided within a round). ``pattern``: the buffers of the thread's benchmark's blocks (sequential,
    random) or numbers ``stride`` apart."""
    pattern: str
    ns: tuple[int, ...]
    ops: int  # timed rounds per call
    calls: int  # calls per N and hash, in rounds over every N
    stride: int = 1024
    table_blocks: int = 0  # the timing table's pages the server's curves need (made once, at the first point)
    method: int = 1

    def __post_init__(self):
        if self.pattern not in HASH_PATTERNS:
            raise DbexpError(f"bad hash pattern {self.pattern!r}; valid are {choices(HASH_PATTERNS)}")

    @property
    def blocks(self) -> int:
        """The table's pages: those the sequential and random keys need (the held blocks and the FIFO's), or the
        curves' where more (so that the table is made once per server, whichever point comes first)."""
        return max(max(self.ns) + 1, self.table_blocks)


def measure_hash(server, p: HashPoint) -> Measured:
    """Every N called ``calls`` times with both hashes, in rounds that visit every N once (each round starting one
    N further on, the hash called first alternating), each call a series row (t = its round, name
    ``identity_N``, ``murmur_N``); per hash and N the fastest call (``<hash>_ns_N``), the median
    (``<hash>_median_N``) and what the table looked like once its keys were in (``w_<hash>_<witness>_N``: the
    same in every call, the keys being fixed)."""
    got: dict[tuple[str, int], list[float]] = {(h, n): [] for h in HASHES for n in p.ns}
    seen: dict[tuple[str, int], tuple] = {}
    series: list[tuple] = []
    sql = "SELECT * FROM pinbench_hash(%s::regclass, %s, %s, %s, %s, %s)"
    conn = server.connect()
    try:
        with conn.cursor() as cur, cpu_window(server, None) as window:
            cur.execute("SELECT pinbench_prewarm(%s::regclass)", (TABLE,))
            for r in range(p.calls):
                for i in range(len(p.ns)):
                    n = p.ns[(i + r) % len(p.ns)]
                    for h in (HASHES if (r + i) % 2 == 0 else HASHES[::-1]):
                        cur.execute(sql, (TABLE, n, p.ops, p.pattern, h, p.stride))
                        row = cur.fetchone()
                        got[(h, n)].append(float(row[0]))
                        series.append((float(r), "pinbench", f"{h}_{n}", float(row[0])))
                        w = tuple(float(v) for v in row[1:1 + len(HASH_WITNESS)])
                        if seen.setdefault((h, n), w) != w:
                            raise DbexpError(f"pinbench_hash {h} {p.pattern} at N = {n}: the table's shape changed "
                                             f"between calls ({seen[(h, n)]} then {w}) with the same keys")
    finally:
        conn.close()
    m: dict[str, tuple[float | None, str]] = dict(window)
    for (h, n), values in got.items():
        if not values or not all(v > 0 for v in values):
            raise DbexpError(f"pinbench_hash {h} at N = {n} gave {values} ns: a time must be positive")
        m[f"{h}_ns_{n}"] = (min(values), "ns")
        m[f"{h}_median_{n}"] = (statistics.median(values), "ns")
        for k, v in zip(HASH_WITNESS, seen[(h, n)]):
            m[f"w_{h}_{k}_{n}"] = (v, "count")
    m["calls_per_n"] = (float(p.calls), "count")
    return Measured(m, [], series, sql % (f"'{TABLE}'", "N", p.ops, f"'{p.pattern}'", "HASH", p.stride))


def call_sql(p: CurvePoint, n: int) -> tuple[str, tuple]:
    """The SQL of one timed call at ``n``, and its parameters (the function returns the time per operation, then
    WITNESS)."""
    if p.kind == "fifo":
        return "SELECT * FROM pinbench_fifo(%s::regclass, %s, %s, %s)", (TABLE, n, p.ops, p.pattern)
    if p.kind == "cycle":
        return "SELECT * FROM pinbench_cycle(%s::regclass, %s, %s, %s)", (TABLE, n, max(1, p.ops // n), p.pattern)
    lock = p.kind == "hold_lock"
    cold, ops = (p.cold_kb, cold_ops(p)) if p.kind == "hold_cold" else (0, p.ops)
    return ("SELECT * FROM pinbench_hold(%s::regclass, %s, %s, %s, %s, %s, %s)",
            (TABLE, n, p.loop_blocks, ops, p.pattern, lock, cold))


def cold_ops(p: CurvePoint) -> int:
    """hold_cold's operations per call."""
    return max(1, p.ops * COLD_OPS_PER_KB // max(p.cold_kb, 1))


def timed_ops(p: CurvePoint, n: int) -> int:
    """The operations one call at ``n`` times (cycle: whole rounds of n)."""
    if p.kind == "cycle":
        return max(1, p.ops // n) * n
    return cold_ops(p) if p.kind == "hold_cold" else p.ops


class _Calls:
    """One run's calls: every call's time as a series row (t = its round, name ns_N; a cold run's warm twin
    warm_N), and per N what its loops touched (WITNESS, kept as KEPT says; repeats as a share of the operations)."""

    def __init__(self, p: CurvePoint):
        self.p = p
        self.got: dict[int, list[float]] = {n: [] for n in p.ns}
        self.warm: dict[int, list[float]] = {n: [] for n in p.ns}
        self.seen: dict[int, dict[str, float]] = {}
        self.series: list[tuple] = []

    def call(self, cur, n: int, r: int) -> None:
        sql, args = call_sql(self.p, n)
        cur.execute(sql, args)
        row = cur.fetchone()
        self.got[n].append(float(row[0]))
        self.series.append((float(r), "pinbench", f"ns_{n}", self.got[n][-1]))
        w = dict(zip(WITNESS, (float(v) for v in row[1:1 + len(WITNESS)])))
        w["repeats"] /= timed_ops(self.p, n)
        was = self.seen.get(n)
        self.seen[n] = w if was is None else {k: KEPT[k](was[k], w[k]) for k in WITNESS}
        if self.p.kind == "hold_cold":  # the same N warm, right after: cold over warm paired in the run
            sql, args = call_sql(replace(self.p, kind="hold"), n)
            cur.execute(sql, args)
            self.warm[n].append(float(cur.fetchone()[0]))
            self.series.append((float(r), "pinbench", f"warm_{n}", self.warm[n][-1]))

    def measured(self, window: dict) -> Measured:
        m: dict[str, tuple[float | None, str]] = dict(window)
        for n, values in self.got.items():
            if not values:
                raise DbexpError(f"pinbench {self.p.kind} at N = {n}: no call returned")
            if not all(v > 0 for v in values):
                raise DbexpError(f"pinbench {self.p.kind} at N = {n} gave {values} ns: a time must be positive")
            mid = statistics.median(values)
            m[f"ns_{n}"] = (min(values), "ns")
            m[f"median_{n}"] = (mid, "ns")
            m[f"spread_{n}"] = ((max(values) - min(values)) / mid, "ratio")
            for k, v in self.seen[n].items():
                m[f"w_{k}_{n}"] = (v, "ratio" if k == "repeats" else "count")
        for n, values in self.warm.items():
            if values:
                m[f"warm_{n}"] = (min(values), "ns")
        m["calls_per_n"] = (float(self.p.calls), "count")
        sql, _ = call_sql(self.p, self.p.ns[0])
        return Measured(m, [], self.series, sql)


def cache_kib(cpu: int) -> dict[str, float]:
    """The data and unified caches of ``cpu`` as the host's sysfs lists them: {l1d_kib, l2_kib, l3_kib} (those it
    has)."""
    out: dict[str, float] = {}
    for index in sorted(Path(f"/sys/devices/system/cpu/cpu{cpu}/cache").glob("index*")):
        kind = (index / "type").read_text().strip()
        if kind == "Instruction":
            continue
        level = (index / "level").read_text().strip()
        size = (index / "size").read_text().strip()
        value = float(size[:-1]) * (1024 if size.endswith("M") else 1) if size[-1] in "KM" else float(size) / 1024
        out[f"l{level}{'d' if kind == 'Data' else ''}_kib"] = value
    return out


def _caches(server) -> dict[str, tuple[float, str]]:
    """The caches of the server's first CPU (a cold run's walk is judged against them)."""
    cpus = cpus_of(server.config.cpuset) if server.config.cpuset else [0]
    return {k: (v, "KiB") for k, v in cache_kib(min(cpus)).items()}


def measure_curve(server, p: CurvePoint) -> Measured:
    """Every N called ``calls`` times, in rounds that visit every N once (each round starting one N further
    on). Every call is kept as a series row (t = its round, name ``ns_N``; a cold run's warm twin ``warm_N``):
    the analysis divides two N within a round, calls a few milliseconds apart, whose machine is the same even
    when the host's speed drifts or halves for seconds, and takes the median over the rounds. Per N also the
    fastest call (``ns_N``), the median (``median_N``), the calls' spread ((max - min) / median) and what the
    loops touched (``w_<witness>_N``). A cold run times each N warm right after each cold call, and records the
    server CPU's cache sizes its walk is meant to exceed."""
    calls = _Calls(p)
    conn = server.connect()
    try:
        with conn.cursor() as cur, cpu_window(server, None) as window:
            cur.execute("SELECT pinbench_prewarm(%s::regclass)", (TABLE,))
            for r in range(p.calls):
                for i in range(len(p.ns)):
                    calls.call(cur, p.ns[(i + r) % len(p.ns)], r)
    finally:
        conn.close()
    m = calls.measured(window)
    if p.kind == "hold_cold":
        m.measurements.update(_caches(server))
    return m


def measure_curves_together(servers: list, points: list[CurvePoint]) -> list[Measured]:
    """One window for the same curve on several builds: each round visits every N (starting one N further on each
    round) and, at each N, calls every build in turn, the first build one further on at each step, one call at a
    time (one server working at any moment). Each build's calls are its own run's series (t = the round), so a
    round's two builds at one N are calls milliseconds apart; ``window_start`` (the same in every run of the
    window) pairs them."""
    first = points[0]
    if any((q.kind, q.pattern, q.ns, q.ops, q.calls, q.loop_blocks, q.cold_kb) !=
           (first.kind, first.pattern, first.ns, first.ops, first.calls, first.loop_blocks, first.cold_kb)
           for q in points):
        raise DbexpError("curves measured in one window must be the same curve on each build, not "
                         f"{sorted({(q.kind, q.pattern) for q in points})}")
    runs = [_Calls(q) for q in points]
    start = time.time()
    with ExitStack() as stack:
        conns = [s.connect() for s in servers]
        for c in conns:
            stack.callback(c.close)
        curs = [stack.enter_context(c.cursor()) for c in conns]
        windows = [stack.enter_context(cpu_window(s, None)) for s in servers]
        for cur in curs:
            cur.execute("SELECT pinbench_prewarm(%s::regclass)", (TABLE,))
        k = len(servers)
        for r in range(first.calls):
            for i in range(len(first.ns)):
                n = first.ns[(i + r) % len(first.ns)]
                for j in range(k):
                    b = (r + i + j) % k
                    runs[b].call(curs[b], n, r)
    out = []
    for calls, window in zip(runs, windows):
        m = calls.measured(window)
        m.measurements["window_start"] = (start, "s")
        m.measurements["active_servers"] = (1.0, "count")  # one call at a time: one server works at any moment
        out.append(m)
    return out


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
            hits = reads = written = 0
            nodes: set[str] = set()
            with client_pinned(p.client_cpus), cpu_window(server, p.client_cpus) as window:
                with pin_probe.PinProbe(path, backend, pin=p.client_cpus) as probe:
                    for i in range(p.executions):
                        start = 1 + (i * 7919 * max(s.span, 1)) % max(p.rows - s.span, 1) if s.span else 0
                        got, hit, read, wrote = queries.explained(cur, s, start)
                        if s.plan not in got:
                            raise DbexpError(f"{p.shape}: the plan used {' > '.join(got)}, not the {s.plan} "
                                             "its settings force")
                        nodes.update(got)
                        hits, reads, written = hits + hit, reads + read, written + wrote
    finally:
        conn.close()
    c: pin_probe.PinCounts = probe.result
    if c.pins == 0:
        raise DbexpError(f"{p.shape}: the probe counted no pin in {p.executions} executions")
    m = {"pins": (float(c.pins), "count"),
         "pins_per_execution": (c.pins / p.executions, "count"), "released": (float(c.released), "count"),
         "unmatched": (float(c.unmatched), "count"), "lock_calls": (float(c.lock_calls), "count"),
         "blocks_hit": (float(hits), "count"), "blocks_read": (float(reads), "count"),
         "blocks_written": (float(written), "count"),
         "slot32_taken": (float(c.slot32), "count"),  # new pins whose buf_id mod 32 a held buffer had
         "io_starts_read": (float(c.io_in), "count"), "io_starts_write": (float(c.io_out), "count"),
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
