"""The chapter's knobs and points: per server (a PostgreSQL build with the pinbench extension) and
independently started instance, the curve runs (ns per buffer operation at each N, every kind and
pattern), the overflow table alone (pinbench_hash, each key pattern) and, on the builds that keep their
symbols, the pin-count runs (one query shape each, the backend's own writes among them; on 17 and later
the sequential scan warm and cold at each effective_io_concurrency); the builds of one source whose
arrays or layout differ, measured together in windows (measure.measure_curves_together); and the counted part
(``counted_servers``): the curves' functions counted under callgrind on counted.STARTS separately started servers
each (counted.measure_counted), each start a group of its own (instance 0, then 1), its points keyed apart
(counted.CountedPoint) so that the timed points' keys do not change."""

from __future__ import annotations

import dataclasses
import itertools
from contextlib import nullcontext
from dataclasses import dataclass

from dbexp.catalog import OFFLINE, PREVIEW
from dbexp.chapters.buffer_pins import counted, queries
from dbexp.chapters.buffer_pins.engines import postgres
from dbexp.chapters.buffer_pins.measure import (HASH_PATTERNS, KINDS, PATTERNS, CurvePoint, HashPoint, PinPoint,
                                                measure_curve, measure_curves_together, measure_hash, measure_pins)
from dbexp.errors import DbexpError, choices
from dbexp.experiments.chapter import Chapter, Cpus, Part, check_names
from dbexp.experiments.measure import Measured
from dbexp.experiments.state import drop_page_cache
from dbexp.experiments.sweep import Point
from dbexp.servers.engines import Engines
from dbexp.servers.registry import flavor_of_spec

PARTS = Engines("buffer_pins", {"postgres": postgres.Postgres},
                skipped={"mysql": "InnoDB keeps no per-thread array of pins: a page's fix count lives in its "
                                  "block (buf_block_fix), the mechanism the source is about does not exist there"})

VARIANT = "pinbench"
# 18.6 built from Debian's source: REFCOUNT_ARRAY_ENTRIES after it (8, 32), "direct" where the array is indexed by
# buffer number with no linear search (the thread's v2 layout; extension/server/refcount_direct.inc), "aligned" where
# every function is aligned to 64 bytes (extension/server/align-functions.sh)
ARRAY_VARIANT = "pinbench-src"
ARRAY_KINDS = (("fifo", "random"), ("fifo", "sequential"), ("hold", "random"))  # the curves the array windows time
SOURCE_NS = (1, 2, 3, 7, 11, 19, 100, 988, 10000)  # the source's num_buffers
NS = (1, 2, 3, 7, 8, 9, 11, 19, 100, 988, 10000)  # and both sides of the array's 8 entries
# The settings every run has: shared buffers room for 10,000 pins and the tables, the rest the comparable
# baseline (dbexp.servers.postgres)
SHARED_BUFFERS = "256MB"
READ_STREAM_FROM = 17  # sequential scans read through a read stream (its look-ahead pins) from 17 on


def pinbench_builds() -> list:
    """The offline builds with the pinbench extension, oldest first: the released versions' and the preview
    release's (19~rc1, which the thread's master is closest to)."""
    from dbexp.catalog.versions import version_key

    return sorted((b for b in OFFLINE + PREVIEW if b.variant == VARIANT), key=lambda b: version_key(b.version))


def array_key(variant: str) -> tuple[int, str]:
    """A source build's array (its variant after ARRAY_VARIANT: "8", "32", "32direct") as (entries, layout)."""
    tail = variant[len(ARRAY_VARIANT):] if variant.startswith(ARRAY_VARIANT) else ""
    digits = tail.rstrip("abcdefghijklmnopqrstuvwxyz")
    if not digits.isdigit():
        raise DbexpError(f"{variant!r} names no array size; valid are {choices([b.variant for b in array_builds()])}")
    return int(digits), tail[len(digits):]


def array_builds() -> list:
    """The builds of one source that differ only in the private refcount array (REFCOUNT_ARRAY_ENTRIES 8 and 32,
    and 32 indexed by buffer number with no linear search) or in its layout (8, every function aligned to 64 bytes),
    smallest first, the stock layout before the others."""
    return sorted((b for b in PREVIEW if b.variant.startswith(ARRAY_VARIANT)), key=lambda b: array_key(b.variant))


def probed(spec: str) -> bool:
    """Whether the build keeps its symbol table (the npm builds: PinBuffer is a local symbol there;
    Debian's binaries are stripped)."""
    from dbexp.catalog import lookup, parse_spec

    return any(b.artifact is not None and b.artifact.registry == "npm" for b in lookup(parse_spec(spec)))


def _major(spec: str) -> int:
    from dbexp.catalog import lookup, parse_spec

    return int(lookup(parse_spec(spec))[0].major)


DEFAULT_SERVERS = tuple(b.spec for b in pinbench_builds())
ARRAY_SERVERS = tuple(b.spec for b in array_builds())
ARRAY_NS = (1, 7, 8, 9, 19, 31, 32, 33, 100, 988, 10000)  # both sides of 8 and of 32
# the counted part (issue 48): the stock 18.6 build and the one whose array has 32 entries, searched linearly (the
# thread's first change), each counted on two server starts
COUNTED_STOCK = "postgres:18.6+pinbench-src8@offline"
COUNTED_SERVERS = (COUNTED_STOCK, "postgres:18.6+pinbench-src32@offline")
COUNTED_KINDS = ("fifo", "cycle", "hold")
# the overflow table alone: from the pins 19's array of 8 sends to it on; 100 keys make identity's table grow past its
# 128 buckets with keys 1,024 apart, 988 hold it at 10% full
HASH_NS = (8, 19, 100, 988)


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    ns: tuple[int, ...]
    kinds: tuple[str, ...]
    patterns: tuple[str, ...]
    ops: int  # timed operations per call
    calls: int  # calls per N in a run, in rounds over every N (the fastest kept)
    loop_blocks: int
    cold_kb: int
    shapes: tuple[str, ...]  # query shapes whose pins are counted
    executions: int  # executions of a shape in a pin run (a sequential scan: a tenth, at least 1)
    rows: int  # sbtest1's rows
    eics: tuple[int, ...]  # effective_io_concurrency values of the sequential scans (17 and later)
    instances: int
    repeats: int  # curve runs per point (spread over the instances)
    pin_repeats: int  # pin runs per point
    array_servers: tuple[str, ...] = ()  # the two builds whose arrays differ, each timed like the others
    array_ns: tuple[int, ...] = ARRAY_NS
    hash_ns: tuple[int, ...] = HASH_NS  # the keys held in the overflow table alone (pinbench_hash); () none
    hash_ops: int = 20_000  # its timed rounds per call
    counted_servers: tuple[str, ...] = ()  # builds counted under callgrind (counted.py), each on two server starts
    counted_kinds: tuple[str, ...] = ("fifo",)  # the curves counted, of counted.COUNTED_KINDS
    counted_patterns: tuple[str, ...] = ("random",)
    counted_ns: tuple[int, ...] = ARRAY_NS  # the N counted on each
    counted_ops: int = 10_000  # buffer operations counted per N (the long call's less the short one's)
    # query shapes counted on the stock counted build (COUNTED_STOCK), each start's last points: its cache hit ratios
    # beside the curves' (counted.CountedQuery, on sbtest1 of ``rows`` rows)
    counted_queries: tuple[str, ...] = counted.COUNTED_QUERIES


class BufferPins(Chapter):
    name = "buffer_pins"
    Scale = Scale
    scales = {
        "smoke": Scale(("postgres:17+pinbench@offline",), (1, 7, 8, 9, 100), ("fifo", "cycle", "hold"), ("random",),
                       20_000, 3, 64, 256, ("point_select", "range_100", "seq_scan", "flush"), 50, 5_000, (1,), 1, 1,
                       1, (), ARRAY_NS, (8, 100), 5_000, counted_servers=(COUNTED_STOCK,), counted_ns=(1, 7, 8, 32),
                       counted_ops=5_000, counted_queries=("seq_scan",)),
        "default": Scale(DEFAULT_SERVERS, NS, KINDS, PATTERNS, 50_000, 7, 64, 2048,
                         tuple(queries.SHAPES), 400, 100_000, (1, 16, 64), 2, 4, 2, ARRAY_SERVERS,
                         counted_servers=COUNTED_SERVERS, counted_kinds=COUNTED_KINDS),
        "full": Scale(DEFAULT_SERVERS, NS, KINDS, PATTERNS, 100_000, 11, 64, 4096,
                      tuple(queries.SHAPES), 2000, 1_000_000, (1, 16, 64), 3, 6, 3, ARRAY_SERVERS,
                      counted_servers=COUNTED_SERVERS, counted_kinds=COUNTED_KINDS, counted_patterns=PATTERNS),
    }
    # abba (the lab's default): a repeat walks a group's points forward, the next one backward, so the array
    # builds' points of one window are neighbours and are measured together; every run's state is made before it
    # (reset)
    engines = PARTS
    knob_help = {
        "servers": 'PostgreSQL builds with the pinbench extension, e.g. ["postgres:17+pinbench"]',
        "ns": "the pins held (or pinned per round), e.g. [1, 7, 8, 9, 100]",
        "kinds": f"curve kinds, of {', '.join(KINDS)}", "patterns": "random and/or sequential",
        "ops": "timed operations per call", "calls": "calls per N in a run", "loop_blocks": "hold's other blocks",
        "cold_kb": "KiB walked before each hold_cold operation", "shapes": f"query shapes, of {', '.join(queries.SHAPES)}",
        "executions": "executions per pin run", "rows": "sbtest1's rows", "eics": "effective_io_concurrency values",
        "instances": "servers started per spec", "repeats": "curve runs per point", "pin_repeats": "pin runs per point",
        "array_servers": 'the builds whose arrays differ, e.g. ["postgres:18.6+pinbench-src8", '
                         '"postgres:18.6+pinbench-src32direct"]',
        "array_ns": "the pins of the array comparison, e.g. [8, 9, 32, 33]",
        "hash_ns": "the keys held in the overflow table alone (pinbench_hash), e.g. [8, 100]; [] for none",
        "hash_ops": "pinbench_hash's timed rounds per call",
        "counted_servers": 'builds counted under callgrind (none: no counted part), e.g. '
                           '["postgres:18.6+pinbench-src8", "postgres:18.6+pinbench-src32"]',
        "counted_kinds": f"the curves counted, of {', '.join(counted.COUNTED_KINDS)}",
        "counted_patterns": "the key patterns counted, random and/or sequential",
        "counted_ns": "the N counted, e.g. [1, 7, 8, 32]",
        "counted_ops": "buffer operations counted per N",
        "counted_queries": f"query shapes counted on {COUNTED_STOCK}, of {', '.join(counted.COUNTED_QUERIES)}; [] none",
    }

    def adjust(self, sc: Scale, scale: str, cpus: Cpus, overrides: dict) -> Scale:
        check_names(sc.kinds, KINDS, "curve kind")
        check_names(sc.patterns, PATTERNS, "pattern")
        check_names(sc.shapes, tuple(queries.SHAPES), "query shape")
        have = [b.spec for b in pinbench_builds()]
        for spec in sc.servers:
            if "+" + VARIANT not in spec:
                raise DbexpError(f"chapter buffer_pins needs a build with the pinbench extension, not {spec!r}; "
                                 f"valid are {choices(have)}")
        for spec in sc.array_servers:
            if "+" + ARRAY_VARIANT not in spec:
                raise DbexpError(f"the array comparison needs a build of one source with its array's size, not {spec!r}; "
                                 f"valid are {choices(ARRAY_SERVERS)}")
        check_names(sc.counted_kinds, counted.COUNTED_KINDS, "counted kind")
        check_names(sc.counted_patterns, PATTERNS, "pattern")
        check_names(sc.counted_queries, counted.COUNTED_QUERIES, "counted query")
        for spec in sc.counted_servers:
            if "+" + VARIANT not in spec:
                raise DbexpError(f"the counted part needs a build with the pinbench extension, not {spec!r}; "
                                 f"valid are {choices(COUNTED_SERVERS + tuple(have))}")
        if sc.counted_servers and (not sc.counted_ns or min(sc.counted_ns) < 1 or sc.counted_ops < 1):
            raise DbexpError(f"counted_ns {list(sc.counted_ns)} and counted_ops {sc.counted_ops}: every N and the "
                             "operations must be at least 1")
        if min(sc.ns) < 1 or sc.rows < 1000:
            raise DbexpError(f"ns {list(sc.ns)} and rows {sc.rows}: every N must be at least 1, rows at least 1000")
        if sc.hash_ns and (min(sc.hash_ns) < 1 or max(sc.hash_ns) + 1 > max(sc.ns) + sc.loop_blocks):
            raise DbexpError(f"hash_ns {list(sc.hash_ns)}: each must be at least 1 and at most "
                             f"{max(sc.ns) + sc.loop_blocks - 1} (the timing table's blocks, max(ns) + loop_blocks, "
                             "less the FIFO's)")
        return sc

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        curve, pins = [], []
        for spec in sc.servers:
            cfg = self.server_config(spec, cpus.server, {"shared_buffers": SHARED_BUFFERS})
            for kind, pattern in itertools.product(sc.kinds, sc.patterns):
                if kind == "hold_cold" and pattern != "random":
                    continue  # a cold cache makes the order of the other blocks moot: random only
                curve.append(Point(cfg, CurvePoint(kind, pattern, tuple(sc.ns), sc.ops, sc.calls, sc.loop_blocks,
                                                   sc.cold_kb if kind == "hold_cold" else 0),
                                   group=f"buffer_pins {spec}"))
            if sc.hash_ns:  # the overflow table alone, each hash in turn within a run
                curve += [Point(cfg, HashPoint(pattern, tuple(sc.hash_ns), sc.hash_ops, sc.calls,
                                               table_blocks=max(sc.ns) + sc.loop_blocks),
                                group=f"buffer_pins {spec}") for pattern in HASH_PATTERNS]
            if not probed(spec):
                continue
            for shape in sc.shapes:
                runs = [(1, False)]
                if shape == "seq_scan" and _major(spec) >= READ_STREAM_FROM:
                    runs = [(e, cold) for cold in (False, True) for e in sc.eics]
                for eic, cold in runs:
                    n = max(1, sc.executions // 10) if shape == "seq_scan" else sc.executions
                    pins.append(Point(cfg, PinPoint(shape, eic, cold, 1 if cold else n, sc.rows, cpus.client),
                                      group=f"buffer_pins {spec}"))
        out = [Part(curve, sc.repeats, sc.instances)]
        if pins:
            out.append(Part(pins, sc.pin_repeats, sc.instances))
        # the array builds: one group (their servers started together), one window per curve in which every build
        # is called in turn (measure_curves_together)
        array = [Point(self.server_config(spec, cpus.server, {"shared_buffers": SHARED_BUFFERS}),
                       CurvePoint(kind, pattern, tuple(sc.array_ns), sc.ops, sc.calls, sc.loop_blocks, 0),
                       group="buffer_pins array", together=f"array {kind} {pattern}")
                 for kind, pattern in ARRAY_KINDS for spec in sc.array_servers]
        if array:
            out.append(Part(array, sc.repeats, sc.instances))
        count = self.counted_points(sc, cpus)
        if count:
            out.append(Part(count, 1))
        return out

    def counted_points(self, sc: Scale, cpus: Cpus) -> list[Point]:
        """The counted part: every counted curve of a counted build on one server start, in the scale's order,
        counted.STARTS starts each a group of its own told apart by ``start`` (every build's first start, then the
        second): a server of the chapter's settings with a tag of its start (the cluster's name), run under
        callgrind with its simulated caches (counted.MODE; the flavor's counting settings added at its start). On the
        stock build (COUNTED_STOCK) each start's last points count the scale's query shapes the same way
        (counted.CountedQuery), on sbtest1 of the scale's rows."""
        out = []
        for start in range(counted.STARTS):
            for spec in sc.counted_servers:
                part = PARTS.of(flavor_of_spec(spec))
                config = self.server_config(spec, cpus.server,
                                            part.tagged({"shared_buffers": SHARED_BUFFERS}, f"counted {start}"))
                config = dataclasses.replace(config, under=counted.MODE)
                for kind, pattern in itertools.product(sc.counted_kinds, sc.counted_patterns):
                    out.append(Point(config, counted.CountedPoint(kind, pattern, tuple(sc.counted_ns), sc.counted_ops,
                                                                  sc.loop_blocks, start),
                                     group=f"buffer_pins counted {spec} #{start}"))
                if spec != COUNTED_STOCK:
                    continue
                for shape in sc.counted_queries:
                    out.append(Point(config, counted.query_point(shape, sc.rows, start,
                                                                 max(sc.counted_ns) + sc.loop_blocks),
                                     group=f"buffer_pins counted {spec} #{start}"))
        return out

    def session(self, server):
        return nullcontext({})  # per server instance: the tables, made at its first run

    def _tables(self, server, point: Point, state: dict) -> None:
        p = point.params
        part = PARTS.of(server.flavor)
        conn = server.connect()
        try:
            if "installed" not in state:
                part.install(conn)
                state["installed"] = True
            if isinstance(p, (CurvePoint, HashPoint, counted.CountedPoint)) and state.get("blocks", 0) < p.blocks:
                part.make_block_table(conn, p.blocks)
                state["blocks"] = p.blocks
            if isinstance(p, PinPoint) and state.get("rows") != p.rows:
                part.make_query_table(conn, p.rows)
                state["rows"] = p.rows
        finally:
            conn.close()
        if isinstance(p, counted.CountedQuery) and (state.get("rows") != p.count_rows
                                                     or state.get("blocks", 0) < p.blocks):
            # a group's last point: its server runs under valgrind by now, started again natively for the tables
            counted.native_for_tables(server)
            conn = server.connect()
            try:
                if state.get("blocks", 0) < p.blocks:
                    part.make_block_table(conn, p.blocks)
                    state["blocks"] = p.blocks
                part.make_query_table(conn, p.count_rows)
                state["rows"] = p.count_rows
            finally:
                conn.close()

    def reset(self, server, point: Point, state: dict) -> None:
        """The tables made once per server; a cold pin run restarts the server (its shared buffers empty)
        and drops the host's page cache; a warm one reads every page of sbtest1 and its indexes into
        shared buffers first."""
        self._tables(server, point, state)
        p = point.params
        if not isinstance(p, PinPoint):
            return
        if p.cold:
            server.restart()
            drop_page_cache()
            return
        conn = server.connect()
        try:
            PARTS.of(server.flavor).prewarm(conn, ("sbtest1", "sbtest1_pkey", "k_1"))
        finally:
            conn.close()

    def precondition(self, server, point: Point, state: dict) -> dict:
        """A pin run: sbtest1's pages all in the buffer pool (warm) or none (cold)."""
        p = point.params
        if not isinstance(p, PinPoint):
            return {}
        conn = server.connect()
        try:
            resident, pages = PARTS.of(server.flavor).resident_pages(conn, "sbtest1")
        finally:
            conn.close()
        if p.cold:
            return {"sbtest1 not in shared buffers (restarted, page cache dropped)": (resident == 0,
                                                                                     f"{resident} of {pages} pages")}
        return {"sbtest1 all in shared buffers": (resident >= pages, f"{resident} of {pages} pages")}

    def timed(self, point: Point) -> bool:
        """The curve and the overflow table are timed; a pin run counts pins, which steal cannot change."""
        return isinstance(point.params, (CurvePoint, HashPoint))

    def measure(self, server, point: Point, state: dict) -> Measured:
        p = point.params
        if isinstance(p, CurvePoint):
            return measure_curve(server, p)
        if isinstance(p, HashPoint):
            return measure_hash(server, p)
        if isinstance(p, counted.CountedPoint):
            return counted.measure_counted(server, p)
        if isinstance(p, counted.CountedQuery):
            return counted.measure_query(server, p)
        return measure_pins(server, p)

    def measure_together(self, servers: list, points: list[Point], states: list) -> list[Measured]:
        """The array builds' window: the same curve on each, called in turn (measure_curves_together)."""
        params = [p.params for p in points]
        if not all(isinstance(p, CurvePoint) for p in params):
            raise DbexpError(f"only curves are measured together here, not {[type(p).__name__ for p in params]}")
        return measure_curves_together(servers, params)


CHAPTER = BufferPins()
