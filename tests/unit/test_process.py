"""dbexp/process.py on real child processes (no server): marked, dying with the thread that started
them, stopped by a signal within a deadline, killed with their group, reaped with their resource use."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from dbexp import process
from dbexp.metrics.procfs import cpu_list
from dbexp.waits import poll

pytestmark = [pytest.mark.unit, pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")]

PY = [sys.executable, "-I", "-S", "-c"]


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_child_carries_the_marker_and_reports_its_usage():
    child = process.Child(PY + ["import os, time; t = time.process_time()\n"
                                "while time.process_time() - t < 0.2: pass\n"
                                "print(os.environ['DBEXP_LOAD'])"], stdout=subprocess.PIPE, text=True)
    assert child.reap(30)
    assert child.stdout.read().strip() == str(os.getpid())
    assert child.returncode == 0 and child.args[:len(PY)] == PY
    assert child.usage.ru_utime + child.usage.ru_stime >= 0.2 - 0.02
    child.stdout.close()


def test_stop_sends_the_signal_and_end_kills_what_ignores_it():
    child = process.Child(PY + ["import signal, sys, time; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                "print('ready', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "ready\n"
    assert child.running()
    assert not child.stop(signal.SIGINT, 0.3)  # ignored: still running after the deadline
    assert child.running()
    assert child.end(10) and child.returncode == -signal.SIGKILL and not child.running()
    child.stop(signal.SIGINT, 0.1)  # already reaped: nothing to signal, no error
    child.stdout.close()


def test_end_of_a_group_kills_its_grandchildren():
    child = process.Child(["sh", "-c", "sleep 60 & echo $!; wait"], group=True, stdout=subprocess.PIPE, text=True)
    grandchild = int(child.stdout.readline())
    assert alive(grandchild)
    assert child.end(10)
    assert poll(lambda: not alive(grandchild), 5, interval_s=0.02)
    child.stdout.close()


def test_a_child_dies_with_the_thread_that_started_it():
    if process.tied(["true"]) == ["true"]:
        pytest.skip("no setpriv on this host")
    started = []
    thread = threading.Thread(target=lambda: started.append(process.Child(["sleep", "60"])))
    thread.start()
    thread.join()
    child = started[0]
    try:
        assert child.reap(10), "the child outlived the thread that started it"
        assert child.returncode == -signal.SIGKILL
    finally:
        child.end(10)


def test_run_is_tied_to_the_lab():
    done = process.run(["sh", "-c", 'echo "$DBEXP_LOAD"'], capture_output=True, text=True)
    assert done.stdout.strip() == str(os.getpid())


def test_an_untied_child_is_plain():
    env = {k: v for k, v in os.environ.items() if k != process.MARKER}
    child = process.Child(["sh", "-c", 'echo "${DBEXP_LOAD:-none}"'], tie=False, env=env, stdout=subprocess.PIPE,
                          text=True)
    assert child.reap(10) and child.stdout.read().strip() == "none"
    child.stdout.close()


def test_orphans_are_marked_processes_whose_harness_is_gone():
    dead = process.Child(["true"], tie=False)
    dead.wait()  # a pid no process has now
    env = dict(os.environ, **{process.MARKER: str(dead.pid)})
    orphan = process.Child(["sleep", "60"], tie=False, env=env)  # untied: its marker names the dead pid as given
    try:
        assert poll(lambda: orphan.pid in process.orphans(), 5, interval_s=0.05)
        assert os.getpid() not in process.orphans()
    finally:
        orphan.kill()
        orphan.wait()


@pytest.mark.parametrize("cpus, text", [({1}, "1"), ({0, 1}, "0-1"), ({0, 2}, "0,2"), ({0, 1, 2, 5}, "0-2,5"),
                                        ({3, 7, 8, 9}, "3,7-9")])
def test_cpu_list_prints_as_the_kernel_does(cpus, text):
    assert cpu_list(cpus) == text
