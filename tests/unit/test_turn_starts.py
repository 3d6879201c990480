"""Clients taking turns whose starts take nothing from the turns (issue 47), without servers: each client's
sysbench --time is the window's and the expected starts after its own, so that their clocks end together; the
window records each client's --time and how long the starts took, and its command line shows the --time it ran."""

from __future__ import annotations

import signal
import time
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

from dbexp.experiments import measure
from dbexp.experiments.measure import client_times, measure_in_turns
from dbexp.experiments.rotation import Reading
from dbexp.metrics.marks import Mark
from dbexp.workloads.sysbench import Workload

pytestmark = pytest.mark.unit


def test_each_client_gets_the_starts_after_its_own_as_more_time():
    assert client_times([7, 7, 7, 7, 7], 1.8) == [15, 13, 11, 9, 7]
    assert client_times([7, 7, 7, 7, 7], 0.3) == [9, 8, 8, 8, 7]  # ceil(1.2), ceil(0.9), ...
    assert client_times([6, 6, 6], 0.0) == [6, 6, 6]  # no starts expected: the workloads' own --time
    assert client_times([4.0, 4.0], 0.5) == [5, 4] and client_times([], 1.0) == []


class FakeServer:
    """A server as the window's marks and reads see it: every read adds one to its count; its client, while it
    has the turn, executes a statement a millisecond (counted as it is stopped)."""

    def __init__(self, name):
        self.config = SimpleNamespace(spec=name)
        self.statements, self.cpu = 0.0, 0.0
        self.since = None

    def read(self):
        self.statements += 1
        self.cpu += 0.0001
        return self.statements


class FakeProc:
    def __init__(self, server, log, name):
        self.server, self.log, self.name = server, log, name

    def send(self, sig):
        self.log.append((time.monotonic(), self.name, sig))
        if sig == signal.SIGCONT and self.server.since is None:
            self.server.since = time.monotonic()
        elif sig == signal.SIGSTOP and self.server.since is not None:
            self.server.statements += int(1000 * (time.monotonic() - self.server.since))
            self.server.since = None

    def reap(self, timeout_s, poll_s):
        pass


def fake_lab(monkeypatch, start_took_s):
    """measure_in_turns' sampler, marks, reads and sysbench, faked: each start takes ``start_took_s``."""
    log, started = [], []

    @contextmanager
    def sampler(server, **_):
        yield SimpleNamespace(totals=lambda: {}, counters=[], series=[], t0=time.monotonic())

    @contextmanager
    def marker(servers):
        def read(order):
            out = {}
            for i in order:
                out[i] = Mark(time.monotonic(), servers[i].read(), servers[i].cpu)
            return [out[i] for i in range(len(servers))]
        yield SimpleNamespace(conns=servers, cgroups=servers, read=read)

    class Watch:
        USAGE = measure.ServerWatch.USAGE

        def __init__(self, server, conn, cgroup):
            self.server, self.idle, self.first = server, 0, server.statements

        def read(self):
            return Reading(time.monotonic(), self.server.read(), 0, self.server.cpu, 0)

        def usage(self):
            return 0.0

        def spent(self, before, after):
            return {"vcs": 0.0, "ivcs": 0.0, "rchar": 0.0, "wchar": 0.0}

        def run_statements(self, marks):
            return self.server.statements

    def start_run(wl, server):
        time.sleep(start_took_s)  # the client loads its script and connects
        t = time.monotonic()
        started.append((server.config.spec, t, wl.duration_s))
        cmd = ["sysbench", wl.script, f"--time={int(wl.duration_s)}", "run"]
        return SimpleNamespace(proc=FakeProc(server, log, server.config.spec), started=t, cmd=cmd,
                               has_started=lambda: True, running=lambda: time.monotonic() < t + wl.duration_s + 1,
                               kill=lambda: None)

    def finish_run(r, wl):
        return SimpleNamespace(cmd=r.cmd, client_cpu_s=0.0, client_cs=0.0,
                               result=SimpleNamespace(summary=lambda: {"queries": 1.0}, queries=1.0, series=[]))

    monkeypatch.setattr(measure, "Sampler", sampler)
    monkeypatch.setattr(measure, "Marker", marker)
    monkeypatch.setattr(measure, "ServerWatch", Watch)
    monkeypatch.setattr(measure.sysbench, "start_run", start_run)
    monkeypatch.setattr(measure.sysbench, "finish_run", finish_run)
    return log, started


def test_the_clients_clocks_end_together_and_the_turns_run_after_the_last_start(monkeypatch):
    """Three clients of a 1 s window whose starts take 0.3 s each: without more time for the first ones, their turns
    would end 2 slices before the first one's clock (0.6 s of it gone to the starts); with starts of 0.3 s expected,
    the first two get 2 s and the last 1 s (ceil(0.6), ceil(0.3) s more), their clocks end together to a whole
    second, and the turns run about
    the window less 2 slices after the last start."""
    log, started = fake_lab(monkeypatch, 0.3)
    servers = [FakeServer(f"s{i}") for i in range(3)]
    wl = Workload("oltp_point_select", 1, 1, 1, 1000, cpuset=None)
    got = measure_in_turns([(s, wl) for s in servers], 0.02, start_s=0.3)
    times = [m.measurements["client_time_s"][0] for m in got]
    assert times == [2.0, 2.0, 1.0] == [d for _, _, d in started]
    assert [m.command.split()[2] for m in got] == ["--time=2", "--time=2", "--time=1"]  # the --time it ran
    ends = [t + d for _, t, d in started]
    # together to the whole second sysbench's --time takes, the first clock ending no earlier than the last one
    assert max(ends) - min(ends) < 1.0 + 0.1 and min(ends) == pytest.approx(started[-1][1] + 1.0)
    starts = {m.measurements["starts_s"][0] for m in got}
    assert len(starts) == 1 and 0.6 <= starts.pop() < 1.2  # the first start to the last one's quiet
    last_start = started[-1][1]
    turns = [t for t, _, sig in log if sig == signal.SIGCONT]
    assert turns and min(turns) >= last_start
    # the turns' deadline: two slices before the first clock's end, which is about the window after the last start
    assert max(t for t, _, sig in log if sig == signal.SIGSTOP and t < min(ends)) <= min(ends) - 2 * 0.02 + 0.05
    common = [m.measurements["common_s"][0] for m in got]
    assert min(common) > 1.0 - 2 * 0.02 - 0.3 - 0.1  # about the window less two slices, not less the starts
    for m in got:
        v = {k: value for k, (value, _) in m.measurements.items()}
        assert v["turns"] >= 2 and v["turns_quiet"] == v["turns"] and v["statements_outside_turns"] == 0


def test_without_expected_starts_the_starts_eat_the_turns(monkeypatch):
    """The same window with every client on the workload's --time: the starts (0.6 s after the first) come out of
    the turns, which end 2 slices before the first client's clock."""
    log, started = fake_lab(monkeypatch, 0.3)
    servers = [FakeServer(f"s{i}") for i in range(3)]
    wl = Workload("oltp_point_select", 1, 1, 1, 1000, cpuset=None)
    got = measure_in_turns([(s, wl) for s in servers], 0.02)
    assert [m.measurements["client_time_s"][0] for m in got] == [1.0, 1.0, 1.0]
    assert max(m.measurements["common_s"][0] for m in got) < 1.0 - 0.6 + 0.05
