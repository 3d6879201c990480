"""ReadView and snapshot scaling: what does an MVCC snapshot cost as open transactions grow?

H write transactions are held open without a session each (prepared: MySQL and MariaDB
``XA PREPARE``, PostgreSQL ``PREPARE TRANSACTION``; see dbexp.workloads.prepared), so H
reaches ten thousand. R reader threads run point selects under READ COMMITTED, one per
statement, so every statement takes a new ReadView (MySQL, MariaDB) or snapshot
(PostgreSQL); one more thread commits one-row updates all along, so transactions keep
ending (PostgreSQL 14+ reuses a snapshot while none has ended).

Three kinds of run per H, in blocks walked in a new random order every repeat:
- throughput: server CPU per read and QPS, nothing attached;
- probe: the same load with the function that builds the view timed where it runs
  (bpftrace uprobes on ``MVCC::view_open`` in MySQL, ``GetSnapshotData`` in PostgreSQL),
  kept apart because the probe itself costs throughput (measured as the pair's QPS ratio);
  where the server exports no such function (MariaDB), a server-side loop of READ COMMITTED
  reads instead, timed alone (dbexp.workloads.server_loop); MariaDB also gets a server of its
  own for every H, since its transaction hash keeps its largest size;
- PostgreSQL only, idle sessions instead of prepared transactions at the smaller H: the
  per-session cost (before 14 every snapshot walks every backend) apart from the
  per-transaction one.
And, for MySQL and MariaDB at the smallest and largest H, the double latch: readers in
multi-statement READ COMMITTED transactions, where each statement closes its view under
the trx-sys mutex and opens a new one, against the autocommit readers (one acquisition each).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dbexp.catalog import versions
from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Chapter, Cpus, Part, Results
from dbexp.experiments.measure import Measured, client_pinned, cpu_window, measure
from dbexp.experiments.sources import BINWANG, KERNELMAKER_MVCC, PG14_NOTES
from dbexp.experiments.sweep import Point
from dbexp.metrics import tracing
from dbexp.metrics.uprobe import UprobeTimer, server_binary
from dbexp.servers.config import ServerConfig
from dbexp.servers.mariadb import MariaDB
from dbexp.servers.mysql import MySQL
from dbexp.servers.postgres import Postgres
from dbexp.servers.registry import flavor_of_spec
from dbexp.workloads import server_loop
from dbexp.workloads.sessions import HolderPool
from dbexp.workloads.sysbench import Workload

LATCH_STMTS = 10  # statements per transaction of the double-latch readers
LOOP_READS = 1000  # reads per call of the server-side loop (one round trip per call)
# Bytes each open transaction adds to the copy that builds a view: InnoDB copies a trx_id_t (8 bytes)
# per active read-write transaction into the ReadView; PostgreSQL 14+ copies a TransactionId (4 bytes)
# from its dense array of running xids; before 14 it reads each proc's 4-byte xid out of a PGXACT
# entry of 12 bytes, walking every entry (a prepared transaction has one, an idle session too).
BYTES_PER_HOLDER = {MySQL.name: 8, MariaDB.name: 8, "postgres<14": 12, "postgres>=14": 4}


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    holders: tuple[int, ...]  # H: prepared transactions held open
    idle: tuple[int, ...]  # PostgreSQL: idle sessions at these H too (a process each, so smaller)
    readers: int  # R: reader threads (plus one committing writer)
    repeats: int
    duration_s: int
    table_size: int = 10000
    warmup_s: float = 5.0  # unrecorded readers after each server's load, before its first point


@dataclass(frozen=True)
class ReadViewPoint:
    holders: int  # H
    mode: str  # prepared: H prepared transactions; idle: H idle sessions; none: H = 0
    readers: int  # R reader threads (a committing writer runs beside them)
    trx_stmts: int = 0  # 0: every select in autocommit; N: N selects per READ COMMITTED transaction
    # the view's cost timed at the server in this run: bpftrace on the snapshot function, or, where the
    # server exports none (MariaDB), a server-side loop of READ COMMITTED reads (server_loop)
    probe: bool = False


DEFAULT_SERVERS = ("mysql:5.7@offline", "mysql:8.0@offline", "mariadb:10.11@offline", "postgres:12@offline",
                   "postgres:14@offline", "postgres:18@offline")


def server_config(spec: str, sc: Scale, server_cpus: str) -> ServerConfig:
    flavor = flavor_of_spec(spec)
    settings = {"max_connections": str(max(sc.idle, default=0) + 100), **flavor.snapshot_wait_settings(),
                **flavor.prepared_settings(max(sc.holders))}
    return Chapter.server_config(spec, server_cpus, settings)


class ReadView(Chapter):
    name = "readview"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), (0, 100), (100,), 2, 1, 2, warmup_s=1),
        "default": Scale(DEFAULT_SERVERS, (0, 1, 1000, 10000), (1, 1000), 2, 4, 2),
        "full": Scale(DEFAULT_SERVERS, (0, 1, 100, 1000, 10000, 30000), (1, 100, 1000), 2, 6, 10, 100000,
                      warmup_s=20),
    }
    # Blocks of one H (its throughput, probe and idle runs together, so prepared transactions are made
    # once per block) in a new random order every repeat: a drift within a repeat then tilts no slope
    # the same way twice. Inside a block the runs go forward in even repeats and backward in odd ones.
    order = "shuffled"
    add_official = True

    probes_skipped: str | None = None  # why this process could not probe (the probe points were left out)

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        out = []
        ends = {min(sc.holders), max(sc.holders)}
        timed = any(flavor_of_spec(spec).snapshot_symbol for spec in sc.servers)
        self.probes_skipped = tracing.unavailable() if timed else None
        for spec in sc.servers:
            flavor = flavor_of_spec(spec)
            cfg = server_config(spec, sc, cpus.server)

            def point(h: int, mode: str, stmts: int = 0, probe: bool = False) -> Point:
                opts = (("isolation", "rc"), ("point-selects", "1"), ("trx-stmts", str(stmts)), ("writer", "on"))
                wl = Workload("point_select_isolation", sc.readers + 1, sc.duration_s, 1, sc.table_size,
                              cpuset=cpus.client, options=opts)
                # where a snapshot's cost follows the largest H the server has held, each H gets a
                # server of its own (its repeats then run together), else one server walks every H
                group = f"readview {spec}" + ("" if flavor.trx_registry_shrinks else f" H={h}")
                return Point(cfg, ReadViewPoint(h, mode if h else "none", sc.readers, stmts, probe), wl,
                             group=group, block=f"H={h}")

            # a probe run times the snapshot function with bpftrace (MariaDB's is the server-side loop)
            probes = (False,) if flavor.snapshot_symbol and self.probes_skipped else (False, True)
            for h in sorted(sc.holders):
                out += [point(h, "prepared", probe=p) for p in probes]
                if flavor.name == Postgres.name and h in sc.idle and h:
                    out += [point(h, "idle", probe=p) for p in probes]
                if flavor.name in (MySQL.name, MariaDB.name) and h in ends:
                    out.append(point(h, "prepared", LATCH_STMTS))
        return [Part(out, sc.repeats)]

    def session(self, server) -> HolderPool:
        return HolderPool(server)

    def measure(self, server, point: Point, pool: HolderPool) -> Measured:
        """Hold the point's prepared transactions or idle sessions (resizing what is held), check
        that the server lists them, then measure the readers, with the snapshot function timed in a
        probe run. No per-second SHOW GLOBAL STATUS: its cost grows with the number of connections."""
        p: ReadViewPoint = point.params
        pool.hold_prepared(p.holders if p.mode == "prepared" else 0)
        held = pool.hold(p.holders if p.mode == "idle" else 0, "idle")
        seen = held.observed()
        if p.mode == "idle" and seen["sessions"] < p.holders:
            raise RuntimeError(f"asked for {p.holders} idle sessions, the server sees {seen['sessions']}")
        flavor = server.flavor
        extra = {"perf_schema": flavor.snapshot_waits} if flavor.waits_cumulative else None
        if p.probe and not flavor.snapshot_symbol:
            got = loop_run(server, point)
        elif p.probe:
            path = server_binary(server.main_pid(), flavor.executables)
            with UprobeTimer(path, flavor.snapshot_symbol, pin=point.workload.cpuset) as timer:
                got = measure(server, point.workload, extra_counters=extra, sql_series=False)
            t = timer.result
            m = got.measurements
            m["view_calls"] = (float(t.calls + t.switched_calls), "count")
            m["view_switched_share"] = (t.switched_share, "ratio")  # set aside: switched out mid-call
            m["view_ns_mean"] = (t.mean_ns, "ns")
            m["view_ns_p50"] = (t.quantile_ns(0.5), "ns")
            m["view_ns_p90"] = (t.quantile_ns(0.9), "ns")
            m["probe_stop_s"] = (timer.stop_s, "s")  # SIGINT to bpftrace's exit: detaching its probes
        else:
            got = measure(server, point.workload, extra_counters=extra, sql_series=False)
        got.measurements["observed_prepared"] = (float(pool.prepared_count()), "count")
        got.measurements["observed_sessions"] = (float(seen["sessions"]), "count")
        got.measurements["copy_ns_per_byte"] = (copy_ns_per_byte(max(8 * p.holders, 4096)), "ns")
        return got

    def claims(self, res: Results) -> pd.DataFrame:
        return claims(res)


CHAPTER = ReadView()
run = CHAPTER.run


def probe_note() -> str:
    """Why this process measured no probe runs, as a sentence for the page, or ''."""
    return tracing.skip_note(CHAPTER.probes_skipped)


def loop_run(server, point: Point) -> Measured:
    """A run of the server-side loop, where no function is exported to time: the sysbench readers and
    writer do not run; the procedure's reads are timed alone, from the client CPU, with the point's
    H held as in its other runs."""
    wl = point.workload
    conn = server.connect(wl.database)
    try:
        server_loop.install(conn, "sbtest1", wl.table_size)
        with client_pinned(wl.cpuset), cpu_window(server, wl.cpuset) as cpu:
            reads, seconds = server_loop.timed_reads(conn, LOOP_READS, wl.duration_s)
    finally:
        conn.close()
    return Measured({"loop_reads": (float(reads), "count"), "loop_s": (seconds, "s"),
                     "loop_ns_per_read": (seconds * 1e9 / reads, "ns"), **cpu}, [], [],
                    f"CALL {server_loop.PROCEDURE}({LOOP_READS}) for {wl.duration_s} s, READ COMMITTED")


def copy_ns_per_byte(nbytes: int, repeats: int = 200) -> float:
    """This host's time to copy ``nbytes`` (a view's worth of ids) once, per byte: the best of
    ``repeats`` copies, on the harness's CPU (the prediction's memory speed, measured, not assumed)."""
    src = np.ones(nbytes, dtype=np.uint8)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        np.copyto(dst, src)
        best = min(best, time.perf_counter_ns() - t0)
    return best / nbytes


# --- reading the results -----------------------------------------------------------------------
def tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    for col in ("holders", "readers", "trx_stmts"):
        w[col] = w[col].astype(int)
    w["probe"] = w["probe"].astype(bool)
    w["cpu_per_read_us"] = w["server_cpu_s"] / w["reads"] * 1e6
    w["reads_per_s"] = w["reads"] / w["total_time_s"]
    w["major"] = w["version"].map(versions.major).astype(float)
    return w


def _family(flavor: str, major: float) -> str:
    if flavor == Postgres.name:
        return "postgres<14" if major < 14 else "postgres>=14"
    return flavor


def throughput(res: Results) -> pd.DataFrame:
    """The autocommit readers' runs without a probe."""
    w = tidy(res)
    return w[~w["probe"] & (w["trx_stmts"] == 0)]


def by_h(res: Results, value: str, probe: bool = False) -> pd.DataFrame:
    """Median over repeats of ``value`` per server, holding and H (autocommit readers), for charts:
    ``series`` names the server and, for idle sessions, says so; H = 0 starts both holdings' lines;
    ``engine`` puts MySQL and MariaDB apart from PostgreSQL (a panel each)."""
    w = tidy(res)
    w = w[(w["probe"] == probe) & (w["trx_stmts"] == 0)]
    if w.empty or value not in w:
        return pd.DataFrame()
    w = w[w[value].notna()]  # a probe run times the view, or (no symbol) the loop's reads: not both
    modes = w.groupby("series_name")["mode"].agg(set)  # the holdings each server was measured with
    rows = []
    for (name, flavor, mode, h), g in w.groupby(["series_name", "flavor", "mode", "holders"]):
        for m in ([m for m in ("prepared", "idle") if m in modes[name]] if mode == "none" else [mode]):
            rows.append({"server": name, "holding": m, "holders": h, value: g[value].median(),
                         "series": name + (" (idle sessions)" if m == "idle" else ""),
                         "engine": "PostgreSQL" if flavor == Postgres.name else "MySQL and MariaDB"})
    return pd.DataFrame(rows)


def _fit_rows(w: pd.DataFrame, value: str, scale: float) -> list[dict]:
    rows = []
    for (name, flavor, major, mode), g in w.groupby(["series_name", "flavor", "major", "mode"]):
        if mode == "none":
            continue
        base = w[(w["series_name"] == name) & (w["mode"] == "none")]
        fit = pd.concat([g, base])  # H = 0 (none held) is the shared start of both holdings
        fit = fit[fit[value].notna()]
        if fit["holders"].nunique() < 2:
            continue
        s, lo, hi = stats.slope_ci(fit["holders"], fit[value] * scale, fit["repeat"])
        rows.append({"server": name, "flavor": flavor, "family": _family(flavor, major), "holding": mode,
                     "H": f"{fit['holders'].min()} to {fit['holders'].max()}", "slope": s, "low": lo, "high": hi,
                     "at H=0": fit[fit["holders"] == 0][value].median() * scale, "runs": len(fit)})
    return rows


def cpu_slopes(res: Results) -> pd.DataFrame:
    """Server CPU per read against H, in ns per prepared transaction (or idle session): per-repeat
    least-squares slopes over every H, a t interval over the repeats."""
    return pd.DataFrame(_fit_rows(throughput(res), "cpu_per_read_us", 1000.0))


def view_slopes(res: Results) -> pd.DataFrame:
    """Time per call of the view-building function against H, in ns per prepared transaction (or
    idle session), from the probe runs; with the predicted copy cost per holder (bytes per holder
    times this host's measured copy time per byte)."""
    w = tidy(res)
    w = w[w["probe"] & (w["trx_stmts"] == 0)]
    if w.empty or "view_ns_mean" not in w:
        return pd.DataFrame()
    out = pd.DataFrame(_fit_rows(w, "view_ns_mean", 1.0))
    if out.empty:
        return out
    copy = w.groupby("series_name")["copy_ns_per_byte"].median()
    out["bytes per holder"] = out["family"].map(BYTES_PER_HOLDER)
    out["predicted"] = out["bytes per holder"] * out["server"].map(copy)
    calls = w.assign(per_read=w["view_calls"] / w["reads"]).groupby("series_name")["per_read"].median()
    out["calls per read"] = out["server"].map(calls)
    if "view_switched_share" in w:
        out["switched out"] = out["server"].map(w.groupby("series_name")["view_switched_share"].median())
    return out


def loop_slopes(res: Results) -> pd.DataFrame:
    """Where no function is exported to time (MariaDB): time per read in the server-side loop against
    H, in ns per read and prepared transaction; per-repeat slopes, a t interval over the repeats."""
    w = tidy(res)
    if "loop_ns_per_read" not in w:
        return pd.DataFrame()
    w = w[w["probe"] & (w["trx_stmts"] == 0) & w["loop_ns_per_read"].notna()]
    return pd.DataFrame(_fit_rows(w, "loop_ns_per_read", 1.0)) if len(w) else pd.DataFrame()


def loop_by_h(res: Results) -> pd.DataFrame:
    """The server-side loop per server and H: time per read (median over repeats, the first and the
    last repeat beside it, since a server of its own runs each H's repeats one after the other), what
    each holder adds over H = 0, and the readers' throughput in the same block."""
    w = tidy(res)
    if "loop_ns_per_read" not in w:
        return pd.DataFrame()
    loop = w[w["probe"] & w["loop_ns_per_read"].notna()]
    reads = throughput(res).groupby(["series_name", "holders"])["reads_per_s"].median()
    rows = []
    for name, g in loop.groupby("series_name"):
        base = g[g["holders"] == 0]["loop_ns_per_read"].median()
        for h, gh in g.groupby("holders"):
            gh = gh.sort_values("repeat")
            med = gh["loop_ns_per_read"].median()
            rows.append({"server": name, "holders": int(h), "us_per_read": med / 1000,
                         "first_us": gh["loop_ns_per_read"].iloc[0] / 1000,
                         "last_us": gh["loop_ns_per_read"].iloc[-1] / 1000,
                         "ns_per_holder": (med - base) / h if h else float("nan"),
                         "reads_per_s": reads.get((name, h), float("nan")), "repeats": len(gh)})
    return pd.DataFrame(rows)


def loop_sentence(res: Results) -> str:
    """Whether the loop's cost per holder is the same at every H, from :func:`loop_by_h`."""
    t = loop_by_h(res)
    if t.empty:
        return "Every server here exports a view function to time, so no server-side loop ran."
    parts = []
    for name, g in t.groupby("server"):
        g = g[g["holders"] > 0].sort_values("holders")
        if len(g) < 2:
            continue
        lo, hi = g.iloc[-2], g.iloc[-1]  # the two largest H: the step from none to one open is its own
        parts.append(f"{name}: {lo['ns_per_holder']:,.0f} ns per holder at H = {lo['holders']:,}, "
                     f"{hi['ns_per_holder']:,.0f} at H = {hi['holders']:,}, where a read took {hi['first_us']:,.0f} µs "
                     f"in the first repeat and {hi['last_us']:,.0f} µs in the last, on the same server, and the "
                     f"readers managed {hi['reads_per_s']:,.0f} reads/s (median)")
    if not parts:
        return "The loop ran at fewer than two H above 0 here, too few to compare its cost per holder."
    return ("The loop's cost is not the same for every holder: " + "; ".join(parts) + ". A straight line over H "
            "is then only an average, and its interval is wide; the table gives each H.")


def probe_cost(res: Results) -> pd.DataFrame:
    """What timing each call costs: QPS of the probe run over the throughput run of the same block
    and repeat (measured next to each other), per server, over every H and holding."""
    w = tidy(res)
    w = w[w["trx_stmts"] == 0]
    rows = []
    for name, g in w.groupby("series_name"):
        key = ["sweep_id", "repeat", "holders", "mode"]
        a = g[g["probe"]].set_index(key)["qps"].dropna()  # the server-side loop runs no sysbench
        b = g[~g["probe"]].set_index(key)["qps"]
        if a.empty:
            continue
        r, lo, hi, n = stats.pair_ratio_by(a, b)
        rows.append({"server": name, "pairs": n, "QPS probed / not": r, "low": lo, "high": hi})
    return pd.DataFrame(rows)


def relative_qps(res: Results) -> pd.DataFrame:
    """Reads per second at each H over H = 0: a ratio of geometric means over the repeats with a Welch
    interval (the blocks of one repeat run in a random order, MariaDB's on servers of their own, so an
    H and H = 0 are not adjacent runs, and nothing pairs them)."""
    w = throughput(res)
    rows = []
    for name, g in w.groupby("series_name"):
        base = g[g["holders"] == 0]["reads_per_s"]
        for (h, mode), gh in g[g["holders"] > 0].groupby(["holders", "mode"]):
            r, lo, hi = stats.unpaired_ratio_ci(gh["reads_per_s"], base)
            rows.append({"server": name, "flavor": g["flavor"].iloc[0], "holders": h, "holding": mode,
                         "relative": r, "low": lo, "high": hi})
        rows.append({"server": name, "flavor": g["flavor"].iloc[0], "holders": 0, "holding": "prepared",
                     "relative": 1.0, "low": 1.0, "high": 1.0})
    return pd.DataFrame(rows)


def latch(res: Results) -> pd.DataFrame:
    """trx-sys mutex acquisitions per read statement (performance_schema deltas over the run, the
    writer's statements counted with them), autocommit readers against READ COMMITTED transactions of
    LATCH_STMTS selects, at the smallest and largest H: medians, and the ratio of the two with a pair
    interval (both ran in one block of one repeat)."""
    w = tidy(res)
    w = w[~w["probe"]].set_index("run_id")
    c = res.counters
    if c.empty:
        return pd.DataFrame()
    c = c[(c["source"] == "perf_schema") & c["name"].str.endswith(".count") & c["run_id"].isin(w.index)]
    per_run = c.groupby("run_id")["delta"].sum()
    w = w.loc[per_run.index]
    w = w.assign(acq=per_run / w["reads"])
    rows = []
    for (name, h), g in w.groupby(["series_name", "holders"]):
        if not (g["trx_stmts"] > 0).any():
            continue
        auto = g[g["trx_stmts"] == 0].set_index(["sweep_id", "repeat"])["acq"]
        multi = g[g["trx_stmts"] > 0].set_index(["sweep_id", "repeat"])["acq"]
        r, lo, hi, n = stats.pair_ratio_by(multi, auto)
        rows.append({"server": name, "holders": h, "autocommit": auto.median(),
                     f"{LATCH_STMTS} per transaction": multi.median(), "ratio": r, "low": lo, "high": hi,
                     "pairs": n})
    return pd.DataFrame(rows)


def sessions_against_transactions(res: Results) -> str:
    """PostgreSQL: the view's slope per idle session beside its slope per prepared transaction, per
    server, as a sentence (before 14 both should cost; from 14 on only transactions)."""
    vs = view_slopes(res)
    if vs.empty or not (vs["holding"] == "idle").any():
        return "This run has no idle-session points."
    parts = []
    for name, g in vs[vs["flavor"] == Postgres.name].groupby("server", sort=False):
        by = {r["holding"]: r for _, r in g.iterrows()}
        if {"idle", "prepared"} <= set(by):
            i, p = by["idle"], by["prepared"]
            parts.append(f"{name}: {i['slope']:+.2f} ns [{i['low']:+.2f}, {i['high']:+.2f}] per idle session, "
                         f"{p['slope']:+.2f} ns [{p['low']:+.2f}, {p['high']:+.2f}] per prepared transaction")
    return "Per snapshot, " + "; ".join(parts) + "." if parts else "This run has no idle-session points."


def statement_costs(res: Results) -> pd.DataFrame:
    """At H = 0 (throughput runs): reads and writer commits per second and the server's CPU per
    statement (reads and commits together), per server: what the writer's commits cost each engine."""
    w = throughput(res)
    w = w[w["holders"] == 0].assign(writes_per_s=lambda d: d["writes"] / d["total_time_s"],
                                    cpu_per_stmt_us=lambda d: d["server_cpu_s"] / (d["reads"] + d["writes"]) * 1e6)
    return (w.groupby("series_name")[["reads_per_s", "writes_per_s", "cpu_per_stmt_us", "cpu_per_read_us"]]
            .median().reset_index().rename(columns={"series_name": "server"}))


def statement_sentence(res: Results, factor: float = 2.0) -> str:
    """Servers whose CPU per statement at H = 0 is more than ``factor`` times the others' median."""
    st = statement_costs(res)
    if len(st) < 2:
        return ""
    out = []
    for _, r in st.iterrows():
        others = st[st["server"] != r["server"]]["cpu_per_stmt_us"].median()
        if r["cpu_per_stmt_us"] > factor * others:
            out.append(f"{r['server']} spends {r['cpu_per_stmt_us']:.0f} µs of CPU per statement here, "
                       f"{r['cpu_per_stmt_us'] / others:.1f} times the other servers' median ({others:.0f} µs), "
                       f"with its readers at {r['reads_per_s']:,.0f} reads/s beside {r['writes_per_s']:,.0f} "
                       "writer commits/s")
    if not out:
        return "No server's CPU per statement stands out here."
    return "; ".join(out) + ". Where the writer's commits take most of the CPU, CPU per read says little about the views."


def _verdict_above(lo: float, hi: float) -> str:
    return verdicts.interval(lo, hi, "above", reference=0.0)


def _fmt_slope(r) -> str:
    f = "{:+,.0f}" if abs(r["slope"]) >= 10 else "{:+.2f}"  # ns: hundredths only below ten
    return f"{r['server']}: {f.format(r['slope'])} ns [{f.format(r['low'])}, {f.format(r['high'])}]"


def findings(res: Results) -> str:
    """Sentences computed from the view and CPU slopes (prepared transactions): resolved where the
    interval lies above zero, else the largest cost the interval allows."""
    parts = []
    for table, where, unit in ((view_slopes(res), "Timed at the view", "per view and open transaction"),
                               (loop_slopes(res), "In the server-side loop (no function to time)",
                                "per read and open transaction"),
                               (cpu_slopes(res), "In server CPU per read", "per read and open transaction")):
        if table.empty:
            continue
        g = table[table["holding"] == "prepared"]
        up = g[g["low"] > 0]
        flat = g[g["low"] <= 0]
        single = g[g["low"].isna()]
        if len(up):
            parts.append(f"{where}, a cost {unit} is resolved for "
                         + "; ".join(_fmt_slope(r) + (f" (predicted copy {r['predicted']:.2f} ns)"
                                                      if "predicted" in r else "") for _, r in up.iterrows()) + ".")
        if len(flat):
            parts.append(f"{where}, no cost is resolved for "
                         + ", ".join(f"{r['server']} (at most {r['high']:{',.0f' if r['high'] >= 10 else '.2f'}} ns)"
                                     for _, r in flat.iterrows())
                         + f" {unit}.")
        if len(single):
            parts.append(f"{where}: " + "; ".join(f"{r['server']} {r['slope']:+.2f} ns" for _, r in single.iterrows())
                         + f" {unit}, from one repeat (no interval).")
    rel = relative_qps(res)
    if len(rel):
        top = rel[(rel["holding"] == "prepared") & (rel["holders"] == rel["holders"].max())]
        if len(top):
            parts.append(f"Reads per second at H = {int(top['holders'].iloc[0]):,} relative to H = 0: "
                         + "; ".join(f"{r['server']} {r['relative']:.2f} [{r['low']:.2f}, {r['high']:.2f}]"
                                     for _, r in top.sort_values("relative").iterrows()) + ".")
    return " ".join(parts) or "This run has too few H values to fit a slope."


def claims(res: Results) -> pd.DataFrame:
    """Claims of the sources against this run; verdicts computed from the intervals."""
    vs, cs = view_slopes(res), cpu_slopes(res)

    def slope_text(g: pd.DataFrame, what: str) -> str:
        return "; ".join(_fmt_slope(r) for _, r in g.iterrows()) + f" {what}" if len(g) else ""

    def verdict_of(g: pd.DataFrame) -> str:
        return verdicts.combine(_verdict_above(r["low"], r["high"]) for _, r in g.iterrows())

    def pick(df, flavor=None, family=None, holding="prepared"):
        if df.empty:
            return df
        g = df[df["holding"] == holding]
        if flavor:
            g = g[g["flavor"] == flavor]
        if family:
            g = g[g["family"] == family]
        return g

    rows = []
    g = pick(vs, MySQL.name)
    rows.append({
        "claim": BINWANG.cite("Building a ReadView copies the ids of every active read-write transaction, so its "
                              "cost grows linearly with their number (MySQL; book chapter 8.2)"),
        "measured here": slope_text(g, "per view and open transaction (MVCC::view_open, timed)")
        or "not measured at this scale",
        "verdict": verdict_of(g) if len(g) else verdicts.NOT_MEASURED})
    ls = loop_slopes(res)
    g = pick(ls, MariaDB.name)
    rows.append({
        "claim": "Our extension of that claim to MariaDB, whose ReadView gathers the same ids by walking its "
                 "lock-free hash of read-write transactions: its cost should grow with their number too",
        "measured here": slope_text(g, "per read and open transaction (a server-side loop of READ COMMITTED "
                                       "reads; no exported symbol to time)") or "not measured at this scale",
        "verdict": verdict_of(g) if len(g) else verdicts.NOT_MEASURED})
    g = pick(vs, Postgres.name)
    rows.append({
        "claim": KERNELMAKER_MVCC.cite("A PostgreSQL snapshot holds what a ReadView holds (xmin, xmax and the "
                                       "running xids); our inference from the source's comparison: it should pay "
                                       "per open transaction too (the verdict tests that it grows; the numbers "
                                       "show how it compares with MySQL's)"),
        "measured here": slope_text(g, "per snapshot and prepared transaction (GetSnapshotData, timed)")
        or "not measured at this scale",
        "verdict": verdict_of(g) if len(g) else verdicts.NOT_MEASURED})
    old, new = pick(vs, family="postgres<14", holding="idle"), pick(vs, family="postgres>=14", holding="idle")
    if len(old) and len(new):
        verdict = ("agrees" if old["low"].min() > new["high"].max() else
                   "disagrees" if old["high"].max() < new["low"].min() else "not resolved (the intervals overlap)")
        measured = slope_text(pd.concat([old, new]), "per snapshot and idle session")
    else:
        verdict, measured = verdicts.NOT_MEASURED, "not measured at this scale (needs PostgreSQL 12 or 13 and 14+)"
    rows.append({
        "claim": PG14_NOTES.cite("PostgreSQL 14 made snapshots cheaper to compute with many sessions (a dense "
                                 "array of running xids; an idle session no longer costs each snapshot)",
                                 "release notes"),
        "measured here": measured, "verdict": verdict})
    lt = latch(res)
    if len(lt):
        my = lt[lt["server"].str.startswith(MySQL.name)]
        # a server that takes almost no trx-sys mutex (MariaDB) has no meaningful ratio: named, not listed
        none = lt[(lt["autocommit"] < 0.05) & (lt[f"{LATCH_STMTS} per transaction"] < 0.05)]
        lt = lt.drop(none.index)
        measured = "; ".join(f"{r['server']} at H = {r['holders']:,}: {r['autocommit']:.2f} per read in autocommit, "
                             f"{r[f'{LATCH_STMTS} per transaction']:.2f} in transactions of {LATCH_STMTS} "
                             f"(ratio {r['ratio']:.2f} [{r['low']:.2f}, {r['high']:.2f}])" for _, r in lt.iterrows())
        if len(none):
            measured += ("; " if measured else "") + ", ".join(sorted(set(none["server"]))) + (
                " took the trx-sys mutexes fewer than 0.05 times per read either way (no ratio)")
        measured += " (the verdict is MySQL's, whose source the claim is)"
        # "takes it more often": the whole paired interval above the book's threshold for "pays more"
        verdict = (verdicts.NOT_MEASURED if my.empty else verdicts.combine(
            verdicts.interval(r["low"], r["high"], "above", reference=verdicts.PAYS_RATIO) for _, r in my.iterrows()))
        verdict += ("; the throughput collapse past 500 sessions is not testable here (one server CPU, "
                    "two readers)") if not my.empty else ""
    else:
        measured, verdict = "not measured at this scale", verdicts.NOT_MEASURED
    rows.append({
        "claim": BINWANG.cite("In READ COMMITTED, a statement of a multi-statement transaction closes its view "
                              "under the global trx-sys mutex and the next statement takes it again to open "
                              "one: two acquisitions per statement (the 'double latch'), which costs "
                              "throughput past about 500 concurrent sessions"),
        "measured here": measured, "verdict": verdict})
    return pd.DataFrame(rows)
