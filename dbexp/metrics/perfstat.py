"""Context switches on a set of CPUs, counted by the kernel: ``perf stat -C`` run and parsed.

The server is pinned to its own CPUs, so what the kernel counts there is the server's work, at a
cost that does not grow with its number of processes (the sampler used to list and read every
thread of every process in /proc, on the client's CPU). Counted per second (``-I``) and in total:

- ``cs_all``: the ``context-switches`` software event, every switch on those CPUs, a switch out
  of the idle task included, like vmstat's ``cs`` column restricted to those CPUs (so up to twice
  the per-thread counts of /proc where the CPUs go idle between requests, and about equal to
  them where they are saturated);
- ``migrations``: ``cpu-migrations``, tasks moved onto those CPUs;
- with ``SPLIT_EVENTS`` (optional, dearer): ``vcs`` and ``ivcs`` from the ``sched:sched_switch``
  tracepoint, filtered on the state of the task switched out: blocked (voluntary, what
  ``voluntary_ctxt_switches`` in /proc counts) or still runnable (involuntary: preempted,
  prev_state 256 = TASK_REPORT_MAX, or yielding, 0); switches out of the idle task (pid 0) are left
  out. Summed over the tasks that ran there they equal the per-thread counters of /proc (two pinned
  processes ping-ponging: 22,812 / 17,335 in /proc, 22,836 / 17,338 here).

What counting costs, on the counted CPUs (two processes ping-ponging through pipes on CPU 1 of the
lab's VM, kernel 6.18, medians of 6 alternated runs): about 115 ns per context switch for the two
software events, 375 ns with the two tracepoints added. A PostgreSQL point select switches about
once per query for about 22 us of server CPU: 0.5% or 1.7% of the server's CPU. The software events
are the default for that reason.

Everything on those CPUs counts: the server, and what else the kernel ran there (kworkers,
ksoftirqd; a few switches a second on an idle machine). Nothing here needs hardware counters or the
perf_event cgroup (a VM has neither). perf runs pinned to the client's CPUs; it is started with a
control pipe and answers a ``ping`` once it is counting, and it prints a last, partial interval
when stopped with SIGINT, so the intervals add up to the window.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from dbexp.errors import DbexpError
from dbexp.metrics import tracing
from dbexp.metrics.procfs import cpu_seconds
from dbexp.process import Child

IVCS_FILTER = "prev_pid != 0 && (prev_state == 0 || prev_state >= 256)"
VCS_FILTER = "prev_pid != 0 && prev_state > 0 && prev_state < 256"
# (label, perf event, tracepoint filter): perf prints one line per event in this order
EVENTS: tuple[tuple[str, str, str | None], ...] = (
    ("cs_all", "context-switches", None),
    ("migrations", "cpu-migrations", None),
)
SPLIT_EVENTS: tuple[tuple[str, str, str | None], ...] = (
    ("vcs", "sched:sched_switch", VCS_FILTER),
    ("ivcs", "sched:sched_switch", IVCS_FILTER),
)
UNCOUNTED = ("<not counted>", "<not supported>")


class PerfError(DbexpError):
    """perf is missing, did not start counting, or stopped without printing its counts."""


@dataclass
class PerfCounts:
    intervals: list[tuple[float, dict[str, float]]] = field(default_factory=list)  # (end s, counts)
    cpu_s: float = 0.0  # perf's own user + system CPU time, from its start
    startup_cpu_s: float = 0.0  # ... of which before it counted (setting up its events)

    def totals(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for _, counts in self.intervals:
            for label, value in counts.items():
                out[label] = out.get(label, 0.0) + value
        return out

    def rates(self) -> list[tuple[float, str, float]]:
        """(interval end s, label, count per second) of every interval."""
        rows, prev = [], 0.0
        for ts, counts in self.intervals:
            if ts > prev:
                rows += [(ts, label, value / (ts - prev)) for label, value in counts.items()]
            prev = ts
        return rows


def perf_binary() -> str | None:
    return shutil.which("perf")


def command(cpus: str, interval_ms: int = 1000, events=EVENTS, control: tuple[int, int] | str | None = None,
            pin: str | None = None, perf: str = "perf") -> list[str]:
    """The command line: what a person would type to count the same (less the control pipe)."""
    cmd = ["taskset", "-c", pin] if pin else []
    cmd += [perf, "stat", "-C", cpus, "-x,", "-I", str(interval_ms)]
    if control:
        cmd += ["--control", control if isinstance(control, str) else f"fd:{control[0]},{control[1]}"]
    for _, event, filt in events:
        cmd += ["-e", event] + (["--filter", filt] if filt else [])
    return cmd


def parse(text: str, events=EVENTS) -> list[tuple[float, dict[str, float]]]:
    """``perf stat -x, -I`` output -> [(interval end s, {label: count})]; the lines of each interval
    are matched to ``events`` by position (two filtered tracepoints share a name). Raises PerfError
    on an event perf could not count, a missing or unexpected line."""
    by_ts: dict[float, list[tuple[str, str]]] = {}
    for line in text.splitlines():
        f = line.strip().split(",")
        if len(f) < 4 or line.lstrip().startswith("#"):
            continue
        try:
            ts = float(f[0])
        except ValueError:
            continue  # a message, not a count
        by_ts.setdefault(ts, []).append((f[1], f[3]))
    out = []
    for ts, lines in sorted(by_ts.items()):
        if [name for _, name in lines] != [event for _, event, _ in events]:
            raise PerfError(f"perf printed {[name for _, name in lines]} at {ts} s, expected "
                            f"{[event for _, event, _ in events]}")
        counts = {}
        for (value, name), (label, _, _) in zip(lines, events):
            if value in UNCOUNTED:
                raise PerfError(f"perf could not count {name} ({label}): {value}")
            counts[label] = float(value)
        out.append((ts, counts))
    return out


class PerfStat:
    """``perf stat -C cpus`` from ``start()`` to ``stop()``; start raises PerfError when perf is
    missing or does not start counting (the caller chooses a fallback and records it)."""

    def __init__(self, cpus: str, pin: str | None = None, interval_ms: int = 1000, events=EVENTS):
        self.cpus, self.pin, self.interval_ms, self.events = cpus, pin, interval_ms, events
        self.proc: Child | None = None
        self.started = 0.0  # time.monotonic() when perf answered that it counts
        self.startup_cpu_s = 0.0  # perf's CPU time by then
        self.output = ""  # what perf printed, once stopped
        self._out = None

    def start(self, timeout_s: float = 10.0) -> "PerfStat":
        perf = perf_binary()
        if perf is None:
            raise PerfError("perf is not installed (Debian: apt-get install linux-perf)")
        if self.control == "fifo":  # named pipes, each held open both ways here (no EOF to wait on)
            folder = tempfile.mkdtemp(prefix="dbexp-perf-")
            ctl, ack = os.path.join(folder, "ctl"), os.path.join(folder, "ack")
            os.mkfifo(ctl)
            os.mkfifo(ack)
            ctl_w, ack_r = os.open(ctl, os.O_RDWR), os.open(ack, os.O_RDWR)
            child, arg = (), f"fifo:{ctl},{ack}"
        else:
            ctl_r, ctl_w = os.pipe()
            ack_r, ack_w = os.pipe()
            child, arg = (ctl_r, ack_w), f"fd:{ctl_r},{ack_w}"
        self._out = tempfile.TemporaryFile(mode="w+")
        cmd = self.command_line(perf, arg)
        try:
            self.proc = Child(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._out,
                              pass_fds=child, text=True)
        except OSError as exc:
            for fd in (*child, ctl_w, ack_r):
                os.close(fd)
            raise PerfError(f"perf did not start: {exc}") from exc
        for fd in child:
            os.close(fd)  # perf's exit closes the last write end of a pipe: the read below sees EOF
        try:
            os.write(ctl_w, b"ping\n")  # answered from perf's main loop, once counting
            poller = select.poll()  # not select(): a harness holding 1,000 sessions has fds above 1024
            poller.register(ack_r, select.POLLIN)
            ready = poller.poll(timeout_s * 1000)
            answer = os.read(ack_r, 64) if ready else b""
        except OSError:
            answer = b""
        except BaseException:  # interrupted while waiting: perf must not outlive the window
            self._kill()
            raise
        finally:
            os.close(ctl_w)
            os.close(ack_r)
            if self.control == "fifo":  # perf opened them by its answer (or never will)
                shutil.rmtree(folder, ignore_errors=True)
        if b"ack" not in answer:
            text = self._kill()
            raise PerfError(f"perf did not start counting on CPUs {self.cpus}: {tracing.cause(text, 'no answer')}")
        self.started = time.monotonic()
        self.startup_cpu_s = cpu_seconds(self.proc.pid) or 0.0
        return self

    control = "fd"  # how perf is told to answer a ping: inherited pipes ("fd") or named ones ("fifo")

    def command_line(self, perf: str, control: str) -> list[str]:
        return command(self.cpus, self.interval_ms, self.events, control, self.pin, perf)

    def stop(self, timeout_s: float = 10.0) -> PerfCounts:
        """SIGINT (perf prints the last partial interval), wait, parse."""
        usage = self.interrupt(timeout_s)
        text = self._text()
        intervals = parse(text, self.events)
        if not intervals:
            raise PerfError(f"perf stat printed no counts: {text.strip()[-300:]}")
        return PerfCounts(intervals, usage.ru_utime + usage.ru_stime if usage else 0.0, self.startup_cpu_s)

    def interrupt(self, timeout_s: float = 10.0):
        """SIGINT, wait for perf to end, raise PerfError on a failure; perf's resource usage."""
        proc = self.proc
        if proc is None:
            raise PerfError("perf was not started")
        if not proc.stop(signal.SIGINT, timeout_s, interval_s=0.005):
            text = self._kill()
            raise PerfError(f"perf did not stop within {timeout_s:.0f} s: {tracing.cause(text, 'no message')}")
        if proc.returncode not in (0, -signal.SIGINT, 128 + signal.SIGINT):
            text = self._text()
            raise PerfError(f"perf failed (exit {proc.returncode}): {tracing.cause(text, 'no message')}")
        return proc.usage

    def _text(self) -> str:
        if self._out is None:
            return self.output
        self._out.seek(0)
        self.output = self._out.read()
        self._out.close()
        self._out = None
        return self.output

    def _kill(self) -> str:
        """End perf whatever state it is in; its output so far."""
        if self.proc is not None:
            self.proc.end()
        return self._text()

    def close(self) -> None:
        """Never leave perf running (an exception inside the window)."""
        self._kill()
