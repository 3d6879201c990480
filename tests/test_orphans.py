"""No orphan load: a harness killed with SIGKILL takes its sysbench with it, and `dbexp clean`
removes what is left (the server container, and any marked load process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import POSTGRES, labelled_containers
from dbexp.workloads.children import MARKER, orphans

pytestmark = pytest.mark.docker


def _load_of(owner: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                env = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if f"{MARKER}={owner}".encode() in env:
                out.append(int(entry.name))
    return out


def _is_sysbench_run(pid: int) -> bool:
    """sysbench in its run phase (the last argument of `sysbench SCRIPT ... run`)."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        return Path(f"/proc/{pid}/comm").read_text().strip() == "sysbench" and args[-1] == b"run"
    except OSError:
        return False


def test_sigkill_of_the_harness_leaves_no_load_running(tmp_path):
    dbexp = str(Path(sys.executable).with_name("dbexp"))
    env = dict(os.environ, DBEXP_RESULTS=str(tmp_path / "r.duckdb"))
    harness = subprocess.Popen([dbexp, "bench", POSTGRES, "--time", "60", "--repeats", "1", "--threads", "2"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while not any(_is_sysbench_run(p) for p in _load_of(harness.pid)):
            assert harness.poll() is None, "the harness ended before its run started"
            assert time.monotonic() < deadline, "no sysbench run started"
            time.sleep(0.5)
        # a sysbench run of the harness is under way (60 s): kill the harness outright
        harness.send_signal(signal.SIGKILL)
        harness.wait()
        time.sleep(1.0)
        assert [p for p in _load_of(harness.pid) if _is_sysbench_run(p)] == []
        assert orphans() == []
    finally:
        if harness.poll() is None:
            harness.kill()
        proc = subprocess.run([dbexp, "clean"], capture_output=True, text=True)
    assert proc.returncode == 0 and "orphaned load process" in proc.stdout
    assert labelled_containers() == []
