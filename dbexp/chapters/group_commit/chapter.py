"""The group_commit chapter's design, which engine part serves which server (``PARTS``), and its
measurement.

sysbench ``oltp_update_non_index`` (and ``oltp_insert`` at the durable setting), every statement its
own transaction, at growing client threads, under each configuration of the commit path. Per run the
engine part's commit counters are read before and after (``gc_<name>``: their difference); a probe
run also counts with bpftrace where a commit waits (``probe_<name>``, ``probe_k<k>``), right after a
run without probes at the same point (``beside``: the probes' cost).

Time at default scale, from the published runs (issue 32's design: 2 instances per server and binlog
setting, one active server): 27.1 minutes in 3 sweeps on the Intel Xeon VM, over the chapter's 20. A run
costs its seconds plus about 0.5 s (settings, precondition, counters), a probe run 3.7 s more (bpftrace
attaching and detaching), and each server start about 7.7 s with its table and warm-up (46 starts:
each server's main curve and its other configurations start their own servers, once per instance and
binlog setting): 268 runs, 20.7 minutes, plus 5.9 minutes of starts. Now 2 s runs (the run-length check,
10 times as long, says whether that is long enough) and PostgreSQL 12 and 18 only (LEFT_OUT: the WAL
flush path they bracket): main curve 84 runs x 2.5 s, probe runs 30 x 5.7 s, other configurations
and inserts 96 x 2.4 s, 6 checks x 20.7 s, 38 starts x 7.7 s = 210 + 171 + 230 + 124 + 293 = 1,028 s,
about 17 minutes.
"""

from __future__ import annotations

import time
from contextlib import closing
from dataclasses import dataclass


from dbexp.catalog import offline_series
from dbexp.experiments.chapter import Chapter, Cpus, Part, Results, check_names, check_whole, left_out_note
from dbexp.experiments.measure import Measured, measure
from dbexp.experiments.sweep import Point
from dbexp.metrics import tracing
from dbexp.servers.engines import Engines
from dbexp.servers.registry import flavor_of_spec
from dbexp.servers.options import same_setting
from dbexp.servers.sql import query
from dbexp.waits import poll
from dbexp.workloads.sysbench import Workload

from .commit_probe import CommitProbe
from .engines import CommitPath, innodb, mariadb, postgres

PARTS: Engines[CommitPath] = Engines("group_commit", {"mysql": innodb.BinlogGroupCommit,
                                                     "mariadb": mariadb.MariaDBGroupCommit,
                                                     "postgres": postgres.WalFlush})


def part_of_rows(flavors) -> list[type[CommitPath]]:
    """The part class serving each of ``flavors`` (a stored results' ``flavor`` column)."""
    known = {name: PARTS.part_for_name(name) for name in set(flavors)}
    return [known[name] for name in flavors]


@dataclass(frozen=True)
class Config:
    label: str  # as points and results name it
    binlog: bool  # the binlog on (flavors that have one)
    sync_log: bool  # sync_binlog = 1 (else 0)
    delay: bool  # a leader waits delay_us for more commits (MySQL binlog_group_commit_sync_delay, ...)
    binlog_only: bool = False  # only for flavors with a binlog


CONFIGS = (
    Config("durable", True, True, False),
    Config("sync_binlog=0", True, False, False, binlog_only=True),
    Config("sync delay", True, True, True),
    Config("no binlog", False, True, False, binlog_only=True),
)
CONFIG_NAMES = tuple(c.label for c in CONFIGS)


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    threads: tuple[int, ...]
    probe_threads: tuple[int, ...]  # probe runs at these thread counts (durable, update)
    configs: tuple[str, ...]
    duration_s: int
    repeats: int  # of the durable update workload at every thread count (the main curve) and of the probe runs
    other_threads: tuple[int, ...]  # the other configurations and the insert workload: these threads
    other_repeats: int  # ... and repeats
    delay_us: int = 300
    table_size: int = 10000
    warmup_s: float = 2.0
    # the run-length check: the durable update workload at these threads, check_x times as long, on the
    # newest server of each engine (the last of its engine in the list) or on every server
    check_threads: tuple[int, ...] = ()
    check_x: int = 10
    check_every_server: bool = False
    instances: int = 1  # independently started servers per server and binlog setting, the repeats spread over them


@dataclass(frozen=True)
class GroupPoint:
    config: str
    delay_us: int
    probe: bool = False
    beside: bool = False  # a run without probes right before a probe run, where the main curve has none there
    check: bool = False  # the run-length check: check_x times as long as the other runs


# the catalog's offline series, PostgreSQL 13, 15 and 17 not measured
ALL_SERVERS = offline_series(without=("postgres:13", "postgres:15", "postgres:17"))
# what default scale leaves out of ALL_SERVERS to stay within 20 minutes on a 2-CPU machine, and why
# (the module's docstring has the estimate; the page's notes say it where a run lacks them)
_BRACKETED = ("PostgreSQL 12 and 18 bracket the WAL flush path that every commit waits on, and the chapter's 20 "
              "minutes on a 2-CPU machine hold two PostgreSQL beside five MySQL and MariaDB servers (full scale "
              "measures it)")
LEFT_OUT = {"postgres:14@offline": _BRACKETED, "postgres:16@offline": _BRACKETED}
DEFAULT_SERVERS = tuple(s for s in ALL_SERVERS if s not in LEFT_OUT)
SCRIPTS = ("oltp_update_non_index", "oltp_insert")


class GroupCommit(Chapter):
    name = "group_commit"
    Scale = Scale
    # default: about 17 minutes (the module's docstring): the main curve and the probe runs 3 repeats
    # each, spread over 2 instances; the other configurations and the insert workload 2 runs per point,
    # one per instance; one 20 s check per engine at 128 threads on each instance
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), (1, 8), (8,), ("durable", "no binlog"), 2, 1,
                       (1, 8), 1, warmup_s=0.5),
        "default": Scale(DEFAULT_SERVERS, (1, 8, 32, 128), (8, 128), CONFIG_NAMES, 2, 3, (32, 128), 2,
                         check_threads=(128,), instances=2),
        "full": Scale(ALL_SERVERS, (1, 2, 4, 8, 16, 32, 64, 128, 256, 512), (8, 32, 128, 512), CONFIG_NAMES,
                      10, 3, (1, 2, 4, 8, 16, 32, 64, 128, 256, 512), 3, check_threads=(8, 128),
                      check_every_server=True),
    }
    order = "abba"
    add_official = True
    engines = PARTS
    knob_help = {
        "servers": 'the servers, e.g. ["mysql:8.0", "postgres:17"]',
        "threads": "the client thread counts, e.g. [1, 4, 16, 64]",
        "probe_threads": "the thread counts of the probe runs, e.g. [8, 32]",
        "configs": 'the configurations, e.g. ["durable", "no binlog"]',
        "duration_s": "the seconds per run",
        "other_threads": "the thread counts of the other configurations and the insert workload",
        "repeats": "the repeats of the main curve and of the probe runs",
        "other_repeats": "the repeats of those",
        "delay_us": "a leader's wait for more commits in the sync delay configuration (µs)",
        "table_size": "the rows in the table",
        "warmup_s": "the seconds of warm-up before each run",
        "check_threads": "the thread counts of the run-length check, e.g. [128]",
        "check_x": "how many times as long the check's runs are",
        "check_every_server": "True: the check on every server (else the newest of each engine)",
        "instances": "independently started servers per server (the repeats spread over them)",
    }

    probes_skipped: str | None = None  # why this process could not probe (the probe points were left out)

    def adjust(self, sc: Scale, scale: str, cpus: Cpus, overrides: dict) -> Scale:
        check_names(sc.configs, CONFIG_NAMES, "configuration")
        check_whole(sc.threads, "thread count")
        check_whole(sc.instances, "instances")
        return sc

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        """Two parts. With ``repeats``: the durable update workload at ``threads`` and, where the engine
        can be probed, a probe run at each of ``probe_threads`` right after the run without probes at
        the same threads (its control: a ``beside`` run where the curve has none there). With
        ``other_repeats``: the other configurations and the insert workload at ``other_threads``, and
        the run-length check (``check_x`` times as long) on the newest server of each engine."""
        main, other = [], []
        wanted = sc.probe_threads and any(PARTS.of(flavor_of_spec(spec)).probe_site for spec in sc.servers)
        self.probes_skipped = tracing.unavailable() if wanted else None
        newest = {type(PARTS.of(flavor_of_spec(spec))): spec for spec in sc.servers}
        for spec in sc.servers:
            part = PARTS.of(flavor_of_spec(spec))
            checked = sc.check_every_server or newest[type(part)] == spec
            for cfg in CONFIGS:
                if cfg.label not in sc.configs or (cfg.binlog_only and not part.has_binlog):
                    continue
                binlog = cfg.binlog and part.has_binlog
                server = Chapter.server_config(spec, cpus.server, {**part.commit_settings(binlog),
                                                                   "max_connections": "600"})
                group = f"group_commit {spec} binlog={binlog}"
                params = GroupPoint(cfg.label, sc.delay_us if cfg.delay else 0)
                for script in SCRIPTS if cfg.label == "durable" else SCRIPTS[:1]:
                    is_main = cfg.label == "durable" and script == SCRIPTS[0]
                    if is_main and checked:
                        for t in sorted(set(sc.check_threads)):
                            wl = Workload(script, t, sc.duration_s * sc.check_x, 1, sc.table_size, cpuset=cpus.client)
                            other.append(Point(server, GroupPoint(cfg.label, 0, check=True), wl, group=group))
                    for t in sorted(set(sc.threads) | (set(sc.probe_threads) if is_main else set())):
                        wl = Workload(script, t, sc.duration_s, 1, sc.table_size, cpuset=cpus.client)
                        if is_main and t in sc.threads:
                            main.append(Point(server, params, wl, group=group))
                        elif not is_main and t in sc.other_threads:
                            other.append(Point(server, params, wl, group=group))
                        if is_main and t in sc.probe_threads and part.probe_site and not self.probes_skipped:
                            if t not in sc.threads:
                                main.append(Point(server, GroupPoint(cfg.label, 0, beside=True), wl, group=group))
                            main.append(Point(server, GroupPoint(cfg.label, 0, probe=True), wl, group=group))
        return [Part(main, sc.repeats, min(sc.instances, sc.repeats)),
                Part(other, sc.other_repeats, min(sc.instances, sc.other_repeats))]

    @staticmethod
    def _wanted(server, point: Point) -> dict[str, str]:
        """The settings a run declares: its configuration's dynamic ones, the binlog on or off where the
        engine has one, and the start-up settings of the commit path (as SHOW VARIABLES / pg_settings name them)."""
        p: GroupPoint = point.params
        cfg = next(c for c in CONFIGS if c.label == p.config)
        part = PARTS.of(server.flavor)
        out = {k: v for k, v in point.server.settings.items() if k in part.commit_settings(True) and k != "log_bin"}
        if part.has_binlog:
            out["log_bin"] = "ON" if "log_bin" in point.server.settings else "OFF"
        return {**out, **part.group_settings(cfg.sync_log, p.delay_us)}

    def reset(self, server, point: Point, state) -> None:
        """The configuration's dynamic settings (the flavor's "set_global" capability), then a wait until a new
        session sees them (PostgreSQL's reload reaches new sessions a moment later: sysbench's would start with
        the old value), before the checks."""
        p: GroupPoint = point.params
        cfg = next(c for c in CONFIGS if c.label == p.config)
        wanted = PARTS.of(server.flavor).group_settings(cfg.sync_log, p.delay_us)
        with closing(server.connect(point.workload.database)) as conn:
            for name, value in wanted.items():
                server.flavor.capability("set_global").set(conn, name, value)

        def seen_by_a_new_session() -> bool:
            with closing(server.connect(point.workload.database)) as conn:
                seen = {k.lower(): v for k, v in server.flavor.effective_settings(conn).items()}
            return all(same_setting(seen[k.lower()], v) for k, v in wanted.items() if k.lower() in seen)

        poll(seen_by_a_new_session, SETTINGS_WAIT_S, 0.05)  # the precondition then says whether they arrived

    def precondition(self, server, point: Point, state) -> dict:
        """Every setting the run declares in effect (read back where the server names it), and the table
        holding at least the rows it was prepared with (an insert run adds rows; nothing deletes them)."""
        with closing(server.connect(point.workload.database)) as conn:
            seen = {k.lower(): v for k, v in server.flavor.effective_settings(conn).items()}
            rows = int(query(conn, "SELECT count(*) FROM sbtest1")[0][0])
        out = {f"{k} {v}": (same_setting(seen[k.lower()], v), seen[k.lower()])
               for k, v in self._wanted(server, point).items() if k.lower() in seen}
        out[f"sbtest1 >= {point.workload.table_size:,} rows"] = (rows >= point.workload.table_size, rows)
        return out

    def measure(self, server, point: Point, state) -> Measured:
        p: GroupPoint = point.params
        flavor = server.flavor
        part = PARTS.of(flavor)
        conn = server.connect(point.workload.database)
        try:
            before = part.commit_counters(conn)
            if p.probe:
                with CommitProbe(server, part, pin=point.workload.cpuset) as probe:
                    got = measure(server, point.workload, sql_series=False)
            else:
                got = measure(server, point.workload, sql_series=False)
            time.sleep(part.counts_settle_s)  # counts some servers report only after the run's sessions exit
            after = part.commit_counters(conn)
        finally:
            conn.close()
        m = got.measurements
        for name in after:
            if name in before:
                m[f"gc_{name}"] = (after[name] - before[name], "bytes" if name.endswith("bytes") else "count")
        if p.probe:
            for name, value in probe.counts.items():
                m[f"probe_{name}"] = (float(value), "count")
            for k, n in probe.waits_hist:
                m[f"probe_k{k}"] = (float(n), "count")
            m["probe_stop_s"] = (probe.stop_s, "s")  # SIGINT to bpftrace's exit: detaching its probes
        return got

    def notes(self, res: Results) -> list[str]:
        """Why this process measured no probe runs, where it could not probe."""
        note = tracing.skip_note(self.probes_skipped)
        return [n for n in (note, left_out_note(LEFT_OUT, res)) if n]


SETTINGS_WAIT_S = 5.0  # how long a new setting may take to reach new sessions


CHAPTER = GroupCommit()
