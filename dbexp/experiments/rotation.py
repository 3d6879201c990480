"""One active server at a time among workloads started together: their clients take turns.

Servers compared in one window share the server CPU when every client runs at once, and a neighbour's
cache and TLB traffic then costs each server by how big it is: the comparison measures the co-tenancy
as much as the servers. Here every client but one is stopped (SIGSTOP to its process group), so only its
server works; the turn passes every ``slice_s`` seconds (SIGCONT to the next client, SIGSTOP to this
one), through every client in order and back (A B C | C B A | ...), whole rounds only, so each server
gets the same number of slices spread over the whole window. A slow spell of the host (this lab's VM
halves its speed for seconds at a time) then falls on every server alike, as it did when they ran at
once, but no two servers ever run together.

A stopped client's last statement is still in flight on its server (a scan takes tens of milliseconds), so
with ``watches`` (one per client: its server, read through :class:`Watch`) a turn passes only once that
server is quiet: after SIGSTOP the server is read (:func:`wait_quiet`: its statement count and the client
statements executing now, in one query, then its container's CPU time) until two reads in a row find no
client statement executing and none begun between them; only then does the next client get SIGCONT. The
wait is bounded (``quiet_timeout_s``). Every turn is recorded (:class:`Turn`): its slice, how long it waited
for quiet and whether it got it, the statements its server executed in it, the server's CPU and its
processes' usage (context switches, bytes written) from just before SIGCONT to the quiet read, so that
per-operation figures can be counted inside a server's own turns only; and, read at the turn's start, what
the server did since its previous turn ended (statements: none expected; CPU: its background work).

Each client's own time with the turn is recorded (monotonic stamps around the signals, ``active_s``): a
server's rate is its statements over that time. The statement a client had in flight when it stopped began
inside its slice, so counting it there (and not the wait for it to end) keeps the rate unbiased where a slice
holds many statements. Where it holds few (a scan of a million rows takes 0.3 to 1 s, a slice 0.1 s: one
statement per turn, begun at the turn's start, its rate the slice's 10 a second whatever the server), the time
its server needed to end the statement after the slice counts: each turn records when its server's last
statement ended (``tail_s`` after SIGSTOP: midway between the last read that found the server working and the
next, which found it quiet), and a rate over the turns' time to their quiet (``slice_s + tail_s``) counts every
statement over the time the server worked on it.

:func:`held`, :func:`describe` and :func:`numbers` read what the turns stored with a set of runs
(dbexp.experiments.measure.measure_in_turns writes it) and say whether they show one server working at a time,
every per-operation figure counted in its own turns; :func:`active_servers` is that count per run.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field
from typing import Protocol

import pandas as pd

from dbexp.errors import DbexpError, RetryableError
from dbexp.waits import poll

QUIET_TIMEOUT_S = 2.0  # the longest a turn waits for its server's statement in flight to end
QUIET_POLL_S = 0.0005  # between reads while a client statement still executes


class TurnsNotQuiet(RetryableError):
    """A window whose turns did not keep one server working at a time (a turn passed before its server was
    quiet, a statement ran outside its server's turns): measured again."""


@dataclass(frozen=True)
class Reading:
    """One read of a server during the turns."""

    t: float  # time.monotonic() when the server's answer came back
    statements: float  # its count of statements executed (each read adds one, seen by the next)
    running: int  # client statements executing as it answered, the read's own left out
    cpu_s: float  # its container's CPU time, read at once after
    pending: int = 0  # bytes on its client connections it has not read yet (a statement sent, not yet begun)


class Watch(Protocol):
    """What the turns read of one server (dbexp.experiments.measure.ServerWatch on real servers)."""

    def read(self) -> Reading: ...

    def usage(self) -> object:
        """The server's processes' cumulative counters now (opaque: :meth:`spent` takes two)."""

    def spent(self, before: object, after: object) -> dict[str, float]:
        """What the server's processes did between two :meth:`usage` readings ({"vcs": n, "wchar": bytes, ...})."""


@dataclass(frozen=True)
class Turn:
    """One client's turn, as its server was read around it."""

    client: int  # its index among the rotation's clients
    began: float  # time.monotonic() at SIGCONT
    slice_s: float  # SIGCONT to SIGSTOP: the client's time with the turn
    wait_s: float  # SIGSTOP to the read that found its server quiet (or to the bound)
    quiet: bool  # its server was found quiet: no client statement executing, none begun, two reads in a row
    reads: int  # the reads after the turn's first one (the quiet wait's)
    statements: float  # client statements the server executed in the turn (the reads' own left out)
    cpu_s: float  # the server's CPU from the turn's first read to its last
    usage: dict[str, float] = field(default_factory=dict)  # its processes' switches and bytes, the same span
    outside: float | None = None  # client statements since its previous turn ended (None: its first turn)
    cpu_outside_s: float | None = None  # its CPU since its previous turn ended (background work, the read's own)
    gap_s: float | None = None  # the previous turn's SIGSTOP to this SIGCONT: every client stopped (None: the first)
    read_cpu_s: float | None = None  # the server's CPU for its last read (where quiet): at most what a read costs it
    tail_s: float | None = None  # SIGSTOP to the end of its server's last statement, midway between the last read
    # that found it working (or SIGSTOP) and the next (None: not found quiet)


@dataclass(frozen=True)
class Quiet:
    """How a wait for a quiet server ended."""

    last: Reading  # the last read
    ok: bool  # the server was found quiet
    reads: int  # the reads it took
    read_cpu_s: float | None  # the server's CPU between the last two reads where quiet: one read's own cost,
    # and whatever background work (a page cleaner, purge) ran in that moment
    busy_t: float | None = None  # the last read after which the server still worked (a client statement executing
    # or unread at it, or begun before the next read): its t; None where none did (it was quiet from the first)
    idle_t: float | None = None  # the read after that one (or the first), from which on it was quiet: its t

    def ended(self, since: float) -> float | None:
        """When the server's last client statement ended, as seconds after ``since`` (the client's SIGSTOP):
        midway between the last read that found it working (or ``since``) and the next; None where not quiet."""
        if not self.ok or self.idle_t is None:
            return None
        return max(0.0, ((self.busy_t if self.busy_t is not None else since) + self.idle_t) / 2 - since)


def _working(prev: Reading, cur: Reading) -> bool:
    """Whether the server worked at or after ``prev`` (until ``cur``): a client statement executing or unread at
    ``prev``, or one begun between the two (its count grew by more than ``cur``'s own)."""
    return prev.running != 0 or prev.pending != 0 or cur.statements - prev.statements != 1


def wait_quiet(watch: Watch, timeout_s: float = QUIET_TIMEOUT_S, poll_s: float = QUIET_POLL_S) -> Quiet:
    """Read the server (every ``poll_s``) until two reads in a row find no client statement executing, none begun
    between them (its count grew by the first read's own only) and none waiting unread on its connections (a
    statement the stopped client sent just before it stopped, which a server thread has not picked up yet: on one
    server CPU the reads' own thread can run first), or ``timeout_s`` passes."""
    readings = [watch.read()]

    def settled() -> bool:
        prev, cur = readings[-1], watch.read()
        readings.append(cur)
        return (prev.running == 0 and cur.running == 0 and prev.pending == 0 and cur.pending == 0
                and cur.statements - prev.statements == 1)

    ok = bool(poll(settled, timeout_s, poll_s))
    busy = [k for k in range(len(readings) - 1) if _working(readings[k], readings[k + 1])]
    if readings[-1].running or readings[-1].pending:
        busy.append(len(readings) - 1)
    last = busy[-1] if busy else None
    idle = None if last is None else (last + 1 if last + 1 < len(readings) else None)
    return Quiet(readings[-1], ok, len(readings), readings[-1].cpu_s - readings[-2].cpu_s if ok else None,
                 None if last is None else readings[last].t, readings[0].t if last is None else
                 (readings[idle].t if idle is not None else None))


class Rotation:
    """Turns among ``clients`` (objects with ``send(sig)``: dbexp.process.Child in a process group); with
    ``watches`` (a :class:`Watch` per client, its server), each turn waits for its server to be quiet
    (read every ``quiet_poll_s``, at most ``quiet_timeout_s``) before the next begins, and is recorded in
    ``turns``."""

    def __init__(self, clients: list, slice_s: float, watches: list | None = None,
                 quiet_timeout_s: float = QUIET_TIMEOUT_S, quiet_poll_s: float = QUIET_POLL_S):
        if slice_s <= 0:
            raise DbexpError(f"bad slice {slice_s!r} s for clients taking turns: expected more than 0")
        if watches is not None and len(watches) != len(clients):
            raise DbexpError(f"bad watches for clients taking turns: {len(watches)} for {len(clients)} clients, "
                             "expected one per client")
        self.clients = clients
        self.slice_s = slice_s
        self.watches = watches
        self.quiet_timeout_s = quiet_timeout_s
        self.quiet_poll_s = quiet_poll_s
        self.active_s = [0.0] * len(clients)
        self.slices = [0] * len(clients)
        self.rounds = 0
        self.longest_round_s = 0.0
        self.turns: list[Turn] = []
        self._last: dict[int, Reading] = {}  # each server's last reading of its previous turn
        self._stopped: float | None = None  # time.monotonic() of the last SIGSTOP of a turn

    def stop_all(self) -> None:
        for c in self.clients:
            c.send(signal.SIGSTOP)

    def resume_all(self) -> None:
        """Every client running again (at the end, so their runs finish; before a kill, harmless). A client
        already reaped is skipped by its send(); an unreaped one, even exited, still has its process group."""
        for c in self.clients:
            c.send(signal.SIGCONT)

    def turn(self, i: int) -> None:
        """Client ``i`` alone for one slice (the others are stopped already); with watches, until its server
        is quiet after it."""
        c = self.clients[i]
        w = self.watches[i] if self.watches else None
        if w is not None:
            first, before = w.read(), w.usage()
        start = time.monotonic()
        c.send(signal.SIGCONT)
        time.sleep(max(0.0, start + self.slice_s - time.monotonic()))
        c.send(signal.SIGSTOP)
        stopped = time.monotonic()
        self.active_s[i] += stopped - start
        self.slices[i] += 1
        gap = None if self._stopped is None else start - self._stopped
        self._stopped = stopped
        if w is None:
            return
        q = wait_quiet(w, self.quiet_timeout_s, self.quiet_poll_s)
        after = w.usage()
        last, prev = q.last, self._last.get(i)
        self._last[i] = last
        self.turns.append(Turn(
            i, start, stopped - start, last.t - stopped, q.ok, q.reads, last.statements - first.statements - q.reads,
            last.cpu_s - first.cpu_s, w.spent(before, after),
            None if prev is None else first.statements - prev.statements - 1,
            None if prev is None else first.cpu_s - prev.cpu_s, gap, q.read_cpu_s, q.ended(stopped)))

    def run_until(self, deadline: float) -> None:
        """Whole rounds (forward, then backward) while one more fits before ``deadline`` (monotonic), a
        round taking as long as the longest so far (at least a slice per client); at least one. Every client
        is stopped on return."""
        n = len(self.clients)
        order = list(range(n))
        while True:
            began = time.monotonic()
            for i in (order if self.rounds % 2 == 0 else order[::-1]):
                self.turn(i)
            self.rounds += 1
            self.longest_round_s = max(self.longest_round_s, time.monotonic() - began)
            if time.monotonic() + max(n * self.slice_s, self.longest_round_s) > deadline:
                return

    def of(self, i: int) -> list[Turn]:
        """Client ``i``'s turns, in order."""
        return [t for t in self.turns if t.client == i]


# --- what the turns stored with the runs say ------------------------------------------------------------

# the measurements dbexp.experiments.measure stores per run from its turns (those the witness reads)
WITNESS_COLUMNS = ("turns", "turns_quiet", "statements_outside_turns", "turn_share_pct", "turn_wait_ms_max")


def held(w: pd.DataFrame) -> pd.Series:
    """Per run of ``w`` (one row per run, its measurements as columns): whether its turns show one server
    working at a time, every per-operation figure counted in its own turns: its server was quiet at the first
    mark and at the end of every turn, and no statement of its client ran outside its turns between the marks.
    (The share of its statements in its own turns, ``turn_share_pct``, is said beside: the rest ran at its
    client's start and in its last transaction, each client alone.) False where the run stored no turns."""
    if w.empty or any(c not in w for c in WITNESS_COLUMNS):
        return pd.Series(False, index=w.index, dtype=bool)
    start = w["start_quiet"].fillna(1) > 0 if "start_quiet" in w else True  # its server quiet at the first mark
    return ((w["turns"] > 0) & (w["turns_quiet"] == w["turns"]) & (w["statements_outside_turns"] == 0)
            & start).fillna(False).astype(bool)


def active_servers(w: pd.DataFrame) -> pd.Series:
    """Per run of ``w``, the servers that carried load at once, as its turns show it: where its clients took turns
    (``slices``), 1 only where the turns' witness held (:func:`held`), else every server of its window
    (``servers_at_once``: runs stored before the witness ran their clients all at once before the first mark and
    after the second); other runs as stored (``active_servers``)."""
    out = (w["active_servers"] if "active_servers" in w else pd.Series(float("nan"), index=w.index)).astype(float)
    if "slices" not in w:
        return out
    turned = w["slices"].fillna(0) > 0
    window = w["servers_at_once"] if "servers_at_once" in w else out
    return out.where(~turned, held(w).map({True: 1.0, False: float("nan")}).fillna(window.astype(float)))


def describe(w: pd.DataFrame) -> tuple[bool, str]:
    """Whether every run of ``w`` held (:func:`held`) and what their turns show, in words with numbers:
    for runs that stored their turns, the turns found quiet, the longest wait, statements outside the turns
    and the share of the runs' statements in their own turns; for runs that did not, that they did not, and
    the share of their statements between the marks' own time, where the marks stored it."""
    if w.empty:
        return False, "no runs"
    ok = held(w)
    stored = w[[c for c in WITNESS_COLUMNS if c in w]].notna().all(axis=1) if all(c in w for c in WITNESS_COLUMNS) \
        else pd.Series(False, index=w.index)
    parts = []
    if stored.any():
        s = w[stored]
        parts.append(f"{int(s['turns_quiet'].sum()):,} of {int(s['turns'].sum()):,} turns ended with the server quiet "
                     f"(no statement in flight, its count stopped) before the next began, waiting at most "
                     f"{s['turn_wait_ms_max'].max():.1f} ms; {int(s['statements_outside_turns'].abs().sum()):,} "
                     f"statements ran outside a server's own turns, where its per-operation figures were counted "
                     f"({int(ok[stored].sum())} of {int(stored.sum())} runs held; {s['turn_share_pct'].min():.1f}% or "
                     f"more of each run's statements in its own turns, the rest at its client's start and end, alone)")
    if (~stored).any():
        old = w[~stored]
        said = (f"{int((~stored).sum())} runs stored no turn records: a statement in flight at a turn's end was not "
                "waited for, and their per-operation figures span the whole run, every client at once before the "
                "first mark and after the second")
        if {"qps_common", "active_s", "queries"} <= set(old):
            share = (old["qps_common"] * old["active_s"] / old["queries"]).dropna()
            if len(share):
                said += f" ({100 * share.median():.0f}% of a run's statements in its own turns at the median)"
        parts.append(said)
    return bool(ok.all()), "; ".join(parts)


def numbers(w: pd.DataFrame) -> dict:
    """What the turns stored with the runs ``w`` show, as numbers for a page's sentence: ``stored``, the runs
    with turn records, and over them the turns and those found quiet, the mean and longest wait for quiet (ms),
    statements outside the servers' own turns, the least and median share of a run's statements in its own
    turns (fractions), the runs that held (:func:`held`), the largest CPU between the marks over a server's
    turns' time, what the turns cost (the mean time every client stood stopped between two turns, ms; a read's
    server CPU, µs; reads per turn); ``old``, the runs without them, and the median share of their statements
    in their own turns between the marks (a fraction, None where not stored)."""
    if w.empty:
        return {"runs": 0, "stored": 0, "old": 0}
    have = all(c in w for c in WITNESS_COLUMNS)
    stored = w[list(WITNESS_COLUMNS)].notna().all(axis=1) if have else pd.Series(False, index=w.index)
    s, o = w[stored], w[~stored]
    out = {"runs": len(w), "stored": int(stored.sum()), "old": int((~stored).sum()), "old_share": None}
    if len(s):
        col = lambda name: s[name] if name in s else pd.Series(float("nan"), index=s.index)  # noqa: E731
        out.update(turns=int(s["turns"].sum()), quiet=int(s["turns_quiet"].sum()),
                   wait_mean_ms=float((col("turn_wait_ms_mean") * s["turns"]).sum() / s["turns"].sum()),
                   wait_max_ms=float(s["turn_wait_ms_max"].max()),
                   outside=int(s["statements_outside_turns"].abs().sum()),
                   share_min=float(s["turn_share_pct"].min()) / 100, share_median=float(s["turn_share_pct"].median()) / 100,
                   held=int(held(s).sum()), cpu_over_max=float(col("cpu_over_turn_time").max()),
                   gap_ms=float(col("turn_gap_ms_mean").median()), read_cpu_us=float(col("probe_cpu_us").median()),
                   reads_per_turn=float((col("probe_reads") / s["turns"]).median()))
        out.update({k: None for k in ("cpu_over_max", "gap_ms", "read_cpu_us", "reads_per_turn") if out[k] != out[k]})
    if len(o) and {"qps_common", "active_s", "queries"} <= set(o):
        share = (o["qps_common"] * o["active_s"] / o["queries"]).dropna()
        out["old_share"] = float(share.median()) if len(share) else None
    return out
