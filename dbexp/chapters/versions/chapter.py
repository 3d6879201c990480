"""The versions chapter's design and measurement.

Per flavor, one group: every version of it at the common baseline (the book's comparable settings,
commits relaxed, and what the regression source's baseline makes equal: the adaptive hash index off,
log writer threads on where a version has the option), an A/A twin of the base (the oldest version)
where ``twin`` is set, and the versions named in ``own_defaults`` a second time at their own shipped
defaults. All the group's servers run the same test in the same window, each with its own sysbench
client (dbexp.experiments.measure.measure_together, as the gtid chapter does), and with ``slice_s`` the
clients take turns (dbexp.experiments.rotation): one server works at a time. The windows are spread over
``instances`` independently started sets of servers, the start order walking forward, then backward
(ABBA). A version's relative QPS is a ratio within each window, paired, its interval at the instance level
(analysis.ratios).

Before every window each server's table is brought back to the rows it was prepared with and the cleanup
of old versions has caught up (reset, checked by precondition and stored with the run). Beside what
measure_together takes between its marks, each run records the pages its server read into its buffer pool
in the window (InnoDB's Innodb_buffer_pool_reads, PostgreSQL's blks_read): the database is meant to be
cached, and the page shows that it was.

The run-length check (the flavors of ``check_servers``, the tests of ``check_tests``, windows
``check_factor`` times as long) runs in the main groups, on the main windows' own servers: its windows are
measured in the first ``check_repeats`` repeats only (Point.repeats), so the long window and the short ones
it is compared with share their server starts. The regression ablation (the MySQL versions in
``ablation_servers`` on update-nonindex, every configuration of regression.configurations(): the regression
source's baseline, its steps taken one on top of the other, and each factor alone) starts one group of
servers per set of startup settings: configurations that differ only in settings a running server takes
(SWITCHED: the log writer threads, innodb_flush_log_at_trx_commit) or in the client's options share their
servers, each window setting its switched settings first (reset, read back by precondition). A
configuration's versions share its windows, so the gap between them is paired.

Time at default scale (windows of 3 s; from one window to the next 1.6 s plus 0.35 s per server, for the
resets, the checks of the starting state and the marks: measured on 2026-11-27; servers started one after
another, about 13 s each with a table of 100,000 rows): three groups (MySQL 5.7, its twin, 8.0, 9.7 and 8.0
and 9.7 at their own defaults; MariaDB 10.11, its twin, 11.8 and 11.8 at its own defaults; PostgreSQL 12 to
18 and 12's twin) of 30 tests x 4 windows: 360 windows, about 1,950 s, plus 2 instances x 18 servers to
start, about 470 s; the check (2 tests x 2 windows of 12 s in 3 groups, on the same servers) about 150 s;
the ablation, 7 groups of servers x 2 instances x 3 servers to start and 13 configurations x 4 windows,
about 750 s; the profiles about 40 s: about 56 minutes (the publication of 2026-11-27 took 67.8 with 4 s
windows, a group of servers per ablation configuration and the check on servers of its own; with 4 s
windows this design's main groups alone ran at a pace of 47 minutes on 2026-11-27)"""

from __future__ import annotations

import dataclasses
from contextlib import closing
from dataclasses import dataclass

from dbexp.chapters.versions.regression import configurations
from dbexp.chapters.versions.engines import VersionsEngine, innodb, postgres
from dbexp.chapters.versions.tests import TESTS
from dbexp.catalog import offline_series
from dbexp.catalog.versions import version_key
from dbexp.errors import DbexpError
from dbexp.experiments.chapter import Chapter, Cpus, Part, check_names, check_whole
from dbexp.experiments.measure import Measured, measure_together
from dbexp.experiments.sweep import Point
from dbexp.metrics.profile import CpuProfile, server_pids, top
from dbexp.servers.config import ServerConfig
from dbexp.servers.engines import Engines
from dbexp.servers.options import same_setting
from dbexp.servers.registry import flavor_of_spec
from dbexp.servers.sql import query
from dbexp.workloads.sysbench import Workload
from dbexp.workloads.table_state import restore_rows

PARTS: Engines[VersionsEngine] = Engines("versions", {"mysql": innodb.InnoDBVersions, "postgres": postgres.PostgresVersions})
ROLES = ("baseline", "twin", "own defaults")
ABLATION_TEST = "update-nonindex"
PROFILE_SYMBOLS = 200  # the symbols kept per server and window (the rest summed as one)
# the ablation's settings a running server takes (SET GLOBAL, in effect for the next commit): configurations
# that differ only in these share their servers, each window setting them first. The adaptive hash index
# is not among them: switched on at run time it starts empty, where a server started with it has built it
# during the warm-up.
SWITCHED = ("innodb_log_writer_threads", "innodb_flush_log_at_trx_commit")

# every series the catalog builds offline, per flavor, oldest first
MYSQL, MARIADB, POSTGRES = (offline_series(flavors=(f,)) for f in ("mysql", "mariadb", "postgres"))
# the first publication's largest regressions: 9.7 / 8.0 on point queries (0.666), 8.0 / 5.7 on writes (0.546)
PROFILED = ("point-query", "update-nonindex")


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    tests: tuple[str, ...]
    duration_s: int
    repeats: int
    table_size: int = 100_000
    threads: int = 1
    warmup_s: float = 3.0
    twin: bool = True
    own_defaults: tuple[str, ...] = ()
    check_servers: tuple[str, ...] = ()
    check_tests: tuple[str, ...] = ("update-nonindex",)
    check_factor: int = 10
    check_repeats: int = 0
    ablation_servers: tuple[str, ...] = ()
    ablation_repeats: int = 0
    profile_tests: tuple[str, ...] = ()
    profile_servers: tuple[str, ...] = ()
    profile_repeats: int = 0
    instances: int = 1  # independently started sets of servers per group, the windows spread over them
    slice_s: float = 0.0  # each client's turn alone in a window (0: the servers at once)


@dataclass(frozen=True)
class VersionsPoint:
    test: str
    role: str = "baseline"  # baseline | twin | own defaults | ablation | profile
    length: int = 1  # the window's length as a multiple of the scale's (the run-length check's are longer)
    config: str = ""  # the ablation's configuration ('' elsewhere)
    slice_s: float = 0.0  # each client's turn alone (0: the servers at once)
    # the ablation's settings made on the running server before each window (name, value), SWITCHED ones
    switched: tuple[tuple[str, str], ...] = ()


def _flavor_key(spec: str) -> str:
    return type(flavor_of_spec(spec)).__name__


def by_flavor(specs) -> dict[str, list[str]]:
    """Specs grouped by flavor (in the order first given), each group's oldest version first."""
    groups: dict[str, list[str]] = {}
    for spec in specs:
        groups.setdefault(_flavor_key(spec), []).append(spec)
    return {k: sorted(v, key=lambda s: version_key(s.split(":", 1)[1].split("@")[0])) for k, v in groups.items()}


class Versions(Chapter):
    name = "versions"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:5.7@offline", "mysql:8.0@offline"), ("point-query", "update-nonindex"), 2, 2,
                       10_000, warmup_s=1.0, twin=False, slice_s=0.1),
        "default": Scale(MYSQL + MARIADB + POSTGRES, tuple(TESTS), 3, 4, warmup_s=2.0,
                         own_defaults=("mysql:8.0@offline", "mysql:9.7@offline", "mariadb:11.8@offline"),
                         check_servers=MYSQL + MARIADB + ("postgres:12@offline", "postgres:18@offline"), check_repeats=2,
                         check_tests=("update-nonindex", "point-query"), check_factor=4,
                         ablation_servers=MYSQL, ablation_repeats=4,
                         profile_tests=PROFILED, profile_servers=MYSQL, profile_repeats=3, instances=2, slice_s=0.1),
        "full": Scale(MYSQL + MARIADB + POSTGRES, tuple(TESTS), 10, 10, 100_000, warmup_s=10.0,
                      own_defaults=("mysql:8.0@offline", "mysql:9.7@offline", "mariadb:11.8@offline"),
                      check_servers=MYSQL + MARIADB + ("postgres:12@offline", "postgres:18@offline"),
                      check_tests=("point-query", "update-nonindex"), check_repeats=3, ablation_servers=MYSQL, ablation_repeats=10,
                      profile_tests=PROFILED + ("hot-points", "insert"), profile_servers=MYSQL, profile_repeats=5,
                      instances=2, slice_s=0.1),
    }
    knob_help = {"servers": 'the servers, e.g. ["mysql:5.7", "mysql:8.0", "postgres:12", "postgres:18"]',
                 "tests": 'the tests (the source\'s names), e.g. ["point-query", "update-nonindex"]',
                 "duration_s": "the seconds per window", "repeats": "the windows per test (ABBA)",
                 "table_size": "the rows of the sysbench table", "threads": "the client threads per server",
                 "warmup_s": "the seconds of warm-up before each server's first window",
                 "twin": "True: an A/A twin of each flavor's base version in every window",
                 "own_defaults": 'servers (of servers) measured again at their own defaults, e.g. ["mysql:9.7"]',
                 "check_servers": 'the run-length check\'s flavors, named by servers (of servers), e.g. ["mysql:8.0"]',
                 "check_tests": 'the run-length check\'s tests, e.g. ["point-query", "update-nonindex"]',
                 "check_factor": "how many times longer the check's windows are",
                 "check_repeats": "the run-length check's windows (0: no check)",
                 "ablation_servers": 'the regression ablation\'s MySQL servers, e.g. ["mysql:5.7", "mysql:8.0"]',
                 "ablation_repeats": "the ablation's windows (0: no ablation)",
                 "profile_tests": 'the tests profiled with perf (cpu-clock), e.g. ["point-query"]',
                 "profile_servers": 'the servers (of servers) profiled, e.g. ["mysql:8.0", "mysql:9.7"]',
                 "profile_repeats": "the profile's windows (0: no profile)",
                 "instances": "independently started sets of servers per group (the windows spread over them)",
                 "slice_s": "the seconds of each client's turn alone in a window (0: the servers at once)"}
    engines = PARTS
    order = "abba"
    # write-only's DELETE and INSERT and delete's can deadlock at more than one thread: sysbench retries
    # the transaction and counts an error, which the run notes show
    tolerates = ("errors",)
    empty_until_published = True  # the chapter is built before its first publication

    def adjust(self, sc: Scale, scale: str, cpus: Cpus, overrides: dict) -> Scale:
        check_names(sc.tests, TESTS, "test")
        check_names(sc.check_tests, TESTS, "test")
        check_names(sc.profile_tests, TESTS, "test")
        for what, specs in (("own_defaults", sc.own_defaults), ("check_servers", sc.check_servers),
                            ("ablation_servers", sc.ablation_servers), ("profile_servers", sc.profile_servers)):
            for spec in specs:
                self.engines.check(spec)
        for spec in sc.ablation_servers:
            if not PARTS.of(flavor_of_spec(spec)).ablation:
                raise DbexpError(f"bad ablation server {spec!r}: the regression ablation changes InnoDB and MySQL "
                                 "settings; valid are MySQL servers")
        check_whole(sc.instances, "instances")
        if sc.check_repeats > sc.repeats:
            raise DbexpError(f"bad check_repeats {sc.check_repeats!r}: the run-length check runs in the main "
                             f"windows' repeats, expected 0 to the repeats ({sc.repeats})")
        if sc.slice_s < 0:
            raise DbexpError(f"bad slice_s {sc.slice_s!r}: expected seconds, 0 (the servers at once) or more")
        keep = lambda given: tuple(s for s in given if s in sc.servers)  # noqa: E731
        return dataclasses.replace(sc, own_defaults=keep(sc.own_defaults),
                                   check_servers=keep(sc.check_servers) if sc.check_repeats > 0 else (),
                                   ablation_servers=keep(sc.ablation_servers) if sc.ablation_repeats > 0 else (),
                                   profile_servers=keep(sc.profile_servers) if sc.profile_repeats > 0 else ())

    @staticmethod
    def server(spec: str, cpuset: str, role: str) -> ServerConfig:
        part = PARTS.of(flavor_of_spec(spec))
        settings = {"baseline": part.baseline_settings, "twin": part.twin_settings,
                    "own defaults": part.own_default_settings}[role]()
        # the part's settings are whole: the baseline's hold the comparable settings, own defaults none
        return Chapter.server_config(spec, cpuset, settings, comparable=False)

    def workload(self, sc: Scale, test: str, cpus: Cpus, factor: int = 1) -> Workload:
        t = TESTS[test]
        return Workload(t.script, sc.threads, sc.duration_s * factor, 1, sc.table_size, cpuset=cpus.client,
                        options=t.options)

    def roles(self, sc: Scale, specs: list[str]) -> list[tuple[str, str]]:
        """(spec, role) of one flavor's group, in the window's start order."""
        out = [(spec, "baseline") for spec in specs]
        if sc.twin and specs:
            out.insert(1, (specs[0], "twin"))
        out += [(spec, "own defaults") for spec in specs if spec in sc.own_defaults]
        return out

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        main, ablation, profile = [], [], []
        for flavor, specs in by_flavor(sc.servers).items():
            members = self.roles(sc, specs)
            configs = {(s, r): self.server(s, cpus.server, r) for s, r in members}
            for test in sc.tests:
                wl = self.workload(sc, test, cpus)
                for spec, role in members:
                    main.append(Point(configs[(spec, role)], VersionsPoint(test, role, slice_s=sc.slice_s), wl, group=f"versions {flavor}",
                                      together=f"{flavor} {test}"))
            # the check's windows run in the main group, on the same servers as the main ones, in the first
            # check_repeats repeats: only their length differs (the CPU per statement also depends on the
            # server start and on how many servers share the CPU's caches)
            if len([s for s, r in members if s in sc.check_servers and r == "baseline"]) > 1:
                for test in sc.check_tests:
                    wl = self.workload(sc, test, cpus, sc.check_factor)
                    for spec, role in members:
                        main.append(Point(configs[(spec, role)], VersionsPoint(test, role, sc.check_factor, slice_s=sc.slice_s),
                                          wl, group=f"versions {flavor}", together=f"{flavor} {test} x{sc.check_factor}, every server",
                                          repeats=sc.check_repeats))
        if sc.ablation_servers:
            ablation = self.ablation_points(sc, cpus)
        for flavor, specs in by_flavor(sc.profile_servers).items():
            for test in sc.profile_tests if len(specs) > 1 else ():
                wl = self.workload(sc, test, cpus)
                for spec in specs:
                    profile.append(Point(self.server(spec, cpus.server, "baseline"), VersionsPoint(test, "profile", slice_s=sc.slice_s), wl,
                                         group=f"versions profile {flavor}", together=f"profile {flavor} {test}"))
        spread = lambda repeats: min(sc.instances, max(repeats, 1))  # noqa: E731 (a part's instances)
        return [Part(main, sc.repeats, spread(sc.repeats)), Part(ablation, sc.ablation_repeats, spread(sc.ablation_repeats)),
                Part(profile, sc.profile_repeats)]

    def ablation_points(self, sc: Scale, cpus: Cpus) -> list[Point]:
        """Every configuration's window of the ablation's versions. A group of servers per set of startup
        settings (the configuration's settings less SWITCHED ones, on every version): the configurations
        that share it run on its servers, each window's SWITCHED settings made first (reset)."""
        wl = self.workload(sc, ABLATION_TEST, cpus)
        per_server = {spec: PARTS.of(flavor_of_spec(spec)).ablation_settings() for spec in sc.ablation_servers}
        startup: dict[str, str] = {}  # configuration -> its group's name (the first configuration started so)
        out = []
        for config in configurations():
            started = tuple(tuple(sorted((k, v) for k, v in per_server[spec][config][0].items() if k not in SWITCHED))
                            for spec in sc.ablation_servers)
            group = startup.setdefault(started, config)
            for spec in sc.ablation_servers:
                settings, client = per_server[spec][config]
                fixed = {k: v for k, v in settings.items() if k not in SWITCHED}
                switched = tuple((k, v) for k, v in settings.items() if k in SWITCHED)
                out.append(Point(Chapter.server_config(spec, cpus.server, fixed, comparable=False),
                                 VersionsPoint(ABLATION_TEST, "ablation", 1, config, sc.slice_s, switched),
                                 dataclasses.replace(wl, options=wl.options + client),
                                 group=f"versions ablation {group}", together=f"ablation {config}"))
        return out

    def reset(self, server, point: Point, state) -> None:
        """The table as prepared before every window: the rows an insert window added deleted again, the rows
        a delete window removed inserted again (dbexp.workloads.table_state), and the cleanup caught up with
        earlier windows' writes (the flavor's "cleanup" capability: InnoDB's purge; PostgreSQL's VACUUM, which
        also sets the visibility map that index-only scans read)."""
        with closing(server.connect(point.workload.database)) as conn:
            for name, value in point.params.switched:
                server.flavor.capability("set_global").set(conn, name, value)
            restore_rows(conn, point.workload.table_size)
            server.flavor.capability("cleanup").catch_up(conn, "sbtest1")

    def precondition(self, server, point: Point, state) -> dict:
        """The table holds exactly the rows it was prepared with, the cleanup has caught up, and the window's
        switched settings read back as set."""
        with closing(server.connect(point.workload.database)) as conn:
            rows = int(query(conn, "SELECT count(*) FROM sbtest1")[0][0])
            out = {f"sbtest1 holds {point.workload.table_size:,} rows": (rows == point.workload.table_size, rows)}
            for name, value in point.params.switched:
                seen = str(query(conn, f"SELECT @@GLOBAL.{name}")[0][0])
                out[f"{name} = {value}"] = (same_setting(seen, value), seen)
            return {**out, **server.flavor.capability("cleanup").state(conn, "sbtest1")}

    def session(self, server):
        import contextlib

        PARTS.of(server.flavor).prepare_counting(server)
        return contextlib.nullcontext(None)

    def measure_together(self, servers: list, points: list[Point], states: list) -> list[Measured]:
        if points[0].params.role == "profile":
            return self.profiled(servers, points)
        return self.window(servers, points)

    def window(self, servers: list, points: list[Point]) -> list[Measured]:
        got = measure_together([(server, point.workload) for server, point in zip(servers, points)],
                               slice_s=points[0].params.slice_s or None)
        for server, m in zip(servers, got):
            source, name = PARTS.of(server.flavor).pool_reads
            reads = [c["delta"] for c in m.counters if c.get("source") == source and c.get("name") == name]
            if not reads:
                raise DbexpError(f"{server.flavor.name} {server.version} reported no {name} counter in the window")
            m.measurements["pool_reads"] = (float(reads[0]), "count")
        return got

    def profiled(self, servers: list, points: list[Point]) -> list[Measured]:
        """A window with perf recording the server CPU: each server's samples by symbol (its top
        PROFILE_SYMBOLS, the rest summed) as counters of source 'perf', and its samples in all."""
        prof = CpuProfile(servers[0].config.cpuset, pin=points[0].workload.cpuset).start()
        try:
            got = self.window(servers, points)
            samples = prof.stop()
        finally:
            prof.close()
        for server, m in zip(servers, got):
            counts = samples.of(server_pids(server))
            if not counts:
                raise DbexpError(f"perf recorded no sample of {server.flavor.name} {server.version} in its window")
            m.counters += [{"source": "perf", "name": sym, "before": 0.0, "after": float(n), "delta": float(n)}
                           for sym, n in top(counts, PROFILE_SYMBOLS).items()]
            m.measurements["profile_samples"] = (float(sum(counts.values())), "count")
            m.measurements["profile_hz"] = (float(samples.hz), "Hz")
        return got

    # claims and findings: claims.py and findings.py, found by Chapter


CHAPTER = Versions()
