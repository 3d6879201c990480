"""The chapter's scales and points, which engine part serves which server (``PARTS``), and one
run: the hot workload for before + scan + after seconds with a second session reading the big table
in the middle, the pool and the sessions' CPU sampled every second.

The hot workload runs at a fixed rate (sysbench --rate), well under what the server's one CPU can
serve: its pages are then touched a few times a second each, less often than a scan without a ring
or a midpoint cycles the pool, so a policy that fails shows as the hot table's misses; and the CPU
the scan takes shows as the scan's own CPU time, not as lost hot throughput.

Servers: MySQL 5.7, 8.0 and 9.7, MariaDB 11.8, PostgreSQL 16 and 18 at default scale (MariaDB 10.11 and
PostgreSQL 12, 14 and 17 as well at full: LEFT_OUT), the extra variants on 8.0 and 18 only.

Time at default scale (history): 78 runs of 12 s on 8 servers took 17.1 minutes before issue 32; with
issue 32 (every run on a server restarted just before it, the hot table read twice and the pool checked, 2
instances per server) the published design (26 points x 3 repeats, 9 servers; the probes 2 runs per server on
their own servers) took 24.0 minutes plus 7.1 for the probes, 31 in all, over the chapter's 20. A 4 s scan
(10 s runs; 6 to 12 passes of the big table in the published 5 s), InnoDB's midpoint probe in the eviction
runs' groups (their server and 500,000 rows: no second start and load per instance), PostgreSQL 12 and 14
left out and 2 repeats took 16.1 minutes (13.9 and 2.3 for the probes), but 2 repeats left many intervals
too wide to tell kept from lost.

This design: 3 repeats over the 2 instances, and MariaDB 10.11 left out too (its pool is 11.8's, reworked
without chunks in both). From that publication's runs: per repeat 5.7.22 44.7 s, 8.0.15 65.3, 9.7.4 45.3,
11.8.9 41.9, PostgreSQL 16 25.2 and 18 52.7 (275 s; x 3 = 825 s), each server's two starts and loads with
their gaps 15 to 38 s (163 s, about 175 with the third repeat's gaps), the probes 132 s: about 1,130 s,
18.9 minutes; it took 18.2.

Issue 43 (each run starts with the hot table young, checked by LRU position, and InnoDB writes once a second:
ticker.py): per InnoDB server instance a filler table of 1.25 times the pool, made once (0.5 to 0.7 s at
48 MiB) and read before every run (0.13 to 0.16 s); the hot table read without ANALYZE TABLE; one query of the
hot table's standing before the run and one as its scan starts. At smoke scale a run's time beside its restart
and its 10 s window grew by 0.3 to 0.6 s (1.9 s on MySQL 8.0.15 against 1.5 published at default scale, 2.2
against 1.5 on MariaDB 11.8.9, 2.0 against 1.7 on PostgreSQL 16): about 0.5 s x 78 runs and 8 fillers, under a
minute more, about 19 minutes at default scale. The smoke scale is unchanged."""

from __future__ import annotations

import dataclasses
import time
from contextlib import nullcontext
from dataclasses import dataclass


from dbexp.catalog import offline_series
from dbexp.experiments.chapter import Chapter, Cpus, Part, check_names
from dbexp.experiments.measure import Measured, summarize, sysbench_series
from dbexp.experiments.sweep import Point
from dbexp.metrics.sampler import Sampler
from dbexp.servers.engines import Engines
from dbexp.servers.registry import flavor_of_spec
from dbexp.experiments.state import drop_page_cache
from dbexp.waits import wait_until
from dbexp.workloads import sysbench
from dbexp.workloads.sysbench import Workload

from .engines import BufferPart, innodb, mariadb, pool_mechanics, postgres, shared_buffers_mechanics
from .scanner import Scanner
from .sessions import SessionClock
from .ticker import Ticker

PARTS: Engines[BufferPart] = Engines("buffer_eviction", {"mysql": innodb.BufferPool,
                                                         "mariadb": mariadb.MariaDBBufferPool,
                                                         "postgres": postgres.SharedBuffers})
ENGINES = (innodb.BufferPool, postgres.SharedBuffers)  # the page's order: InnoDB's flavors, then PostgreSQL
VARIANTS = tuple(v for part in ENGINES for v in part.variants)
VARIANT_NAMES = tuple(v.name for v in VARIANTS)
MORE = ("old_blocks_pct=5", "UPDATE scan", "index scan, then pg_prewarm")  # by default on all_variants_on only
CORE = tuple(n for n in VARIANT_NAMES if n not in MORE)


def part_of(flavor_name: str) -> type[BufferPart]:
    """The part class serving a flavor named in stored results (its engine, page size, page cache)."""
    return PARTS.part_for_name(flavor_name)


CONNECT_TIMEOUT_S = 30.0  # the hot workload's sessions are all connected by then (within a second, usually)
WARM_GAP_S = 1.2  # between the two reads of the hot table before a run: longer than old_blocks_time's 1 s
HOT_RESIDENT = 0.95  # the precondition: at least this share of the hot table's pages in the pool
BIG_RESIDENT = 0.01  # ... and at most this share of the big table's
# ... and at least this share of them kept first by the pool's policy (BufferPart.kept_first: InnoDB's young
# sublist by LRU position, PostgreSQL's usage count 2 or more), before the run and again at the scan's start (the
# run's own check: a run where it does not hold fails)
HOT_KEPT_FIRST = 0.95
FILLER_SHARE = 1.25  # InnoDB's filler table: this many times the pool's pages, so that its read starts eviction

HOT, BIG, FILLER, TICK = "hot", "sbtest1", "filler", "tick"
DATABASE = "sbtest"  # where the probes on servers of their own make their tables
# the midpoint probe's settings: the defaults variant's (innodb_old_blocks_time 1 s, 3/8 old, scan depth 100)
MIDPOINT_SETTINGS = innodb.BufferPool.variants[0].settings


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    variants: tuple[str, ...]  # run on every server they apply to
    more_variants: tuple[str, ...]  # run only on the servers in all_variants_on
    all_variants_on: tuple[str, ...]  # servers (specs) that get more_variants too
    pool_mb: int  # buffer pool / shared buffers
    table_size: int  # rows of the big table (several times the pool)
    hot_rows: int  # rows of the hot table (about a sixth of the pool)
    threads: int  # hot-workload threads
    rate: int  # hot-workload queries per second (sysbench --rate); 0: as fast as it can
    before_s: int
    scan_s: int
    after_s: int
    repeats: int
    pg_memory_mb: int  # PostgreSQL's container memory limit: shared buffers, processes and a page cache smaller than the table
    warmup_s: float = 0.0
    instances: int = 1  # independently started servers per server, the repeats spread over them


@dataclass(frozen=True)
class EvictionPoint:
    variant: str
    scan: str
    settings: tuple[tuple[str, str], ...]
    prewarm: bool
    pool_mb: int
    table_size: int
    hot_rows: int
    rate: int
    before_s: int
    scan_s: int
    after_s: int


@dataclass(frozen=True)
class MechanicsPoint:
    """An engine's pool observed step by step (engines/pool_mechanics.py, engines/shared_buffers_mechanics.py):
    ``midpoint`` on an InnoDB server set up as the eviction runs', ``instances`` (InnoDB) and ``shared buffers``
    (PostgreSQL) on a server of their own. Facts of the code, so a few runs per server, on 2 instances."""
    probe: str
    hot_rows: int | None = None  # the midpoint's: the hot table's rows (the chapter's, made as for the eviction runs)
    mechanics: bool = True  # tells these runs apart from the eviction runs in the results
    steps: int = 2  # the probes' version: raised when their steps change, so that a resumed sweep observes again


MECHANICS_REPEATS = 2  # runs per server of the probes on servers of their own, one per instance


def is_mechanics(point: Point) -> bool:
    return isinstance(point.params, MechanicsPoint)


# the catalog's offline series, PostgreSQL 13 and 15 not measured
FULL_SERVERS = offline_series(without=("postgres:13", "postgres:15"))
# left out at default scale (run at full) to keep the chapter within 20 minutes (see the module's docstring):
# PostgreSQL 12, 14 and 17, whose ring is 16's (256 kB; 18's differs and stays), and MariaDB 10.11, whose
# pool is 11.8's (reworked without chunks, MDEV-29445, in both)
LEFT_OUT = ("mariadb:10.11@offline", "postgres:12@offline", "postgres:14@offline", "postgres:17@offline")
DEFAULT_SERVERS = tuple(s for s in FULL_SERVERS if s not in LEFT_OUT)
KNOB_HELP = {
    "servers": 'the servers, e.g. ["mysql:8.0", "postgres:17"]',
    "variants": "the variants run on every server (names as in the tables below)",
    "more_variants": "the variants run only on the servers in all_variants_on",
    "all_variants_on": "the servers that run more_variants too",
    "pool_mb": "the buffer pool / shared buffers size (MiB)",
    "table_size": "the big table's rows (several times the pool)",
    "hot_rows": "the hot table's rows",
    "threads": "the hot workload's threads",
    "rate": "the hot workload's queries per second (0: as fast as it can)",
    "before_s": "the seconds of hot workload before the scan",
    "scan_s": "the seconds the scan runs",
    "after_s": "the seconds of hot workload after the scan",
    "repeats": "the repeats",
    "pg_memory_mb": "PostgreSQL's container memory limit (MiB)",
    "warmup_s": "the warm-up seconds before each run",
    "instances": "independently started servers per server (the repeats spread over them)",
}


def server_config(spec: str, sc: Scale, cpus: str):
    part = PARTS.of(flavor_of_spec(spec))
    cfg = Chapter.server_config(spec, cpus, part.buffer_pool_settings(sc.pool_mb))
    if part.reads_through_page_cache:  # a page cache smaller than the table: misses reach the device
        cfg = dataclasses.replace(cfg, memory=f"{sc.pg_memory_mb}m")
    return cfg


def mechanics_config(spec: str, cpus: str):
    """The server of a probe that needs one of its own: a 1 GiB InnoDB pool of 4 instances, or PostgreSQL's
    small shared buffers and short checkpoint window (the probes' modules say why)."""
    part = PARTS.of(flavor_of_spec(spec))
    settings = (shared_buffers_mechanics.SETTINGS if part.reads_through_page_cache
                else pool_mechanics.instances_settings(part))
    return Chapter.server_config(spec, cpus, settings)


class BufferEviction(Chapter):
    name = "buffer_eviction"
    Scale = Scale
    observed_check = (f"the hot table kept first at the scan's start (InnoDB: in the young sublist by LRU position; "
                      f"PostgreSQL: at usage count 2 or more), at least {HOT_KEPT_FIRST:.0%} of its pages")
    # The pool is 48 MiB at default scale: 3,072 InnoDB pages on MySQL 8.0.15, 3,071 on 9.7.4 and 3,042
    # on MariaDB 10.11.19 and 11.8.9 (INNODB_BUFFER_POOL_STATS.POOL_SIZE; one instance everywhere), so
    # that MariaDB's page cleaner, keeping its default 1,536 pages free, leaves an LRU list of about
    # 1,500 pages: about three times the 512 InnoDB needs for an old sublist (innodb.OLD_MIN_LEN); at
    # 32 MiB it left under 512. (MySQL's, at its default 1,024, kept no page free during a scan in the
    # published runs.) The hot table is about a sixth of the pool, read at a rate that touches each of
    # its pages a few times a second (see the module's docstring); the big table is the published
    # runs' (over twice the pool).
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"),
                       ("defaults (scan depth 100)", "old_blocks_time=0", "seq scan (ring)",
                        "index scan (no ring)"), (), (), pool_mb=16, table_size=200_000, hot_rows=15_000,
                       threads=2, rate=1_000, before_s=3, scan_s=4, after_s=3, repeats=1, pg_memory_mb=160),
        "default": Scale(DEFAULT_SERVERS, CORE, MORE, ("mysql:8.0@offline", "postgres:18@offline"),
                         pool_mb=48, table_size=500_000, hot_rows=40_000, threads=2, rate=2_000,
                         before_s=3, scan_s=4, after_s=3, repeats=3, pg_memory_mb=128, instances=2),
        "full": Scale(FULL_SERVERS, CORE, MORE, FULL_SERVERS, pool_mb=128, table_size=2_400_000,
                      hot_rows=120_000, threads=4, rate=3_000, before_s=10, scan_s=20, after_s=20, repeats=5,
                      pg_memory_mb=400),
    }
    order = "abba"  # a repeat walks a server's variants forward, the next one backward
    knob_help = KNOB_HELP
    engines = PARTS

    def adjust(self, sc: Scale, scale: str, cpus: Cpus, overrides: dict) -> Scale:
        check_names(sc.variants + sc.more_variants, VARIANT_NAMES, "variant")
        return sc

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        points, probe = [], []
        for spec in sc.servers:
            part = PARTS.of(flavor_of_spec(spec))
            cfg = server_config(spec, sc, cpus.server)
            wanted = sc.variants + (sc.more_variants if spec in sc.all_variants_on else ())
            options = (("hot-table", HOT), ("hot-rows", str(sc.hot_rows)))
            if sc.rate:
                options += (("rate", str(sc.rate)),)
            wl = Workload("hot_select", sc.threads, sc.before_s + sc.scan_s + sc.after_s, 1, sc.table_size,
                          cpuset=cpus.client, options=options)
            for v in part.variants:
                if v.name not in wanted:
                    continue
                params = EvictionPoint(v.name, v.scan, v.settings, v.prewarm, sc.pool_mb, sc.table_size, sc.hot_rows,
                                       sc.rate, sc.before_s, sc.scan_s, sc.after_s)
                points.append(Point(cfg, params, wl, group=f"buffer_eviction {spec}"))
            # the probes: InnoDB's midpoint on this very server, in the eviction runs' group (their start and
            # tables: no second start and load), and each engine's other steps on a server of its own
            if part.probes_midpoint:
                points.append(Point(cfg, MechanicsPoint("midpoint", sc.hot_rows), wl, group=f"buffer_eviction {spec}"))
            probe.append(Point(mechanics_config(spec, cpus.server),
                               MechanicsPoint("shared buffers" if part.reads_through_page_cache else "instances"),
                               group=f"mechanics {spec}"))
        repeats = min(MECHANICS_REPEATS, sc.repeats)
        return [Part(points, sc.repeats, sc.instances)] + ([Part(probe, repeats, min(sc.instances, repeats))]
                                                           if probe else [])

    def session(self, server):
        return nullcontext({})  # per server: the hot table, made at the first run (after sysbench's prepare)

    def reset(self, server, point: Point, state: dict) -> None:
        """Every run starts from the same state, whatever ran before it (the published runs before this
        rule kept the hot set on the first run of each server and inherited the previous variant's pages
        after it): the server restarted (a fresh process, its pool or shared buffers empty), the host's
        page cache dropped where the engine reads through it, and the hot table read twice, WARM_GAP_S apart,
        so that the pool's policy keeps it first (InnoDB makes a page young on a second access after
        innodb_old_blocks_time, PostgreSQL counts a use each time), then the variant's settings set.
        InnoDB moves no page to the young end before it has evicted one (buf_page_peek_if_too_old): there a
        filler table larger than the pool is read first, and the hot table is warmed under the defaults' LRU
        settings (BufferPart.warm_settings; issue 43: before, 91 to 204 of its 550 pages began the scan old)."""
        p: EvictionPoint = point.params
        part = PARTS.of(server.flavor)
        if is_mechanics(point) and point.params.probe != "midpoint":
            server.ensure_database(DATABASE)
            state["restart_s"] = server.restart()  # the settings as started (a resize or ALTER SYSTEM undone)
            return
        if "hot_pages" not in state:
            conn = server.connect(point.workload.database)
            try:
                part.copy_rows(conn, BIG, HOT, p.hot_rows)
                state["hot_pages"] = part.primary_pages(conn, HOT)
                state["big_pages"] = part.primary_pages(conn, BIG)
                if part.fills_pool_first:
                    state["filler_pages"] = part.make_filler(conn, BIG, FILLER, FILLER_SHARE)
                if part.writes_a_second:
                    part.make_tick(conn, TICK)
            finally:
                conn.close()
        state["restart_s"] = server.restart()
        if part.reads_through_page_cache:
            drop_page_cache()
        conn = server.connect(point.workload.database)
        try:
            set_global = server.flavor.capability("set_global")
            if is_mechanics(point):  # the probe reads the tables itself, from an empty pool
                for name, value in MIDPOINT_SETTINGS:
                    set_global.set(conn, name, value)
                return
            for name, value in part.warm_settings:
                set_global.set(conn, name, value)
            if part.fills_pool_first:
                part.warm(conn, FILLER)  # eviction starts: from now on a page read again after 1 s moves young
            part.warm(conn, HOT)
            if "hot_pages_read" not in state:
                # the hot table's pages as a full read on a freshly restarted server brings them in: what the
                # checks compare with (right after its copy InnoDB may hold more of the table's pages than a read
                # reaches: MariaDB 11.8.9 once 225 against 207)
                read = int(part.standing(conn, HOT)["resident"])
                if read < HOT_RESIDENT * state["hot_pages"] * 0.9:
                    raise RuntimeError(f"a full read of the hot table brought in {read} pages, far under the "
                                       f"{state['hot_pages']} it had when made")
                state["hot_pages"], state["hot_pages_read"] = read, True
            time.sleep(WARM_GAP_S)
            part.warm(conn, HOT)
            for name, value in p.settings:
                set_global.set(conn, name, value)
        finally:
            conn.close()

    def precondition(self, server, point: Point, state: dict) -> dict:
        """The state reset() makes, as the pool shows it: the hot table resident and kept first by the pool's
        policy (InnoDB: young, by LRU position; PostgreSQL: used twice), the big table not resident (a probe
        checks its own starting state: its precondition_ok). The run checks the hot table's standing again at
        the scan's start (timed_window)."""
        if is_mechanics(point):
            return {"a fresh server process (restarted)": (True, f"{state['restart_s']:.1f} s")}
        part = PARTS.of(server.flavor)
        conn = server.connect(point.workload.database)
        try:
            sample = part.buffer_sample(conn, HOT, BIG)
            at = part.standing(conn, HOT)
        finally:
            conn.close()
        hot, big = sample.get("resident.hot", 0.0), sample.get("resident.big", 0.0)
        first = at[part.kept_first]
        return {"a fresh server process (restarted)": (True, f"{state['restart_s']:.1f} s"),
                f"hot table resident (at least {HOT_RESIDENT:.0%} of its pages)":
                    (hot >= HOT_RESIDENT * state["hot_pages"], f"{hot:.0f} of {state['hot_pages']} pages"),
                f"hot table {part.kept_first_words} (at least {HOT_KEPT_FIRST:.0%} of its pages)":
                    (first >= HOT_KEPT_FIRST * state["hot_pages"], f"{first:.0f} of {state['hot_pages']} pages"),
                f"big table not resident (at most {BIG_RESIDENT:.0%} of its pages)":
                    (big <= BIG_RESIDENT * state["big_pages"], f"{big:.0f} of {state['big_pages']} pages")}

    def measure(self, server, point: Point, state: dict) -> Measured:
        if is_mechanics(point):
            return _probe(server, point, state)
        p: EvictionPoint = point.params
        wl = point.workload
        part = PARTS.of(server.flavor)
        got = timed_window(server, point, state)
        got.measurements["restart_s"] = (state["restart_s"], "s")
        if "filler_pages" in state:  # the table read first to start InnoDB's eviction (reset)
            got.measurements["filler_pages"] = (float(state["filler_pages"]), "pages")
        if p.scan == "update":  # the next run must read the same table
            conn = server.connect(wl.database)
            try:
                part.restore_table(conn, BIG)
            finally:
                conn.close()
        return got


def _probe(server, point: Point, state: dict) -> Measured:
    """One run of a step-by-step probe (MechanicsPoint)."""
    part = PARTS.of(server.flavor)
    probe = point.params.probe
    if probe == "midpoint":
        m = pool_mechanics.observe_midpoint(server, part, BIG, HOT, point.workload.database)
    elif probe == "instances":
        m = pool_mechanics.observe_instances(server, part, DATABASE)
    else:
        m = shared_buffers_mechanics.observe(server, DATABASE)
    m["restart_s"] = (state["restart_s"], "s")
    return Measured(m, [], [], f"{probe} step by step (engines/"
                    + ("shared_buffers_mechanics.py)" if probe == "shared buffers" else "pool_mechanics.py)"))


def timed_window(server, point: Point, state: dict) -> Measured:
    """The hot workload for before + scan + after seconds with the scan in the middle, sampled
    every second; every series on sysbench's clock (its first report is t = 1). The CPU time of the
    hot workload's sessions and of the scanning session is sampled beside the pool (sessions.py)."""
    p: EvictionPoint = point.params
    wl = point.workload
    part = PARTS.of(server.flavor)
    clock = SessionClock(server)
    probe = {"pool": lambda c: part.buffer_sample(c, HOT, BIG), "sessions": lambda c: clock.sample()}
    m: dict[str, tuple[float | None, str]] = {}
    writer = (Ticker(server, part, TICK, wl.database, cpus=wl.cpuset) if part.writes_a_second else None)
    with Sampler(server, probes=probe, sql_series=False, cpus=wl.cpuset, database=wl.database) as sampler, \
            (writer or nullcontext()):
        look = server.connect(wl.database)
        try:
            # the sampler's, the writer's and this one: not the hot workload's
            present = part.client_sessions(look)
            running = sysbench.start_run(wl, server)
            if writer is not None:
                writer.start()
        except BaseException:
            look.close()
            raise
        try:
            hot = wait_until(lambda: _new_sessions(part, look, present, wl.threads), CONNECT_TIMEOUT_S,
                             f"the hot workload's {wl.threads} sessions connecting")
            m["hot_threads_seen"] = (float(clock.watch("hot", part.session_os_ids(look, hot))), "count")
            with Scanner(server, part, BIG, p.scan, wl.database, cpus=wl.cpuset, clock_zero=running.started) as scan:
                clock.watch("scan", part.session_os_ids(look, [scan.session]))
                _sleep_until(running.started + p.before_s)
                # where the hot set stands as the scan starts: the run's declared starting state, checked by
                # the run itself (a run where too little of it is kept first fails: precondition_ok)
                at = part.standing(look, HOT)
                scan.start()
                for key, value in at.items():
                    m[f"hot_{key}_at_scan"] = (value, "pages")
                m["precondition_ok"] = (float(at[part.kept_first] >= HOT_KEPT_FIRST * state["hot_pages"]), "bool")
                _sleep_until(running.started + p.before_s + p.scan_s)
                m["cancel_s"] = (scan.stop(), "s")
                if p.prewarm:
                    t0 = time.monotonic()
                    m["prewarm_pages"] = (part.prewarm(scan.connection, HOT), "pages")
                    m["prewarm_s"] = (time.monotonic() - t0, "s")
            done = sysbench.finish_run(running, wl)
            if writer is not None:
                m["tick_writes"] = (float(writer.stop()), "count")
        except BaseException:
            running.kill()
            raise
        finally:
            look.close()
    shift = running.started - sampler.t0  # sampler time - shift = sysbench time
    m.update(summarize(done, sampler.totals()))
    m["hot_pages"] = (float(state["hot_pages"]), "pages")
    m["big_pages"] = (float(state["big_pages"]), "pages")
    m["scan_passes"] = (float(sum(ok for *_, ok in scan.passes)), "count")
    series = sysbench_series(done)
    series += [(round(t - shift, 3), src, name, v) for t, src, name, v in sampler.series]
    series += [(round(a, 3), "scan", "pass_start", float(ok)) for a, b, ok in scan.passes]
    series += [(round(b, 3), "scan", "pass_end", float(ok)) for a, b, ok in scan.passes]
    return Measured(m, sampler.counters, series,
                    " ".join(done.cmd) + f" | from {p.before_s} s to {p.before_s + p.scan_s} s: "
                    + "; ".join(part.full_read_sql(BIG, p.scan)) + " in a loop")


def _new_sessions(part, conn, present: set[int], n: int) -> set[int] | None:
    """The client sessions connected since ``present`` was read, once there are ``n`` of them."""
    new = part.client_sessions(conn) - present
    return new if len(new) >= n else None


def _sleep_until(t: float) -> None:
    time.sleep(max(0.0, t - time.monotonic()))
