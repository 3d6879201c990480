"""Read CPU time, context switches and I/O bytes of a set of processes from /proc.

Counts are tracked per process (CPU, logical I/O: the kernel folds exited threads into
their process) and per thread (context switches exist only per thread). A process
or thread first seen after the baseline was born inside the window, so its
baseline is zero; one that exits between two samples loses what it did since the
last sample, which is why the sampler polls every second.
"""

from __future__ import annotations

import os
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process, exited threads included."""
    text = _read(PROC / str(pid) / "stat")
    if text is None:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def io_bytes(pid: int) -> tuple[int, int] | None:
    """(rchar, wchar): bytes the process passed through read()/write()-family calls on files and
    pipes (logical I/O; storage-level bytes come from diskstats, see that module)."""
    text = _read(PROC / str(pid) / "io")
    if text is None:
        return None
    values = dict(line.split(": ") for line in text.splitlines() if ": " in line)
    return int(values.get("rchar", 0)), int(values.get("wchar", 0))


def descendants(root: int) -> list[int]:
    """The process and all its descendants (for a bare server and its backends)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir(PROC):
        if not entry.isdigit():
            continue
        text = _read(PROC / entry / "stat")
        if text is None:
            continue
        ppid = int(text[text.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def cpus_allowed(pid: int) -> str | None:
    """Cpus_allowed_list of a process: where the kernel lets it run."""
    text = _read(PROC / str(pid) / "status")
    for line in (text or "").splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return None


def thread_ids(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(PROC / str(pid) / "task")]
    except (FileNotFoundError, ProcessLookupError):
        return []


def _switches(pid: int, tid: int) -> tuple[int, int] | None:
    text = _read(PROC / str(pid) / "task" / str(tid) / "status")
    if text is None:
        return None
    vol = invol = 0
    for line in text.splitlines():
        if line.startswith("voluntary_ctxt_switches"):
            vol = int(line.split()[1])
        elif line.startswith("nonvoluntary_ctxt_switches"):
            invol = int(line.split()[1])
    return vol, invol


class Tracker:
    """Accumulates deltas over a window for a changing set of processes.

    Processes and threads present at the baseline are read at the baseline and at the
    end (and by full samples); those born inside the window are also read by cheap
    ``only_new`` samples, taken often, so that one exiting at the end of the run (a
    PostgreSQL backend when sysbench disconnects) loses at most one short interval.
    """

    def __init__(self):
        self.first: dict[tuple, float] = {}
        self.last: dict[tuple, float] = {}
        self.baseline_taken = False
        self.old_pids: set[int] = set()
        self.old_tids: set[int] = set()

    def _see(self, key: tuple, value: float) -> None:
        if key not in self.first:
            self.first[key] = value if not self.baseline_taken else 0.0
        self.last[key] = value

    def _process(self, pid: int, tids=None) -> None:
        cpu = cpu_seconds(pid)
        if cpu is None:
            return
        self._see(("cpu", pid), cpu)
        io = io_bytes(pid)
        if io is not None:
            self._see(("rchar", pid), io[0])
            self._see(("wchar", pid), io[1])
        for tid in (thread_ids(pid) if tids is None else tids):
            sw = _switches(pid, tid)
            if sw is not None:
                self._see(("vcs", tid), sw[0])
                self._see(("ivcs", tid), sw[1])

    def sample(self, pids: list[int], only_new: bool = False) -> None:
        if not only_new or not self.baseline_taken:
            for pid in pids:
                self._process(pid)
        else:
            for pid in pids:
                if pid not in self.old_pids:
                    self._process(pid)
                else:  # an old process: only its threads born in the window
                    new = [t for t in thread_ids(pid) if t not in self.old_tids]
                    for tid in new:
                        sw = _switches(pid, tid)
                        if sw is not None:
                            self._see(("vcs", tid), sw[0])
                            self._see(("ivcs", tid), sw[1])
        if not self.baseline_taken:
            self.old_pids = {k[1] for k in self.first if k[0] == "cpu"}
            self.old_tids = {k[1] for k in self.first if k[0] == "vcs"}
            self.baseline_taken = True

    def totals(self) -> dict[str, float]:
        out = {"cpu_s": 0.0, "rchar": 0.0, "wchar": 0.0, "vcs": 0.0, "ivcs": 0.0}
        names = {"cpu": "cpu_s", "rchar": "rchar", "wchar": "wchar", "vcs": "vcs", "ivcs": "ivcs"}
        for key, last in self.last.items():
            out[names[key[0]]] += max(0.0, last - self.first[key])
        out["processes"] = float(len({k[1] for k in self.last if k[0] == "cpu"}))
        out["threads"] = float(len({k[1] for k in self.last if k[0] == "vcs"}))
        out["threads_new"] = float(len({k[1] for k in self.last if k[0] == "vcs"} - self.old_tids))
        return out
