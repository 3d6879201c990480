"""Read CPU time, context switches and I/O bytes of a set of processes (psutil, which reads /proc),
at the two edges of a window only: nothing here is polled while the workload runs.

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

psutil has no reading of one thread (its ``threads()`` reads every thread of a process): a thread's
switches, CPU time and id in its pid namespace are read from /proc/PID/task/TID here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import psutil

CLK_TCK = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")
GONE = (psutil.NoSuchProcess, psutil.AccessDenied)  # exited meanwhile, or not ours to read


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process, exited threads included."""
    try:
        t = psutil.Process(pid).cpu_times()
    except GONE:
        return None
    return t.user + t.system


def cpu_seconds_with_children(pid: int) -> float | None:
    """utime + stime + cutime + cstime: the process's CPU and that of the children it reaped."""
    try:
        t = psutil.Process(pid).cpu_times()
    except GONE:
        return None
    return t.user + t.system + t.children_user + t.children_system


def io_bytes(pid: int) -> tuple[int, int] | None:
    """(rchar, wchar): bytes the process passed through read()/write()-family calls on files and
    pipes (logical I/O; storage-level bytes come from diskstats, see that module)."""
    try:
        io = psutil.Process(pid).io_counters()
    except GONE:
        return None
    return io.read_chars, io.write_chars


def descendants(root: int) -> list[int]:
    """The process and all its descendants (for a bare server and its backends), the process first."""
    try:
        below = psutil.Process(root).children(recursive=True)
    except psutil.NoSuchProcess:
        below = []
    return [root] + [p.pid for p in below]


def cpu_list(cpus) -> str:
    """CPU numbers as the kernel lists them in Cpus_allowed_list: {0, 1, 2, 5} -> '0-2,5'."""
    runs: list[list[int]] = []
    for cpu in sorted(cpus):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in runs)


def cpus_allowed(pid: int) -> str | None:
    """The CPUs the kernel lets a process run on, listed as Cpus_allowed_list lists them ('1', '0-1')."""
    try:
        return cpu_list(psutil.Process(pid).cpu_affinity())
    except GONE:
        return None


def thread_ids(pid: int) -> list[int]:
    try:
        return [t.id for t in psutil.Process(pid).threads()]
    except GONE:
        return []


def mapped_library(pid: int, name: str) -> str | None:
    """The path, as this host reaches it, of the shared library ``name`` (e.g. ``libc.so.6``) that
    process ``pid`` has mapped (its own, inside its container); None if it has none of that name."""
    for m in psutil.Process(pid).memory_maps(grouped=True):
        if os.path.basename(m.path) == name:
            return f"/proc/{pid}/root{m.path}"
    return None


def _task(pid: int, tid: int, name: str) -> str | None:
    try:
        return (PROC / str(pid) / "task" / str(tid) / name).read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def task_cpu_seconds(pid: int, tid: int) -> float | None:
    """utime + stime of one thread of a process (a PostgreSQL backend: its only thread, tid = pid)."""
    text = _task(pid, tid, "stat")
    if text is None:
        return None
    f = text[text.rindex(")") + 2:].split()  # after the command name: field 3, state, is f[0]
    return (int(f[11]) + int(f[12])) / CLK_TCK


def _task_status(pid: int, tid: int) -> dict[str, str] | None:
    text = _task(pid, tid, "status")
    return None if text is None else dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def namespace_id(pid: int, tid: int) -> int | None:
    """The thread's id in its innermost pid namespace (a container's own numbering: what the server
    inside reports as a thread or backend id), from the NSpid line of its status."""
    status = _task_status(pid, tid)
    return None if status is None or "NSpid" not in status else int(status["NSpid"].split()[-1])


def _switches(pid: int, tid: int) -> tuple[int, int] | None:
    status = _task_status(pid, tid)
    if status is None:
        return None
    return int(status.get("voluntary_ctxt_switches", 0)), int(status.get("nonvoluntary_ctxt_switches", 0))


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
        try:
            proc = psutil.Process(pid)
            t = proc.cpu_times()
        except GONE:
            continue
        snap.cpu[pid] = t.user + t.system + t.children_user + t.children_system
        try:
            io = proc.io_counters()
        except GONE:  # exited since, or its I/O is not ours to read (another user's, without root)
            io = None
        if io is not None:
            snap.io[pid] = io.read_chars, io.write_chars
        for tid in (thread_ids(pid) if threads else ()):
            sw = _switches(pid, tid)
            if sw is not None:
                snap.switches[tid] = sw
    return snap


def switches_and_bytes(pids: list[int]) -> Snapshot:
    """A lighter :func:`snapshot` for a reading taken often (every turn of clients taking turns): each
    thread's switches and each process's logical I/O bytes, straight from /proc (no CPU times, no psutil
    thread listing); processes gone meanwhile are left out."""
    snap = Snapshot()
    for pid in pids:
        try:
            tids = [int(t) for t in os.listdir(PROC / str(pid) / "task")]
            io = dict(line.split(": ", 1) for line in (PROC / str(pid) / "io").read_text().splitlines())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        snap.io[pid] = int(io["rchar"]), int(io["wchar"])
        for tid in tids:
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


TCP_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
ESTABLISHED = "01"


def tcp_unread(port: int, tables=TCP_TABLES) -> int:
    """Bytes that arrived on the established connections of a server listening on ``port`` and that it has not
    read yet (each socket's rx_queue, in this network namespace: the lab's servers use the host's). A client's
    statement sent just before the client was stopped waits there until a server thread reads it, and only then
    does the server count it as begun."""
    total = 0
    for table in tables:
        try:
            with open(table) as f:
                next(f, None)  # the header
                for line in f:
                    fields = line.split()
                    if len(fields) < 5 or fields[3] != ESTABLISHED:
                        continue
                    local_port = int(fields[1].rsplit(":", 1)[1], 16)
                    if local_port == port:
                        total += int(fields[4].split(":")[1], 16)
        except FileNotFoundError:  # no IPv6 in this kernel: its table is absent
            continue
    return total
