"""Where a server's CPU time goes, by function: ``perf record -e cpu-clock -C cpus`` over a window,
every sample's process and symbol counted (``perf script``).

cpu-clock is a software event (a timer interrupt on each CPU ``hz`` times a second): it works in a VM
with no hardware counters, and one sample stands for 1 / ``hz`` s of whatever ran on the CPU then. The
server CPU of the versions chapter is shared by the servers of a window, so one recording serves all
of them: a sample belongs to the server whose process (or one of its descendants: PostgreSQL's
backends) it hit. Symbols come from the binaries the servers run; the lab's MySQL builds are stripped
(no .symtab, only the dynamic symbols they export), so much of their own code counts as '[unknown]'.
perf finds a container's binary through the process's mount namespace, which is why the samples are
resolved while the servers still run. perf runs on the client's CPUs (``pin``), so its own
work is not in the samples.
"""

from __future__ import annotations

import collections
import os
import tempfile
from dataclasses import dataclass

from dbexp import process
from dbexp.metrics import procfs
from dbexp.metrics.perfstat import PerfError, PerfStat

OTHER = "[other]"  # the samples of the symbols beyond a server's top ones, summed
DEFAULT_HZ = 999  # samples a second: not a multiple of the kernel tick, so not in step with timers


@dataclass
class Samples:
    hz: int
    by_pid: dict[int, collections.Counter]  # pid -> Counter(symbol -> samples)

    def of(self, pids) -> collections.Counter:
        """The samples of a server's processes, by symbol."""
        out: collections.Counter = collections.Counter()
        for pid in pids:
            out.update(self.by_pid.get(pid, {}))
        return out


def top(counts: collections.Counter, n: int) -> dict[str, int]:
    """The ``n`` symbols with most samples and the rest summed as OTHER (nothing dropped)."""
    head = dict(counts.most_common(n))
    rest = sum(counts.values()) - sum(head.values())
    return {**head, OTHER: rest} if rest else head


def module_of(dso: str) -> str:
    """A sample's binary, short: the file's name ('mysqld', 'libc.so.6'), 'kernel' for the kernel's."""
    if dso.startswith("[kernel") or dso.startswith("[vdso"):
        return "kernel" if dso.startswith("[kernel") else "vdso"
    return os.path.basename(dso) or "[unknown]"


def parse_script(text: str) -> dict[int, collections.Counter]:
    """``perf script -F pid,ip,sym,dso`` output (a pid, the sampled address, the symbol perf named or
    nothing, its binary in parentheses) -> pid -> Counter('symbol (module)' -> samples); an address
    perf could not name counts as '[unknown]'. (perf resolves ``sym`` only with ``ip`` among the
    fields.)"""
    out: dict[int, collections.Counter] = {}
    for line in text.splitlines():
        parts = line.strip().split(None, 2)
        if len(parts) < 2 or not parts[0].isdigit():
            continue
        rest = parts[2].strip() if len(parts) > 2 else ""
        sym, module = rest, "[unknown]"
        if rest.endswith(")") and "(" in rest:
            sym, dso = rest[:-1].rsplit("(", 1)
            module = module_of(dso.strip())
        key = f"{sym.strip() or '[unknown]'} ({module})"
        out.setdefault(int(parts[0]), collections.Counter())[key] += 1
    return out


def split_name(name: str) -> tuple[str, str]:
    """'symbol (module)' -> (symbol, module); OTHER -> (OTHER, '')."""
    if name.endswith(")") and " (" in name:
        sym, module = name[:-1].rsplit(" (", 1)
        return sym, module
    return name, ""


class CpuProfile(PerfStat):
    """``perf record`` from ``start()`` to ``stop()`` on ``cpus``; stop() returns the Samples.
    start() raises PerfError where perf is missing or does not start recording. perf 6.1's record
    fails on inherited control pipes ("Thread and evlist pollfd index mismatch"): it is answered
    through named ones."""

    control = "fifo"

    def __init__(self, cpus: str, pin: str | None = None, hz: int = DEFAULT_HZ):
        super().__init__(cpus, pin)
        self.hz = hz
        fd, self.path = tempfile.mkstemp(prefix="dbexp-profile-", suffix=".data")
        os.close(fd)

    def command_line(self, perf: str, control: str) -> list[str]:
        """What a person would type to record the same (less the control pipes)."""
        cmd = ["taskset", "-c", self.pin] if self.pin else []
        return cmd + [perf, "record", "-e", "cpu-clock", "-F", str(self.hz), "-C", self.cpus, "-o", self.path,
                      "--control", control]

    def stop(self, timeout_s: float = 20.0) -> Samples:
        try:
            self.interrupt(timeout_s)
            cmd = (["taskset", "-c", self.pin] if self.pin else []) + \
                ["perf", "script", "-i", self.path, "-F", "pid,ip,sym,dso"]
            done = process.run(cmd, capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                raise PerfError(f"perf script failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
            by_pid = parse_script(done.stdout)
            if not by_pid:
                raise PerfError(f"perf recorded no samples on CPUs {self.cpus}: {done.stderr.strip()[-300:]}")
            return Samples(self.hz, by_pid)
        finally:
            self.close()

    def close(self) -> None:
        super().close()
        if os.path.exists(self.path):
            os.unlink(self.path)


def server_pids(server) -> list[int]:
    """The server's main process and its descendants, as this host sees them."""
    pid = server.main_pid()
    return procfs.descendants(pid) if pid else []
