"""Instructions per operation, counted by valgrind's callgrind: a cost that does not depend on the machine.

A server started with ``ServerConfig(under="callgrind")`` (or ``"callgrind-sim"``: the simulated caches
and branch predictor too) runs its command under valgrind (dbexp.servers.valgrind), counting only inside
its flavor's entry function (``do_command`` on MySQL and MariaDB, the backend's ``PostgresMain``): the
work of client statements, not of background threads or timers, whose share grows with valgrind's
slowdown. It starts natively, so that its tables load at full speed; :func:`instrument` restarts it
under valgrind.

A count (:func:`count` for a sysbench workload, :func:`count_loop` for a chapter's own statements)
runs three passes, each on a connection of its own and with one client: a warm-up, then a short pass
of ``head`` operations, then a long one of ``head + n``; each pass's counts are read on their own
(MySQL's and MariaDB's by a mark statement on a separate connection, which makes callgrind write what it
counted; PostgreSQL's as the pass's backend ends). The long pass less the short one is the count of the
``n`` operations only: what a connection costs once (login, preparing statements, the backend's caches
filled, the first plans, closing) is in both and cancels, as do the mark statements. The passes draw
their keys from their own fixed sysbench seeds (the same on every server, so two servers count the same
statements; a seed of its own per pass, so that no pass rewrites the very values an earlier one wrote).

What a count misses is said on the methodology page: work in the kernel (system calls, I/O), waiting,
and what background threads do for the statements (purge, page cleaning, WAL writing), which run
outside the entry function.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbexp.errors import DbexpError, RetryableError
from dbexp.metrics import procfs
from dbexp.metrics.callgrind_format import Profile, complete, fn_label, read
from dbexp.waits import poll

HEAD = 10  # operations in the short pass: a prepared statement's first plans (PostgreSQL's first five custom) in it
EVENTS = 1000  # operations counted by default (the long pass less the short one)
SEEDS = {"warmup": 101, "short": 102, "long": 103}  # sysbench --rand-seed per pass
TOP = 40  # functions stored per run, by inclusive and by exclusive instructions
FILE_WAIT_S = 120.0  # a pass's output file: a backend under valgrind writes it as its connection ends
SETTLE_S = 0.5  # after a pass on a server whose one process serves every connection, before the mark ends its window
COUNT_TRIES = 3  # passes counted again where a window held other statements than its client's (StatementsMissed)
RESTART_TIMEOUT_S = 900.0
_OUT = re.compile(r"^callgrind\.out\.(\d+)(?:\.(\d+))?$")

# Per-operation figures from the window's event totals: name -> (events summed, unit). Only those whose
# events were counted (instructions always; the rest with --cache-sim and --branch-sim).
PER_OP = {
    "instructions_per_op": (("Ir",), "count"),
    "data_reads_per_op": (("Dr",), "count"),
    "data_writes_per_op": (("Dw",), "count"),
    "i1_misses_per_op": (("I1mr",), "count"),
    "d1_misses_per_op": (("D1mr", "D1mw"), "count"),
    "d1_read_misses_per_op": (("D1mr",), "count"),
    "ll_misses_per_op": (("DLmr", "DLmw"), "count"),
    "ll_read_misses_per_op": (("DLmr",), "count"),
    "branches_per_op": (("Bc", "Bi"), "count"),
    "branch_mispredicts_per_op": (("Bcm", "Bim"), "count"),
}


def counted_config(config, mode: str = "callgrind-sim"):
    """``config`` to be counted under ``mode`` (dbexp.servers.config.UNDER): ``under`` set, and the
    flavor's counting settings (its ``callgrind`` capability, those this version knows) written into its
    settings, below the ones it already has, so that a point's description shows them."""
    from dbexp.servers.lifecycle import prepare_build
    from dbexp.servers.valgrind import counting_settings

    _, flavor, image = prepare_build(config)
    settings = {**counting_settings(flavor, image, config.settings), **config.settings}
    return dataclasses.replace(config, settings=settings, under=mode)


def valgrind_of(server):
    """The server's dbexp.servers.valgrind.Valgrind, or a one-line error saying how to get one."""
    if getattr(server, "under", None) is None:
        raise DbexpError(f"{server.build.spec} was not started under valgrind: start it from "
                         "dbexp.metrics.callgrind.counted_config(config) (ServerConfig under='callgrind')")
    return server.under


def instrument(server, timeout_s: float = RESTART_TIMEOUT_S) -> float:
    """Restart a counted server under valgrind (its data directory kept) unless it runs so already;
    the seconds its start took (0.0 where nothing was done)."""
    from dbexp.servers.lifecycle import wait_ready

    under = valgrind_of(server)
    if not under.native:
        return 0.0
    under.exclude_probes()  # a uprobe on this host would kill it (dbexp.servers.valgrind.PROBES_LOCK)
    under.native = False
    started = time.monotonic()
    try:
        server.container.restart(timeout=60)
        server.started_at = time.monotonic()
        wait_ready(server, timeout_s)
    except BaseException:
        under.native = True  # not known to run under valgrind
        raise
    return time.monotonic() - started


# --- reading a pass's counts ------------------------------------------------------------------------

def _outputs(folder: Path) -> dict[str, tuple[int, int]]:
    """callgrind's output files in ``folder``: name -> (pid, dump number; 0 for the end of the process)."""
    out = {}
    for name in os.listdir(folder):
        m = _OUT.match(name)
        if m:
            out[name] = (int(m.group(1)), int(m.group(2) or 0))
    return out


class Passes:
    """Reads the counts of each pass run against a counted server (a context manager: MySQL's and
    MariaDB's mark connection is open while it is). ``begin()`` before a pass, ``end(pid)`` after it
    returns what the pass counted: ``pid`` is the backend of a pass's connection where the server has a
    process per connection and it is known (else the one new backend that counted anything)."""

    def __init__(self, server, wait_s: float = FILE_WAIT_S):
        self.server = server
        self.under = valgrind_of(server)
        self.cap = server.flavor.capability("callgrind")
        self.wait_s = wait_s
        self.conn = None
        self._seen: set[str] = set()
        self._alive: set[int] = set()

    def __enter__(self) -> "Passes":
        if self.under.native:
            raise DbexpError(f"{self.server.build.spec} runs natively: dbexp.metrics.callgrind.instrument() it first")
        if not self.cap.per_connection:
            self.conn = self.server.connect()
        return self

    def __exit__(self, *exc) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def begin(self) -> None:
        self._seen = set(_outputs(self.under.out))
        if self.cap.per_connection:  # the backends alive now are not the pass's
            self._alive = {procfs.namespace_id(pid, pid) for pid in procfs.descendants(self.server.main_pid())}

    def end(self, pid: int | None = None) -> Profile:
        if self.cap.per_connection:
            return self._ended_backend(pid)
        # the pass's connection was closed by its client; its quit is a command of the statement loop too, which the
        # server (slowed some fifty times by valgrind, more on a busy host) may handle after the mark if marked at once:
        # the quit then counts in the next window (199 statements of 200 seen, 101 of 100)
        time.sleep(SETTLE_S)
        self.cap.mark(self.conn)
        name = self._wait(lambda new: [n for n, (_, part) in new.items() if part > 0], "a mark's dump")
        if len(name) != 1:
            raise DbexpError(f"one mark made {len(name)} dumps ({', '.join(sorted(name))}): another statement "
                             f"entered {self.cap.marker} during the count")
        profile = self._read(name[0])
        if "dump-before" not in profile.trigger and self.cap.marker.split("*")[0] not in profile.trigger:
            raise DbexpError(f"{name[0]} was written by {profile.trigger!r}, not by the mark")
        return profile

    def _ended_backend(self, pid: int | None) -> Profile:
        def candidates(new: dict[str, tuple[int, int]]) -> list[str]:
            return [n for n, (p, _) in new.items() if (p == pid if pid is not None else p not in self._alive)]

        names = self._wait(candidates, "the pass's backend's output" + (f" (pid {pid})" if pid else ""))
        if pid is not None:
            return self._read(names[0])
        profiles = {n: self._read(n) for n in names}
        counted = [n for n, p in profiles.items() if p.total("Ir") > 0]
        if len(counted) != 1:
            raise DbexpError(f"{len(counted)} backends that started during the pass ran client statements "
                             f"({', '.join(sorted(counted)) or 'none'}): a pass is one client's connection")
        return profiles[counted[0]]

    def _wait(self, pick: Callable[[dict], list[str]], what: str) -> list[str]:
        def ready() -> list[str]:
            new = {n: v for n, v in _outputs(self.under.out).items() if n not in self._seen}
            names = pick(new)
            return names if names and all(complete(self.under.out / n) for n in names) else []

        names = poll(ready, self.wait_s, 0.05)
        if not names:
            raise DbexpError(f"{what} did not appear in {self.under.out} within {self.wait_s:g} s "
                             f"(server log: {self.server.why_stopped()})")
        return names

    def _read(self, name: str) -> Profile:
        self.under.readable(self.server)
        return read(self.under.out / name)


# --- what a count stores ------------------------------------------------------------------------------

@dataclass
class Window:
    """One counted pass: its counts, and the operations its client ran (statements and sysbench events)."""

    profile: Profile
    ops: int  # operations per-operation figures divide by (sysbench's queries; a loop's calls of its run)
    events: int  # sysbench's events (transactions); a loop's calls of its run
    statements: int  # the client statements the server received
    wall_s: float
    command: str = ""


@dataclass
class Count:
    """What a count measured: figures as a run stores its measurements ({name: (value, unit)}), the
    function table as counter rows, and the command lines (valgrind's and the last pass's)."""

    measurements: dict
    counters: list[dict]
    command: str
    files: dict[str, str] = dataclasses.field(default_factory=dict)  # pass -> its output file (until the server stops)


def matching(profile: Profile, pattern: str) -> list:
    """The functions whose name matches a --toggle-collect style pattern (``*`` and ``?``)."""
    import fnmatch

    return [fn for fn in profile.functions() if fnmatch.fnmatchcase(fn[1], pattern)]


def figures(short: Window, long: Window, cap, top: int = TOP) -> tuple[dict, list[dict]]:
    """The measurements and counter rows of a count: per operation (the long pass less the short one over
    the operations between them), and the functions of the difference (``top`` by inclusive and by
    exclusive instructions, and the calls into them) as counters: before the short pass's count, after the
    long pass's, delta their difference."""
    diff = long.profile.minus(short.profile)
    ops, events = long.ops - short.ops, long.events - short.events
    if ops <= 0:
        raise DbexpError(f"the long pass ran {long.ops} operations, the short one {short.ops}: nothing to count")
    out: dict[str, tuple[float | None, str]] = {}
    for name, (names, unit) in PER_OP.items():
        if all(e in diff.events for e in names):
            out[name] = (sum(diff.total(e) for e in names) / ops, unit)
    total = diff.total("Ir")
    out["instructions_per_event"] = (total / events if events else None, "count")
    out["instructions_counted"] = (float(total), "count")
    out["ops_counted"] = (float(ops), "count")
    out["events_counted"] = (float(events), "count")
    # the statements the server itself entered: calls into the statement function, long less short
    out["statements_sent"] = (float(long.statements - short.statements), "count")
    out["statements_seen"] = (float(sum(diff.calls.get(fn, 0) for fn in matching(diff, cap.statement))), "count")
    entry = sum(diff.inclusive(fn)[0] for fn in matching(diff, cap.entry))  # the functions the toggle matched
    out["entry_share"] = (entry / total if total else None, "ratio")
    out["count_ops_per_s"] = (long.ops / long.wall_s if long.wall_s > 0 else None, "1/s")
    out["simulated_caches"] = (float("D1mr" in diff.events), "bool")
    rows = [{"source": "callgrind_total", "name": e, "before": float(a), "after": float(b), "delta": float(b - a)}
            for e, a, b in zip(diff.events, short.profile.totals, long.profile.totals)]
    # the entry's callers (the connection's thread start, the backend's launch) hold its cost again, and
    # a few instructions of their own as it returns: left out of the tables, whose first row is the entry
    above = diff.above(matching(diff, cap.entry))
    chosen: dict[str, set] = {"inclusive": set(), "exclusive": set()}
    for kind in chosen:
        chosen[kind] = {fn for fn, _ in diff.top("Ir", top, inclusive=kind == "inclusive", leave_out=above)}
    for kind, fns in chosen.items():
        cost = (lambda p, fn: p.inclusive(fn)[0]) if kind == "inclusive" else (lambda p, fn: p.exclusive(fn)[0])
        for fn in sorted(fns):
            a, b = cost(short.profile, fn), cost(long.profile, fn)
            rows.append({"source": f"callgrind_{kind}", "name": fn_label(fn), "before": float(a), "after": float(b),
                         "delta": float(b - a)})
    for fn in sorted(chosen["inclusive"] | chosen["exclusive"]):
        a, b = short.profile.calls.get(fn, 0), long.profile.calls.get(fn, 0)
        rows.append({"source": "callgrind_calls", "name": fn_label(fn), "before": float(a), "after": float(b),
                     "delta": float(b - a)})
    return out, rows


class StatementsMissed(RetryableError):
    """A count's window held more or fewer of the server's statements than its client sent (a quit or a mark on the
    wrong side of a window's edge): :func:`count_passes` counts again, a sweep's point is measured again."""


def check(measurements: dict, min_entry_share: float = 0.9) -> None:
    """A count that did not count what it says fails: the server entered as many statements as the client
    ran (long less short), and the entry function holds nearly every counted instruction."""
    sent = measurements["statements_sent"][0]
    seen = measurements["statements_seen"][0]
    if seen != sent:
        raise StatementsMissed(f"the server entered its statement function {seen:.0f} times for the {sent:.0f} statements "
                         "the client sent: the window did not hold the client's statements alone")
    share = measurements["entry_share"][0]
    if share is None or not math.isfinite(share) or share < min_entry_share:
        raise DbexpError(f"the entry function holds {share} of the counted instructions (at least "
                         f"{min_entry_share} expected): something else was counted")


# --- counting -------------------------------------------------------------------------------------------

@dataclass
class Ran:
    """What one pass's client did: the figures of a :class:`Window` but the counts, and the backend of its
    connection where the server has a process per connection and the client knows it (else None)."""

    ops: int
    events: int
    statements: int
    wall_s: float
    command: str = ""
    pid: int | None = None


def count_passes(server, run_pass: Callable[[str, int, int], Ran], n: int = EVENTS, *, warmup: int | None = None,
                 head: int = HEAD, top: int = TOP) -> Count:
    """Count ``n`` operations on a counted server (:func:`counted_config`): ``run_pass(name, ops, seed)``
    runs one pass of ``ops`` operations on a connection of its own, its keys drawn from ``seed``, and says
    what it ran; the passes are a warm-up of ``warmup`` (default ``n``; 0: none), a short one of ``head``
    and a long one of ``head + n``. Restarts the server under valgrind first if it runs natively. Raises
    where the count did not count the client's statements alone (:func:`check`)."""
    if n < 1 or head < 1:
        raise DbexpError(f"bad count: operations {n!r} and head {head!r} must be 1 or more")
    restart_s = instrument(server)
    started = time.monotonic()
    for tries in range(1, COUNT_TRIES + 1):
        windows = {}
        with Passes(server) as passes:
            for name, ops in (("warmup", n if warmup is None else warmup), ("short", head), ("long", head + n)):
                if ops < 1:
                    continue
                passes.begin()
                ran = run_pass(name, ops, SEEDS[name])
                windows[name] = Window(passes.end(ran.pid), ran.ops, ran.events, ran.statements, ran.wall_s,
                                       ran.command)
        try:
            done = _measured(server, windows, time.monotonic() - started, restart_s, top)
        except StatementsMissed:
            if tries == COUNT_TRIES:
                raise
            continue
        done.measurements["count_tries"] = (float(tries), "count")
        return done


def count_loop(server, run: Callable[[object, int], None], ops: int = EVENTS, *, warmup: int | None = None,
               head: int = HEAD, top: int = TOP, database: str | None = None, statements_per_op: int = 1) -> Count:
    """Count a chapter's own operations: ``run(conn, i)`` runs operation ``i`` (``statements_per_op``
    client statements) on ``conn``, a connection of ``server.connect(database)`` of its own per pass;
    passes as in :func:`count_passes` (operations numbered from 0 in each). Figures per call of ``run``."""
    per_connection = server.flavor.capability("callgrind").per_connection

    def run_pass(name: str, n: int, seed: int) -> Ran:
        started = time.monotonic()
        conn = server.connect(database)
        try:
            pid = _backend_pid(conn) if per_connection else None
            for i in range(n):
                run(conn, i)
        finally:
            conn.close()
        own = 1 if pid is not None else 0  # the statement that asked for the pid, in every pass
        return Ran(n, n, n * statements_per_op + own, time.monotonic() - started,
                   f"{getattr(run, '__qualname__', run)!s} x {n}", pid)

    return count_passes(server, run_pass, ops, warmup=warmup, head=head, top=top)


def _backend_pid(conn) -> int:
    """The connection's own backend, as the server numbers it (its statement is in both passes)."""
    from dbexp.servers.sql import query

    return int(query(conn, "SELECT pg_backend_pid()")[0][0])


def _measured(server, windows: dict, count_s: float, restart_s: float, top: int) -> Count:
    cap = server.flavor.capability("callgrind")
    m, rows = figures(windows["short"], windows["long"], cap, top)
    check(m)
    m["count_s"] = (count_s, "s")
    m["valgrind_start_s"] = (restart_s or None, "s")
    m["head_ops"] = (float(windows["short"].ops), "count")
    if "warmup" in windows:
        m["warmup_ops"] = (float(windows["warmup"].ops), "count")
    command = f"{server.under.command_line()} | {windows['long'].command}"
    return Count(m, rows, command, {name: w.profile.header.get("file", "") for name, w in windows.items()})
