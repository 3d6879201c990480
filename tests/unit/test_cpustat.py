"""dbexp/metrics/cpustat.py on two real readings of /proc/stat taken a second apart on the lab's
2-CPU VM (tests/unit/fixtures/perf-and-proc-stat.md), while a server ran on CPU 1, given to it as
psutil's per-CPU times (what cpustat.read() returns: seconds, one namedtuple per CPU).

The expected numbers are read off the fixture files by eye.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest
from unit_support import fixture_text

from dbexp.metrics import cpustat

pytestmark = pytest.mark.unit

BEFORE = "proc-stat_kernel-6.18_2cpu_before.txt"
AFTER = "proc-stat_kernel-6.18_2cpu_after.txt"


TICKS = 100  # USER_HZ: /proc/stat counts 1/100 s
SCPUTIMES = type(psutil.cpu_times())


def as_psutil(text: str) -> cpustat.Reading:
    """The ``cpuN`` lines of a /proc/stat, as psutil.cpu_times(percpu=True) gives them, by CPU number."""
    out = {}
    for line in text.splitlines():
        name, *values = line.split()
        if name.startswith("cpu") and name[3:].isdigit():
            out[int(name[3:])] = SCPUTIMES(*(int(v) / TICKS for v in values[:len(SCPUTIMES._fields)]))
    return out


@pytest.fixture(scope="module")
def readings():
    return as_psutil(fixture_text(BEFORE)), as_psutil(fixture_text(AFTER))


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


def test_older_kernels_without_steal_count_none():
    """psutil leaves out the fields a kernel does not print (steal arrived in 2.6.11)."""
    old = type("scputimes", (), {})

    def reading(user, idle):
        r = old()
        r.user, r.nice, r.system, r.idle, r.iowait, r.irq, r.softirq = user, 0.0, 0.0, idle, 0.0, 0.0, 0.0
        return {0: r}

    w = cpustat.window(reading(1.0, 1.0), reading(1.5, 2.0), [0])
    assert (w["busy_s"], w["idle_s"], w["steal_s"], w["steal_pct"]) == (0.5, 1.0, 0.0, 0.0)


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="needs Linux /proc")
def test_this_machine_by_cpu_number():
    """read() names each CPU by its number: the ``cpuN`` line of /proc/stat read just before and after."""
    before = as_psutil(Path("/proc/stat").read_text())
    got = cpustat.read()
    after = as_psutil(Path("/proc/stat").read_text())
    assert set(os.sched_getaffinity(0)) <= set(got) == set(before)
    for cpu, times in got.items():
        for field in SCPUTIMES._fields:
            assert getattr(before[cpu], field) <= getattr(times, field) + 1e-9
            assert getattr(times, field) <= getattr(after[cpu], field) + 1e-9
