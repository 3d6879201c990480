"""dbexp/metrics/perfstat.py: the parser on real `perf stat -x, -I` output (tests/unit/fixtures/
perf-and-proc-stat.md), the command line, and starting perf where it is missing or fails.

The expected counts are read off the fixture files by eye, not produced by the parser.
"""

from __future__ import annotations

import os
import shutil
import sys
import time

import pytest
from unit_support import fixture_text

from dbexp import process
from dbexp.metrics import perfstat
from dbexp.metrics.perfstat import EVENTS, SPLIT_EVENTS, PerfError, PerfStat

pytestmark = pytest.mark.unit

SESSIONS = "perf-6.1_stat_C1_postgres16_1000_sessions.txt"
NOT_SUPPORTED = "perf-6.1_stat_C1_cycles_not_supported.txt"
FULL = EVENTS + SPLIT_EVENTS  # what the fixture was captured with


@pytest.fixture(scope="module")
def sessions() -> str:
    return fixture_text(SESSIONS)


def test_real_output_parses_every_interval(sessions):
    intervals = perfstat.parse(sessions, FULL)
    assert [ts for ts, _ in intervals] == [1.003983463, 2.005312562, 3.006705737, 4.008148006,
                                           5.009755841, 5.040064956]  # the last: partial, at SIGINT
    assert intervals[0][1] == {"cs_all": 35426, "migrations": 10, "vcs": 33549, "ivcs": 1382}
    assert intervals[-1][1] == {"cs_all": 317, "migrations": 2, "vcs": 274, "ivcs": 22}


def test_totals_add_up_the_intervals(sessions):
    counts = perfstat.PerfCounts(perfstat.parse(sessions, FULL))
    assert counts.totals() == {"cs_all": 169563, "migrations": 109, "vcs": 156503, "ivcs": 9414}


def test_rates_divide_by_each_interval(sessions):
    rows = perfstat.PerfCounts(perfstat.parse(sessions, FULL)).rates()
    assert len(rows) == 6 * len(FULL)
    first = {name: rate for ts, name, rate in rows if ts == 1.003983463}
    assert first["cs_all"] == pytest.approx(35426 / 1.003983463)
    last = {name: rate for ts, name, rate in rows if ts == 5.040064956}
    assert last["vcs"] == pytest.approx(274 / (5.040064956 - 5.009755841))


def test_messages_and_comments_are_not_counts(sessions):
    text = "# started on Sat Nov 21 20:21:14 2026\n\nEvents enabled\n" + sessions + "\n"
    assert perfstat.parse(text, FULL) == perfstat.parse(sessions, FULL)


def test_an_event_perf_cannot_count_is_an_error():
    events = (("cycles", "cycles", None), ("cs_all", "context-switches", None))
    with pytest.raises(PerfError, match="could not count cycles.*not supported"):
        perfstat.parse(fixture_text(NOT_SUPPORTED), events)


def test_lines_that_do_not_match_the_events_are_an_error(sessions):
    with pytest.raises(PerfError, match="expected"):
        perfstat.parse(sessions, EVENTS)  # the two tracepoint lines are unexpected
    truncated = "\n".join(sessions.splitlines()[:-1])  # perf killed while printing its last interval
    with pytest.raises(PerfError, match="at 5.040064956 s"):
        perfstat.parse(truncated, FULL)


def test_no_output_parses_to_nothing():
    assert perfstat.parse("") == []


def test_command_line():
    cmd = perfstat.command("1", 1000, pin="0", perf="perf")
    assert cmd[:3] == ["taskset", "-c", "0"]
    assert cmd[3:] == ["perf", "stat", "-C", "1", "-x,", "-I", "1000", "-e", "context-switches",
                       "-e", "cpu-migrations"]
    # each filter right after the tracepoint it applies to, in the events' order
    assert perfstat.command("1", 1000, FULL)[-12:] == [
        "-e", "context-switches", "-e", "cpu-migrations", "-e", "sched:sched_switch", "--filter",
        perfstat.VCS_FILTER, "-e", "sched:sched_switch", "--filter", perfstat.IVCS_FILTER]
    assert "--control" in perfstat.command("1", control=(5, 6)) and "fd:5,6" in perfstat.command("1", control=(5, 6))
    assert perfstat.command("0-1")[:2] == ["perf", "stat"]


def test_missing_perf_is_an_error(monkeypatch):
    monkeypatch.setattr(perfstat, "perf_binary", lambda: None)
    with pytest.raises(PerfError, match="not installed"):
        PerfStat("1").start()


def fake_perf(tmp_path, body: str) -> str:
    path = tmp_path / "perf"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_perf_that_fails_to_start_is_an_error(tmp_path, monkeypatch):
    perf = fake_perf(tmp_path, "echo \"event syntax error: 'sched:sched_switch'\" >&2; exit 129")
    monkeypatch.setattr(perfstat, "perf_binary", lambda: perf)
    p = PerfStat("1")
    with pytest.raises(PerfError, match="did not start counting.*event syntax error"):
        p.start()
    assert p.proc.returncode == 129


def test_perf_that_never_answers_is_ended(tmp_path, monkeypatch):
    perf = fake_perf(tmp_path, "exec sleep 30")
    monkeypatch.setattr(perfstat, "perf_binary", lambda: perf)
    p = PerfStat("1")
    t = time.monotonic()
    with pytest.raises(PerfError, match="no answer"):
        p.start(timeout_s=0.5)
    assert time.monotonic() - t < 5
    assert p.proc.returncode is not None  # killed, not left running


def _perf_counts_here() -> str | None:
    """Why perf cannot count on this machine, or None."""
    if shutil.which("perf") is None or shutil.which("taskset") is None:
        return "perf is not installed"
    probe = process.run(["perf", "stat", "-C", "0", "-x,", "-e", "sched:sched_switch", "--", "true"],
                        capture_output=True, text=True)
    return None if probe.returncode == 0 else f"perf stat cannot count here: {probe.stderr.strip()[-200:]}"


def test_perf_counts_a_process_switching_on_its_cpu():
    """Live: a child pinned to one CPU sleeps 200 times; perf on that CPU sees 200 voluntary switches."""
    reason = _perf_counts_here()
    if reason:
        pytest.skip(reason)
    cpu = str(max(os.sched_getaffinity(0)))
    p = PerfStat(cpu, interval_ms=100, events=FULL).start()
    try:
        process.run(["taskset", "-c", cpu, sys.executable, "-I", "-S", "-c",
                     "import time\nfor _ in range(200): time.sleep(0.001)"], check=True)
    finally:
        counts = p.stop()
    totals = counts.totals()
    assert totals["vcs"] >= 200
    assert totals["cs_all"] >= totals["vcs"] + totals["ivcs"]  # idle's switches count there too
    assert len(counts.intervals) >= 2 and counts.cpu_s >= counts.startup_cpu_s >= 0
    assert p.proc.returncode is not None
