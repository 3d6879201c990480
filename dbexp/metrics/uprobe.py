"""Time one function where it runs, inside a running server: a bpftrace uprobe/uretprobe pair.

bpftrace attaches to the server's own binary (reached through ``/proc/<pid>/root``, so a
binary inside a container works too), takes a timestamp when a thread enters the
function and another when it returns, and keeps the number of calls, their summed
duration and a log2 histogram. Nothing in the server is patched.

A call during which its thread was switched out (preempted by another thread on the server's CPU,
or blocked) is counted apart: its wall time includes whatever ran meanwhile, milliseconds of other
threads' work on a busy CPU, which would swamp a mean of microseconds. The share of such calls is
kept, so a reader sees what was set aside.

What it costs: each call takes two traps into the kernel (about a microsecond each on
this lab's VM), so the server does less work per second while probed. The time of a call
includes part of that overhead, the same at every point, so differences between points
(a slope) are the function's own; a probe run is kept apart from the throughput runs and
its cost is measured as their QPS ratio. bpftrace is started with a handshake (it prints
``ready`` from BEGIN, which runs once every probe is attached) and stopped with SIGINT,
after which it prints its maps as JSON lines.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

from dbexp.errors import DbexpError, RetryableError
from dbexp.metrics import procfs, tracing
from dbexp.process import Child
from dbexp.servers.valgrind import probes_allowed

SCRIPT = """
uprobe:{path}:{symbol} /{only}/ {{ @start[tid] = nsecs; @switched[tid] = 0; }}
tracepoint:sched:sched_switch /@start[args->prev_pid]/ {{ @switched[args->prev_pid] = 1; }}
uretprobe:{path}:{symbol} /@start[tid]/ {{
  $d = nsecs - @start[tid]; delete(@start[tid]);
  if (@switched[tid]) {{ @out_calls = count(); @out_ns = sum($d); }}
  else {{ @calls = count(); @ns = sum($d); @hist = hist($d); }}
  delete(@switched[tid]);
}}
BEGIN {{ printf("ready\\n"); }}
END {{ clear(@start); clear(@switched); }}
"""


PROBES = 5  # what SCRIPT attaches: uprobe, tracepoint, uretprobe, BEGIN, END
# bpftrace 0.17 detaches its probes after SIGINT, one by one, and only then prints its maps: each
# uprobe's close waits for the kernel (about 0.1 s each on the lab's VM, kernel 6.18; 0.4 s for
# readview's probes, 0.6 s for group_commit's, up to 1.5 s with both CPUs starved by busier tasks)
STOP_TIMEOUT_S = 60
KILL_WAIT_S = 60  # after SIGKILL: a bpftrace inside the kernel's detach exits only when that returns


class UprobeError(DbexpError):
    """bpftrace is missing, could not attach, or stopped without printing its counts."""


class BpftraceStopError(UprobeError, RetryableError):
    """bpftrace did not attach or stop within its limit (a starved CPU, the kernel's detach): the run
    fails with what bpftrace was doing, and the sweep measures it again."""


@dataclass
class Timed:
    calls: int = 0  # calls that ran without being switched out
    total_ns: int = 0
    switched_calls: int = 0  # calls during which the thread was switched out (timed apart)
    switched_ns: int = 0
    hist: list[tuple[int, int, int]] = field(default_factory=list)  # (low ns, high ns, calls)

    @property
    def mean_ns(self) -> float | None:
        return self.total_ns / self.calls if self.calls else None

    @property
    def switched_share(self) -> float | None:
        total = self.calls + self.switched_calls
        return self.switched_calls / total if total else None

    def quantile_ns(self, q: float) -> float | None:
        """A quantile from the log2 histogram: the geometric middle of the bucket it falls in."""
        if not self.calls:
            return None
        seen = 0
        for lo, hi, n in self.hist:
            seen += n
            if seen >= q * self.calls:
                return float(((max(lo, 1)) * max(hi, 1)) ** 0.5)
        return float(self.hist[-1][1]) if self.hist else None


def bpftrace_binary() -> str | None:
    return shutil.which("bpftrace")


def server_binary(pid: int, names: tuple[str, ...]) -> str:
    """The path, as this host reaches it, of the server executable among ``pid`` and its
    descendants whose name is one of ``names`` (an entrypoint may start the server as a child)."""
    for p in procfs.descendants(pid):
        try:
            exe = os.readlink(f"/proc/{p}/exe")
        except OSError:
            continue
        if os.path.basename(exe) in names:
            return f"/proc/{p}/root{exe}"
    raise UprobeError(f"no {' or '.join(names)} process under pid {pid}")


def server_pid(path: str) -> int | None:
    """The process whose binary ``path`` is, where server_binary gave it (/proc/<pid>/root/...); else None."""
    parts = path.split("/")
    return int(parts[2]) if len(parts) > 3 and parts[1] == "proc" and parts[2].isdigit() else None


def only_server(pid: int | None) -> str:
    """A bpftrace predicate that holds in the server's own processes only: ``pid`` (mysqld, a
    postmaster) and its children (PostgreSQL's backends). A uprobe attaches to the binary's file, which
    every container of one image shares: without it, a server of the same build running beside (the
    A/A twin, a test on another worker) would be counted too. The children need the kernel's BTF
    (curtask); without it (or without a server's pid: a binary of this host), the predicate holds
    everywhere, as before."""
    if pid is not None and os.path.exists(BTF):
        return f"pid == {pid} || curtask->real_parent->tgid == {pid}"
    return "1"


BTF = "/sys/kernel/btf/vmlinux"


def script(path: str, symbol: str) -> str:
    return SCRIPT.format(path=path, symbol=symbol, only=only_server(server_pid(path)))


def attached_probes(lines: list[str]) -> int | None:
    """The number bpftrace reports attaching (its first JSON line), or None if it said nothing."""
    for line in lines:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("type") == "attached_probes":
            return int(msg["data"]["probes"])
    return None


def parse(lines: list[str]) -> Timed:
    """bpftrace's ``-f json`` lines after SIGINT -> Timed (no line for a map: zero calls)."""
    m = maps(lines)
    return Timed(calls=int(m.get("@calls", 0)), total_ns=int(m.get("@ns", 0)),
                 switched_calls=int(m.get("@out_calls", 0)), switched_ns=int(m.get("@out_ns", 0)),
                 hist=list(m.get("@hist", [])))


class Bpftrace:
    """A bpftrace script run for the length of a ``with`` block, started with a handshake (its BEGIN
    prints ``ready`` once every probe is attached, and the count attached is checked against
    ``expected``: bpftrace skips a uprobe whose symbol it cannot find and says nothing) and stopped
    with SIGINT, after which its maps are in ``lines`` (``-f json``)."""

    def __init__(self, text: str, expected: int, what: str, pin: str | None = None,
                 attach_timeout_s: float = 60.0):
        self.text, self.expected, self.what, self.pin = text, expected, what, pin
        self.attach_timeout_s = attach_timeout_s
        self.proc: Child | None = None
        self.lines: list[str] = []
        self.stop_s: float | None = None  # from SIGINT to bpftrace's exit
        self._err = None
        self._drain: threading.Thread | None = None
        self._out: queue.Queue | None = None

    def command(self) -> list[str]:
        exe = bpftrace_binary()
        if exe is None:
            raise UprobeError("bpftrace is not installed: run `make host` (Debian package bpftrace)")
        cmd = ["taskset", "-c", self.pin] if self.pin else []
        # uprobes need root: through sudo where it asks no password (CI runners)
        return cmd + tracing.as_root() + [exe, "-f", "json", "-e", self.text]

    def __enter__(self):
        self._allowed = probes_allowed(self.what).__enter__()  # no server under valgrind on this host meanwhile
        try:
            return self._attach()
        except BaseException:
            self._allowed.__exit__(None, None, None)
            self._allowed = None
            raise

    def _attach(self):
        why = tracing.ensure()  # a fresh machine may not have tracefs mounted: mount it first
        if why and "tracepoint:" in self.text:
            raise UprobeError(f"bpftrace cannot attach to {self.what}: {why}")
        # stderr goes to a file, not a pipe nobody reads while the block runs; stdout is read by one
        # thread from the start (a poll() on the pipe beside a buffered readline() misses lines that
        # arrived in one read: "ready" could sit in Python's buffer while the poll waited for more)
        self._err = tempfile.TemporaryFile(mode="w+")
        self.proc = Child(self.command(), stdout=subprocess.PIPE, stderr=self._err, text=True, bufsize=1)
        self._out = queue.Queue()
        self._drain = threading.Thread(target=self._read_stdout, daemon=True)
        self._drain.start()
        deadline = time.monotonic() + self.attach_timeout_s
        while time.monotonic() < deadline:
            try:
                line = self._out.get(timeout=0.2)
            except queue.Empty:
                continue
            if line is None:
                break  # bpftrace exited
            if '"ready' in line:
                if attached_probes(self.lines) == self.expected:
                    return self
                self._kill()
                raise UprobeError(attach_mismatch(self.what, self.lines, self.expected, self.text))
            self.lines.append(line)
        exited = not self.proc.running()
        state = "" if exited else self.state()
        why = self._kill()
        if exited:
            raise UprobeError(f"bpftrace did not attach to {self.what}: {why or 'it exited saying nothing'}")
        raise BpftraceStopError(f"bpftrace did not attach to {self.what} within {self.attach_timeout_s:g} s: "
                                f"{state}; stderr: {why or 'nothing'}")

    def _read_stdout(self) -> None:
        """Every line bpftrace prints, as it comes, then None at its end of output."""
        for line in self.proc.stdout:
            self._out.put(line)
        self._out.put(None)

    def _rest(self) -> list[str]:
        """The lines printed after the handshake (its maps, at the stop)."""
        self._drain.join(timeout=10)
        out = []
        while True:
            try:
                line = self._out.get_nowait()
            except queue.Empty:
                return out
            if line is not None:
                out.append(line)

    def stderr(self) -> str:
        if self._err is None:
            return ""
        self._err.seek(0)
        return self._err.read()

    def _kill(self) -> str:
        """End bpftrace (SIGKILL, then a bounded wait); why it failed, from its stderr."""
        if self.proc is None:
            return ""
        if not self.proc.end(KILL_WAIT_S):
            return f"still running {KILL_WAIT_S} s after SIGKILL ({self.state()}): its probes may still be attached"
        return tracing.cause(self.stderr())

    def state(self) -> str:
        """What a bpftrace that does not stop is doing: its state, wait channel and kernel stack."""
        pid = self.proc.pid if self.proc else None
        if pid is None:
            return "not started"
        found = []
        for name in ("status", "wchan", "stack"):
            try:
                with open(f"/proc/{pid}/{name}") as f:
                    text = f.read()
            except OSError:
                continue
            if name == "status":
                text = " ".join(l for l in text.splitlines() if l.startswith(("State:", "voluntary", "nonvoluntary")))
            found.append(f"{name}: {' '.join(text.split())[:400]}")
        return "; ".join(found) or "gone"

    def __exit__(self, *exc) -> None:
        try:
            self._detach(*exc)
        finally:
            if getattr(self, "_allowed", None) is not None:
                self._allowed.__exit__(None, None, None)
                self._allowed = None

    def _detach(self, *exc) -> None:
        if self.proc is None:
            return
        t0 = time.monotonic()
        # a second SIGINT at half the wait: seen once in a fresh clone's make test, bpftrace asleep in
        # epoll_wait 60 s after the SIGINT, nothing detaching (a lost signal, not a slow detach)
        if not (self.proc.stop(signal.SIGINT, STOP_TIMEOUT_S / 2, interval_s=0.005)
                or self.proc.stop(signal.SIGINT, STOP_TIMEOUT_S / 2, interval_s=0.005)):
            state = self.state()  # where it waits: its kernel stack names the detach step
            err = self.stderr()
            killed = self._kill()
            self._close()
            if exc[0] is None:
                why = (f"bpftrace did not stop within {STOP_TIMEOUT_S} s ({self.what}): {state}; "
                       f"stderr: {tracing.cause(err, 'nothing')}")
                if killed.startswith("still running"):  # probes may still slow the server: no retry on it
                    raise UprobeError(f"{why}; {killed}") from None
                raise BpftraceStopError(why) from None
            return
        self.stop_s = time.monotonic() - t0
        self.lines += self._rest()
        err = self.stderr()
        self._close()
        self.finished()
        if self.proc.returncode != 0 and exc[0] is None:
            raise UprobeError(f"bpftrace exited with {self.proc.returncode}: {tracing.cause(err, 'no message')}")

    def _close(self) -> None:
        if self._err is not None:
            self._err.close()
            self._err = None

    def finished(self) -> None:
        """What a subclass reads from ``lines`` once bpftrace has printed its maps."""


class UprobeTimer(Bpftrace):
    """``with UprobeTimer(path, symbol) as t: ...`` then ``t.result``: every call in the block timed."""

    def __init__(self, path: str, symbol: str, pin: str | None = None, attach_timeout_s: float = 60.0):
        super().__init__(script(path, symbol), PROBES, f"{symbol} in {path}", pin, attach_timeout_s)
        self.path, self.symbol = path, symbol
        self.result: Timed | None = None

    def finished(self) -> None:
        self.result = parse(self.lines)


def maps(lines: list[str]) -> dict[str, object]:
    """bpftrace's ``-f json`` map lines -> {"@name": int, or [(low, high, count)] for a histogram}."""
    out: dict[str, object] = {}
    for line in lines:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        data = msg.get("data")
        if msg.get("type") == "map" and isinstance(data, dict):
            out.update({k: int(v) for k, v in data.items() if isinstance(v, (int, float))})
        elif msg.get("type") == "hist" and isinstance(data, dict):
            for name, buckets in data.items():
                out[name] = [(int(b.get("min", 0)), int(b.get("max", b.get("min", 0))), int(b["count"]))
                             for b in buckets]
    return out


def mapped_library(pid: int, name: str) -> str:
    """The path, as this host reaches it, of the shared library ``name`` (e.g. ``libc.so.6``) that
    process ``pid`` has mapped (its own, inside its container)."""
    path = procfs.mapped_library(pid, name)
    if path is None:
        raise UprobeError(f"process {pid} has no {name} mapped")
    return path


def exported(path: str, names) -> str:
    """The first of ``names`` (one symbol, or its spellings across versions) that the ELF binary at
    ``path`` defines, in its dynamic or its full symbol table."""
    names = (names,) if isinstance(names, str) else tuple(names)
    have = defined_symbols(path, names)
    for name in names:
        if name in have:
            return name
    raise UprobeError(f"{path} exports none of {', '.join(names)}")


def defined_symbols(path: str, names) -> set[str]:
    """Which of ``names`` the ELF binary at ``path`` defines (pyelftools: no binutils needed)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    found: set[str] = set()
    with open(path, "rb") as f:
        elf = ELFFile(f)
        for section in elf.iter_sections():
            if not isinstance(section, SymbolTableSection):
                continue
            for name in set(names) - found:
                for sym in section.get_symbol_by_name(name) or []:
                    if sym["st_shndx"] != "SHN_UNDEF":
                        found.add(name)
    return found


UPROBE = re.compile(r"\b(?:uprobe|uretprobe):([^:\s]+):([^\s{/]+)")


def attach_mismatch(what: str, lines: list[str], expected: int, text: str) -> str:
    """One line for a bpftrace that attached fewer probes than its program has: how many, and which
    symbols their binaries lack."""
    attached = attached_probes(lines)
    missing = missing_symbols(text)
    return (f"bpftrace did not attach to {what}: {attached} of {expected} probes attached"
            + (f" ({missing})" if missing else " (every symbol is defined: a probe type this kernel lacks?)"))


def missing_symbols(text: str) -> str:
    """The uprobe targets of a bpftrace program whose symbol its binary does not define, as one line
    (bpftrace 0.17 skips such a probe and says nothing: only the count of attached probes shows it)."""
    wanted: dict[str, set[str]] = {}
    for path, symbol in UPROBE.findall(text):
        wanted.setdefault(path, set()).add(symbol)
    out = []
    for path, symbols in wanted.items():
        try:
            have = defined_symbols(path, symbols)
        except OSError as exc:
            out.append(f"{path} cannot be read ({exc.strerror})")
            continue
        out += [f"{path} defines no symbol {s}" for s in sorted(symbols - have)]
    return "; ".join(out)
