"""ReadView and snapshot scaling: what does an MVCC snapshot cost as active transactions grow?

H holder sessions each keep a write transaction open on their own row (or, in the
``idle`` variant, just stay connected); R reader threads run point selects, one per
statement, under READ COMMITTED, so every statement takes a new ReadView (MySQL,
MariaDB) or snapshot (PostgreSQL). The control runs the same readers under
REPEATABLE READ with long transactions: one view per 100 statements.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Chapter, Cpus, Part, Results
from dbexp.experiments.measure import Measured, measure
from dbexp.experiments.sources import BINWANG, KERNELMAKER_MVCC, PG14_NOTES
from dbexp.experiments.sweep import Point
from dbexp.servers.config import ServerConfig, cpus_of
from dbexp.servers.mariadb import MariaDB
from dbexp.servers.mysql import MySQL
from dbexp.servers.postgres import Postgres
from dbexp.servers.registry import flavor_of_spec
from dbexp.workloads.sessions import HolderPool
from dbexp.workloads.sysbench import Workload

TRX_STMTS_CONTROL = 100


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    holders: tuple[int, ...]
    readers_all: tuple[int, ...]  # reader counts swept at every H
    readers_ends: tuple[int, ...]  # reader counts added at the smallest and largest H only
    repeats: int
    duration_s: int
    table_size: int = 10000
    warmup_s: float = 5.0  # unrecorded readers after each server's load, before its first point


@dataclass(frozen=True)
class ReadViewPoint:
    holders: int  # H: sessions held open beside the readers
    mode: str  # active: each holds an open write transaction; idle: connected only; none: H = 0
    isolation: str  # rc: a view per statement; rr: one per TRX_STMTS_CONTROL statements (the control)
    readers: int  # R: sysbench reader threads


DEFAULT_SERVERS = ("mysql:5.7@offline", "mysql:8.0@offline", "mariadb:10.11@offline", "postgres:12@offline",
                   "postgres:13@offline", "postgres:14@offline", "postgres:16@offline", "postgres:18@offline")


def server_config(spec: str, max_h: int, server_cpus: str) -> ServerConfig:
    settings = {"max_connections": str(max_h + 100), **flavor_of_spec(spec).snapshot_wait_settings()}
    return Chapter.server_config(spec, server_cpus, settings)


class ReadView(Chapter):
    name = "readview"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), (0, 64), (2,), (), 1, 2, warmup_s=1),
        "default": Scale(DEFAULT_SERVERS, (0, 1, 16, 64, 256, 1024), (2,), (1,), 4, 2),
        "full": Scale(DEFAULT_SERVERS, (0, 1, 16, 64, 256, 1024), (1, 2, 4), (), 6, 10, 100000, warmup_s=20),
    }
    # "abba": each repeat walks every H, forward in one repeat and backward in the next, so a slow drift
    # of this VM (run-to-run spread of 10 to 25% between identical 3 s runs here) is spread over all H
    # instead of tilting the slope, as it did when all repeats of one H ran back to back. An even number
    # of repeats, so that forward and backward walks are as many and a linear drift cancels. Holders are reopened when H changes: 1,024 sessions take
    # about 1 s on MySQL and 4 s on PostgreSQL here. The warm-up keeps the first point off a cold cache.
    order = "abba"
    add_official = True

    def adjust(self, sc, scale, cpus, overrides):
        if overrides.get("readers_all") is None and scale != "smoke":
            return replace(sc, readers_all=(2 * len(cpus_of(cpus.server)),))  # R = 2 x the server's CPUs
        return sc

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        """Ordered by H, so that within a repeat one set of holders serves consecutive points."""
        out = []
        hmax = max(sc.holders)
        ends = {min(sc.holders), hmax}
        for spec in sc.servers:
            cfg = server_config(spec, hmax, cpus.server)
            for mode in ("active", "idle"):
                for h in sorted(sc.holders):
                    if mode == "idle" and h != hmax:
                        continue  # the idle variant: the largest H only (H=0 is shared with active)
                    readers = sorted(set(sc.readers_all) | (set(sc.readers_ends) if h in ends else set()))
                    for r in readers:
                        control = mode == "active" and h in ends and r == max(readers)
                        for iso in ["rc"] + (["rr"] if control else []):
                            opts = (("isolation", iso), ("point-selects", "1"),
                                    ("trx-stmts", str(TRX_STMTS_CONTROL if iso == "rr" else 0)))
                            wl = Workload("point_select_isolation", r, sc.duration_s, 1, sc.table_size,
                                          cpuset=cpus.client, options=opts)
                            out.append(Point(cfg, ReadViewPoint(h, mode if h else "none", iso, r), wl,
                                             group=f"readview {spec}"))
        return [Part(out, sc.repeats)]

    def session(self, server) -> HolderPool:
        return HolderPool(server)

    def measure(self, server, point: Point, pool: HolderPool) -> Measured:
        """Hold H sessions (reusing the ones already open), check the server sees them, then measure
        the readers. No per-second SHOW GLOBAL STATUS: its cost grows with the number of connections."""
        p: ReadViewPoint = point.params
        held = pool.hold(p.holders, "active" if p.mode == "none" else p.mode)
        seen = held.observed()
        if p.mode == "active" and seen["open_write_trx"] < p.holders:
            raise RuntimeError(f"holders not holding: asked for {p.holders} open write transactions, "
                               f"the server sees {seen['open_write_trx']}")
        if seen["sessions"] < p.holders:
            raise RuntimeError(f"asked for {p.holders} {p.mode} sessions, the server sees {seen['sessions']}")
        waits = server.flavor.snapshot_waits
        if server.flavor.waits_cumulative:
            got = measure(server, point.workload, extra_counters={"perf_schema": waits}, sql_series=False)
        else:
            got = measure(server, point.workload, probes={"waits": waits}, sql_series=False)
        got.measurements["observed_open_write_trx"] = (float(seen["open_write_trx"]), "count")
        got.measurements["observed_sessions"] = (float(seen["sessions"]), "count")
        return got

    def claims(self, res: Results) -> pd.DataFrame:
        return claims(res)


CHAPTER = ReadView()
run = CHAPTER.run


def tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    w["holders"] = w["holders"].astype(int)
    w["readers"] = w["readers"].astype(int)
    return w


def relative_to_h0(res: Results) -> pd.DataFrame:
    """QPS at each H over QPS at H=0 of the same repeat (measured in the same walk over H), per
    server, readers and variant (RC readers): geometric mean of the pair ratios, t interval."""
    w = tidy(res)
    w = w[w["isolation"] == "rc"]
    rows = []
    for (name, r), g in w.groupby(["series_name", "readers"]):
        base = g[g["holders"] == 0].groupby(["sweep_id", "repeat"])["qps"].mean()
        for (h, mode), gh in g.groupby(["holders", "mode"]):
            ratio, lo, hi, _ = stats.pair_ratio_by(gh.groupby(["sweep_id", "repeat"])["qps"].mean(), base)
            rows.append({"server": name, "flavor": g["flavor"].iloc[0], "readers": r, "holders": h, "mode": mode, "relative_qps": ratio,
                         "ci_low": lo, "ci_high": hi, "qps": gh["qps"].median(),
                         "cpu_per_op_us": gh["cpu_per_op_us"].median(), "cs_per_op": gh["cs_per_op"].median(),
                         "lat_p95_ms": gh["lat_p95_ms"].median()})
    return pd.DataFrame(rows)


def slopes(res: Results) -> pd.DataFrame:
    """Least-squares slope, over all repeats, of server CPU per query against active transactions
    (RC readers), in nanoseconds per additional active transaction, with an interval over whole repeats; and
    the change of QPS relative to H = 0, in percent per 100 active transactions.

    The fit uses H >= 1 where the sweep has H = 1: InnoDB reuses a read-only statement's view
    without copying while no read-write transaction is active, so H = 0 to 1 is a step of its own
    (reported as "cpu/o step 0 to 1")."""
    w = tidy(res)
    w = w[(w["isolation"] == "rc") & (w["mode"].isin(["active", "none"]))]
    rows = []
    for (name, flavor, r), g in w.groupby(["series_name", "flavor", "readers"]):
        fit = g[g["holders"] >= 1] if (g["holders"] == 1).any() else g
        if fit["holders"].nunique() < 2:
            continue
        s, lo, hi = stats.slope_ci(fit["holders"], fit["cpu_per_op_us"] * 1000.0, fit["repeat"])
        base = g[g["holders"] == 0]["qps"].median()
        rel, rlo, rhi = stats.slope_ci(fit["holders"], fit["qps"] / base * 100 * 100, fit["repeat"])
        cpu0 = g[g["holders"] == 0]["cpu_per_op_us"].median()
        cpu1 = g[g["holders"] == 1]["cpu_per_op_us"].median() if (g["holders"] == 1).any() else float("nan")
        rows.append({"server": name, "flavor": flavor, "readers": int(r), "fit over H": f">= {fit['holders'].min()}",
                     "cpu/o at H=0 (us)": cpu0, "cpu/o step 0 to 1 (ns)": (cpu1 - cpu0) * 1000.0,
                     "ns cpu/o per active trx": s, "ci_low": lo, "ci_high": hi,
                     "% QPS per 100 trx": rel, "rel_ci_low": rlo, "rel_ci_high": rhi, "runs": len(fit)})
    return pd.DataFrame(rows)


def idle_vs_active(res: Results) -> pd.DataFrame:
    """At the largest H: relative QPS (to H=0) with idle sessions and with open write transactions."""
    rel = relative_to_h0(res)
    if rel.empty:
        return rel
    hmax = rel["holders"].max()
    r = rel[rel["holders"] == hmax]
    wide = r.pivot_table(index=["server", "readers"], columns="mode", values="relative_qps").reset_index()
    return wide.rename(columns={"active": f"active trx (H={hmax})", "idle": f"idle sessions (H={hmax})"})


def control(res: Results) -> pd.DataFrame:
    """RR with long transactions against RC, at the smallest and largest H, as point selects per
    second (BEGIN and COMMIT count as queries in sysbench's QPS, so reads are compared)."""
    w = tidy(res)
    w = w[w["mode"].isin(["active", "none"])]
    rows = []
    for (name, h, r), g in w.groupby(["series_name", "holders", "readers"]):
        if set(g["isolation"]) >= {"rc", "rr"}:
            rate = g["reads"] / g["total_time_s"]
            rows.append({"server": name, "holders": h, "readers": r,
                         "selects/s rc": rate[g["isolation"] == "rc"].median(),
                         "selects/s rr (100 per trx)": rate[g["isolation"] == "rr"].median()})
    out = pd.DataFrame(rows)
    if len(out):
        out["rr / rc"] = out["selects/s rr (100 per trx)"] / out["selects/s rc"]
    return out


def waits(res: Results) -> pd.DataFrame:
    """Latch and wait figures: MySQL trx_sys mutex acquisitions and wait time per query
    (performance_schema deltas), PostgreSQL wait events sampled once a second from
    pg_stat_activity (share of samples); median over repeats."""
    w = tidy(res).set_index("run_id")
    keys = ["series_name", "holders", "mode", "isolation", "readers"]
    rows = []
    c = res.counters
    for run_id, g in (c[c["source"] == "perf_schema"].groupby("run_id") if len(c) else []):
        if run_id not in w.index:
            continue
        r, d = w.loc[run_id], dict(zip(g["name"], g["delta"]))
        for name in (n for n in d if n.endswith(".count")):
            base = name.removesuffix(".count")
            rows.append({**{k: r[k] for k in keys}, "wait": base, "per query": d[name] / r["queries"],
                         "ns per query": d.get(base + ".wait_ns", 0.0) / r["queries"]})
    s = res.series
    for run_id, g in (s[s["source"] == "waits"].groupby("run_id") if len(s) else []):
        if run_id not in w.index:
            continue
        r, total = w.loc[run_id], g["value"].sum()
        for name, v in g.groupby("name")["value"].sum().items():
            rows.append({**{k: r[k] for k in keys}, "wait": name, "share of samples": v / total})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    return (out.groupby(keys + ["wait"], dropna=False).median(numeric_only=True).reset_index()
            .rename(columns={"series_name": "server"}))


def _slope_verdict(lo: float, hi: float) -> str:
    return verdicts.interval(lo, hi, "above", reference=0.0)


def _major(servers: pd.Series) -> pd.Series:
    """The first number of the version in series names such as 'postgres 14.23'."""
    return servers.str.extract(r" (\d+)", expand=False).astype(float)


def _pg14_idle(res: Results, readers) -> tuple[str, str]:
    """QPS with H idle sessions relative to H = 0 (paired interval) for PostgreSQL before and
    from 14 on; the claim agrees only if every interval before 14 lies below every one from 14 on."""
    rel = relative_to_h0(res)
    g = rel[(rel["mode"] == "idle") & (rel["flavor"] == Postgres.name)] if len(rel) else rel
    if readers is not None and len(g):
        g = g[g["readers"] == readers]
    if g.empty:
        return "not measured at this scale", "not measured at this scale"
    major = _major(g["server"])
    older, newer = g[major < 14], g[major >= 14]
    measured = (f"QPS with {int(g['holders'].max())} idle sessions relative to none, {int(g['readers'].iloc[0])} "
                "readers: " + "; ".join(f"{r['server']}: {r['relative_qps']:.2f} [{r['ci_low']:.2f}, "
                                        f"{r['ci_high']:.2f}]" for _, r in g.iterrows()))
    if older.empty or newer.empty:
        return measured, "not measured at this scale (needs 12 or 13 and 14+)"
    if older["ci_high"].max() < newer["ci_low"].min():
        return measured, "agrees"
    if older["ci_low"].min() > newer["ci_high"].max():
        return measured, "disagrees"
    return measured, "not resolved (the intervals overlap)"


def findings(res: Results) -> str:
    """One Markdown sentence, computed from the slopes: which servers' cost per active transaction
    is resolved (interval excludes zero) at the largest reader count, and how large the rest may be."""
    sl = slopes(res)
    if sl.empty:
        return "This run has too few H values to fit a slope."
    r = int(sl["readers"].max())
    sl = sl[sl["readers"] == r]
    up = sl[sl["ci_low"] > 0].sort_values("ns cpu/o per active trx", ascending=False)
    down = sl[sl["ci_high"] < 0]
    rest = sl[(sl["ci_low"] <= 0) & (sl["ci_high"] >= 0)]

    def fmt(g):
        return ", ".join(f"{r['server']} ({r['ns cpu/o per active trx']:+.1f} ns [{r['ci_low']:+.1f}, "
                         f"{r['ci_high']:+.1f}])" for _, r in g.iterrows())
    parts = [f"With {r} reader threads:"]
    if len(up):
        parts.append(f"a positive cost per open write transaction is resolved for {fmt(up)}.")
    if len(down):
        parts.append(f"A negative slope, which no mechanism predicts and which we read as drift, for {fmt(down)}.")
    if len(rest):
        parts.append(f"For {', '.join(rest['server'])} the interval includes zero: each extra transaction "
                     f"costs them at most about {rest['ci_high'].max():.0f} ns of CPU per query here.")
    return " ".join(parts)


def control_sentence(res: Results) -> str:
    """Whether the gap between RR (one view per 100 selects) and RC widens from the smallest to
    the largest H, per server, as a view that gets dearer with H predicts."""
    c = control(res)
    if c.empty or c["holders"].nunique() < 2:
        return "This run has the control at one H only."
    lo, hi = c["holders"].min(), c["holders"].max()
    w = c.pivot_table(index="server", columns="holders", values="rr / rc")
    change = {s: (f"{s} ({w.loc[s, lo]:.2f} to {w.loc[s, hi]:.2f})", w.loc[s, hi] > w.loc[s, lo]) for s in w.index}
    widen = [text for text, wider in change.values() if wider]
    narrow = [text for text, wider in change.values() if not wider]
    out = []
    if widen:
        out.append(f"From H = {lo} to H = {hi} the gap widens for {', '.join(widen)}")
    if narrow:
        out.append(f"it does not for {', '.join(narrow)}")
    return "; ".join(out) + ". Each ratio comes from medians of a few short runs, so only a large change means much."


def _latch_measured(res: Results) -> str:
    """trx_sys mutex acquisitions and wait per query at H = 0 and the largest H (RC readers)."""
    wt = waits(res)
    if wt.empty or "per query" not in wt:
        return "no performance_schema data in this run"
    wt = wt[(wt["isolation"] == "rc") & wt["per query"].notna() & wt["mode"].isin(["active", "none"])]
    wt = wt[wt["readers"] == wt["readers"].max()]
    parts = []
    for server, g in wt.groupby("server"):
        g = g.groupby("holders")[["per query", "ns per query"]].sum()
        lo, hi = g.index.min(), g.index.max()
        parts.append(f"{server}: {g.loc[lo, 'per query']:.2f} acquisitions per query at H = {lo}, "
                     f"{g.loc[hi, 'per query']:.2f} at H = {hi} ({g.loc[hi, 'ns per query']:.0f} ns waited)")
    return "; ".join(parts) + f" ({int(wt['readers'].max())} readers)" if parts else "no trx_sys waits recorded"


def claims(res: Results) -> pd.DataFrame:
    """Claims of the sources against this run; verdicts computed from the intervals."""
    sl = slopes(res)
    big_r = sl["readers"].max() if len(sl) else None
    sl = sl[sl["readers"] == big_r] if len(sl) else sl
    with_r = f" ({int(big_r)} readers)" if big_r is not None else ""

    def slope_text(g: pd.DataFrame) -> str:
        return ("; ".join(f"{r['server']}: {r['ns cpu/o per active trx']:+.1f} ns per trx "
                          f"[{r['ci_low']:+.1f}, {r['ci_high']:+.1f}]" for _, r in g.iterrows()) + with_r
                if len(g) else "not measured at this scale")

    def verdict_of(g: pd.DataFrame) -> str:
        return verdicts.combine(_slope_verdict(r["ci_low"], r["ci_high"]) for _, r in g.iterrows())

    rows = []
    g = sl[sl["flavor"] == MySQL.name]
    rows.append({
        "claim": BINWANG.cite("Building a ReadView copies the ids of every active read-write transaction, so its cost "
                       "grows linearly with their number (MySQL; book chapter 8.2)"),
        "measured here": slope_text(g), "verdict": verdict_of(g)})
    g = sl[sl["flavor"] == MariaDB.name]
    rows.append({
        "claim": "Our extension of that claim to MariaDB, whose ReadView gathers the same ids by walking its "
                 "lock-free hash of read-write transactions: its cost should grow with their number too",
        "measured here": slope_text(g), "verdict": verdict_of(g)})
    g = sl[sl["flavor"] == Postgres.name]
    major = _major(g["server"])
    old, new = g[major < 14], g[major >= 14]
    verdict = "; ".join(x for x in (
        f"before 14: {verdict_of(old)}" if len(old) else "",
        "from 14 on: not testable, since with idle holders and read-only readers no transaction ends, and "
        "14+ then reuses the previous snapshot instead of building one" if len(new) else "") if x)
    rows.append({
        "claim": KERNELMAKER_MVCC.cite("A PostgreSQL snapshot holds what a ReadView holds (xmin, xmax and the running xids); "
                       "our inference from the source's comparison: it should pay a similar per-transaction "
                       "cost"),
        "measured here": slope_text(g), "verdict": verdict or "not measured at this scale"})
    measured, interval_verdict = _pg14_idle(res, big_r)
    rows.append({
        "claim": PG14_NOTES.cite("PostgreSQL 14 made snapshots cheaper to compute on systems with many CPUs and many "
                       "sessions (a dense array of running xids, the xmin horizon computed elsewhere, snapshot "
                       "reuse)", "release notes"),
        "measured here": measured,
        "verdict": f"not testable here: the gain is in memory traffic across many CPUs, and this server has one "
                   f"(measured here: {interval_verdict})"})
    rows.append({
        "claim": BINWANG.cite("Opening and closing a view both take the global trx-sys mutex; throughput falls past "
                       "about 500 concurrent sessions (the 'double latch'), and a bitmap ReadView fixes the copy "
                       "cost, mainly on NUMA machines"),
        "measured here": _latch_measured(res),
        "verdict": "not testable here: needs hundreds of concurrent readers on many cores, NUMA, and the patched "
                   "build; with autocommit point selects, MySQL takes the mutex once per query (opening the "
                   "view), not twice"})
    return pd.DataFrame(rows)
