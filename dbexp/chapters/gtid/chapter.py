"""The gtid chapter's design and measurement.

Per version, one server per configuration (configs.CONFIGS, settings from the engine part in
engines/innodb.py), all five started together and measured in one window, each with its own sysbench
client, but never two at once: the clients take turns of ``slice_s`` (dbexp.experiments.rotation), so
one server works at a time while a slow spell of the host falls on all five alike. The rotation goes
forward, then backward, so its first and last clients take two turns in a row at each change of direction:
each window turns the clients' order one more place (:func:`rotated`), so that no configuration always has
those places (each run stores its ``turn_place``). A window's start order walks forward, then backward
(ABBA), on each of ``instances`` independently started sets of servers (the repeats spread over them: two
windows on each of three at default, since the A/A intervals judged on held-out fits need instances more than
windows; issue 47). Before each window the servers' state is checked: the configuration's settings in effect
and purge caught up (engines/innodb.py).

The run-length check: on ``check_servers``, one test and thread count measured again in windows
``check_factor`` times as long, in the first ``check_repeats`` repeats of the same servers (no server
started for it), so that the analysis can show each comparison's answer does not depend on the run's length
(analysis.length_check). A point's ``length`` says which it is (1: the scale's length).

Per window, beside what measure_together takes in turns (every turn passing once its server is quiet, the
figures per query counted in each server's own turns: dbexp.experiments.measure.measure_in_turns): binlog bytes
per commit (SHOW BINARY LOGS before and after), the binlog's events per commit by type (SHOW BINLOG EVENTS from
where the window began, read after it: :func:`event_figures`) and the GTIDs assigned (gtid_executed before and
after), the witnesses that every commit of a *binlog + GTID* run got one and a *binlog* run's none; per server,
once, whether its binary turns GTIDs on by its own defaults (:meth:`Gtid.session`).

Time at default scale: the design before this one took 18.0 minutes (2026-12-07: 15.6 for its 450 runs, six
starts of five servers with 3 s of warm-up each, 5.7.22 73 s, 8.0.15 82 s, 9.7.4 46 s, and windows of 5 s taking
5.9 s; 2.2 for the run-length check on servers of its own). This one starts nine sets with 1 s of warm-up (about
10 s less each) and measures the same 90 windows and the check's two on the main servers: about 8.6 + 8.9 + 0.9
minutes, 18.5 to 19, under 20.
"""



from __future__ import annotations

import dataclasses
from contextlib import closing, nullcontext
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
    turned: bool = True  # the clients' order turned one place each window (rotated; runs stored before: not)


class Gtid(Chapter):
    name = "gtid"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline",), ("insert", "update-non-index"), (1,), 2, 2, 10_000, 1.0),
        # default: 6 windows a point, two on each of 3 instances (the A/A intervals' coverage on held-out fits
        # needs the instances more than the windows: issue 47), warm-up 1 s
        "default": Scale(MYSQL, tuple(TESTS), (1,), 5, 6, warmup_s=1.0, check_servers=("mysql:8.0@offline",),
                         check_factor=5, check_repeats=2, instances=3),
        "full": Scale(MYSQL, tuple(TESTS), (1, 2), 20, 12, 1_000_000, 20.0, check_servers=MYSQL,
                      check_repeats=3, instances=4),
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
        if sc.check_repeats > sc.repeats:
            raise DbexpError(f"bad check_repeats {sc.check_repeats!r}: expected at most the repeats ({sc.repeats}), "
                             "the check's windows running in the main windows' first repeats")
        return dataclasses.replace(sc, check_servers=kept if sc.check_repeats > 0 else ())

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        """Per version, test and threads, one window of the five configurations' servers; the run-length check's
        longer windows on the same servers (the check's servers' groups), in the first ``check_repeats``
        repeats only (so on the first instances: no server is started for it)."""
        points = []
        for spec in sc.servers:
            servers = self.servers(spec, cpus.server)
            for test in sc.tests:
                for t in sc.threads:
                    wl = Workload(TESTS[test], t, sc.duration_s, 1, sc.table_size, cpuset=cpus.client)
                    for config in CONFIGS:
                        points.append(Point(servers[config], GtidPoint(config, test, slice_s=sc.slice_s), wl,
                                            group=f"gtid {spec}", together=f"{spec} {test} {t}t"))
            if spec in sc.check_servers and sc.check_repeats > 0:
                wl = Workload(TESTS[sc.check_test], sc.check_threads, sc.duration_s * sc.check_factor, 1,
                              sc.table_size, cpuset=cpus.client)
                for config in CONFIGS:
                    points.append(Point(servers[config], GtidPoint(config, sc.check_test, sc.check_factor, sc.slice_s),
                                        wl, group=f"gtid {spec}", repeats=sc.check_repeats,
                                        together=f"{spec} {sc.check_test} {sc.check_threads}t x{sc.check_factor}"))
        return [Part(points, sc.repeats, sc.instances)]

    @staticmethod
    def servers(spec: str, cpuset: str) -> dict:
        """One server per configuration, each on the server CPUs."""
        settings = PARTS.of(flavor_of_spec(spec)).configurations()
        return {config: Chapter.server_config(spec, cpuset, settings[config]) for config in CONFIGS}

    def __init__(self, name: str | None = None):
        super().__init__(name)
        self._windows: dict[str, int] = {}  # windows measured per ``together`` label, for their clients' order
        self._defaults: dict[str, dict[str, bool]] = {}  # each image's own GTID defaults, read once

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

    def session(self, server):
        """Per server, once: whether its binary turns GTIDs on by its own defaults (the engine part's
        compiled_defaults, asked once per image in a process: the five servers of a version share it), stored with
        each of its runs."""
        key = getattr(server.image, "id", None) or f"{server.flavor.name} {server.flavor.version}"
        if key not in self._defaults:
            self._defaults[key] = PARTS.of(server.flavor).compiled_defaults(server)
        return nullcontext({"defaults": self._defaults[key]})

    def measure_together(self, servers: list, points: list[Point], states: list) -> list[Measured]:
        """One window of a version's five servers in turns (measure_together), the clients in the order given
        rotated by one more place each window of the same test (:func:`rotated`: the rotation's first and last
        client, which take two turns in a row at every change of direction, are not the same configurations in
        every window), with the binlog and GTIDs read around it."""
        label = points[0].together
        order = rotated(len(points), self._windows.get(label, 0))
        self._windows[label] = self._windows.get(label, 0) + 1
        servers, points, states = ([xs[i] for i in order] for xs in (servers, points, states))
        parts = [PARTS.of(server.flavor) for server in servers]
        conns = [server.connect() for server in servers]
        try:
            before = [(part.binlog_bytes(c), part.gtids_executed(c), part.binlog_end(c)) for part, c in zip(parts, conns)]
            got = measure_together([(server, point.workload) for server, point in zip(servers, points)],
                                   slice_s=points[0].params.slice_s or None)
            after = [(part.binlog_bytes(c), part.gtids_executed(c)) for part, c in zip(parts, conns)]
            events = [part.binlog_events(c, end, EVENTS_READ) if end else None
                      for part, c, (_, _, end) in zip(parts, conns, before)]
        finally:
            for c in conns:
                c.close()
        for place, (m, (b, gb, _), (a, ga), ev, state) in enumerate(zip(got, before, after, events, states)):
            trx = m.measurements["transactions"][0]
            m.measurements["gtids_assigned"] = (ga - gb, "count")  # the witness that each commit got one (or none)
            if trx:
                m.measurements["gtids_per_commit"] = ((ga - gb) / trx, "count")
            if b is not None and trx:
                m.measurements["binlog_bytes_per_commit"] = ((a - b) / trx, "bytes")
            if ev is not None:
                m.measurements.update(event_figures(ev))
            m.measurements["turn_place"] = (float(place), "index")  # its client's place in the rotation's order
            m.measurements["turn_ends"] = (float(place in (0, len(got) - 1)), "bool")  # two turns in a row
            for name, on in (state or {}).get("defaults", {}).items():
                m.measurements[f"default_{name}_on"] = (float(on), "bool")
        back = [None] * len(got)
        for i, m in zip(order, got):
            back[i] = m
        return back

    # claims and findings: claims.py and findings.py, found by Chapter


EVENTS_READ = 2000  # binlog events read after each window, from where it began (SHOW BINLOG EVENTS)
# the events per commit stored with a run: measurement -> the event types it counts
EVENT_TYPES = {"binlog_events_per_commit": None, "binlog_gtid_events_per_commit": ("Gtid",),
               "binlog_anonymous_gtid_events_per_commit": ("Anonymous_Gtid",),
               "binlog_table_map_events_per_commit": ("Table_map",),
               "binlog_rows_events_per_commit": ("Write_rows", "Update_rows", "Delete_rows", "Write_rows_v1",
                                                 "Update_rows_v1", "Delete_rows_v1"),
               "binlog_query_events_per_commit": ("Query",)}


def rotated(n: int, k: int) -> list[int]:
    """The order of ``n`` clients in a window, the ``k``-th of its test: the order given, turned by ``k``
    places (0 1 2 3 4, then 1 2 3 4 0, ...). The rotation's turns go forward, then backward, so its first and
    last client take two turns in a row, warm, at each change of direction; turned each window, every
    configuration takes those places as often as the others over ``n`` windows."""
    k %= n
    return list(range(k, n)) + list(range(k))


def event_figures(counts: dict[str, float]) -> dict[str, tuple[float, str]]:
    """A window's binlog events (the engine part's binlog_events: counts by type, "transactions") as
    measurements per commit (EVENT_TYPES), and the commits they were counted over."""
    n = counts.get("transactions", 0.0)
    out = {"binlog_events_read_commits": (n, "count")}
    if not n:
        return out
    for name, types in EVENT_TYPES.items():
        k = sum(v for t, v in counts.items() if t != "transactions" and (types is None or t in types))
        out[name] = (k / n, "count")
    return out


CHAPTER = Gtid()
