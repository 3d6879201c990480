"""Read CPU time, context switches and I/O bytes of a set of processes from /proc, at the two
edges of a window only: nothing here is polled while the workload runs.

CPU time and logical I/O survive exits: the kernel folds an exited thread into its process, and
a reaped child into its parent's ``cutime``/``cstime`` and I/O counters (/proc/PID/io of the
parent grows by the child's). So the sum over the process set at the end minus the sum at the
start is the window's total, a backend born and gone inside the window included, provided every
process that exits is reaped by one in the set (a PostgreSQL backend by the postmaster; in a
container, orphans by its first process). One that left the set otherwise (reaped by a process
outside it) would take its whole count since it started out of the sum.

Context switches exist only per thread and are not folded into anything /proc shows: a thread
alive at both edges counts fully, one born inside the window and alive at the end counts from
zero, one that exits inside the window loses its switches (all of them if it was also born
inside it, as a PostgreSQL backend of a sysbench connection is). That is why the sampler counts
switches on the server's CPUs with perf (dbexp.metrics.perfstat) and uses these only where perf
cannot be used, saying so. Thread counts likewise see the threads present at either edge only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name (field 3, state, is [0])."""
    text = _read(PROC / str(pid) / "stat")
    return None if text is None else text[text.rindex(")") + 2:].split()


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process, exited threads included."""
    f = _stat_fields(pid)
    return None if f is None else (int(f[11]) + int(f[12])) / CLK_TCK


def cpu_seconds_with_children(pid: int) -> float | None:
    """utime + stime + cutime + cstime: the process's CPU and that of the children it reaped."""
    f = _stat_fields(pid)
    return None if f is None else sum(int(v) for v in f[11:15]) / CLK_TCK


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
        f = _stat_fields(int(entry))
        if f is None:
            continue
        children.setdefault(int(f[1]), []).append(int(entry))
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


def task_cpu_seconds(pid: int, tid: int) -> float | None:
    """utime + stime of one thread of a process (a PostgreSQL backend: its only thread, tid = pid)."""
    text = _read(PROC / str(pid) / "task" / str(tid) / "stat")
    if text is None:
        return None
    f = text[text.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / CLK_TCK


def namespace_id(pid: int, tid: int) -> int | None:
    """The thread's id in its innermost pid namespace (a container's own numbering: what the server
    inside reports as a thread or backend id), from the NSpid line of its status."""
    for line in (_read(PROC / str(pid) / "task" / str(tid) / "status") or "").splitlines():
        if line.startswith("NSpid:"):
            return int(line.split()[-1])
    return None


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


@dataclass
class Snapshot:
    """A process set read at one edge of a window."""

    cpu: dict[int, float] = field(default_factory=dict)  # pid -> s, reaped children included
    io: dict[int, tuple[int, int]] = field(default_factory=dict)  # pid -> (rchar, wchar), the same
    switches: dict[int, tuple[int, int]] = field(default_factory=dict)  # tid -> (voluntary, involuntary)


def snapshot(pids: list[int], threads: bool = True) -> Snapshot:
    """Read every process of ``pids`` (and, with ``threads``, each of its threads' switches);
    processes gone meanwhile are left out."""
    snap = Snapshot()
    for pid in pids:
        cpu = cpu_seconds_with_children(pid)
        if cpu is None:
            continue
        snap.cpu[pid] = cpu
        io = io_bytes(pid)
        if io is not None:
            snap.io[pid] = io
        for tid in (thread_ids(pid) if threads else ()):
            sw = _switches(pid, tid)
            if sw is not None:
                snap.switches[tid] = sw
    return snap


def window(start: Snapshot, end: Snapshot) -> dict[str, float]:
    """What the process set did between two snapshots (see the module's notes on exits)."""
    out = {"cpu_s": sum(end.cpu.values()) - sum(start.cpu.values())}
    for i, name in enumerate(("rchar", "wchar")):
        out[name] = float(sum(v[i] for v in end.io.values()) - sum(v[i] for v in start.io.values()))
    for i, name in enumerate(("vcs", "ivcs")):
        out[name] = float(sum(max(0, sw[i] - start.switches.get(tid, (0, 0))[i])
                              for tid, sw in end.switches.items()))
    out["processes"] = float(len(start.cpu.keys() | end.cpu.keys()))
    out["threads"] = float(len(start.switches.keys() | end.switches.keys()))
    out["threads_new"] = float(len(end.switches.keys() - start.switches.keys()))
    out["threads_gone"] = float(len(start.switches.keys() - end.switches.keys()))
    return out
