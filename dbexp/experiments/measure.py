"""One measured run: a workload against a server inside a sampling window, as per-operation numbers."""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field

from dbexp.engine import is_local
from dbexp.errors import DbexpError
from dbexp.waits import poll
from dbexp.metrics import cpustat
from dbexp.metrics.marks import Marker, between
from dbexp.metrics.sampler import Sampler, cpu_sets
from dbexp.experiments.rotation import Rotation
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


QUIESCE_S = 0.05  # after every client stopped: the servers finish the queries in flight (one per client)


def sysbench_series(done: sysbench.Finished) -> list[tuple]:
    rows = []
    for iv in done.result.series:
        for name in ("tps", "qps", "lat", "err", "reconn", "threads"):
            label = {"lat": f"lat_p{int(iv['pct'])}_ms", "err": "err/s", "reconn": "reconn/s"}.get(name, name)
            rows.append((iv["t"], "sysbench", label, iv[name]))
    return rows


def measure_together(runs: list[tuple[object, Workload]], *, sql_series: bool = False,
                     lead_s: float = 0.6, slice_s: float | None = None) -> list[Measured]:
    """Each (server, workload) inside its own sampling window, all at once: every window opens, the
    workloads start in the order given, every one is waited for, then the windows close. The servers
    share their CPUs, so each sampler counts its server's context switches per thread at the edges
    and no device bytes (the device is shared too): written bytes are the server's own (wchar).

    Besides each run's own figures, the servers are marked twice while every workload runs (``lead_s``
    after the last start, in the order given, and ``lead_s`` before the first one's end, in reverse
    order): ``qps_common`` and ``cpu_per_op_common_us`` are over that common interval
    (dbexp.metrics.marks). A workload not yet started at the first mark, or ended by the second, fails
    the window.

    With ``slice_s``, the clients take turns instead (dbexp.experiments.rotation): once every workload
    runs, all clients stop, the first marks are read from idle servers, one client at a time runs for
    ``slice_s`` in whole rounds (forward, then backward) until ``lead_s`` before the first workload's
    end, then all stop again for the second marks, and resume to finish. Only one server works at any
    moment (``active_servers`` 1); ``qps_common`` is a server's statements over its own time with the
    turn (``active_s``), and ``cpu_per_op_common_us`` its CPU between the marks per statement (the
    idle servers' background work included, the same for every one of them)."""
    if len({id(server) for server, _ in runs}) != len(runs):
        raise DbexpError("workloads measured at once need a server each")
    duration = min(wl.duration_s for _, wl in runs)
    if duration <= 2 * lead_s:
        raise DbexpError(f"bad duration {duration!r} s for workloads measured at once: expected more than "
                         f"{2 * lead_s:g} s (a common interval between their starts and ends)")
    order = list(range(len(runs)))
    turns = None
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
            turns = Rotation([r.proc for r in running], slice_s) if slice_s else None
            if turns:
                turns.stop_all()
                time.sleep(QUIESCE_S)  # a query in flight when its client stopped finishes first
            a = marker.read(order)
            if turns:
                turns.run_until(first + duration - lead_s)
                time.sleep(QUIESCE_S)
            else:
                time.sleep(max(0.0, first + duration - lead_s - time.monotonic()))
            b = marker.read(order[::-1])
            if not all(r.running() for r in running):
                raise DbexpError("a workload measured at once ended before the common interval did")
            if turns:
                turns.resume_all()
            done = [sysbench.finish_run(r, wl) for r, (_, wl) in zip(running, runs)]
        finally:
            if turns:
                turns.resume_all()
            for r in running:
                r.kill()  # a failed or interrupted window leaves no sysbench behind
    out = []
    for i, (d, s) in enumerate(zip(done, samplers)):
        m = summarize(d, s.totals())
        m.update(between(a[i], b[i], turns.active_s[i] if turns else None))
        if turns:
            m["active_servers"] = (1.0, "count")
            m["slices"] = (float(turns.slices[i]), "count")
        out.append(Measured(m, s.counters, sysbench_series(d) + s.series, " ".join(d.cmd)))
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
