"""The calibration chapter's design and measurement.

Part 1, spread: every offline server, its workloads at one fixed configuration, repeated. Part 2,
the lab's three ratios in ABBA repeats on each ratio server: one reference run (the server pinned in
its container, sampled, as every chapter measures) beside sysbench alone (harness), the same binary
as a bare process (container) and neither pinned (pinning). Part 3, the harness ratio again with N
idle sessions held open on one server. Part 4, run length: the comparisons the page draws a verdict
from, measured once more with runs ``length_factor`` times as long. Part 5, co-tenancy: each of
``cotenancy_servers`` with 0, 1, 2 ... active neighbours (servers of ``neighbour_server``, each with its
own client, sharing the server CPU in one window), ABBA over the neighbour counts: what other active
servers do to a server's CPU per statement and QPS, the effect the other chapters remove by measuring
one active server at a time.

The spread's repeats run on ``instances`` independently started servers per server, so the page can
split their spread into a part between instances and a part between runs of one instance.
"""

from __future__ import annotations

import time
from contextlib import closing
from dataclasses import dataclass

from dbexp.catalog import OFFLINE, offline_series, parse_spec
from dbexp.chapters.calibration.engines import Series, innodb, mariadb, postgres
from dbexp.experiments.chapter import Chapter, Cpus, Part, check_whole
from dbexp.experiments.measure import Measured, measure_together
from dbexp.experiments.sweep import Point
from dbexp.servers.engines import Engines
from dbexp.servers.registry import flavor_of_spec
from dbexp.servers.sql import query
from dbexp.workloads.sessions import HolderPool
from dbexp.workloads import sysbench
from dbexp.workloads.sysbench import Workload

# The flavors this chapter measures, each with its versions' part (every flavor: the measurement
# itself is sysbench on the flavor's core, no engine-specific SQL).
PARTS: Engines[Series] = Engines("calibration", {"mysql": innodb.MySQLSeries, "postgres": postgres.PostgresSeries,
                                                 "mariadb": mariadb.MariaDBSeries})
LENGTH_FACTOR = 10  # the run-length check's runs are this many times as long as the runs they check

# every version the catalog builds offline, once (a build with an extension added is the same server)
ALL_OFFLINE = tuple(dict.fromkeys(f"{b.flavor}:{b.version}@offline" for b in OFFLINE))
WORKLOADS = ("oltp_point_select", "oltp_read_write")
# the source's scan test (every row read, none returned), as the versions chapter's script defines it
SCAN_SCRIPT, SCAN_OPTIONS = "versions_tests", (("statement", "scan"),)
SETTLE_VARIANTS = ("immediate", "settled")  # the settle part's reads: right after the writes, or after settle_s
SETTLE_WRITES = "oltp_write_only"  # the settle part's burst of writes (the row count unchanged)
# the variants of the ratios part: the reference (what every chapter measures) and one B per ratio
VARIANTS = ("reference", "hand", "bare", "unpinned")


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    ratio_servers: tuple[str, ...]
    repeats: int
    ratio_pairs: int
    duration_s: int
    table_size: int
    threads: int = 4
    warmup_s: int = 3  # one unrecorded run after each server's dataset is prepared
    ratio_duration_s: int = 4  # the ratios' runs: short, so that many pairs fit and a pair is close in time
    workloads: tuple[str, ...] = WORKLOADS  # the spread's sysbench scripts
    # Pairs of the sessions part (None: ratio_pairs).
    sessions_pairs: int | None = None
    sessions_server: str = "postgres:16@offline"  # the sampler's cost against the server's process count
    session_counts: tuple[int, ...] = (10, 100, 1000)
    # Run length: the version claims' servers and the ratio servers' reference and unpinned runs once
    # more, this many times as long (0: not measured); on length_servers the hand and bare runs too.
    length_factor: int = LENGTH_FACTOR
    length_servers: tuple[str, ...] = ()
    instances: int = 1  # the spread: independently started servers per server, the repeats spread over them
    # co-tenancy: these servers, each with these counts of active neighbours (0: alone), cotenancy_repeats times
    cotenancy_servers: tuple[str, ...] = ()
    neighbours: tuple[int, ...] = (0, 1, 2, 5)
    neighbour_server: str = "mysql:8.0@offline"
    cotenancy_repeats: int = 3
    cotenancy_duration_s: int = 5  # a window's seconds: its clients start one after another on the client CPU
    scan_s: int = 0  # the spread's servers also run the scan test for this many seconds a run (0: not)
    # settle time: these servers, a write burst of settle_write_s, then point selects of settle_read_s read at
    # once or after settle_s seconds, settle_repeats ABBA repeats
    settle_servers: tuple[str, ...] = ()
    settle_repeats: int = 5
    settle_write_s: int = 2
    settle_s: int = 3
    settle_read_s: int = 2


@dataclass(frozen=True)
class CalibrationPoint:
    part: str  # spread, ratios, sessions, length, cotenancy or settle (older results: harness, container, pinning)
    variant: str | None = None  # the run's side of a ratio (VARIANTS; sessions: harness or hand; cotenancy:
    # subject or neighbour <i>; settle: immediate or settled)
    sessions: int = 0  # idle sessions held open on the server during the run
    neighbours: int = 0  # co-tenancy: the active neighbours in the run's window


def _series(spec: str) -> tuple[str, str]:
    """A spec's flavor and version series ('mysql:5.7@offline' -> ('mysql', '5.7'))."""
    parsed = parse_spec(spec)
    return parsed.flavor, parsed.version


def claim_servers(servers) -> list[str]:
    """The servers of ``servers`` a version claim compares, where both of its series are there (its
    flavor's part names the series: 8.0 over 5.7)."""
    def of(flavor: str, series: str) -> list[str]:
        return [spec for spec in servers if _series(spec)[0] == flavor
                and (_series(spec)[1] == series or _series(spec)[1].startswith(series + "."))]

    out: list[str] = []
    for flavor in dict.fromkeys(_series(spec)[0] for spec in servers):
        for c in PARTS.part_for_name(flavor).claims:
            num, den = of(flavor, c.num), of(flavor, c.den)
            if num and den:
                out += [spec for spec in num + den if spec not in out]
    return out


def same_build(a: str, b: str) -> bool:
    """Whether two specs name one series of one flavor ('mysql:8.0@offline', 'mysql:8.0.15@offline')."""
    (fa, va), (fb, vb) = _series(a), _series(b)
    return fa == fb and (va == vb or va.startswith(vb + ".") or vb.startswith(va + "."))


def estimated_s(sc: Scale, cpus: Cpus = Cpus()) -> float:
    """Wall time of a sweep of ``sc`` from nothing measured, in seconds, from the published runs'
    timings: each run its seconds plus RUN_OVERHEAD_S, each server a group starts its flavor's
    ``start_s`` (start and prepare) and the warm-up, held sessions SESSIONS_HOLD_S, and FIXED_S for
    the page."""
    total = FIXED_S
    for part in CHAPTER.design(sc, cpus):
        groups: dict[str, set] = {}
        for p in part.points:
            groups.setdefault(p.group_name, set()).add((p.server_key(), p.server.spec))
        for started in groups.values():  # each instance starts the group's servers again
            total += part.instances * sum(PARTS.part_for_name(_series(spec)[0]).start_s + sc.warmup_s
                                          for _, spec in started)
        windows = {(p.together or p.key(CHAPTER.name)): p.workload.duration_s for p in part.points}
        total += part.repeats * sum(d + RUN_OVERHEAD_S for d in windows.values())
        settle = [p for p in part.points if p.params.part == "settle"]  # a write burst each, and the wait
        total += part.repeats * sum(sc.settle_write_s + RUN_OVERHEAD_S + (sc.settle_s if p.params.variant == "settled"
                                                                        else 0) for p in settle)
        total += SESSIONS_HOLD_S * len({p.group_name for p in part.points if p.params.sessions})
    return total


RUN_OVERHEAD_S = 0.15  # a published run of d seconds took d + 0.15 (sysbench's start and the sampler's edges)
SESSIONS_HOLD_S = 10.0  # opening the idle sessions of a group
FIXED_S = 30.0  # the kernel, image checks and the page's analysis


class Calibration(Chapter):
    name = "calibration"
    # oltp_read_write's transactions can deadlock (4 threads on one table); sysbench retries them and
    # counts each as an error. They are part of that workload, so they are kept and shown, not failed.
    tolerates = ("errors",)
    Scale = Scale
    # default: about 18 minutes (the publication of 2026-11-26 took 20.2 with a group of servers per
    # co-tenancy subject and the run-length check at 5x): 3 s runs, the spread on point selects only (4
    # repeats on 2 instances), 6 ABBA repeats of the ratios, the sessions part at 1,000 sessions, the
    # run-length check at 4x, and the MySQL versions with 0, 1, 2 and 5 active neighbours (3 ABBA repeats
    # of 5 s windows, the neighbours started once for all of them); full measures the spread's two
    # workloads and many more pairs, and checks every ratio at 10x
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), ("postgres:16@offline",), 2, 2, 2, 10000,
                       warmup_s=1, ratio_duration_s=2, session_counts=(10,), length_factor=2,
                       length_servers=("postgres:16@offline",), workloads=("oltp_point_select",), scan_s=1,
                       settle_servers=("postgres:16@offline",), settle_repeats=1, settle_write_s=1, settle_s=1,
                       settle_read_s=1),
        "default": Scale(tuple(ALL_OFFLINE), ("mysql:8.0@offline", "postgres:16@offline"), 4, 6, 3, 100000,
                         ratio_duration_s=3, workloads=("oltp_point_select",), session_counts=(1000,),
                         length_servers=("postgres:16@offline",), instances=2, length_factor=4,
                         cotenancy_servers=("mysql:5.7@offline", "mysql:8.0@offline"), neighbours=(0, 1, 5),
                         scan_s=2, settle_servers=("mysql:8.0@offline", "postgres:16@offline")),
        "full": Scale(tuple(ALL_OFFLINE), ("mysql:5.7@offline", "mysql:8.0@offline", "postgres:12@offline",
                                           "postgres:16@offline", "postgres:18@offline"), 10, 30, 30, 1000000,
                      ratio_duration_s=10, sessions_pairs=40,
                      length_servers=("mysql:8.0@offline", "postgres:16@offline"),
                      cotenancy_servers=offline_series(flavors=("mysql",)), scan_s=10,
                      settle_servers=("mysql:8.0@offline", "postgres:16@offline"), settle_repeats=10,
                      settle_write_s=10, settle_s=10, settle_read_s=10),
    }
    knob_help = {
        "servers": 'the servers of the spread part, e.g. ["mysql:8.0@offline"]',
        "ratio_servers": "the servers the three ratios are measured on",
        "repeats": "the repeats of the spread part",
        "ratio_pairs": "the ABBA repeats of the ratios (each one pair per ratio)",
        "duration_s": "the seconds of each spread run",
        "table_size": "the rows of the sysbench table",
        "threads": "the client threads",
        "warmup_s": "the seconds of the unrecorded run after a server's dataset is prepared",
        "ratio_duration_s": "the seconds of each run of a pair",
        "workloads": 'the sysbench scripts of the spread part, e.g. ["oltp_point_select"]',
        "sessions_pairs": "the A/B pairs of the sessions part",
        "sessions_server": "the server the sessions part holds its idle sessions on",
        "session_counts": "the idle sessions held in the sessions part, e.g. [10, 100, 1000]",
        "length_factor": "how many times longer the run-length check's runs are (0: no check)",
        "length_servers": "the ratio servers whose harness and container ratios are checked at that length too",
        "instances": "independently started servers per server in the spread (its repeats spread over them)",
        "cotenancy_servers": 'the servers measured with active neighbours, e.g. ["mysql:8.0@offline"]',
        "neighbours": "the counts of active neighbours, e.g. [0, 1, 2, 5]",
        "neighbour_server": "the neighbours' server",
        "cotenancy_repeats": "the ABBA repeats of the co-tenancy part",
        "cotenancy_duration_s": "the seconds of each co-tenancy window",
        "scan_s": "the seconds of each scan run the spread's servers also make (0: none)",
        "settle_servers": 'the servers of the settle part, e.g. ["mysql:8.0@offline"]',
        "settle_repeats": "the ABBA repeats of the settle part",
        "settle_write_s": "the seconds of the settle part's burst of writes",
        "settle_s": "the seconds the settled reads wait after the writes",
        "settle_read_s": "the seconds of each settle part's read run",
    }
    engines = PARTS

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        """Part 1, the spread: repeats of every server and workload. Part 2, the ratios: per ratio
        server one group of the reference and the three B runs, walked in ABBA order (a repeat of the
        group holds one pair per ratio). Part 3, the harness with N sessions held. Part 4, run length:
        the same comparisons once with runs length_factor times as long."""
        def wl(script: str, duration_s: int, pinned: bool = True, options=()) -> Workload:
            return Workload(script, sc.threads, duration_s, 1, sc.table_size,
                            cpuset=cpus.client if pinned else None, options=options)

        def ratio_points(spec: str, seconds: int, part: str, variants=VARIANTS) -> list[Point]:
            pinned = self.server_config(spec, cpus.server)
            ps = wl("oltp_point_select", seconds)
            made = {"reference": Point(pinned, CalibrationPoint(part, "reference"), ps, f"{part} {spec}"),
                    "hand": Point(pinned, CalibrationPoint(part, "hand"), ps, f"{part} {spec}", sample=False),
                    "bare": Point(pinned, CalibrationPoint(part, "bare"), ps, f"{part} {spec}", server_mode="bare"),
                    "unpinned": Point(self.server_config(spec, None), CalibrationPoint(part, "unpinned"),
                                      wl("oltp_point_select", seconds, pinned=False), f"{part} {spec}")}
            return [made[v] for v in VARIANTS if v in variants]

        spread = [Point(self.server_config(spec, cpus.server), CalibrationPoint("spread"), wl(script, sc.duration_s),
                        group=f"spread {spec}") for spec in sc.servers for script in sc.workloads]
        if sc.scan_s:  # the scan test on the same servers, between their other runs
            spread += [Point(self.server_config(spec, cpus.server), CalibrationPoint("spread"),
                             wl(SCAN_SCRIPT, sc.scan_s, options=SCAN_OPTIONS), group=f"spread {spec}")
                       for spec in sc.servers]
        ratios = [p for spec in sc.ratio_servers for p in ratio_points(spec, sc.ratio_duration_s, "ratios")]
        held = self.server_config(sc.sessions_server, cpus.server,
                                  {"max_connections": str(max(sc.session_counts, default=0) + 100)})
        ps = wl("oltp_point_select", sc.ratio_duration_s)
        sessions = [Point(held, CalibrationPoint("sessions", variant, n), ps, f"sessions {sc.sessions_server}",
                          sample=variant == "harness")
                    for n in sorted(sc.session_counts) for variant in ("harness", "hand")]
        parts = [Part(spread, sc.repeats, min(sc.instances, sc.repeats)), Part(ratios, sc.ratio_pairs),
                 Part(sessions, sc.sessions_pairs or sc.ratio_pairs)]
        if sc.cotenancy_servers and sc.neighbours:
            parts.append(Part(self._cotenancy(sc, cpus, wl), sc.cotenancy_repeats))
        if sc.settle_servers:  # reads right after a burst of writes, or settle_s later, in ABBA order
            parts.append(Part([Point(self.server_config(spec, cpus.server), CalibrationPoint("settle", variant),
                                     wl("oltp_point_select", sc.settle_read_s), f"settle {spec}")
                               for spec in sc.settle_servers for variant in SETTLE_VARIANTS], sc.settle_repeats))
            self.settle = (sc.settle_write_s, sc.settle_s)
        if sc.length_factor:
            length: dict[str, Point] = {}
            for spec in claim_servers(sc.servers):
                if any(same_build(spec, r) for r in sc.ratio_servers):
                    continue  # its reference is measured with the ratio server's runs below
                length.update((p.key(self.name), p) for p in
                              ratio_points(spec, sc.length_factor * sc.duration_s, "length", ("reference",)))
            for spec in sc.ratio_servers:
                variants = VARIANTS if spec in sc.length_servers else ("reference", "unpinned")
                length.update((p.key(self.name), p) for p in
                              ratio_points(spec, sc.length_factor * sc.ratio_duration_s, "length", variants))
            parts.append(Part(list(length.values()), 1))
        return parts

    def _cotenancy(self, sc: Scale, cpus: Cpus, wl) -> list[Point]:
        """One group: the servers of ``cotenancy_servers`` and max(neighbours) neighbour servers (the
        neighbour build, each told apart by its part's neighbour_settings), started once and shared by
        every server's windows; per server and count N a window of the server's point selects with N
        neighbours' at once (N = 0: the server alone, measured the same way). The servers not in a window
        stay idle, and a server's windows follow each other, so a window with neighbours and its window
        alone are neighbours in time."""
        out = []
        ps = wl("oltp_point_select", sc.cotenancy_duration_s)
        part = PARTS.of(flavor_of_spec(sc.neighbour_server))
        neighbours = [self.server_config(sc.neighbour_server, cpus.server, part.neighbour_settings(i))
                      for i in range(max(sc.neighbours))]
        for spec in sc.cotenancy_servers:
            subject = self.server_config(spec, cpus.server)
            group = "cotenancy"
            for n in sorted(set(sc.neighbours)):
                window = f"{spec} with {n} neighbours"
                out.append(Point(subject, CalibrationPoint("cotenancy", "subject", neighbours=n), ps, group,
                                 together=window))
                out += [Point(neighbours[i], CalibrationPoint("cotenancy", f"neighbour {i + 1}", neighbours=n), ps,
                              group, together=window) for i in range(n)]
        return out

    def adjust(self, sc: Scale, scale: str, cpus: Cpus, overrides: dict) -> Scale:
        check_whole(sc.neighbours, "neighbours", 0)
        check_whole(sc.instances, "instances")
        check_whole([sc.scan_s, sc.settle_s], "seconds", 0)
        check_whole([sc.settle_repeats, sc.settle_write_s, sc.settle_read_s], "settle part's count or seconds")
        return sc

    def session(self, server) -> HolderPool:
        return HolderPool(server)

    def precondition(self, server, point: Point, state) -> dict:
        """The table as prepared: every row there (point selects change none; read-write deletes and
        inserts as many)."""
        with closing(server.connect(point.workload.database)) as conn:
            rows = int(query(conn, "SELECT count(*) FROM sbtest1")[0][0])
        return {f"sbtest1 holds {point.workload.table_size:,} rows": (rows == point.workload.table_size, rows)}

    def saturates(self, point: Point) -> bool:
        """Every run keeps its pinned server CPU busy (4 clients at full speed), so the episode rule
        (noise.episode) judges every run but the unpinned ones, whose server has no CPU of its own."""
        return point.params.variant != "unpinned"

    def measure(self, server, point: Point, pool: HolderPool) -> Measured:
        """The default sysbench measurement; with N sessions asked for, they are held open first
        (kept across the points that ask for the same N) and the server must see them all."""
        n = point.params.sessions
        if point.params.part == "cotenancy":  # alone, measured as the windows with neighbours are
            return measure_together([(server, point.workload)])[0]
        if point.params.part == "settle":
            return self._settle(server, point, pool)
        if not n:
            return super().measure(server, point, pool)
        seen = pool.hold(n, "idle").observed()
        if seen["sessions"] < n:
            raise RuntimeError(f"asked for {n} idle sessions, the server sees {seen['sessions']}")
        got = super().measure(server, point, pool)
        got.measurements["observed_sessions"] = (float(seen["sessions"]), "count")
        return got

    settle = (2, 3)  # the settle part's seconds of writes and of waiting, as the design last asked

    def _settle(self, server, point: Point, pool: HolderPool) -> Measured:
        """A burst of writes (SETTLE_WRITES, the point's clients), then, for the settled side, the wait; the
        backlog the writes left (the flavor's cleanup state: InnoDB's history list, PostgreSQL's all-visible
        share) read as the reads start, and the reads measured as every run is."""
        write_s, wait_s = self.settle
        w = point.workload
        sysbench.run(Workload(SETTLE_WRITES, w.threads, write_s, w.tables, w.table_size, cpuset=w.cpuset), server)
        if point.params.variant == "settled":
            time.sleep(wait_s)
        with closing(server.connect(w.database)) as conn:
            (_, backlog), = server.flavor.capability("cleanup").state(conn, "sbtest1").values()
        got = super().measure(server, point, pool)
        got.measurements["settle_backlog"] = (float(backlog), "count")
        got.measurements["settle_wait_s"] = (float(wait_s if point.params.variant == "settled" else 0), "s")
        got.measurements["settle_write_s"] = (float(write_s), "s")
        return got

    # claims, findings and the README block: claims.py and findings.py, found by Chapter (the analysis
    # reads PARTS from here)


CHAPTER = Calibration()
run = CHAPTER.run
