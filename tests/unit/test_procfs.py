"""dbexp/metrics/procfs.py against real processes and threads of this test (no server).

The child burns CPU time measured by its own clock (time.process_time), so the expected
amount does not depend on how busy the machine is; /proc reports it in clock ticks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dbexp.metrics import procfs

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

BURN_S = 0.3
TICK_S = 1 / os.sysconf("SC_CLK_TCK")
WRITE_BYTES = 100_000

# Answers one command a line: burn (BURN_S of CPU), write (WRITE_BYTES to /dev/null), exit.
CHILD = f"""
import os, sys, time
def say(word):
    sys.stdout.write(word + "\\n"); sys.stdout.flush()
def burn():
    t = time.process_time()
    while time.process_time() - t < {BURN_S}:
        pass
if sys.argv[1:] == ["burn"]:
    burn()
say("ready")
for line in sys.stdin:
    cmd = line.strip()
    if cmd == "burn":
        burn()
    elif cmd == "write":
        with open(os.devnull, "wb", buffering=0) as f:
            f.write(b"x" * {WRITE_BYTES})
    elif cmd == "exit":
        break
    say("done")
"""


class Child:
    def __init__(self, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", CHILD, *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pid = self.proc.pid
        assert self.proc.stdout.readline() == "ready\n"

    def do(self, cmd: str) -> None:
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "done\n"

    def exit(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("exit\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.exit()
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()


def pid_max() -> int:
    """No process can have this pid (pids run from 1 to pid_max - 1)."""
    return int(Path("/proc/sys/kernel/pid_max").read_text())


def parse_cpu_list(text: str) -> set[int]:
    """'0-2,5' -> {0, 1, 2, 5}"""
    cpus: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def zero_totals(totals: dict) -> bool:
    return all(v == 0.0 for v in totals.values())


def test_cpu_of_a_process_tracked_from_baseline_to_end():
    with Child() as child:
        t = procfs.Tracker()
        t.sample([child.pid])  # baseline: python's start-up is before it
        child.do("burn")
        t.sample([child.pid])
        totals = t.totals()
    # BURN_S of CPU by the child's own clock; /proc truncates each reading to a tick.
    assert BURN_S - 2 * TICK_S <= totals["cpu_s"] <= BURN_S + 0.1
    assert totals["processes"] == 1
    assert totals["threads"] == 1
    assert totals["threads_new"] == 0


def test_logical_io_of_a_process():
    with Child() as child:
        t = procfs.Tracker()
        t.sample([child.pid])
        child.do("write")
        t.sample([child.pid])
        totals = t.totals()
    # WRITE_BYTES to /dev/null plus "done\n" to the pipe; rchar: the command line read from stdin.
    assert WRITE_BYTES <= totals["wchar"] <= WRITE_BYTES + 100
    assert 0 < totals["rchar"] < 1000


def test_processes_counts_each_tracked_process_once():
    with Child() as a, Child() as b:
        t = procfs.Tracker()
        pids = [os.getpid(), a.pid, b.pid]
        t.sample(pids)
        t.sample(pids, only_new=True)
        t.sample(pids)
        assert t.totals()["processes"] == 3


def test_process_born_in_the_window_counts_from_zero():
    me = os.getpid()
    t = procfs.Tracker()
    t.sample([me])
    with Child("burn") as child:  # burns before it says ready
        t.sample([me, child.pid])
        totals = t.totals()
    # All of the child's CPU counts (start-up included), not just since it was first seen.
    assert totals["cpu_s"] >= BURN_S - 2 * TICK_S
    assert totals["processes"] == 2


def test_process_exiting_in_the_window_keeps_what_was_sampled():
    with Child() as child:
        t = procfs.Tracker()
        t.sample([child.pid])
        child.do("burn")
        t.sample([child.pid], only_new=True)  # an old process: only new threads are read
        t.sample([child.pid])
        child.exit()
        t.sample([child.pid])  # gone and reaped: its last reading stands
        totals = t.totals()
    assert BURN_S - 2 * TICK_S <= totals["cpu_s"] <= BURN_S + 0.1
    assert totals["processes"] == 1


def test_process_gone_before_the_baseline_contributes_nothing():
    dead = subprocess.Popen([sys.executable, "-I", "-S", "-c", "pass"])
    dead.wait()  # exited and reaped: no /proc entry left
    t = procfs.Tracker()
    t.sample([dead.pid])
    t.sample([dead.pid])
    assert zero_totals(t.totals())
    assert t.totals()["processes"] == 0

    t = procfs.Tracker()
    t.sample([os.getpid(), dead.pid, pid_max()])
    t.sample([os.getpid(), dead.pid, pid_max()])
    assert t.totals()["processes"] == 1


def _thread_born_in_window(sample_while_alive: bool) -> tuple[dict, int]:
    me = os.getpid()
    before = len(procfs.thread_ids(me))
    t = procfs.Tracker()
    t.sample([me])
    slept, release = threading.Event(), threading.Event()
    tids = []

    def body():
        tids.append(threading.get_native_id())
        for _ in range(5):
            time.sleep(0.002)  # each sleep is a voluntary context switch
        slept.set()
        release.wait(5)

    thread = threading.Thread(target=body)
    thread.start()
    try:
        assert slept.wait(5)
        if sample_while_alive:
            t.sample([me], only_new=True)
    finally:
        release.set()
        thread.join()
    # join() returns once Python is done with the thread; the kernel's task can outlive it briefly.
    deadline = time.monotonic() + 2
    while tids[0] in procfs.thread_ids(me) and time.monotonic() < deadline:
        time.sleep(0.001)
    assert tids[0] not in procfs.thread_ids(me)
    t.sample([me])
    return t.totals(), before


def test_thread_born_in_the_window_counts_in_threads_new():
    totals, before = _thread_born_in_window(sample_while_alive=True)
    assert totals["threads_new"] == 1
    assert totals["threads"] == before + 1
    assert totals["vcs"] >= 5  # the new thread's switches count from zero
    assert totals["processes"] == 1


def test_thread_born_and_gone_between_samples_is_not_seen():
    totals, before = _thread_born_in_window(sample_while_alive=False)
    assert totals["threads_new"] == 0
    assert totals["threads"] == before


def test_cpus_allowed_matches_sched_getaffinity():
    allowed = procfs.cpus_allowed(os.getpid())
    assert allowed is not None
    assert parse_cpu_list(allowed) == os.sched_getaffinity(os.getpid())


def test_cpus_allowed_follows_taskset():
    cpu = min(os.sched_getaffinity(0))
    with subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-I", "-S", "-c",
                           "import sys; print('ready', flush=True); sys.stdin.read()"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout.readline() == "ready\n"
            assert procfs.cpus_allowed(proc.pid) == str(cpu)
        finally:
            proc.stdin.close()
            proc.wait(timeout=10)


def test_no_such_process():
    pid = pid_max()
    assert procfs.cpus_allowed(pid) is None
    assert procfs.cpu_seconds(pid) is None
    assert procfs.io_bytes(pid) is None
    assert procfs.thread_ids(pid) == []


def test_descendants_include_children():
    with Child() as a, Child() as b:
        found = procfs.descendants(os.getpid())
        assert found[0] == os.getpid()
        assert {a.pid, b.pid} <= set(found)
        assert procfs.descendants(a.pid) == [a.pid]


def test_cpu_seconds_of_this_process_grows():
    me = os.getpid()
    before = procfs.cpu_seconds(me)
    t0 = time.process_time()
    while time.process_time() - t0 < 0.05:
        pass
    assert procfs.cpu_seconds(me) - before >= 0.05 - 2 * TICK_S
