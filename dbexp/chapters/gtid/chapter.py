"""The gtid chapter's design and measurement.

Per version, one server per configuration (configs.CONFIGS, settings from the engine part in
engines/innodb.py), all five started together and measured in one window, each with its own sysbench
client, but never two at once: the clients take turns of ``slice_s`` (dbexp.experiments.rotation), so
one server works at a time while a slow spell of the host falls on all five alike. A window's start
order walks forward, then backward (ABBA), on each of ``instances`` independently started sets of
servers (the repeats spread over them). Before each window the servers' state is checked: the
configuration's settings in effect and purge caught up (engines/innodb.py).

The run-length check, a second part: on ``check_servers``, one test and thread count measured again
in windows ``check_factor`` times as long, ``check_repeats`` of them, so that the analysis can show
each comparison's answer does not depend on the run's length (analysis.length_check). A point's
``length`` says which it is (1: the scale's length).

Per window, beside what measure_together takes in turns (every turn passing once its server is quiet, the
figures per query counted in each server's own turns: dbexp.experiments.measure.measure_in_turns): binlog bytes
per commit (SHOW BINARY LOGS before and after) and the GTIDs assigned (gtid_executed before and after), the
witness that every commit of a *binlog + GTID* run got one and a *binlog* run's none.

Time at default scale: the published sweeps took 14.9 minutes, 5.46 s per window of 5 s and about 6 minutes
starting servers and loading their tables; windows in turns that wait for quiet took 5.17 to 5.24 s for five
MySQL 8.0.15 servers (2026-12-07, insert and range scans), so about 14.5 minutes, under 20.
"""

from __future__ import annotations

import dataclasses
from contextlib import closing
from dataclasses import dataclass

from dbexp.catalog import offline_series
from dbexp.chapters.gtid.configs import CONFIGS, TESTS
from dbexp.chapters.gtid.engines import GtidEngine, innodb
from dbexp.errors import DbexpError
from dbexp.experiments import rotation
from dbexp.experiments.chapter import Chapter, Cpus, Part, Results, check_names
from dbexp.experiments.measure import Measured, measure_together
from dbexp.experiments.sweep import Point
from dbexp.servers.engines import Engines
from dbexp.servers.registry import flavor_of_spec
from dbexp.workloads.sysbench import Workload

WHY_MYSQL = "GTIDs as measured here are MySQL's: its gtid_mode, binlog and performance_schema settings"
MYSQL = offline_series(flavors=("mysql",))  # every MySQL series the catalog builds offline, oldest first
PARTS: Engines[GtidEngine] = Engines("gtid", {"mysql": innodb.MySQLBinlog}, skipped={
    "postgres": f"{WHY_MYSQL}; PostgreSQL has no binlog and no GTIDs",
    "mariadb": f"{WHY_MYSQL}; MariaDB's GTIDs are its own, always on with its binlog, with no gtid_mode"})


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    tests: tuple[str, ...]
    threads: tuple[int, ...]
    duration_s: int
    repeats: int
    table_size: int = 100_000
    warmup_s: float = 3.0
    check_servers: tuple[str, ...] = ()
    check_test: str = "update-non-index"
    check_threads: int = 1
    check_factor: int = 10
    check_repeats: int = 0
    instances: int = 1  # independently started sets of servers per version, the repeats spread over them
    slice_s: float = 0.1  # each client's turn alone (one active server at a time)


@dataclass(frozen=True)
class GtidPoint:
    config: str
    test: str
    length: int = 1  # the run's length as a multiple of the scale's (the run-length check's are longer)
    slice_s: float = 0.0  # each client's turn alone in the window (0: the servers at once, as first published)


class Gtid(Chapter):
    name = "gtid"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline",), ("insert", "update-non-index"), (1,), 2, 2, 10_000, 1.0),
        "default": Scale(MYSQL, tuple(TESTS), (1,), 5, 6, check_servers=("mysql:8.0@offline",), check_factor=5,
                         check_repeats=2, instances=2),
        "full": Scale(MYSQL, tuple(TESTS), (1, 2), 20, 10, 1_000_000, 20.0, check_servers=MYSQL,
                      check_repeats=3, instances=2),
    }
    knob_help = {"servers": 'the servers (MySQL only), e.g. ["mysql:8.0", "mysql:8.4"]',
                 "tests": 'the tests, e.g. ["insert", "update-inlist"]', "threads": "the client threads, e.g. [1, 2]",
                 "duration_s": "the seconds per run", "repeats": "the repeats (ABBA pairs)",
                 "table_size": "the rows in each sysbench table", "warmup_s": "the seconds of warm-up before each run",
                 "check_servers": 'the run-length check\'s servers (of servers), e.g. ["mysql:8.0"]',
                 "check_test": "the run-length check's test", "check_threads": "the run-length check's client threads",
                 "check_factor": "how many times longer the check's windows are",
                 "check_repeats": "the run-length check's windows (0: no check)",
                 "instances": "independently started sets of servers per version (the repeats spread over them)",
                 "slice_s": "the seconds of each client's turn alone (one server works at a time)"}
    engines = PARTS
    order = "abba"
    add_official = True
    # write-only's DELETE and INSERT, and update-index's changed keys, can deadlock at two threads:
    # sysbench retries the transaction and counts an error, which the run notes show
    tolerates = ("errors",)

    def adjust(self, sc: Scale, scale: str, cpus: Cpus, overrides: dict) -> Scale:
        check_names(sc.tests, TESTS, "test")
        if not sc.slice_s > 0:
            raise DbexpError(f"bad slice_s {sc.slice_s!r}: expected seconds above 0 (each client's turn alone)")
        check_names((sc.check_test,), TESTS, "test")
        # the check runs on those of its servers this run measures (else on the first of them)
        kept = tuple(s for s in sc.check_servers if s in sc.servers) or tuple(sc.servers[:1])
        return dataclasses.replace(sc, check_servers=kept if sc.check_repeats > 0 else ())

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        points = []
        for spec in sc.servers:
            servers = self.servers(spec, cpus.server)
            for test in sc.tests:
                for t in sc.threads:
                    wl = Workload(TESTS[test], t, sc.duration_s, 1, sc.table_size, cpuset=cpus.client)
                    for config in CONFIGS:
                        points.append(Point(servers[config], GtidPoint(config, test, slice_s=sc.slice_s), wl, group=f"gtid {spec}",
                                            together=f"{spec} {test} {t}t"))
        longer = []
        for spec in sc.check_servers if sc.check_repeats > 0 else ():
            servers = self.servers(spec, cpus.server)
            wl = Workload(TESTS[sc.check_test], sc.check_threads, sc.duration_s * sc.check_factor, 1, sc.table_size,
                          cpuset=cpus.client)
            for config in CONFIGS:
                longer.append(Point(servers[config], GtidPoint(config, sc.check_test, sc.check_factor, sc.slice_s), wl,
                                    group=f"gtid {spec} length check",
                                    together=f"{spec} {sc.check_test} {sc.check_threads}t x{sc.check_factor}"))
        return [Part(points, sc.repeats, sc.instances), Part(longer, sc.check_repeats)]

    @staticmethod
    def servers(spec: str, cpuset: str) -> dict:
        """One server per configuration, each on the server CPUs."""
        settings = PARTS.of(flavor_of_spec(spec)).configurations()
        return {config: Chapter.server_config(spec, cpuset, settings[config]) for config in CONFIGS}

    def run(self, scale: str = "smoke", **kwargs) -> Results:
        """Chapter.run, each run's ``active_servers`` as its turns show it (rotation.active_servers): the runs
        stored before turns waited for the statement in flight ran all five clients at once before the first
        mark and after the second, whatever they stored."""
        res = super().run(scale, **kwargs)
        return dataclasses.replace(res, wide=res.wide.assign(active_servers=rotation.active_servers(res.wide))) \
            if len(res.wide) else res

    def reset(self, server, point: Point, state) -> None:
        """Purge caught up with the previous window's writes (the flavor's "cleanup" capability)."""
        with closing(server.connect()) as conn:
            server.flavor.capability("cleanup").catch_up(conn, "sbtest1")

    def precondition(self, server, point: Point, state) -> dict:
        """The configuration's settings in effect, and no purge backlog."""
        with closing(server.connect()) as conn:
            return PARTS.of(server.flavor).declared_state(conn, point.server.settings)

    def measure_together(self, servers: list, points: list[Point], states: list) -> list[Measured]:
        parts = [PARTS.of(server.flavor) for server in servers]
        conns = [server.connect() for server in servers]
        try:
            before = [(part.binlog_bytes(c), part.gtids_executed(c)) for part, c in zip(parts, conns)]
            got = measure_together([(server, point.workload) for server, point in zip(servers, points)],
                                   slice_s=points[0].params.slice_s or None)
            after = [(part.binlog_bytes(c), part.gtids_executed(c)) for part, c in zip(parts, conns)]
        finally:
            for c in conns:
                c.close()
        for m, (b, gb), (a, ga) in zip(got, before, after):
            trx = m.measurements["transactions"][0]
            m.measurements["gtids_assigned"] = (ga - gb, "count")  # the witness that each commit got one (or none)
            if trx:
                m.measurements["gtids_per_commit"] = ((ga - gb) / trx, "count")
            if b is not None and trx:
                m.measurements["binlog_bytes_per_commit"] = ((a - b) / trx, "bytes")
        return got

    # claims and findings: claims.py and findings.py, found by Chapter


CHAPTER = Gtid()
