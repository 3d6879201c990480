"""The readview chapter's counted part, measured: instructions per consistent read under valgrind's callgrind
(dbexp.metrics.callgrind) with H prepared transactions held, and, the witness, the inclusive instructions per read
of the functions that build and copy the view (the engine part's ``counted_functions``: MySQL's ``MVCC::view_open``,
PostgreSQL's ``GetSnapshotData`` and ``CopySnapshot``), each as callgrind names it in the counted passes.

A counted read is a primary-key point select of the chapter's table in autocommit, a literal statement (no
prepared statement: the same text on every engine), one client: every statement is a transaction of its own and
takes its own view or snapshot. The keys walk the table by a fixed stride from the same first key in every pass
(:func:`key`), so that two servers read the same rows, and the warm-up pass reads every row the long pass reads
(no page read from disk inside a count).

Besides the function counted, every function of the counted passes whose name says it handles a view or a
snapshot is stored (counters of source ``callgrind_snapshot``, inclusive, and ``callgrind_snapshot_calls``): the
names a binary really has, read from a run, not guessed.
"""

from __future__ import annotations

import fnmatch

from dbexp.metrics import callgrind
from dbexp.metrics.callgrind_format import Fn, Profile, fn_label, read
from dbexp.servers.sql import query

TABLE = "sbtest1"  # the readers' table (sysbench's), as the timed part reads it
STRIDE = 7919  # a prime: the keys of 0, 1, 2, ... walk the table without repeating until it wraps
OPS = 500  # reads counted per point (the long pass less the short one)
# what a function's name says when it handles a view or a snapshot (matched case-insensitively)
NAMED = ("*readview*", "*view_open*", "*view_close*", "*snapshot*")
SNAPSHOT_FUNCTIONS = 30  # such functions stored per run, by inclusive instructions
MEASURE = "instructions_per_op"  # instructions per read (the statement's, in the server's statement loop)
VIEW = "view_instructions_per_op"  # the view functions' inclusive instructions per read
VIEW_CALLS = "view_calls_per_op"


def key(i: int, rows: int) -> int:
    """The ``i``-th read's primary key (1 to ``rows``)."""
    return (i * STRIDE) % rows + 1


def statement(i: int, rows: int) -> str:
    return f"SELECT c FROM {TABLE} WHERE id = {key(i, rows)}"


def view_functions(profile: Profile, patterns: tuple[str, ...]) -> list[Fn]:
    """The functions of ``profile`` that any of ``patterns`` matches (the engine part's counted_functions: none
    calls another, so that their inclusive counts add up); [] where none does."""
    return sorted(fn for fn in profile.functions() if any(fnmatch.fnmatchcase(fn[1], p) for p in patterns))


def named(profile: Profile, n: int = SNAPSHOT_FUNCTIONS) -> list[Fn]:
    """Up to ``n`` functions of ``profile`` whose name says it handles a view or a snapshot (:data:`NAMED`), those
    with the most inclusive instructions first."""
    fns = [fn for fn in profile.functions() if any(fnmatch.fnmatch(fn[1].lower(), p) for p in NAMED)]
    fns.sort(key=lambda fn: (-abs(profile.inclusive(fn)[0]), fn))
    return fns[:n]


def view_figures(short: Profile, long: Profile, ops: int, patterns: tuple[str, ...]) -> tuple[dict, list[dict]]:
    """From the short and the long pass's profiles: the view functions' inclusive instructions and calls per read
    (the long pass less the short one over the ``ops`` reads between them; None where no function matches
    ``patterns``), and counter rows: the view functions' (``callgrind_view``, ``callgrind_view_calls``) and every
    function named for views or snapshots (``callgrind_snapshot``, ``callgrind_snapshot_calls``)."""
    diff = long.minus(short)
    fns = view_functions(diff, patterns) or view_functions(long, patterns)
    rows: list[dict] = []

    def add(source: str, fn: Fn) -> None:
        a, b = short.inclusive(fn)[0], long.inclusive(fn)[0]
        rows.append({"source": source, "name": fn_label(fn), "before": float(a), "after": float(b),
                     "delta": float(b - a)})
        a, b = short.calls.get(fn, 0), long.calls.get(fn, 0)
        rows.append({"source": f"{source}_calls", "name": fn_label(fn), "before": float(a), "after": float(b),
                     "delta": float(b - a)})

    for fn in fns:
        add("callgrind_view", fn)
    for fn in named(diff):
        add("callgrind_snapshot", fn)
    if fns and ops > 0:
        inclusive = sum(diff.inclusive(fn)[0] for fn in fns)
        calls = sum(diff.calls.get(fn, 0) for fn in fns)
        m = {VIEW: (inclusive / ops, "count"), VIEW_CALLS: (calls / ops, "count")}
    else:
        m = {VIEW: (None, "count"), VIEW_CALLS: (None, "count")}
    m["view_functions_found"] = (float(len(fns)), "count")
    return m, rows


def count(server, part, database: str, rows: int, ops: int = OPS) -> callgrind.Count:
    """Count ``ops`` point selects on a counted server (restarted under valgrind first where it runs natively): a
    warm-up pass that reads every row the long pass reads, a short and a long pass (callgrind.count_loop), and the view
    functions' counts (:func:`view_figures`) added to the count's measurements and counters. A count whose window held
    other statements than the client's is counted again there (callgrind.StatementsMissed, retryable: where it
    persists, the sweep counts the point again)."""

    def run(conn, i: int) -> None:
        query(conn, statement(i, rows))

    done = callgrind.count_loop(server, run, ops, warmup=ops + callgrind.HEAD, database=database)
    server.under.readable(server)
    short, long = (read(done.files[name]) for name in ("short", "long"))
    m, counters = view_figures(short, long, ops, part.counted_functions)
    done.measurements.update(m)
    done.counters.extend(counters)
    return done
