"""Where metrics are sampled: the server's process set read at the window's edges, the kernel's
counts of its CPUs, and once a second a few cheap files and the server's counters.

Usage::

    with Sampler(server) as s:
        ... run the workload ...
    s.totals()    # CPU seconds, context switches, bytes read/written over the window
    s.counters    # the server's counters as deltas over the window
    s.series      # per-second rows: (t, source, name, value)

Nothing is read per server process while the workload runs, so the sampler's cost does not grow
with the number of server processes (it used to list every process's threads ten times a second,
on the client's CPU: with PostgreSQL's 1,000 backends that slowed the client it measured):

- server CPU time: the container's cgroup (exact, also once a second); a bare server's process
  tree read at the edges, its reaped children included (dbexp.metrics.procfs);
- context switches (``cs``): counted by the kernel on the server's CPUs with ``perf stat -C``
  (dbexp.metrics.perfstat), every switch there (idle's included, as vmstat counts them), when the
  server and the client are pinned to disjoint CPUs; the voluntary/involuntary split only with
  ``cs_split`` (it costs about 1% more of the server's CPU). Otherwise, or where perf does not
  start, the per-thread counters read at the edges, which miss the threads that exit inside the
  window, a PostgreSQL backend of a sysbench connection among them (``cs_source`` says which, and
  ``notes`` why);
- logical I/O (wchar), processes and threads: the process set read at the edges (a bare
  server's CPU has no per-second series; the server CPUs' busy share from /proc/stat stands in);
- disk bytes: the device's counters (dbexp.metrics.diskstats), at the edges and once a second;
- busy and stolen CPU time of the server's and the client's CPUs: /proc/stat
  (dbexp.metrics.cpustat), at the edges and once a second.

A server measured at once with others on the same CPUs (``shared``) gets its context switches from
its own threads at the edges (perf on the CPUs would count its neighbours' too) and no device bytes
(the device is theirs too); its CPU time, its written bytes (wchar) and its counters are its own.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable

from dbexp.engine import is_local
from dbexp.errors import DbexpError
from dbexp.metrics import counters as srv_counters
from dbexp.metrics import cpustat, diskstats, procfs
from dbexp.metrics.cgroup import ContainerCgroup
from dbexp.metrics.perfstat import EVENTS, SPLIT_EVENTS, PerfError, PerfStat


class SamplingError(DbexpError):
    """A sample taken inside the window failed: the run's series would have a silent gap."""


RATE_NAMES = ("cpu_s", "disk_rbytes", "disk_wbytes")  # per-second rates of the cheap cumulative counts
Probe = Callable[[object], dict[str, float]]  # conn -> {name: value}, sampled every interval
CS_SOURCES = {"edge": 0.0, "perf": 1.0}  # how context switches were counted (totals' cs_source)


def _cpu_list(cpus: str | None) -> list[int]:
    from dbexp.servers.config import cpus_of
    return cpus_of(cpus)


def cpu_sets(client_cpus: str | None, server_cpus: str | None, server_here: bool) -> dict[str, list[int]]:
    """The CPU sets whose busy and stolen time a run records: the client's (all CPUs where it is
    not pinned) and, where this host runs the server, the server's (all where it is not pinned)."""
    out = {"client": _cpu_list(client_cpus)}
    if server_here:
        out["server"] = _cpu_list(server_cpus)
    return out


class Sampler:
    def __init__(self, server, interval_s: float = 1.0, probes: dict[str, Probe] | None = None,
                 sql_series: bool = True, extra_counters: dict[str, Probe] | None = None,
                 cpus: str | None = None, database: str | None = None,
                 cs_split: bool = False, shared: bool = False):
        self.server = server
        self.database = database or server.flavor.default_db  # whose per-database counters are read
        self.interval_s = interval_s
        self.cpus = cpus  # the client's CPUs: the sampling thread and perf run here, away from the server
        self.probes = probes or {}  # sampled every interval into the series
        self.extra_counters = extra_counters or {}  # read at both ends into the counter deltas
        self.sql_series = sql_series
        self.cs_split = cs_split  # perf also counts voluntary and involuntary switches apart
        self.shared = shared  # other servers measured at the same time share the CPUs and the device
        self.local = server.kind == "bare" or is_local()
        self.server_cpus: str | None = None  # where the server may run, as the kernel sees it
        self.cs_source = "edge"
        self.notes: list[str] = []  # why a cheaper or better source was not used
        self.errors: list[str] = []  # samples that failed: a run with any is failed, never a silent gap
        self.series: list[tuple[float, str, str, float]] = []
        self.counters: list[dict] = []
        self.elapsed_s = 0.0
        self._cgroup = None
        self._conn = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._cpu0 = self._cpu_end = None
        self._before: dict = {}
        self._prev: dict[str, float] = {}
        self._device: str | None = None
        self._disk0: dict[str, float] | None = None
        self._disk_end: dict[str, float] | None = None
        self._procs0 = self._procs_end = None
        self._stat0 = self._stat_prev = self._stat_end = None
        self._cpu_sets: dict[str, list[int]] = {}
        self._perf: PerfStat | None = None
        self._perf_counts = None
        self._edge_cpu_s = 0.0  # the sampler's own CPU time at the edges (outside the workload)
        self._loop_cpu_s = 0.0  # ... and inside the window (the sampling thread)

    @property
    def t0(self) -> float:
        """time.monotonic() when the window opened: the zero of every series time."""
        return self._t0

    # --- process set -----------------------------------------------------------------------
    def _pids(self) -> list[int]:
        if not self.local:
            return []
        if self.server.kind == "bare":
            return procfs.descendants(self.server.main_pid())
        return self._cgroup.pids() if self._cgroup else []

    def _disk(self) -> dict[str, float]:
        """Device counters since the window opened."""
        now = diskstats.read(self._device) if self._device else None
        if now is None or self._disk0 is None:
            return {}
        return {k: now[k] - self._disk0[k] for k in now}

    def _data_path(self) -> str | None:
        if self.server.kind == "bare":
            return self.server.data_dir
        from dbexp.engine import client
        return client().info().get("DockerRootDir")

    def _cpu(self) -> float | None:
        if self._cgroup is not None:
            return self._cgroup.cpu_seconds()
        return None

    def _find_server_cpus(self) -> str | None:
        """The server's CPUs as the kernel enforces them (its main process's affinity), else as asked."""
        pid = self.server.main_pid()
        return (procfs.cpus_allowed(pid) if pid else None) or self.server.config.cpuset

    def _start_perf(self) -> None:
        """Count context switches on the server's CPUs, where that counts the server only."""
        if self.shared:
            self.notes.append("context switches from /proc at the edges: other servers measured at once "
                              "share the server's CPUs")
            return
        if not (self.server_cpus and self.cpus):
            self.notes.append("context switches from /proc at the edges: the server or the client is not pinned")
            return
        if set(_cpu_list(self.server_cpus)) & set(_cpu_list(self.cpus)):
            self.notes.append(f"context switches from /proc at the edges: the server's CPUs "
                              f"{self.server_cpus} overlap the client's {self.cpus}")
            return
        try:
            events = EVENTS + (SPLIT_EVENTS if self.cs_split else ())
            self._perf = PerfStat(self.server_cpus, pin=self.cpus, interval_ms=int(self.interval_s * 1000),
                                  events=events).start()
            self.cs_source = "perf"
        except PerfError as exc:
            self._perf = None
            self.notes.append(f"context switches from /proc at the edges: {exc}")

    # --- window ------------------------------------------------------------------------------
    def __enter__(self) -> "Sampler":
        cpu_t = time.thread_time()
        if self.local and self.server.kind == "container":
            self._cgroup = ContainerCgroup(self.server.main_pid())
            if not self._cgroup.pids():
                self.local = False  # another cgroup namespace: record these metrics as missing, not as 0
        self._conn = self.server.connect(self.database)
        try:
            self._before = self._snapshot()
            if self.local:
                self._device = None if self.shared else diskstats.device_of(self._data_path() or "/")
                self._disk0 = diskstats.read(self._device) if self._device else None
                self.server_cpus = self._find_server_cpus()
                self._procs0 = procfs.snapshot(self._pids())
                self._start_perf()
            self._cpu_sets = cpu_sets(self.cpus, self.server_cpus, self.local)  # whose busy and steal time
            self._stat0 = self._stat_prev = cpustat.read()
            self._t0 = time.monotonic()
            self._cpu0 = self._cpu()
            self._prev = {f"server.{n}": 0.0 for n in RATE_NAMES}
            for name, value in srv_counters.series_values(self.server.flavor, self._before).items():
                self._prev[f"counter.{name}"] = value
        except BaseException:
            if self._perf is not None:
                self._perf.close()
            self._conn.close()
            raise
        self._edge_cpu_s += time.thread_time() - cpu_t
        self._thread = threading.Thread(target=self._loop, name="dbexp-sampler", daemon=True)
        self._thread.start()
        return self

    def _snapshot(self) -> dict:
        snap = self.server.flavor.counters(self._conn, self.database)
        for source, read in self.extra_counters.items():
            snap.update({(source, name): float(v) for name, v in read(self._conn).items()})
        return snap

    def _loop(self) -> None:
        """One sample every interval_s, on the client's CPUs; asleep in between."""
        if self.cpus:
            os.sched_setaffinity(0, set(_cpu_list(self.cpus)))  # on Linux: this thread only
        try:
            next_t = self.interval_s
            while not self._stop.wait(max(0.0, next_t - (time.monotonic() - self._t0))):
                next_t += self.interval_s
                self._sample_once()
        except Exception as exc:  # kept: __exit__ fails the run with it (a dead thread is a silent gap)
            self.errors.append(f"sampler stopped at {time.monotonic() - self._t0:.1f} s: "
                               f"{type(exc).__name__}: {exc}")
        finally:
            self._loop_cpu_s = time.thread_time()

    def _sample_once(self) -> None:
        t = round(time.monotonic() - self._t0, 3)
        totals = self._disk()
        cpu = self._cpu()
        if cpu is not None and self._cpu0 is not None:
            totals["cpu_s"] = cpu - self._cpu0
        for name in RATE_NAMES:
            if name in totals:
                self._rate(t, "server", name, totals[name])
        try:
            stat = cpustat.read()
            self._cpu_rows(t, self._stat_prev, stat)
            self._stat_prev = stat
        except (OSError, KeyError) as exc:
            self.errors.append(f"/proc/stat sample at {t:.1f} s: {type(exc).__name__}: {exc}")
        if self.sql_series:
            try:
                snap = self.server.flavor.counters(self._conn, self.database)
                for name, value in srv_counters.series_values(self.server.flavor, snap).items():
                    if name in self.server.flavor.gauges:
                        self.series.append((t, "counter", name, value))
                    else:
                        self._rate(t, "counter", name, value)
            except Exception as exc:  # kept: __exit__ fails the run with it
                self.errors.append(f"counter sample at {t:.1f} s: {type(exc).__name__}: {exc}")
        for source, probe in self.probes.items():
            try:
                for name, value in probe(self._conn).items():
                    self.series.append((t, source, name, float(value)))
            except Exception as exc:
                self.errors.append(f"probe {source} at {t:.1f} s: {type(exc).__name__}: {exc}")

    def _cpu_rows(self, t: float, before, after) -> None:
        for name, value in cpustat.shares(before, after, self._cpu_sets).items():
            if name.endswith("_pct") and value is not None:
                self.series.append((t, "cpu", name, value))

    def _rate(self, t: float, source: str, name: str, cumulative: float) -> None:
        """Store a per-second rate computed from a cumulative value."""
        key = f"{source}.{name}"
        prev = self._prev.get(key)
        prev_t = self._prev.get(key + "@t", 0.0)
        self._prev[key], self._prev[key + "@t"] = cumulative, t
        if prev is not None and t > prev_t:
            self.series.append((t, source, name + "/s", (cumulative - prev) / (t - prev_t)))

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        cpu_t = time.thread_time()
        try:
            self._cpu_end = self._cpu()
            self._disk_end = self._disk()
            self._stat_end = cpustat.read()
            self.elapsed_s = time.monotonic() - self._t0
            self._stop_perf()
            if self.local:
                self._procs_end = procfs.snapshot(self._pids())
            after = self._snapshot()
            self.counters = srv_counters.deltas(self._before, after)
        finally:
            if self._perf is not None:
                self._perf.close()  # never left running, whatever failed
            self._conn.close()
            self._edge_cpu_s += time.thread_time() - cpu_t
        if self.errors and exc[0] is None:
            raise SamplingError(f"{len(self.errors)} sample(s) failed; first: {self.errors[0]}")

    def _stop_perf(self) -> None:
        if self._perf is None:
            return
        try:
            self._perf_counts = self._perf.stop()
        except PerfError as exc:  # perf died or garbled inside the window: the run fails
            self.errors.append(f"perf stat: {exc}")
            return
        shift = self._perf.started - self._t0  # perf's clock starts when it starts counting
        for ts, name, rate in self._perf_counts.rates():
            self.series.append((round(ts + shift, 3), "server", f"{name}/s", rate))

    def totals(self) -> dict[str, float | None]:
        """Server resource use over the window; None (or absent) where this host cannot see it."""
        out: dict[str, float | None] = {}
        if self._stat0 is not None and self._stat_end is not None:
            out.update(cpustat.shares(self._stat0, self._stat_end, self._cpu_sets))
        perf = self._perf_counts
        out["sampler_cpu_s"] = self._loop_cpu_s + (perf.cpu_s - perf.startup_cpu_s if perf else 0.0)
        out["sampler_edge_cpu_s"] = self._edge_cpu_s + (perf.startup_cpu_s if perf else 0.0)
        out["elapsed_s"] = self.elapsed_s
        if not self.local or self._procs0 is None or self._procs_end is None:
            return out
        edge = procfs.window(self._procs0, self._procs_end)
        out.update(edge, **(self._disk_end or {}))
        out["cpu_s_procfs"] = edge["cpu_s"]
        out["cpu_source"] = 0.0  # procfs, at the edges
        if self._cpu0 is not None and self._cpu_end is not None:
            out["cpu_s"] = self._cpu_end - self._cpu0  # the cgroup's exact figure
            out["cpu_source"] = 1.0  # cgroup
        out["vcs_edge"], out["ivcs_edge"] = edge["vcs"], edge["ivcs"]
        out["cs"] = edge["vcs"] + edge["ivcs"]
        out["cs_source"] = CS_SOURCES[self.cs_source]
        if perf is not None:  # on the server's CPUs: cs_all, migrations (and vcs, ivcs with cs_split)
            out["vcs"] = out["ivcs"] = None
            out.update(perf.totals())
            out["cs"] = out["cs_all"]
        return out
