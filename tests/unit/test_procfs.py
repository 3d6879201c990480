"""dbexp/metrics/procfs.py against real processes and threads of this test (no server): the
process set read at two edges, and what that keeps or loses of processes and threads that start
or exit in between.

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

from dbexp import process
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
        self.proc = process.Child([sys.executable, "-I", "-S", "-c", CHILD, *args],
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


def window(pids_start: list[int], action, pids_end: list[int] | None = None) -> dict:
    """procfs.window over ``action()``: the process set read before and after it."""
    start = procfs.snapshot(pids_start)
    action()
    return procfs.window(start, procfs.snapshot(pids_start if pids_end is None else pids_end))


def test_cpu_of_a_process_between_the_edges():
    with Child() as child:
        totals = window([child.pid], lambda: child.do("burn"))  # python's start-up is before the start
    # BURN_S of CPU by the child's own clock; /proc truncates each reading to a tick.
    assert BURN_S - 2 * TICK_S <= totals["cpu_s"] <= BURN_S + 0.1
    assert totals["processes"] == 1
    assert totals["threads"] == 1
    assert totals["threads_new"] == 0 and totals["threads_gone"] == 0


def test_logical_io_of_a_process():
    with Child() as child:
        totals = window([child.pid], lambda: child.do("write"))
    # WRITE_BYTES to /dev/null plus "done\n" to the pipe; rchar: the command line read from stdin.
    assert WRITE_BYTES <= totals["wchar"] <= WRITE_BYTES + 100
    assert 0 < totals["rchar"] < 1000


def test_processes_counts_each_process_once():
    with Child() as a, Child() as b:
        pids = [os.getpid(), a.pid, b.pid]
        assert window(pids, lambda: None)["processes"] == 3


def test_process_born_in_the_window_counts_from_zero():
    me = os.getpid()
    start = procfs.snapshot([me])
    with Child("burn") as child:  # burns before it says ready
        totals = procfs.window(start, procfs.snapshot([me, child.pid]))
    # All of the child's CPU counts (start-up included), not just since it was first seen.
    assert totals["cpu_s"] >= BURN_S - 2 * TICK_S
    assert totals["processes"] == 2
    assert totals["threads_new"] == 1


def test_process_exiting_in_the_window_counts_through_its_parent():
    """A child that exits and is reaped: its CPU and I/O move into this process's counts for
    reaped children (cutime, cstime, /proc/PID/io), so the set's sum keeps them."""
    me = os.getpid()
    with Child() as child:
        start = procfs.snapshot([me, child.pid])
        child.do("burn")
        child.do("write")
        child.exit()  # reaped by this process
        assert procfs.cpu_seconds(child.pid) is None
        totals = procfs.window(start, procfs.snapshot([me, child.pid]))
    assert BURN_S - 2 * TICK_S <= totals["cpu_s"] <= BURN_S + 0.2
    assert totals["wchar"] >= WRITE_BYTES
    assert totals["processes"] == 2
    assert totals["threads_gone"] == 1


def test_process_born_and_gone_inside_the_window_counts():
    """A PostgreSQL backend of a sysbench connection: started and reaped between the edges."""
    me = os.getpid()

    def born_and_gone():
        with Child("burn") as child:
            child.do("write")

    totals = window([me], born_and_gone)
    assert BURN_S - 2 * TICK_S <= totals["cpu_s"] <= BURN_S + 0.2
    assert totals["wchar"] >= WRITE_BYTES
    assert totals["processes"] == 1  # seen at neither edge
    assert totals["threads_new"] == 0


def test_process_gone_before_the_start_contributes_nothing():
    dead = process.Child([sys.executable, "-I", "-S", "-c", "pass"])
    dead.wait()  # exited and reaped: no /proc entry left
    totals = window([dead.pid], lambda: None)
    assert zero_totals(totals)
    assert window([os.getpid(), dead.pid, pid_max()], lambda: None)["processes"] == 1


def _thread_in_window(exit_before_end: bool) -> tuple[dict, int]:
    """A thread started after the start snapshot that switches 5 times, gone or alive at the end."""
    me = os.getpid()
    start = procfs.snapshot([me])
    before = len(start.switches)  # the threads the window starts with (another test's may come and go before)
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
        if not exit_before_end:
            return procfs.window(start, procfs.snapshot([me])), before
    finally:
        release.set()
        thread.join()
    # join() returns once Python is done with the thread; the kernel's task can outlive it briefly.
    deadline = time.monotonic() + 2
    while tids[0] in procfs.thread_ids(me) and time.monotonic() < deadline:
        time.sleep(0.001)
    assert tids[0] not in procfs.thread_ids(me)
    return procfs.window(start, procfs.snapshot([me])), before


def test_thread_born_in_the_window_counts_from_zero():
    totals, before = _thread_in_window(exit_before_end=False)
    assert totals["threads_new"] == 1
    assert totals["threads"] == before + 1
    assert totals["vcs"] >= 5  # the new thread's switches count from zero
    assert totals["processes"] == 1


def test_thread_born_and_gone_inside_the_window_is_not_seen():
    """Its switches are lost: what the sampler's perf source is for."""
    totals, before = _thread_in_window(exit_before_end=True)
    assert totals["threads_new"] == 0
    assert totals["threads"] == before


def test_switches_of_threads_alive_at_both_edges():
    def sleeps():
        for _ in range(20):
            time.sleep(0.001)

    totals = window([os.getpid()], sleeps)
    assert totals["vcs"] >= 20
    assert totals["threads_gone"] == 0


def test_cpus_allowed_matches_sched_getaffinity():
    allowed = procfs.cpus_allowed(os.getpid())
    assert allowed is not None
    assert parse_cpu_list(allowed) == os.sched_getaffinity(os.getpid())


def test_cpus_allowed_follows_taskset():
    cpu = min(os.sched_getaffinity(0))
    with process.Child(["taskset", "-c", str(cpu), sys.executable, "-I", "-S", "-c",
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
    assert procfs.cpu_seconds_with_children(pid) is None
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


def test_one_threads_cpu_and_its_id_in_its_pid_namespace():
    tid = threading.get_native_id()
    assert procfs.namespace_id(os.getpid(), os.getpid()) == os.getpid()  # this process, as it numbers itself
    before = procfs.task_cpu_seconds(os.getpid(), tid)
    t0 = time.thread_time()
    while time.thread_time() - t0 < BURN_S:
        pass
    after = procfs.task_cpu_seconds(os.getpid(), tid)
    assert BURN_S - 2 * TICK_S <= after - before <= BURN_S + 0.1  # this thread's own CPU, by /proc's ticks
    assert procfs.task_cpu_seconds(os.getpid(), 2 ** 30) is None and procfs.namespace_id(os.getpid(), 2 ** 30) is None
