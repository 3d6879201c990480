"""dbexp/metrics/cpustat.py on two real readings of /proc/stat taken a second apart on the lab's
2-CPU VM (tests/unit/fixtures/perf-and-proc-stat.md), while a server ran on CPU 1.

The expected numbers are read off the fixture files by eye.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from unit_support import fixture_text

from dbexp.metrics import cpustat

pytestmark = pytest.mark.unit

BEFORE = "proc-stat_kernel-6.18_2cpu_before.txt"
AFTER = "proc-stat_kernel-6.18_2cpu_after.txt"


@pytest.fixture(scope="module")
def readings():
    return cpustat.parse(fixture_text(BEFORE)), cpustat.parse(fixture_text(AFTER))


def test_parse_reads_each_cpu_not_the_sum(readings):
    before, _ = readings
    assert sorted(before) == [0, 1]
    assert before[1] == {"user": 145367, "nice": 727, "system": 105534, "idle": 910886, "iowait": 5361,
                         "irq": 0, "softirq": 30276, "steal": 257, "guest": 0, "guest_nice": 0}


def test_window_of_the_server_cpu(readings):
    # CPU 1: user +28, system +69, idle +3, steal +1: 101 ticks
    w = cpustat.window(*readings, [1])
    assert w["busy_s"] == pytest.approx(0.97)
    assert w["idle_s"] == pytest.approx(0.03)
    assert w["steal_s"] == pytest.approx(0.01)
    assert w["total_s"] == pytest.approx(1.01)
    assert w["steal_pct"] == pytest.approx(100 / 101)
    assert w["busy_pct"] == pytest.approx(9700 / 101)


def test_window_of_a_set_sums_its_cpus(readings):
    # CPU 0: user +2, system +2, idle +96: 100 ticks, no steal
    w0 = cpustat.window(*readings, [0])
    assert (w0["busy_s"], w0["steal_s"], w0["steal_pct"]) == (pytest.approx(0.04), 0.0, 0.0)
    both = cpustat.window(*readings, [0, 1])
    assert both["total_s"] == pytest.approx(2.01)
    assert both["steal_pct"] == pytest.approx(100 / 201)


def test_shares_names_each_set(readings):
    out = cpustat.shares(*readings, {"server": [1], "client": [0]})
    assert out["steal_server_s"] == pytest.approx(0.01) and out["steal_client_s"] == 0.0
    assert out["server_busy_pct"] == pytest.approx(9700 / 101)
    assert out["client_busy_pct"] == pytest.approx(4.0)
    assert set(out) == {k for who in ("server", "client")
                        for k in (f"{who}_busy_s", f"{who}_busy_pct", f"steal_{who}_s", f"steal_{who}_pct")}


def test_no_time_elapsed_has_no_shares(readings):
    before, _ = readings
    w = cpustat.window(before, before, [0, 1])
    assert w["total_s"] == 0 and w["steal_pct"] is None and w["busy_pct"] is None


def test_a_cpu_missing_from_a_reading_is_an_error(readings):
    before, after = readings
    with pytest.raises(KeyError):
        cpustat.window(before, {0: after[0]}, [0, 1])  # CPU 1 went offline


def test_older_kernels_print_fewer_fields():
    got = cpustat.parse("cpu  1 2 3 4\ncpu0 1 2 3 4 5 6 7\n")
    assert got == {0: {"user": 1, "nice": 2, "system": 3, "idle": 4, "iowait": 5, "irq": 6, "softirq": 7,
                       "steal": 0, "guest": 0, "guest_nice": 0}}


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="needs Linux /proc")
def test_this_machine():
    got = cpustat.read()
    assert set(os.sched_getaffinity(0)) <= set(got)
    assert all(v >= 0 for cpu in got.values() for v in cpu.values())
