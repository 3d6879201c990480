"""Where metrics are sampled: a background thread polling /proc, the cgroup and the server's counters.

Usage::

    with Sampler(server) as s:
        ... run the workload ...
    s.totals()    # CPU seconds, context switches, bytes read/written over the window
    s.counters    # the server's counters as deltas over the window
    s.series      # per-second rows: (t, source, name, value)
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable

from dbexp.engine import is_local
from dbexp.errors import DbexpError
from dbexp.metrics import counters as srv_counters
from dbexp.metrics import diskstats
from dbexp.metrics.cgroup import ContainerCgroup
from dbexp.metrics.procfs import Tracker, descendants


class SamplingError(DbexpError):
    """A sample taken inside the window failed: the run's series would have a silent gap."""


RATE_NAMES = ("cpu_s", "vcs", "ivcs", "wchar", "disk_rbytes", "disk_wbytes")
Probe = Callable[[object], dict[str, float]]  # conn -> {name: value}, sampled every interval


class Sampler:
    def __init__(self, server, interval_s: float = 1.0, probes: dict[str, Probe] | None = None,
                 sql_series: bool = True, extra_counters: dict[str, Probe] | None = None,
                 new_task_interval_s: float = 0.1, cpus: str | None = None, database: str | None = None):
        self.server = server
        self.database = database or server.flavor.default_db  # whose per-database counters are read
        self.interval_s = interval_s
        self.new_task_interval_s = new_task_interval_s
        self.cpus = cpus  # pin the sampling thread here (the client's CPUs), away from the server
        self.probes = probes or {}  # sampled every interval into the series
        self.extra_counters = extra_counters or {}  # read at both ends into the counter deltas
        self.sql_series = sql_series
        self.local = server.kind == "bare" or is_local()
        self.tracker = Tracker()
        self.errors: list[str] = []  # samples that failed: a run with any is failed, never a silent gap
        self.series: list[tuple[float, str, str, float]] = []
        self.counters: list[dict] = []
        self._cgroup = None
        self._conn = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._cpu0 = None
        self._cpu_end = None
        self._before: dict = {}
        self._prev: dict[str, float] = {}
        self._device: str | None = None
        self._disk0: dict[str, float] | None = None
        self._disk_end: dict[str, float] | None = None

    # --- process set -----------------------------------------------------------------------
    def _pids(self) -> list[int]:
        if not self.local:
            return []
        if self.server.kind == "bare":
            return descendants(self.server.main_pid())
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

    # --- window ------------------------------------------------------------------------------
    def __enter__(self) -> "Sampler":
        if self.local and self.server.kind == "container":
            self._cgroup = ContainerCgroup(self.server.main_pid())
            if not self._cgroup.pids():
                self.local = False  # another cgroup namespace: record these metrics as missing, not as 0
        self._conn = self.server.connect(self.database)
        try:
            self._before = self._snapshot()
        except BaseException:
            self._conn.close()
            raise
        if self.local:
            self._device = diskstats.device_of(self._data_path() or "/")
            self._disk0 = diskstats.read(self._device) if self._device else None
        self._t0 = time.monotonic()
        self._cpu0 = self._cpu()
        self._prev = {f"server.{n}": 0.0 for n in RATE_NAMES}
        for name, value in srv_counters.series_values(self.server.flavor, self._before).items():
            self._prev[f"counter.{name}"] = value
        self.tracker.sample(self._pids())
        self._thread = threading.Thread(target=self._loop, name="dbexp-sampler", daemon=True)
        self._thread.start()
        return self

    def _snapshot(self) -> dict:
        snap = self.server.flavor.counters(self._conn, self.database)
        for source, read in self.extra_counters.items():
            snap.update({(source, name): float(v) for name, v in read(self._conn).items()})
        return snap

    def _loop(self) -> None:
        """Every new_task_interval_s: tasks born in the window; every interval_s: the series."""
        if self.cpus:
            from dbexp.servers.config import cpus_of
            os.sched_setaffinity(0, set(cpus_of(self.cpus)))  # on Linux: this thread only
        next_full = self.interval_s
        while not self._stop.wait(self.new_task_interval_s):
            if time.monotonic() - self._t0 >= next_full:
                next_full += self.interval_s
                self._sample_once()
            elif self.local:
                self.tracker.sample(self._pids(), only_new=True)

    def _sample_once(self) -> None:
        t = round(time.monotonic() - self._t0, 3)
        self.tracker.sample(self._pids())
        totals = dict(self.tracker.totals(), **self._disk())
        cpu = self._cpu()
        if cpu is not None and self._cpu0 is not None:
            totals["cpu_s"] = cpu - self._cpu0
        for name in RATE_NAMES:
            if name in totals:
                self._rate(t, "server", name, totals[name])
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
        self.tracker.sample(self._pids())
        self._cpu_end = self._cpu()
        self._disk_end = self._disk()
        self.elapsed_s = time.monotonic() - self._t0
        try:
            after = self._snapshot()
            self.counters = srv_counters.deltas(self._before, after)
        finally:
            self._conn.close()
        if self.errors and exc[0] is None:
            raise SamplingError(f"{len(self.errors)} sample(s) failed; first: {self.errors[0]}")

    def totals(self) -> dict[str, float | None]:
        """Server resource use over the window; None where this host cannot see it."""
        if not self.local:
            return {}
        out: dict[str, float | None] = dict(self.tracker.totals(), **(self._disk_end or {}))
        out["cpu_s_procfs"] = out["cpu_s"]
        out["cpu_source"] = 0.0  # procfs
        if self._cpu0 is not None and self._cpu_end is not None:
            out["cpu_s"] = self._cpu_end - self._cpu0  # the cgroup's exact figure
            out["cpu_source"] = 1.0  # cgroup
        return out
