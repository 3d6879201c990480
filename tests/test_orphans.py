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
from dbexp import process
from dbexp.engine import LABEL, client
from dbexp.process import MARKER, orphans
from dbexp.waits import poll

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
    before = {c.id for c in labelled_containers(mine=False)}
    harness = process.Child([dbexp, "bench", POSTGRES, "--time", "60", "--repeats", "1", "--threads", "2"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def run_started() -> bool:
        assert harness.poll() is None, "the harness ended before its run started"
        return any(_is_sysbench_run(p) for p in _load_of(harness.pid))

    try:
        assert poll(run_started, 240, interval_s=0.5), "no sysbench run started"
        # a sysbench run of the harness is under way (60 s): kill the harness outright
        harness.send_signal(signal.SIGKILL)
        harness.wait()
        time.sleep(1.0)
        assert [p for p in _load_of(harness.pid) if _is_sysbench_run(p)] == []
        assert orphans() == []
        # its server outlives it (its exit handlers never ran): the one container it started
        assert len([c for c in labelled_containers(mine=False) if c.id not in before]) == 1
    finally:
        if harness.poll() is None:
            harness.kill()
        present = client().containers.list(all=True, filters={"label": LABEL})
        proc = process.run([dbexp, "clean"], capture_output=True, text=True)
    # every lab container present is removed (the harness's among them); no load process was left
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"removed {len(present)} container(s), ended 0 orphaned load process(es)"
    assert labelled_containers(mine=False) == []

