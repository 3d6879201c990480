"""PostgreSQL's heap: every version a tuple, dead tuples and VACUUM, a HOT chain on its page
(pageinspect), and EXPLAIN ANALYZE as the statement clock.

``EXPLAIN (ANALYZE, BUFFERS, TIMING OFF)`` runs the statement and reports the executor's own time
(``Execution Time``, to the microsecond), the plan it ran, and the shared buffers each plan node touched
(pages, hit or read): how many pages a read visits is the evidence of where versions lie. ``TIMING OFF``
leaves per-node clocks out, so the statement pays for one clock read at each end.

A lookup is a primary-key index probe. The btree is descended from its root to the leaf that holds the
key (the metapage is cached by the backend, so two buffers on a 1,000-row table), and each index entry's
heap tuple is fetched (``heapam_index_fetch_tuple`` in ``heapam_handler.c``): its page is pinned (one
buffer, unless the previous entry's page is still pinned) and ``heap_hot_search_buffer`` (``heapam.c``)
starts at the line pointer the entry names, the oldest version of a HOT chain (following a redirect left
by pruning), and steps along ``t_ctid`` over HOT-updated tuples on that same page, checking each one's
visibility against the snapshot until the first it may see; with an MVCC snapshot it stops there. So a
reader whose snapshot sees the newest version checks every older one on the way, and they cost no buffer
beyond the page's own: three buffers per lookup while the chain stays on its page. Where the chain left
its page (or the update changed an indexed column), the next version has an index entry of its own, and
the probe fetches one heap tuple per entry of the key.

A microsecond is coarser than what a short HOT chain adds to a lookup (0.15 to 0.7 us at V = 10), so
the clock can loop at the server: the timed statement repeats the probe ``loop`` times, as the inner side
of a nested loop over ``generate_series`` (a LATERAL subquery kept apart by ``OFFSET 0``, so the planner
can neither hash it nor read the table once for every row of the loop, and cannot stop at a key's first
entry as it would inside a join on a unique key; ``enable_memoize`` off, where it exists, so no result is
cached), each time a rescan of the index from its root and a fetch of the heap tuple, and the time and
buffers are divided by ``loop``: the resolution becomes 1 us / ``loop``. Every statement's plan is checked
(:func:`lookup_probes`): the table is read only by index scans of its primary key, ``loop`` of them each
returning one row, else the run fails (:class:`PlanError`); the clock reports the index scans per lookup
(1) beside the buffers.
"""

from __future__ import annotations

import json
import re

import numpy as np

from . import StatementClockError, VersionStore
from dbexp.errors import DbexpError
from dbexp.servers.sql import query

VACUUM_PATTERNS = {
    # PostgreSQL 15+: "tuples: 0 removed, 1002 remain, 2000 are dead but not yet removable"
    "removed": (r"tuples: (\d+) removed", r"found (\d+) removable"),
    # 12 to 14: "found 0 removable, 3002 nonremovable row versions ..." and, in the detail,
    # "2000 dead row versions cannot be removed yet"
    "not_removable": (r"(\d+) are dead but not yet removable", r"(\d+) dead row versions cannot be removed yet"),
}


def vacuum_verbose(conn, table: str) -> str:
    """Run VACUUM (VERBOSE) on ``table`` and return what it said (its notices' primary and detail lines, as one
    text); the notice handler is removed again, so repeated calls on one connection do not pile them up."""
    said: list[str] = []

    def hear(d) -> None:
        said.append(f"{d.message_primary or ''} {d.message_detail or ''}")

    conn.add_notice_handler(hear)
    try:
        query(conn, f"VACUUM (VERBOSE) {table}")
    finally:
        conn.remove_notice_handler(hear)
    return " ".join(said)


def parse_vacuum_verbose(text: str) -> dict[str, float]:
    """VACUUM VERBOSE's messages -> dead tuples it removed and those it found dead but could not
    remove yet (an older snapshot may still see them)."""
    out = {}
    for name, patterns in VACUUM_PATTERNS.items():
        for pat in patterns:
            m = re.search(pat, text)
            if m:
                out[name] = float(m.group(1))
                break
        else:
            raise DbexpError(f"VACUUM VERBOSE did not say how many tuples were {name.replace('_', ' ')}: "
                             f"{' '.join(text.split())[:300]!r}")
    return out


def parse_explain(doc) -> tuple[float, float]:
    """EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)'s document (text or parsed) -> (execution time in
    microseconds, shared buffers the plan touched: hit plus read)."""
    if isinstance(doc, str):
        doc = json.loads(doc)
    top = doc[0]
    plan = top["Plan"]
    if "Execution Time" not in top:
        raise DbexpError("EXPLAIN reported no Execution Time (was ANALYZE on?)")
    buffers = float(plan.get("Shared Hit Blocks", 0)) + float(plan.get("Shared Read Blocks", 0))
    return float(top["Execution Time"]) * 1000.0, buffers


class PlanError(DbexpError):
    """A timed statement read its table some other way than the index probes it was written as: the run
    fails (measuring again would plan it the same way)."""


def _nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def plan_summary(plan: dict) -> str:
    """A plan in one line: each node's type (with its index and table, and its loops where more than one),
    children in brackets after their parent."""
    def one(node: dict) -> str:
        text = node.get("Node Type", "?")
        if node.get("Index Name"):
            text += f" using {node['Index Name']}"
        if node.get("Relation Name"):
            text += f" on {node['Relation Name']}"
        loops = node.get("Actual Loops")
        if loops not in (None, 1):
            text += f" x{loops}"
        kids = node.get("Plans", [])
        return text + (f" [{', '.join(one(k) for k in kids)}]" if kids else "")
    return one(plan)


def lookup_probes(doc, table: str, index: str) -> tuple[int, float, float]:
    """EXPLAIN ANALYZE's document -> (index scans of ``index`` the statement ran on ``table``, counted with their
    loops; the rows they returned; the shared buffers they touched, hit plus read). Raises :class:`PlanError`
    where the statement read ``table`` any other way (a sequential, bitmap or index-only scan, another index, an
    index scan with no condition, which reads the whole table)."""
    if isinstance(doc, str):
        doc = json.loads(doc)
    plan = doc[0]["Plan"]
    probes, rows, buffers = 0, 0.0, 0.0
    for node in _nodes(plan):
        if node.get("Relation Name") != table:
            continue
        kind, name = node["Node Type"], node.get("Index Name")
        if kind != "Index Scan" or name != index or not node.get("Index Cond"):
            how = f"{kind}{f' using {name}' if name else ''}{'' if node.get('Index Cond') else ' without a condition'}"
            raise PlanError(f"a timed lookup read {table} by {how}, not by probes of its primary key {index}: "
                            f"{plan_summary(plan)}")
        loops = int(node.get("Actual Loops", 1))
        probes += loops
        rows += float(node.get("Actual Rows", 0)) * loops  # EXPLAIN gives the rows per loop
        buffers += float(node.get("Shared Hit Blocks", 0)) + float(node.get("Shared Read Blocks", 0))
    return probes, rows, buffers


_POINT_SELECT = re.compile(r"^SELECT (?P<columns>.+?) FROM (?P<table>\w+) WHERE id = (?P<key>\d+)$")


class ExplainClock:
    """The executor's time and buffers of each statement, from EXPLAIN ANALYZE; with ``loop`` > 1, of
    each lookup in a statement that repeats it ``loop`` times (see the module's docstring). Each point select's
    plan is checked: ``loop`` probes of the table's primary key (``<table>_pkey``), one row each, else
    :class:`PlanError`; ``end`` then also gives ``probes``, the index scans per lookup."""

    kind = "explain_analyze"
    PREFIX = "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) "

    def __init__(self, reader=None, monitor=None, marker: str = "", loop: int = 1):
        if not isinstance(loop, int) or loop < 1:
            raise DbexpError(f"bad loop {loop!r}: expected a whole number of lookups per statement, 1 or more")
        self.loop = loop
        self._table: str | None = None  # the table of the last point select wrapped (its plan is checked)
        self._times: list[float] = []
        self._buffers: list[float] = []
        self._probes: list[float] = []

    def wrap(self, sql: str) -> str:
        """``sql`` (a point select ending in its key, ``... WHERE id = 42``) under EXPLAIN, looped."""
        m = _POINT_SELECT.match(sql.strip())
        self._table = m["table"] if m else None
        if self.loop == 1:
            return self.PREFIX + sql
        if not m:
            raise DbexpError(f"cannot loop {sql!r}: expected a point select ending in 'WHERE id = <number>'")
        first = m["columns"].split(",")[0].strip()
        return (f"{self.PREFIX}SELECT count(x.{first}) FROM generate_series(1, {self.loop}) AS g(i), "
                f"LATERAL (SELECT {m['columns']} FROM {m['table']} WHERE id = {int(m['key'])} + 0 * g.i OFFSET 0) AS x")

    def begin(self) -> None:
        self._times, self._buffers, self._probes = [], [], []

    def after(self, rows) -> None:
        doc = rows[0][0]
        t, b = parse_explain(doc)
        if self._table is not None:
            index = f"{self._table}_pkey"
            probes, found, b = lookup_probes(doc, self._table, index)
            if probes != self.loop or found != self.loop:
                plan = (json.loads(doc) if isinstance(doc, str) else doc)[0]["Plan"]
                raise PlanError(f"a timed statement ran {probes} probes of {index} returning {found:g} rows, not "
                                f"{self.loop} of one row each: {plan_summary(plan)}")
            self._probes.append(probes / self.loop)
        self._times.append(t / self.loop)
        self._buffers.append(b / self.loop)

    def end(self, n: int) -> dict[str, np.ndarray]:
        if len(self._times) != n:
            raise StatementClockError(f"EXPLAIN timed {len(self._times)} of {n} statements")
        out = {"server_us": np.array(self._times), "buffers": np.array(self._buffers)}
        if len(self._probes) == n:  # every statement a point select whose plan was checked
            out["probes"] = np.array(self._probes)
        return out


class Heap(VersionStore):
    """Every version a heap tuple, reached from the oldest along a HOT chain or through index
    entries of its own; VACUUM (or autovacuum) removes the dead ones no snapshot needs."""

    version_store = "heap"

    def prompt_gc_settings(self) -> dict[str, str]:
        # autovacuum reacts within a second, so reclaim time is not the default 60 s nap
        return {"autovacuum_naptime": "1"}

    def table_options(self, fillfactor: int | None) -> str:
        return f" WITH (fillfactor = {fillfactor})" if fillfactor else ""

    def analyze(self, conn, table: str) -> None:
        query(conn, f"VACUUM (ANALYZE) {table}")

    def pin_index_access(self, conn) -> None:
        query(conn, "SET enable_seqscan = off")
        query(conn, "SET enable_bitmapscan = off")
        query(conn, "SET enable_indexonlyscan = off")  # every lookup fetches its heap tuple
        if conn.info.server_version >= 140000:  # a looped probe's result not cached between loops (the same key)
            query(conn, "SET enable_memoize = off")  # (a SET, not a query: the snapshot's BEGIN follows)

    def begin_snapshot(self, conn) -> None:
        query(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ")

    def garbage(self, conn, table: str) -> dict[str, float]:
        query(conn, "SELECT pg_stat_clear_snapshot()")
        row = query(conn, "SELECT n_dead_tup, n_live_tup, COALESCE(autovacuum_count, 0), "
                          "COALESCE(vacuum_count, 0), pg_relation_size(relid) FROM pg_stat_user_tables "
                          "WHERE relname = %s", (table,))
        if not row:  # zeros would read as a table with no garbage
            raise DbexpError(f"pg_stat_user_tables has no row for table {table!r}: cannot count its dead tuples")
        dead, live, av, v, size = row[0]
        return {"n_dead_tup": float(dead), "n_live_tup": float(live), "autovacuum_count": float(av),
                "vacuum_count": float(v), "relation_bytes": float(size)}

    def update_kinds(self, conn, table: str) -> dict[str, float]:
        """pg_stat_user_tables' ``n_tup_upd`` and ``n_tup_hot_upd`` for the table (each point's table is new)."""
        query(conn, "SELECT pg_stat_clear_snapshot()")
        row = query(conn, "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = %s", (table,))
        if not row:
            raise DbexpError(f"pg_stat_user_tables has no row for table {table!r}: cannot count its HOT updates")
        return {"updates": float(row[0][0]), "hot_updates": float(row[0][1])}

    def garbage_settled(self, g: dict[str, float]) -> bool:
        return True  # dead tuples are counted per table, and each point's table is new

    def reclaimed(self, g, before, peak) -> bool:
        """A vacuum has run on the table since the point began (autovacuum, or the lab's own while it
        asked what was held) and no dead tuple is left."""
        runs = g["autovacuum_count"] + g.get("vacuum_count", 0.0)
        return g["n_dead_tup"] == 0 and runs > before["autovacuum_count"] + before.get("vacuum_count", 0.0)

    def held_versions(self, conn, table: str, hold_s: float) -> dict[str, tuple[float, str]]:
        """A VACUUM now: the dead tuples it removed and those it found dead but could not remove yet
        (``hold_s`` is not needed: VACUUM says so at once)."""
        got = parse_vacuum_verbose(vacuum_verbose(conn, table))
        return {"held_dead_tuples": (got["not_removable"], "dead tuples"),
                "vacuum_removed": (got["removed"], "dead tuples")}

    def version_chain(self, conn_snapshot, conn, table: str, row_id: int) -> list[dict]:
        """The heap tuples of one row on its page, followed from the version ``conn_snapshot`` sees
        along t_ctid (pageinspect's heap_page_items)."""
        ctid = query(conn_snapshot, f"SELECT ctid::text FROM {table} WHERE id = %s", (row_id,))[0][0]
        block, lp = (int(x) for x in ctid.strip("()").split(","))
        query(conn, "CREATE EXTENSION IF NOT EXISTS pageinspect")
        rows = query(conn, "SELECT lp, lp_flags, t_xmin::text::bigint, t_xmax::text::bigint, t_ctid::text, "
                           "t_infomask2 FROM heap_page_items(get_raw_page(%s, %s))", (table, block))
        items = {r[0]: r for r in rows}
        chain, seen, cur = [], set(), lp
        while cur in items and cur not in seen:
            seen.add(cur)
            lp_, flags, xmin, xmax, tctid, infomask2 = items[cur]
            nb, nl = (int(x) for x in (tctid or "(0,0)").strip("()").split(","))
            chain.append({"lp": lp_, "lp_flags": flags, "t_xmin": xmin, "t_xmax": xmax, "ctid_block": nb,
                          "ctid_lp": nl, "hot_updated": int(bool((infomask2 or 0) & 0x4000)),
                          "heap_only": int(bool((infomask2 or 0) & 0x8000)), "block": block})
            if nb != block or nl == cur:
                break  # the chain leaves the page (not HOT) or ends
            cur = nl
        return chain

    def clock(self, reader, monitor, marker: str, loop: int = 1) -> ExplainClock:
        return ExplainClock(reader, monitor, marker, loop)
