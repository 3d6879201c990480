"""The tables and query shapes whose pins the chapter counts.

``sbtest1`` has sysbench's layout (``id`` primary key, secondary index on ``k``, ``c`` char(120),
``pad`` char(60)), filled here with ``generate_series`` (k drawn from a fixed multiplicative walk, so
every version gets the same rows). ``pinbench`` is the timing functions' table: one row per 8 kB page
(a 900-byte row and fillfactor 10), so block b is row b + 1 and a block count is a row count.

Each shape is one SQL statement with one parameter (a start id or key) and the planner settings that
force its plan; every execution is run as ``EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON)`` so its
plan and its shared-buffer hits and reads are recorded with the pins it took (EXPLAIN ANALYZE runs the
plan itself; timing off spares the clock reads).
"""

from __future__ import annotations

from dataclasses import dataclass

from dbexp.errors import DbexpError, choices

BLOCK_ROW_PAD = 900  # bytes: with fillfactor 10, one row per 8 kB page


@dataclass(frozen=True)
class Shape:
    name: str
    sql: str  # one %s: the start id or key
    settings: tuple[tuple[str, str], ...]  # SET before it: the plan it forces
    span: int  # ids or keys one execution covers (the next one starts after it)
    plan: str  # the plan node the shape must use (checked on every execution)
    label: str
    query: bool = True  # a query's pins (False: the backend's own writes, pinbench_flush, not counted among them)


_NO_JOINS = (("enable_hashjoin", "off"), ("enable_mergejoin", "off"))
SHAPES: dict[str, Shape] = {s.name: s for s in (
    Shape("point_select", "SELECT c FROM sbtest1 WHERE id = %s", (), 1, "Index Scan",
          "point select (sysbench)"),
    Shape("range_100", "SELECT c FROM sbtest1 WHERE id BETWEEN %s AND %s + 99", (("enable_bitmapscan", "off"),),
          100, "Index Scan", "100-row range (sysbench)"),
    Shape("nested_loop", "SELECT count(b.c) FROM sbtest1 a JOIN sbtest1 b ON b.id = a.k "
                         "WHERE a.id BETWEEN %s AND %s + 99",
          _NO_JOINS + (("enable_bitmapscan", "off"),), 100, "Nested Loop",
          "nested loop, inner index scan (100 outer rows)"),
    Shape("bitmap_heap", "SELECT count(c) FROM sbtest1 WHERE k BETWEEN %s AND %s + 999",
          (("enable_indexscan", "off"), ("enable_seqscan", "off")), 1000, "Bitmap Heap Scan",
          "bitmap heap scan (1,000 keys)"),
    Shape("seq_scan", "SELECT count(c) FROM sbtest1 WHERE id > %s", (("enable_indexscan", "off"),
                                                                     ("enable_bitmapscan", "off")),
          0, "Seq Scan", "sequential scan (whole table)"),
    # not a query: FLUSH_PAGES pages of sbtest1 written by the backend itself (pinbench_flush: each marked dirty
    # unchanged and written with FlushOneBuffer), the writes whose I/O the probe sees start
    Shape("flush", "SELECT pinbench_flush('sbtest1'::regclass, %s, 8)", (), 8, "Result",
          "8 pages written by the backend", query=False),
)}
FLUSH_PAGES = 8
QUERY_SHAPES = tuple(name for name, s in SHAPES.items() if s.query)


def shape(name: str) -> Shape:
    if name not in SHAPES:
        raise DbexpError(f"unknown query shape {name!r}; valid are {choices(SHAPES)}")
    return SHAPES[name]


def make_sbtest(conn, rows: int) -> None:
    """sbtest1 with ``rows`` rows, its k index, vacuumed and analyzed (visibility map set: index-only
    paths and hint bits as a loaded table has them)."""
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS sbtest1")
        cur.execute("CREATE TABLE sbtest1 (id integer PRIMARY KEY, k integer NOT NULL DEFAULT 0, "
                    "c char(120) NOT NULL DEFAULT '', pad char(60) NOT NULL DEFAULT '')")
        cur.execute("INSERT INTO sbtest1 SELECT g, 1 + (g::bigint * 7919) %% %s, "
                    "lpad(g::text, 120, 'c'), lpad(g::text, 60, 'p') FROM generate_series(1, %s) g",
                    (rows, rows))
        cur.execute("CREATE INDEX k_1 ON sbtest1 (k)")
        cur.execute("VACUUM ANALYZE sbtest1")


def make_block_table(conn, blocks: int) -> None:
    """pinbench's table: ``blocks`` pages of one row each, vacuumed."""
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS pinbench_blocks")
        cur.execute("CREATE TABLE pinbench_blocks (id integer, pad char(%s)) WITH (fillfactor = 10)"
                    % BLOCK_ROW_PAD)
        cur.execute("INSERT INTO pinbench_blocks SELECT g, 'x' FROM generate_series(1, %s) g", (blocks,))
        cur.execute("VACUUM pinbench_blocks")
        cur.execute("SELECT pg_relation_size('pinbench_blocks') / current_setting('block_size')::int")
        got = cur.fetchone()[0]
    if got < blocks:
        raise DbexpError(f"pinbench_blocks has {got} pages, not the {blocks} one row per page should give")


def plan_nodes(plan: dict) -> list[str]:
    """Every node type of an EXPLAIN (FORMAT JSON) plan, depth first."""
    out = [plan.get("Node Type", "")]
    for child in plan.get("Plans", []) or []:
        out += plan_nodes(child)
    return out


def explained(cur, s: Shape, start: int) -> tuple[list[str], int, int, int]:
    """Run one execution under EXPLAIN ANALYZE: (plan nodes, shared blocks hit, shared blocks read, shared blocks
    written), planning's own buffers (PostgreSQL 13 and later list them apart) added to the execution's."""
    params = (start,) * s.sql.count("%s")
    cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) " + s.sql, params)
    doc = cur.fetchone()[0]
    doc = doc[0] if isinstance(doc, list) else doc
    top, planning = doc["Plan"], doc.get("Planning") or {}
    return (plan_nodes(top), *(int(top.get(k, 0)) + int(planning.get(k, 0))
                               for k in ("Shared Hit Blocks", "Shared Read Blocks", "Shared Written Blocks")))
