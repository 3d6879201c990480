"""Load the lab starts dies with the lab: a parent-death signal, and a marker `dbexp clean` can find.

Every load-generator process gets ``DBEXP_LOAD=<pid of the harness>`` in its environment and, on
Linux, PR_SET_PDEATHSIG=SIGKILL, so a harness killed with SIGKILL takes its sysbench with it; a
process that still outlived its harness (another OS, a double fork) is found by its marker.
"""

from __future__ import annotations

import ctypes
import os
import signal
from pathlib import Path

MARKER = "DBEXP_LOAD"
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def child_options() -> dict:
    """Keyword arguments for subprocess.Popen/run of a load-generator process."""
    return {"env": dict(os.environ, **{MARKER: str(os.getpid())}), "preexec_fn": _die_with_parent}


def orphans() -> list[int]:
    """Load processes the lab started whose harness no longer exists."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or not ours to read
            continue
        owner = next((e.split(b"=", 1)[1] for e in env if e.startswith(MARKER.encode() + b"=")), None)
        if owner is not None and not Path(f"/proc/{int(owner)}").exists():
            found.append(int(entry.name))
    return found


def end_orphans() -> int:
    """SIGKILL every orphaned load process; returns how many."""
    pids = orphans()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue  # ended on its own meanwhile
    return len(pids)
