"""Group commit: as concurrency grows, how many commits share one durable write, and how many
times is each waiting committer woken for it?

sysbench ``oltp_update_non_index`` (and ``oltp_insert`` at the durable setting), every statement its
own transaction, at growing client threads. Per run, from the server's own counters (before and after
the run; dbexp.servers' ``commit_counters``):

- C, commits: the transactions sysbench completed (each event is one autocommit statement);
- G, syncs of the log a durable commit waits on: MySQL's binlog (performance_schema's file I/O on the
  binlog files) where it is on, else the redo log (``Innodb_os_log_fsyncs``); MariaDB also counts its
  groups itself (``Binlog_group_commits``); PostgreSQL's WAL (``pg_stat_wal.wal_sync`` on 14 to 17,
  ``pg_stat_io`` on 18; 12 and 13 have no such count);
- W, waits of committing sessions on their group's wakeup: MySQL ``MYSQL_BIN_LOG::COND_done`` (one
  condition, broadcast when a group is done), MariaDB ``THD::COND_wakeup_ready`` (each follower's own),
  counted by performance_schema (instrument enabled at start, COUNTED).

Group size is C / G. Every group has one leader, so C - G commits were followers; a follower that waits
k times before its own commit is done has an *activation efficiency* of 1 / k, and over a run the
efficiency is at most (C - G) / W (W also counts waits of commits that then led a group).

A probe run (apart from the throughput runs) counts it exactly where it happens, with bpftrace. On
MySQL: every ``Stage_manager::enroll_for`` (a session joining a stage's queue; a follower waits inside
it until its group is done), the ``pthread_cond_wait`` calls made inside it, and every
``MYSQL_BIN_LOG::sync_binlog_file`` and ``ordered_commit``. On PostgreSQL: every ``XLogFlush``, the
``LWLockAcquireOrWait`` calls inside it that returned after a wait for WALWriteLock, and every
``issue_xlog_fsync``. The probes' cost is the QPS ratio of the probe run to a run without probes
measured right before it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dbexp.experiments import verdicts
from dbexp.experiments.chapter import Chapter, Cpus, Part, Results, check_names
from dbexp.experiments.measure import Measured, measure
from dbexp.experiments.sources import BINWANG
from dbexp.experiments.sweep import Point
from dbexp.metrics import tracing
from dbexp.metrics.uprobe import Bpftrace, exported, mapped_library, maps, server_binary
from dbexp.servers.mysql import MySQL
from dbexp.servers.postgres import Postgres
from dbexp.servers.registry import flavor_of_spec
from dbexp.workloads.sysbench import Workload

SOURCE_EFFICIENCY = 0.527  # the source's activation efficiency, measured in a patched 8.0


@dataclass(frozen=True)
class Config:
    name: str
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
CONFIG_NAMES = tuple(c.name for c in CONFIGS)


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    threads: tuple[int, ...]
    probe_threads: tuple[int, ...]  # MySQL: probe runs at these thread counts (durable, update)
    configs: tuple[str, ...]
    duration_s: int
    repeats: int  # of the durable update workload at every thread count (the chapter's main curve)
    other_threads: tuple[int, ...]  # the other configurations, the insert workload and the probes: these threads
    other_repeats: int  # ... and repeats
    delay_us: int = 300
    table_size: int = 10000
    warmup_s: float = 2.0


@dataclass(frozen=True)
class GroupPoint:
    config: str
    delay_us: int
    probe: bool = False
    beside: bool = False  # a run without probes measured right before a probe run: the probes' cost


DEFAULT_SERVERS = ("mysql:5.7@offline", "mysql:8.0@offline", "mariadb:10.11@offline", "postgres:12@offline",
                   "postgres:14@offline", "postgres:16@offline", "postgres:18@offline")
SCRIPTS = ("oltp_update_non_index", "oltp_insert")


class GroupCommit(Chapter):
    name = "group_commit"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), (1, 8), (8,), ("durable", "no binlog"), 2, 1,
                       (1, 8), 1),
        "default": Scale(DEFAULT_SERVERS, (1, 2, 4, 8, 16, 32, 64, 128), (8, 32, 128), CONFIG_NAMES, 2, 2,
                         (1, 8, 32, 128), 1),
        "full": Scale(DEFAULT_SERVERS, (1, 2, 4, 8, 16, 32, 64, 128, 256, 512), (8, 32, 128, 512), CONFIG_NAMES,
                      10, 3, (1, 2, 4, 8, 16, 32, 64, 128, 256, 512), 3),
    }
    order = "abba"
    add_official = True

    def adjust(self, sc: Scale, scale: str, cpus: Cpus, overrides: dict) -> Scale:
        from dbexp.errors import DbexpError
        check_names(sc.configs, CONFIG_NAMES, "configuration")
        bad = [t for t in sc.threads if not isinstance(t, int) or t < 1]
        if bad:
            raise DbexpError(f"bad thread count {bad[0]!r}: expected whole numbers >= 1")
        return sc

    probes_skipped: str | None = None  # why this process could not probe (the probe points were left out)

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        main, other = [], []
        wanted = sc.probe_threads and any(flavor_of_spec(spec).commit_symbols for spec in sc.servers)
        self.probes_skipped = tracing.unavailable() if wanted else None
        for spec in sc.servers:
            flavor = flavor_of_spec(spec)
            for cfg in CONFIGS:
                if cfg.name not in sc.configs or (cfg.binlog_only and not flavor.has_binlog):
                    continue
                binlog = cfg.binlog and flavor.has_binlog
                server = Chapter.server_config(spec, cpus.server, {**flavor.commit_settings(binlog),
                                                                   "max_connections": "600"})
                group = f"group_commit {spec} binlog={binlog}"
                params = GroupPoint(cfg.name, sc.delay_us if cfg.delay else 0)
                for script in SCRIPTS if cfg.name == "durable" else SCRIPTS[:1]:
                    is_main = cfg.name == "durable" and script == SCRIPTS[0]
                    for t in sorted(set(sc.threads) | (set(sc.probe_threads) if is_main else set())):
                        wl = Workload(script, t, sc.duration_s, 1, sc.table_size, cpuset=cpus.client)
                        if is_main and t in sc.threads:
                            main.append(Point(server, params, wl, group=group))
                        elif not is_main and t in sc.other_threads:
                            other.append(Point(server, params, wl, group=group))
                        if is_main and t in sc.probe_threads and flavor.commit_symbols and not self.probes_skipped:
                            other.append(Point(server, GroupPoint(cfg.name, 0, beside=True), wl, group=group))
                            other.append(Point(server, GroupPoint(cfg.name, 0, probe=True), wl, group=group))
        return [Part(main, sc.repeats), Part(other, sc.other_repeats)]

    def measure(self, server, point: Point, state) -> Measured:
        p: GroupPoint = point.params
        cfg = next(c for c in CONFIGS if c.name == p.config)
        flavor = server.flavor
        conn = server.connect(point.workload.database)
        try:
            for name, value in flavor.group_settings(cfg.sync_log, p.delay_us).items():
                flavor.set_global(conn, name, value)
            before = flavor.commit_counters(conn)
            if p.probe:
                with CommitProbe(server, pin=point.workload.cpuset) as probe:
                    got = measure(server, point.workload, sql_series=False)
            else:
                got = measure(server, point.workload, sql_series=False)
            time.sleep(0.5)  # PostgreSQL's backends report their WAL statistics as they exit
            after = flavor.commit_counters(conn)
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

    def claims(self, res: Results) -> pd.DataFrame:
        return claims(res)


CHAPTER = GroupCommit()
run = CHAPTER.run


def probe_note() -> str:
    """Why this process measured no probe runs, as a sentence for the page, or ''."""
    return tracing.skip_note(CHAPTER.probes_skipped)


class CommitProbe(Bpftrace):
    """bpftrace where a commit waits for its durable write, counting per commit how many times its
    session was woken before the write was done.

    MySQL: ``Stage_manager::enroll_for`` calls and the condition waits inside them (per call: a
    follower's waits until its group is done), binlog syncs, ordered commits. PostgreSQL:
    ``XLogFlush`` calls and, inside them, the ``LWLockAcquireOrWait`` calls that returned false (the
    backend slept until WALWriteLock was released, was woken with every other waiter, and looks again
    whether its record is flushed), and ``issue_xlog_fsync`` calls."""

    MYSQL = """
uprobe:{bin}:{enroll} {{ @in[tid] = 1; @k[tid] = 0; }}
uprobe:{libc}:pthread_cond_wait /@in[tid]/ {{ @k[tid] = @k[tid] + 1; }}
uretprobe:{bin}:{enroll} /@in[tid]/ {{
  @enrolls = count();
  if (@k[tid] > 0) {{ @waiters = count(); @waits = sum(@k[tid]); @khist = lhist(@k[tid], 1, 11, 1); }}
  delete(@in[tid]); delete(@k[tid]);
}}
uprobe:{bin}:{sync} {{ @syncs = count(); }}
uprobe:{bin}:{ordered} {{ @commits = count(); }}
BEGIN {{ printf("ready\\n"); }}
END {{ clear(@in); clear(@k); }}
"""
    # a C bool comes back in the low byte of the return register
    POSTGRES = """
uprobe:{bin}:{flush} {{ @in[tid] = 1; @k[tid] = 0; }}
uretprobe:{bin}:{wait} /@in[tid] && (retval & 0xff) == 0/ {{ @k[tid] = @k[tid] + 1; }}
uretprobe:{bin}:{flush} /@in[tid]/ {{
  @commits = count(); @enrolls = count();
  if (@k[tid] > 0) {{ @waiters = count(); @waits = sum(@k[tid]); @khist = lhist(@k[tid], 1, 11, 1); }}
  delete(@in[tid]); delete(@k[tid]);
}}
uprobe:{bin}:{sync} {{ @syncs = count(); }}
BEGIN {{ printf("ready\\n"); }}
END {{ clear(@in); clear(@k); }}
"""

    def __init__(self, server, pin: str | None = None):
        flavor = server.flavor
        path = server_binary(server.main_pid(), flavor.executables)
        pid = int(path.split("/")[2])
        symbols = flavor.commit_symbols
        if "enroll" in symbols:
            text = self.MYSQL.format(bin=path, libc=mapped_library(pid, "libc.so.6"),
                                     enroll=exported(path, symbols["enroll"]), sync=symbols["sync"],
                                     ordered=symbols["ordered_commit"])
            expected, what = 7, f"the binlog group commit of {path}"
        else:
            text = self.POSTGRES.format(bin=path, **{k: exported(path, v) for k, v in symbols.items()})
            expected, what = 6, f"the WAL flush of {path}"
        super().__init__(text, expected, what, pin)
        self.counts: dict[str, int] = {}
        self.waits_hist: list[tuple[int, int]] = []

    def finished(self) -> None:
        got = maps(self.lines)
        self.counts = {k.lstrip("@"): int(v) for k, v in got.items() if isinstance(v, int)}
        for name in ("enrolls", "waiters", "waits", "syncs", "commits"):
            self.counts.setdefault(name, 0)
        self.waits_hist = [(lo, n) for lo, hi, n in got.get("@khist", [])]


# --- analysis ---------------------------------------------------------------------------------------
def tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    if w.empty:
        return w
    w["beside"] = w["beside"].fillna(False).astype(bool) if "beside" in w else False
    w["commits"] = w["transactions"]
    w["group_size"] = w["commits"] / w["gc_syncs"].where(w["gc_syncs"] > 0) if "gc_syncs" in w else np.nan
    if "gc_binlog_groups" in w:  # MariaDB counts its groups itself
        own = w["gc_binlog_groups"].where(w["gc_binlog_groups"] > 0)
        w["group_size_own"] = w["commits"] / own
    if "gc_waits" in w:
        w["waits_per_commit"] = w["gc_waits"] / w["commits"]
        # where the log is not synced (sync_binlog = 0) no count says how many groups there were
        followers = (w["commits"] - w["gc_syncs"].where(w["gc_syncs"] > 0)).clip(lower=0)
        w["efficiency_bound"] = followers / w["gc_waits"].where(w["gc_waits"] > 0)
    if "probe_waits" in w:
        w["efficiency_exact"] = w["probe_waiters"] / w["probe_waits"].where(w["probe_waits"] > 0)
    w["syncs_per_commit"] = w["gc_syncs"] / w["commits"] if "gc_syncs" in w else np.nan
    w["workload"] = w["script"].str.removeprefix("oltp_")
    return w


def duration_s(res: Results) -> float:
    """The seconds each run's workload was asked to run (the longest, where they differ)."""
    import json
    got = [(json.loads(x) if isinstance(x, str) else x or {}).get("duration_s", 0) for x in res.wide["workload"]]
    return float(max(got, default=0))


def throughput(res: Results) -> pd.DataFrame:
    """The runs without probes, those measured beside a probe run left out (they are its control)."""
    w = tidy(res)
    return w[~w["probe"] & ~w["beside"]] if len(w) else w


def curves(res: Results) -> pd.DataFrame:
    """Per server, configuration, workload and threads: medians over the repeats of every ratio, and
    TPS with its spread."""
    w = throughput(res)
    if w.empty:
        return w
    cols = [c for c in ("tps", "lat_p95_ms", "group_size", "group_size_own", "waits_per_commit", "efficiency_bound",
                        "syncs_per_commit", "cpu_per_op_us", "cs_per_op") if c in w]
    g = w.groupby(["series_name", "flavor", "config", "workload", "threads"])
    out = g[cols].median().reset_index()
    out["tps_min"] = g["tps"].min().values
    out["tps_max"] = g["tps"].max().values
    out["repeats"] = g.size().values
    return out


def probes(res: Results) -> pd.DataFrame:
    """The probe runs, with their cost: QPS of the probe run over that of the run without probes
    measured right before it (same server, workload, threads and repeat)."""
    w = tidy(res)
    if w.empty or not w["probe"].any():
        return pd.DataFrame()
    pr = w[w["probe"]]
    base = w[w["beside"]].set_index(["series_name", "workload", "threads", "repeat"])["qps"]
    pr = pr.assign(cost=[q / base.get((s, wl, t, r), np.nan) for q, s, wl, t, r in
                         zip(pr["qps"], pr["series_name"], pr["workload"], pr["threads"], pr["repeat"])])
    cols = ["probe_commits", "probe_syncs", "probe_enrolls", "probe_waiters", "probe_waits", "efficiency_exact",
            "cost", "commits", "gc_syncs"] + [c for c in pr if c.startswith("probe_k")]
    out = pr.groupby(["series_name", "flavor", "threads"])[cols].median().reset_index()
    out["probe_group_size"] = out["probe_commits"] / out["probe_syncs"].where(out["probe_syncs"] > 0)
    out["waits_per_waiter"] = out["probe_waits"] / out["probe_waiters"].where(out["probe_waiters"] > 0)
    return out


def at_most_threads(res: Results) -> pd.DataFrame:
    """The durable update workload at the largest thread count, per server."""
    c = curves(res)
    if c.empty:
        return c
    c = c[(c["config"] == "durable") & (c["workload"] == "update_non_index")]
    return c[c["threads"] == c.groupby("series_name")["threads"].transform("max")].reset_index(drop=True)


def claims(res: Results) -> pd.DataFrame:
    rows = []
    nm = verdicts.NOT_MEASURED
    top = at_most_threads(res)
    pr = probes(res)
    top_pr = pr[pr["threads"] == pr.groupby("series_name")["threads"].transform("max")] if len(pr) else pr
    mysql_top = top_pr[top_pr["flavor"] == MySQL.name] if len(top_pr) else top_pr
    pg_top = top_pr[top_pr["flavor"] == Postgres.name] if len(top_pr) else top_pr
    if len(mysql_top):
        cells = "; ".join(f"{r.series_name} at {r.threads} threads: {r.efficiency_exact:.1%} "
                          f"({r.waits_per_waiter:.2f} waits per waiting follower)" for r in mysql_top.itertuples())
        rows.append((BINWANG.cite("MySQL's binlog group commit wakes every waiting follower with one broadcast; "
                                  "many go back to sleep, so followers are activated with an efficiency of about "
                                  "52.7% under high concurrency", "source, section 8.1.2"),
                     f"followers' waits counted inside Stage_manager::enroll_for with bpftrace: {cells}",
                     verdicts.combine(_below(r.efficiency_exact) for r in mysql_top.itertuples())))
    else:
        rows.append((BINWANG.cite("followers are activated with an efficiency of about 52.7%", "source, section 8.1.2"),
                     "no probe runs (MySQL with exported group-commit functions) in these results", nm))
    if len(pg_top):
        cells = "; ".join(f"{r.series_name} at {r.threads} threads: {r.efficiency_exact:.1%} "
                          f"({r.waits_per_waiter:.2f} wakeups per waiting flush)" for r in pg_top.itertuples())
        rows.append(("Our extension of the issue's reading of PostgreSQL: every backend waiting for WALWriteLock is "
                     "woken when it is released, and one whose record is not flushed yet waits again, so waiting "
                     "commits are woken more often than needed (efficiency below 90%)",
                     f"wakeups counted inside XLogFlush (LWLockAcquireOrWait returning false) with bpftrace: {cells}",
                     verdicts.combine(_below(r.efficiency_exact) for r in pg_top.itertuples())))
    if len(top):
        bound = top.dropna(subset=["efficiency_bound"])
        mine = bound[bound["flavor"] == MySQL.name]
        if len(mine):
            rows.append(("Our extension: without a probe, performance_schema's count of waits on the commit "
                         "condition already shows MySQL's followers woken more often than needed: the upper bound "
                         "(C - G) / W is below 90%",
                         "; ".join(f"{r.series_name} {r.efficiency_bound:.1%} at {r.threads} threads"
                                   for r in mine.itertuples()),
                         verdicts.combine(_below(r.efficiency_bound) for r in mine.itertuples())))
        own = bound[bound["flavor"] != MySQL.name]
        if len(own):
            rows.append(("Our extension: MariaDB wakes each follower on a condition of its own, so a follower waits "
                         "once (efficiency 100%)",
                         "; ".join(f"{r.series_name} {r.waits_per_commit:.3f} waits per commit against "
                                   f"{1 - 1 / r.group_size:.3f} followers per commit, efficiency at most "
                                   f"{r.efficiency_bound:.1%} at {r.threads} threads" for r in own.itertuples()),
                         verdicts.combine("agrees" if r.efficiency_bound >= 0.97 else "disagrees"
                                          for r in own.itertuples())))
        sized = top.dropna(subset=["group_size"])
        rows.append(("Our extension: as threads grow, more commits share one durable sync (group size above 1)",
                     "; ".join(f"{r.series_name} {r.group_size:.1f} commits per sync at {r.threads} threads"
                               for r in sized.itertuples()),
                     verdicts.combine("agrees" if r.group_size > 1.5 else "disagrees" for r in sized.itertuples())
                     if len(sized) else nm))
    return pd.DataFrame(rows, columns=["claim", "measured here", "verdict"])


def _below(eff: float) -> str:
    """The source's point: followers are woken more often than needed (efficiency clearly below 1)."""
    if eff != eff:
        return verdicts.NOT_MEASURED
    if eff < 0.9:
        return "agrees"
    if eff > 0.97:
        return "disagrees"
    return "not resolved (between 90% and 97%)"


WAIT_LINES = ("measured", "one per follower")


def waits_long(res: Results) -> pd.DataFrame:
    """Waits per commit on the update workload with the ideal beside it (one per follower: (C - G) / C)."""
    c = curves(res)
    if c.empty or "waits_per_commit" not in c or c["waits_per_commit"].isna().all():
        return pd.DataFrame()
    # with the binlog off no session waits on the binlog's group wakeup: nothing to compare there
    c = c[(c["workload"] == "update_non_index") & (c["config"] != "no binlog")].dropna(subset=["waits_per_commit"])
    ideal = (1 - 1 / c["group_size"]).clip(lower=0)
    return pd.concat([c.assign(line=WAIT_LINES[0], value=c["waits_per_commit"]),
                      c.assign(line=WAIT_LINES[1], value=ideal)], ignore_index=True)


def findings(res: Results) -> str:
    """What this run found, as markdown bullets, every number from the results."""
    top = at_most_threads(res)
    if top.empty:
        return "No runs in these results."
    out = []
    sized = top.dropna(subset=["group_size"])
    if len(sized):
        out.append("- **Group size at the most threads** (durable, update): "
                   + "; ".join(f"{r.series_name} {r.group_size:.1f} commits per sync at {r.threads} threads"
                               for r in sized.itertuples()) + ".")
    if "efficiency_bound" in top:
        b = top.dropna(subset=["efficiency_bound"])
        if len(b):
            out.append("- **Waits per commit and the efficiency bound** there: "
                       + "; ".join(f"{r.series_name} {r.waits_per_commit:.2f} waits per commit, efficiency at most "
                                   f"{r.efficiency_bound:.1%}" for r in b.itertuples())
                       + f" (the source: {SOURCE_EFFICIENCY:.1%}).")
    pr = probes(res)
    for flavor, where, who in ((MySQL.name, "inside enroll_for", "waiting follower"),
                               (Postgres.name, "inside XLogFlush", "waiting flush")):
        g = pr[pr["flavor"] == flavor] if len(pr) else pr
        if len(g):
            out.append(f"- **Counted {where}** (probe runs): "
                       + "; ".join(f"{r.series_name} at {r.threads} threads: {r.efficiency_exact:.1%} "
                                   f"({r.waits_per_waiter:.2f} wakeups per {who}; QPS probed over not "
                                   f"{r.cost:.2f})" for r in g.itertuples())
                       + ".")
    counted = set(top.dropna(subset=["group_size"])["series_name"])
    uncounted = pr[~pr["series_name"].isin(counted)] if len(pr) else pr
    if len(uncounted):
        last = uncounted[uncounted["threads"] == uncounted.groupby("series_name")["threads"].transform("max")]
        out.append("- **Where the server keeps no count of its syncs**, the probe runs count them: "
                   + "; ".join(f"{r.series_name} {r.probe_group_size:.1f} commits per sync at {r.threads} threads "
                               f"(probed)" for r in last.itertuples()) + ".")
    if len(pr):
        out.append("- **The probes' cost** is one pair per point: the probe run over a run without probes measured "
                   "right before it. Two runs in a row on this machine differ by several percent without any "
                   "probe (the gtid chapter measures that drift), so read it as a rough size, not a resolved ratio.")
    c = curves(res)
    nb = c[(c["config"] == "no binlog") & (c["workload"] == "update_non_index")]
    dur = c[(c["config"] == "durable") & (c["workload"] == "update_non_index")]
    if len(nb) and len(dur):
        both = dur.merge(nb, on=["series_name", "threads"], suffixes=("", "_nb"))
        both = both[both["threads"] == both.groupby("series_name")["threads"].transform("max")]
        out.append("- **With the binlog off** a commit syncs the redo log only. At the most threads: "
                   + "; ".join(f"{r.series_name} "
                               + (f"{r.group_size_nb:.1f} commits per redo sync, " if r.group_size_nb == r.group_size_nb
                                  else "no count of redo syncs, ")
                               + f"TPS {r.tps_nb:,.0f} against {r.tps:,.0f} with the binlog on and synced"
                               for r in both.itertuples())
                   + ". Where the binlog is on, its group commit's leader also syncs the redo log for the whole "
                     "group; without it, each engine groups redo syncs its own way.")
    return "\n".join(out)


def redo_note(res: Results) -> str:
    """5.7 against 8.0 with the binlog off, where the redo log is the only sync: syncs per commit and TPS."""
    c = curves(res)
    nb = c[(c["config"] == "no binlog") & (c["workload"] == "update_non_index") & (c["flavor"] == MySQL.name)]
    if nb["series_name"].nunique() < 2:
        return "This run has not both MySQL 5.7 and 8.0 with the binlog off."
    rows = []
    for name, g in nb.groupby("series_name"):
        lo, hi = g.loc[g["threads"].idxmin()], g.loc[g["threads"].idxmax()]
        rows.append(f"{name}: {lo.syncs_per_commit:.2f} redo syncs per commit at {int(lo.threads)} thread(s) and "
                    f"{hi.syncs_per_commit:.2f} at {int(hi.threads)}, {lo.tps:,.0f} and {hi.tps:,.0f} TPS")
    return "With the binlog off: " + "; ".join(rows) + "."
