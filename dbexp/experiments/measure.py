"""One measured run: a workload against a server inside a sampling window, as per-operation numbers."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import signal
import statistics
import time
from dataclasses import dataclass, field

from dbexp.engine import is_local
from dbexp.errors import DbexpError, RetryableError, listed
from dbexp.waits import poll
from dbexp.metrics import cpustat, procfs
from dbexp.metrics.marks import Mark, Marker, between
from dbexp.metrics.sampler import Sampler, cpu_sets
from dbexp.experiments.rotation import (QUIET_POLL_S, QUIET_TIMEOUT_S, Reading, Rotation, Turn, TurnsNotQuiet,
                                        wait_quiet)
from dbexp.servers.config import cpus_of
from dbexp.workloads import sysbench
from dbexp.workloads.sysbench import Workload


@contextlib.contextmanager
def client_pinned(cpus: str | None):
    """This process (the client) on the client CPUs for the block, then back where it was."""
    old = os.sched_getaffinity(0)
    if cpus and cpus != "all":
        os.sched_setaffinity(0, set(cpus_of(cpus)))
    try:
        yield
    finally:
        os.sched_setaffinity(0, old)


@contextlib.contextmanager
def cpu_window(server, client_cpus: str | None):
    """/proc/stat at the block's edges, for a run measured without the sampler: the client's (and,
    where this host runs the server, the server's) busy and stolen CPU time, put into the yielded
    dict as measurements when the block ends."""
    sets = cpu_sets(client_cpus, server.config.cpuset, server.kind == "bare" or is_local())
    out: dict[str, tuple[float | None, str]] = {}
    before = cpustat.read()
    yield out
    for name, value in cpustat.shares(before, cpustat.read(), sets).items():
        out[name] = (value, "%" if name.endswith("_pct") else "s")


@dataclass
class Measured:
    measurements: dict[str, tuple[float | None, str]]
    counters: list[dict] = field(default_factory=list)
    series: list[tuple] = field(default_factory=list)
    command: str = ""


def per_op(total: float | None, ops: float, scale: float = 1.0) -> float | None:
    if total is None or not ops:
        return None
    return total * scale / ops


def summarize(done: sysbench.Finished, totals: dict | None) -> dict[str, tuple[float | None, str]]:
    """The run's figures with their units; per-operation means per query, as the sources do."""
    res = done.result
    summary = res.summary()
    units = {"tps": "1/s", "qps": "1/s", "lat_avg_ms": "ms", "lat_p95_ms": "ms", "lat_p99_ms": "ms",
             "lat_max_ms": "ms", "errors": "count", "reconnects": "count", "transactions": "count",
             "queries": "count", "reads": "count", "writes": "count", "total_time_s": "s"}
    out = {k: (v, units[k]) for k, v in summary.items()}
    ops = res.queries
    out["client_cpu_s"] = (done.client_cpu_s, "s")
    out["client_cpu_per_op_us"] = (per_op(done.client_cpu_s, ops, 1e6), "us")
    out["client_cs_per_op"] = (per_op(done.client_cs, ops), "count")
    totals = totals or {}
    for who in ("server", "client"):  # /proc/stat over the window: steal is the VM's noise, not the lab's
        if f"steal_{who}_pct" in totals:
            out[f"steal_{who}_s"] = (totals[f"steal_{who}_s"], "s")
            out[f"steal_{who}_pct"] = (totals[f"steal_{who}_pct"], "%")
            out[f"{who}_busy_pct"] = (totals[f"{who}_busy_pct"], "%")
    if "sampler_cpu_s" in totals:  # the sampler's own cost: inside the window, and at its edges
        out["sampler_cpu_s"] = (totals["sampler_cpu_s"], "s")
        out["sampler_cpu_pct"] = (per_op(totals["sampler_cpu_s"], totals.get("elapsed_s"), 100.0), "%")
        out["sampler_edge_cpu_s"] = (totals.get("sampler_edge_cpu_s"), "s")
    if "cpu_s_procfs" in totals:  # this host runs the server: its process set was read
        out["server_cpu_s"] = (totals.get("cpu_s"), "s")
        out["cpu_per_op_us"] = (per_op(totals.get("cpu_s"), ops, 1e6), "us")
        # perf: every switch on the server's CPUs (idle's too, as vmstat); else the server's threads
        # alive at the window's edges (cs_from_perf says which; the split only where it was counted)
        out["cs_per_op"] = (per_op(totals.get("cs"), ops), "count")
        out["vcs_per_op"] = (per_op(totals.get("vcs"), ops), "count")
        out["ivcs_per_op"] = (per_op(totals.get("ivcs"), ops), "count")
        out["cs_from_perf"] = (totals.get("cs_source"), "bool")
        out["server_cpu_migrations"] = (totals.get("migrations"), "count")
        out["rkb_per_op"] = (per_op(totals.get("disk_rbytes"), ops, 1 / 1024), "KiB")
        out["wkb_per_op"] = (per_op(totals.get("disk_wbytes"), ops, 1 / 1024), "KiB")
        out["reads_per_op"] = (per_op(totals.get("disk_reads"), ops), "count")
        out["writes_per_op"] = (per_op(totals.get("disk_writes"), ops), "count")
        out["wchar_kb_per_op"] = (per_op(totals.get("wchar"), ops, 1 / 1024), "KiB")
        out["server_processes"] = (totals.get("processes"), "count")
        out["server_threads"] = (totals.get("threads"), "count")
        out["server_threads_new"] = (totals.get("threads_new"), "count")
        out["cpu_from_cgroup"] = (totals.get("cpu_source"), "bool")
    return out


def sysbench_series(done: sysbench.Finished) -> list[tuple]:
    rows = []
    for iv in done.result.series:
        for name in ("tps", "qps", "lat", "err", "reconn", "threads"):
            label = {"lat": f"lat_p{int(iv['pct'])}_ms", "err": "err/s", "reconn": "reconn/s"}.get(name, name)
            rows.append((iv["t"], "sysbench", label, iv[name]))
    return rows


def measure_together(runs: list[tuple[object, Workload]], *, sql_series: bool = False,
                     lead_s: float = 0.6, slice_s: float | None = None, start_s: float = 0.0,
                     to_quiet: bool = False, quiet_timeout_s: float = QUIET_TIMEOUT_S,
                     quiet_poll_s: float = QUIET_POLL_S) -> list[Measured]:
    """Each (server, workload) inside its own sampling window, all at once: every window opens, the
    workloads start in the order given, every one is waited for, then the windows close. The servers
    share their CPUs, so each sampler counts its server's context switches per thread at the edges
    and no device bytes (the device is shared too): written bytes are the server's own (wchar).

    Besides each run's own figures, the servers are marked twice while every workload runs (``lead_s``
    after the last start, in the order given, and ``lead_s`` before the first one's end, in reverse
    order): ``qps_common`` and ``cpu_per_op_common_us`` are over that common interval
    (dbexp.metrics.marks). A workload not yet started at the first mark, or ended by the second, fails
    the window.

    With ``slice_s``, the clients take turns instead (:func:`measure_in_turns`, which takes ``start_s``,
    ``to_quiet``, ``quiet_timeout_s`` and ``quiet_poll_s``): one server works at any moment, from each client's
    start to its end."""
    if len({id(server) for server, _ in runs}) != len(runs):
        raise DbexpError("workloads measured at once need a server each")
    if slice_s:
        return measure_in_turns(runs, slice_s, sql_series=sql_series, start_s=start_s, to_quiet=to_quiet,
                                quiet_timeout_s=quiet_timeout_s, quiet_poll_s=quiet_poll_s)
    duration = min(wl.duration_s for _, wl in runs)
    if duration <= 2 * lead_s:
        raise DbexpError(f"bad duration {duration!r} s for workloads measured at once: expected more than "
                         f"{2 * lead_s:g} s (a common interval between their starts and ends)")
    order = list(range(len(runs)))
    with contextlib.ExitStack() as stack:
        samplers = [stack.enter_context(Sampler(server, sql_series=sql_series, cpus=wl.cpuset, shared=True))
                    for server, wl in runs]
        marker = stack.enter_context(Marker([server for server, _ in runs]))
        running = []
        try:
            for server, wl in runs:
                running.append(sysbench.start_run(wl, server))
            first, last = running[0].started, running[-1].started
            if not poll(lambda: all(r.has_started() for r in running), last + duration / 2 - time.monotonic(), 0.02):
                raise DbexpError(f"a workload measured at once had not started {duration / 2:g} s after "
                                 "the last start: no common interval")
            time.sleep(max(0.0, last + lead_s - time.monotonic()))
            a = marker.read(order)
            time.sleep(max(0.0, first + duration - lead_s - time.monotonic()))
            b = marker.read(order[::-1])
            if not all(r.running() for r in running):
                raise DbexpError("a workload measured at once ended before the common interval did")
            done = [sysbench.finish_run(r, wl) for r, (_, wl) in zip(running, runs)]
        finally:
            for r in running:
                r.kill()  # a failed or interrupted window leaves no sysbench behind
    out = []
    for i, (d, s) in enumerate(zip(done, samplers)):
        m = summarize(d, s.totals())
        m.update(between(a[i], b[i]))
        out.append(Measured(m, s.counters, sysbench_series(d) + s.series, " ".join(d.cmd)))
    return out


class ServerWatch:
    """What a turn reads of one server (dbexp.experiments.rotation.Watch): the flavor's statement count and
    the client statements executing now (its "sessions" capability, on ``conn``), its container's CPU time
    (``cgroup``), and its processes' context switches and bytes (/proc, dbexp.metrics.procfs).

    Built before any client starts, it reads the server idle a few times first: ``idle`` is what the server
    counts as executing with no client at all (MySQL 8.0's event scheduler thread counts itself in), left out
    of every later read's ``running``."""

    USAGE = ("vcs", "ivcs", "rchar", "wchar")
    IDLE_READS = 3

    def __init__(self, server, conn, cgroup):
        self.activity = server.flavor.capability("sessions").activity
        self.conn, self.cgroup, self.port = conn, cgroup, server.port
        self.idle, self.reads = 0, 0
        idle = [self.read() for _ in range(self.IDLE_READS)]
        self.idle, self.first, self.reads = min(r.running for r in idle), idle[-1], 0

    def read(self) -> Reading:
        pending = procfs.tcp_unread(self.port)  # first: a statement found waiting is counted by a later read
        statements, running = self.activity(self.conn)
        t = time.monotonic()
        self.reads += 1
        return Reading(t, statements, running - self.idle, self.cgroup.cpu_seconds(), pending)

    def run_statements(self, marks: int) -> float:
        """The client statements the server executed since this watch was built, by its own count: a read now
        against the last idle read, every read since (this one and ``marks`` reads of the server's count on
        the same connection) left out."""
        return self.read().statements - self.first.statements - self.reads - marks

    def usage(self) -> procfs.Snapshot:
        return procfs.switches_and_bytes(self.cgroup.pids())

    def spent(self, before: procfs.Snapshot, after: procfs.Snapshot) -> dict[str, float]:
        got = procfs.window(before, after)
        return {k: got[k] for k in self.USAGE}


START_TIMEOUT_S = 30.0  # the longest a client may take to start its threads (load its script, connect, prepare)
START_POLL_S = 0.0005  # between looks at a starting client's output: it runs alone until it is stopped
END_PAD_S = 0.02  # past a client's end before it is resumed to finish: its time is up, it ends its transaction
END_POLL_S = 0.002  # between looks at a finishing client: the next one waits for it
END_TIMEOUT_S = 120.0  # the longest a resumed client may take to end (finish_run's own limit past its --time)
TURN_NAMES = ("slice_ms", "wait_ms", "quiet", "statements", "cpu_ms", "outside_statements", "gap_ms", "tail_ms")


def client_times(durations: list[float], start_s: float) -> list[int]:
    """Each client's sysbench --time (whole seconds) where they start one at a time in the order given, each start
    expected to take ``start_s``: client i of n gets its ``durations[i]`` and the n - 1 - i starts after its own,
    ``ceil((n - 1 - i) x start_s)``, so that their clocks end together about ``durations`` after the last start."""
    n = len(durations)
    return [int(d) + math.ceil(round((n - 1 - i) * start_s, 6)) for i, d in enumerate(durations)]


def measure_in_turns(runs: list[tuple[object, Workload]], slice_s: float, *, sql_series: bool = False,
                     start_s: float = 0.0, to_quiet: bool = False, quiet_timeout_s: float = QUIET_TIMEOUT_S,
                     quiet_poll_s: float = QUIET_POLL_S) -> list[Measured]:
    """Each (server, workload) inside its own sampling window, their clients taking turns of ``slice_s``
    (dbexp.experiments.rotation), so that one server works at any moment from the first client's start to the
    last one's end:

    - the clients start one at a time, each stopped (SIGSTOP) as soon as its threads have started, its
      server then waited for until quiet; each start is expected to take ``start_s``, and a client's sysbench
      --time is its workload's plus the starts after its own (:func:`client_times`), so that the clocks end
      together and the starts take nothing from the turns (``client_time_s``, its --time, and ``starts_s``, the
      first start to the last start's quiet, are recorded; a start took 0.2 s, a scan's at a million rows 0.6 to
      2.1 s, where every client had the workload's --time: 5 PostgreSQL scans' starts took 6.7 s of a 7 s window);
    - the servers are marked (dbexp.metrics.marks), the clients take turns in whole rounds, each turn passing
      only once its server is quiet (no statement in flight; read every ``quiet_poll_s``, at most
      ``quiet_timeout_s``), until one more round would come within two slices of the first clock's end, and the
      servers are marked again;
    - each client, its time up, is resumed alone to finish its last transaction and end.

    Per server, its figures over its own turns (the turns' reads, dbexp.experiments.rotation.Turn):
    ``qps_common``, its statements in its turns over its time with the turn (``active_s``: its client's slices,
    ``slices_s``; with ``to_quiet``, each turn to the end of its server's last statement, ``to_quiet_s``, for
    statements as long as a slice or longer); ``cs_per_op``,
    ``vcs_per_op``, ``ivcs_per_op`` and ``wchar_kb_per_op``, its processes' switches and write() bytes in its
    turns per statement there (``per_op_in_turns``: the sampler's figures over the whole window, which count
    the start and the end too, are replaced); ``cpu_per_op_turns_us``, its CPU in its turns per statement, and
    ``cpu_per_op_common_us``, its CPU between the marks per statement (its background work while the others
    have the turn included, alike for every server); ``lat_avg_turns_ms``, its client threads' mean time per
    statement in its turns. The witness (rotation.held): ``turns`` and ``turns_quiet``, ``turn_wait_ms_mean``
    and ``_max``, ``statements_outside_turns`` (between the marks, outside its turns: 0 expected),
    ``turn_share_pct`` (its statements in its turns over all its client had it run from its start to its end, by
    the server's count: ``statements_run``), ``cpu_outside_turns_s`` and
    ``cpu_over_turn_time`` (its CPU between the marks over its turns' time, waits included); what the turns
    cost: ``turn_gap_ms_mean`` (every client stopped between two turns), ``probe_reads``, ``probe_cpu_us`` (the
    server's CPU between the last two quiet reads: a read's own cost at most, any background work then included); ``active_servers`` is 1 where the witness held, else the
    window's servers. Each turn is in the run's series (source "turn")."""
    ends = client_times([wl.duration_s for _, wl in runs], start_s)  # sysbench's --time
    runs = [(server, dataclasses.replace(wl, duration_s=e)) for (server, wl), e in zip(runs, ends)]
    order = list(range(len(runs)))
    with contextlib.ExitStack() as stack:
        samplers = [stack.enter_context(Sampler(server, sql_series=sql_series, cpus=wl.cpuset, shared=True))
                    for server, wl in runs]
        marker = stack.enter_context(Marker([server for server, _ in runs]))
        watches = [ServerWatch(server, conn, cgroup)
                   for (server, _), conn, cgroup in zip(runs, marker.conns, marker.cgroups)]
        running, started, start_quiet = [], [], []
        try:
            for (server, wl), watch in zip(runs, watches):
                r = sysbench.start_run(wl, server)
                running.append(r)
                if not poll(r.has_started, START_TIMEOUT_S, START_POLL_S):
                    raise DbexpError(f"a workload taking turns had not started its threads {START_TIMEOUT_S:g} s "
                                     f"after its start: {' '.join(r.cmd)}")
                r.proc.send(signal.SIGSTOP)
                started.append(time.monotonic())  # sysbench's clock started before it said so
                start_quiet.append(wait_quiet(watch, quiet_timeout_s, quiet_poll_s).ok)
            starts_s = time.monotonic() - running[0].started
            turns = Rotation([r.proc for r in running], slice_s, watches, quiet_timeout_s, quiet_poll_s)
            deadline = min(t + e for t, e in zip(started, ends)) - 2 * slice_s
            if time.monotonic() + len(runs) * slice_s > deadline:  # a slow spell (or a --time too short for
                # the starts: then every try fails alike, and the third names it): the window is void, retried
                raise RetryableError(f"bad duration {min(ends)!r} s for workloads taking turns (the clients' --time "
                                     f"{', '.join(map(str, ends))} s, starts of {start_s:g} s expected): their starts "
                                     f"took {starts_s:.1f} s, leaving less than a round of {len(runs)} turns of "
                                     f"{slice_s:g} s")
            a = marker.read(order)
            turns.run_until(deadline)
            b = marker.read(order[::-1])
            ended = [server.config.spec for r, (server, _) in zip(running, runs) if not r.running()]
            if ended:  # a round whose statements outlasted its turns (a slow spell): the window is void, retried
                raise RetryableError(f"a workload taking turns ended before its turns did ({listed(ended)}: its "
                                     f"--time ran out, the last round ending {time.monotonic() - deadline:.1f} s past "
                                     "the turns' deadline)")
            done = []
            for r, t, e, (_, wl) in zip(running, started, ends, runs):  # alone, each to its end
                time.sleep(max(0.0, t + e + END_PAD_S - time.monotonic()))
                r.proc.send(signal.SIGCONT)
                r.proc.reap(wl.duration_s + END_TIMEOUT_S, END_POLL_S)  # then finish_run finds it ended
                done.append(sysbench.finish_run(r, wl))
            whole = [watch.run_statements(marks=2) for watch in watches]  # the marks a and b read it too
        finally:
            for r in running:
                r.proc.send(signal.SIGCONT)
                r.kill()  # a failed or interrupted window leaves no sysbench behind
    out = []
    for i, (d, s, (_, wl)) in enumerate(zip(done, samplers, runs)):
        m = summarize(d, s.totals())
        mine = turns.of(i)
        m.update(turn_figures(mine, turns.active_s[i], a[i], b[i], whole[i], wl.threads, len(runs), to_quiet))
        m["start_quiet"] = (float(start_quiet[i]), "bool")
        m["client_time_s"] = (float(ends[i]), "s")
        m["starts_s"] = (starts_s, "s")
        if not start_quiet[i]:  # a statement of its start still in flight at the first mark
            m["active_servers"] = (float(len(runs)), "count")
        m["idle_running"] = (float(watches[i].idle), "count")
        series = [(round(t.began - s.t0, 3), "turn", name, value)
                  for t in mine for name, value in zip(TURN_NAMES, turn_row(t)) if value is not None]
        out.append(Measured(m, s.counters, sysbench_series(d) + s.series + series, " ".join(d.cmd)))
    failed = [f"{runs[i][0].config.spec}: {not_held}" for i, m in enumerate(out)
              if (not_held := _not_held(m.measurements))]
    if failed:
        raise TurnsNotQuiet("clients taking turns did not keep one server working at a time: " + "; ".join(failed))
    return out


def _not_held(m: dict) -> str:
    """What a server's turns show that breaks one server working at a time ('' where nothing does)."""
    v = {k: value for k, (value, _) in m.items()}
    out = []
    if not v.get("start_quiet", 1):
        out.append("still busy after its client's start was stopped, as long as a turn may wait")
    if v["turns_quiet"] < v["turns"]:
        out.append(f"{v['turns'] - v['turns_quiet']:.0f} of {v['turns']:.0f} turns passed before it was quiet "
                   f"(waited up to {v['turn_wait_ms_max']:.0f} ms)")
    if v["statements_outside_turns"]:
        out.append(f"{v['statements_outside_turns']:.0f} statements outside its own turns")
    return ", ".join(out)


def turn_row(t: Turn) -> tuple:
    """A turn's values, in TURN_NAMES' order (None where it has none)."""
    return (1e3 * t.slice_s, 1e3 * t.wait_s, float(t.quiet), t.statements, 1e3 * t.cpu_s, t.outside,
            None if t.gap_s is None else 1e3 * t.gap_s, None if t.tail_s is None else 1e3 * t.tail_s)


def turn_figures(mine: list[Turn], active_s: float, a: Mark, b: Mark, statements: float, threads: int,
                 servers: int, to_quiet: bool = False) -> dict[str, tuple[float | None, str]]:
    """One server's figures over its own turns ``mine`` (see measure_in_turns), between its marks ``a`` and
    ``b``; ``statements``: all its client had it execute, from its first start to its end, by the server's own
    count (sysbench's may count statements the server's count leaves out: PostgreSQL's pg_stat_statements
    counts no BEGIN or COMMIT sent in a prepared transaction); ``threads``: its client's threads, ``servers``:
    the window's; ``active_s``: its client's slices summed, the time its rate is over unless ``to_quiet``, where
    each turn counts to the end of its server's last statement (its slice and ``tail_s``; a turn not found quiet
    counts its whole wait)."""
    n = sum(t.statements for t in mine)
    slices_s = active_s
    quiet_s = sum(t.slice_s + (t.tail_s if t.tail_s is not None else t.wait_s) for t in mine)
    if to_quiet:
        active_s = quiet_s
    tails = [1e3 * t.tail_s for t in mine if t.tail_s is not None]
    reads = sum(1 + t.reads for t in mine)  # every read between the marks adds one to the server's count
    between_marks = b.statements - a.statements - 1 - reads
    cpu_marks = b.cpu_s - a.cpu_s
    cpu_turns = sum(t.cpu_s for t in mine)
    turn_time = sum(t.slice_s + t.wait_s for t in mine)
    used = {k: sum(t.usage.get(k, 0.0) for t in mine) for k in ServerWatch.USAGE}
    quiet = sum(t.quiet for t in mine)
    outside = between_marks - n
    waits = [1e3 * t.wait_s for t in mine]
    gaps = [1e3 * t.gap_s for t in mine if t.gap_s is not None]
    read_cpu = [t.read_cpu_s for t in mine if t.read_cpu_s is not None]
    share = per_op(n, statements, 100.0)
    held = bool(mine) and quiet == len(mine) and outside == 0
    out = {"common_s": (b.t - a.t, "s"), "active_s": (active_s, "s"), "slices": (float(len(mine)), "count"),
           "slices_s": (slices_s, "s"), "to_quiet_s": (quiet_s, "s"), "turns_to_quiet": (float(to_quiet), "bool"),
           "turn_tail_ms_mean": (statistics.fmean(tails) if tails else None, "ms"),
           "statements_per_turn": (per_op(n, len(mine)), "count"),
           "qps_common": (per_op(n, active_s) if active_s > 0 else None, "1/s"),
           "cpu_per_op_common_us": (per_op(cpu_marks, n, 1e6), "us"),
           "cpu_per_op_turns_us": (per_op(cpu_turns, n, 1e6), "us"),
           "cs_per_op": (per_op(used["vcs"] + used["ivcs"], n), "count"),
           "vcs_per_op": (per_op(used["vcs"], n), "count"), "ivcs_per_op": (per_op(used["ivcs"], n), "count"),
           "wchar_kb_per_op": (per_op(used["wchar"], n, 1 / 1024), "KiB"),
           "lat_avg_turns_ms": (per_op(threads * active_s, n, 1e3), "ms"),
           "per_op_in_turns": (1.0, "bool"),
           "turns": (float(len(mine)), "count"), "turns_quiet": (float(quiet), "count"),
           "turn_wait_ms_mean": (statistics.fmean(waits) if waits else None, "ms"),
           "turn_wait_ms_max": (max(waits) if waits else None, "ms"),
           "turn_gap_ms_mean": (statistics.fmean(gaps) if gaps else None, "ms"),
           "statements_in_turns": (n, "count"), "statements_outside_turns": (outside, "count"),
           "statements_run": (statements, "count"),
           "turn_share_pct": (share, "%"),
           "cpu_outside_turns_s": (cpu_marks - cpu_turns, "s"),
           "cpu_over_turn_time": (per_op(cpu_marks, turn_time), "ratio"),
           "probe_reads": (float(reads), "count"),
           "probe_cpu_us": (1e6 * statistics.median(read_cpu) if read_cpu else None, "us"),
           "active_servers": (1.0 if held else float(servers), "count")}
    return out


def measure(server, workload: Workload, *, sample: bool = True, probes=None, extra_counters=None,
            sql_series: bool = True) -> Measured:
    """Run ``workload`` against ``server``; sample the server unless ``sample`` is False
    (the "by hand" control: the same sysbench command with nothing else running)."""
    if not sample:  # only /proc/stat at the edges, for the run's steal
        sets = cpu_sets(workload.cpuset, server.config.cpuset, server.kind == "bare" or is_local())
        before = cpustat.read()
        done = sysbench.run(workload, server)
        steal = cpustat.shares(before, cpustat.read(), sets)
        return Measured(summarize(done, steal), [], sysbench_series(done), " ".join(done.cmd))
    with Sampler(server, probes=probes, extra_counters=extra_counters, sql_series=sql_series,
                 cpus=workload.cpuset) as sampler:
        done = sysbench.run(workload, server)
    return Measured(summarize(done, sampler.totals()), sampler.counters,
                    sysbench_series(done) + sampler.series, " ".join(done.cmd))
