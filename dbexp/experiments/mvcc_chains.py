"""MVCC version chains: when rows have many versions, who pays to read them?

For each point: a fresh ``chains`` table with a few hot rows; an old REPEATABLE READ
snapshot is taken; V committed updates are applied to each hot row (to a non-indexed
column, HOT-eligible in PostgreSQL, or to an indexed one); then point selects of the
hot rows are timed from (a) the old snapshot and (b) fresh statements. At the largest V
the old snapshot is then released and the lab times how long purge (InnoDB) or
autovacuum (PostgreSQL) takes to reclaim the versions.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from dbexp.experiments.chapter import Results, add_official_only, check_scale, collect
from dbexp.experiments.measure import Measured
from dbexp.experiments.sweep import Point
from dbexp.servers.config import ServerConfig, cpus_of
from dbexp.workloads import version_chains as vc

EXPERIMENT = "mvcc_chains"

# Durability is relaxed so that 10,000 commits per hot row take seconds, not minutes; it changes
# when a commit reaches the disk, not how versions are kept. autovacuum_naptime=1 lets autovacuum
# react within a second, so its reclaim time is not dominated by the default 60 s nap.
SETTINGS = {
    "mysql": {"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0"},
    "mariadb": {"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0"},
    "postgres": {"synchronous_commit": "off", "autovacuum_naptime": "1"},
}


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    versions: tuple[int, ...]
    samples: int  # timed point selects per reader and point
    repeats: int
    gc_timeout_s: float
    hot_rows: int = 2  # each takes V commits; on PostgreSQL each update walks the row's chain, so V=10000 dominates
    fillfactors: tuple[int, ...] = (100, 70)
    columns: tuple[str, ...] = ("v", "k")


DEFAULT_SERVERS = ("mysql:5.7@offline", "mysql:8.0@offline", "mariadb:10.11@offline", "postgres:12@offline",
                   "postgres:14@offline", "postgres:16@offline", "postgres:18@offline")
SCALES = {
    "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), (0, 10, 100), 40, 1, 10),
    "default": Scale(DEFAULT_SERVERS, (0, 10, 100, 1000, 10000), 200, 2, 30),
    "full": Scale(DEFAULT_SERVERS, (0, 10, 100, 1000, 10000, 30000), 1000, 3, 120),
}


def scale_for(scale: str, **overrides) -> Scale:
    base = SCALES[check_scale(scale)]
    return replace(base, **{k: tuple(v) if isinstance(v, list) else v
                            for k, v in overrides.items() if v is not None})


def points(sc: Scale, server_cpus: str = "1", client_cpus: str = "0") -> list[Point]:
    out = []
    for spec in sc.servers:
        flavor = spec.split(":")[0]
        cfg = ServerConfig(spec, server_cpus, settings=SETTINGS.get(flavor, {}))
        ffs = sc.fillfactors if flavor == "postgres" else (100,)
        for column in sc.columns:
            for ff in ffs:
                for v in sc.versions:
                    labels = (("versions", str(v)), ("column", column),
                              ("fillfactor", str(ff) if flavor == "postgres" else "-"),
                              ("samples", str(sc.samples)), ("hot_rows", str(sc.hot_rows)),
                              ("client_cpus", client_cpus),
                              ("gc_timeout_s", str(sc.gc_timeout_s if v == max(sc.versions) else 0)))
                    out.append(Point(cfg, None, group=f"mvcc {spec}", labels=labels))
    return out


def _pin_client(cpus: str):
    """Pin this process (the client) to the client CPUs for the measurement; returns the old set."""
    old = os.sched_getaffinity(0)
    if cpus and cpus != "all":
        os.sched_setaffinity(0, set(cpus_of(cpus)))
    return old


def _percentiles(prefix: str, lat: np.ndarray) -> dict[str, tuple[float, str]]:
    return {f"{prefix}_p50_us": (float(np.percentile(lat, 50)), "us"),
            f"{prefix}_p95_us": (float(np.percentile(lat, 95)), "us"),
            f"{prefix}_p99_us": (float(np.percentile(lat, 99)), "us"),
            f"{prefix}_mean_us": (float(lat.mean()), "us")}


def measure_point(server, point: Point) -> Measured:
    lb = dict(point.labels)
    v, samples, gc_timeout = int(lb["versions"]), int(lb["samples"]), float(lb["gc_timeout_s"])
    spec = vc.ChainSpec(column=lb["column"], fillfactor=int(lb["fillfactor"]) if lb["fillfactor"] != "-" else 100,
                        hot=int(lb["hot_rows"]))
    old_aff = _pin_client(lb.get("client_cpus", ""))
    series: list[tuple] = []
    m: dict[str, tuple[float | None, str]] = {}
    try:
        server.ensure_database("sbtest")
        vc.reset_table(server, spec)
        vc.settle_garbage(server)  # the previous point's versions are gone before this one starts
        g0 = vc.garbage(server)
        with vc.old_snapshot(server) as old:
            before = vc.read_value(old, spec.hot_ids()[0])
            m["write_s"] = (vc.update_hot_rows(server, spec, v), "s")
            m["commits"] = (float(v * spec.hot), "count")
            fresh = vc.fresh_reader(server)
            try:
                # interleave the two readers in blocks so a drift of the machine hits both
                lat_old, lat_fresh = [], []
                for _ in range(4):
                    lat_old.append(vc.timed_reads(old, spec, samples // 4))
                    lat_fresh.append(vc.timed_reads(fresh, spec, samples // 4))
                if vc.read_value(old, spec.hot_ids()[0]) != before:
                    raise RuntimeError("the old snapshot is not old: it sees the writer's updates")
                if v and vc.read_value(fresh, spec.hot_ids()[0]) == before:
                    raise RuntimeError("the fresh reader does not see the writer's updates")
            finally:
                fresh.close()
            m.update(_percentiles("old", np.concatenate(lat_old)))
            m.update(_percentiles("fresh", np.concatenate(lat_fresh)))
            g1 = vc.garbage(server)
            for name in ("history_list_length", "purge_lag_trx", "n_dead_tup"):
                if name in g1:
                    m[f"garbage_{name}"] = (g1[name] - g0.get(name, 0.0), "count")
            if "relation_bytes" in g1:
                m["relation_bytes"] = (g1["relation_bytes"], "bytes")
            if server.flavor.name == "postgres" and spec.column == "v" and spec.fillfactor == 70 and v == 10:
                for pos, item in enumerate(vc.chain_on_page(server, old)):
                    series += [(float(pos), "pageinspect", k, float(val)) for k, val in item.items()]
        if gc_timeout > 0:
            series += _reclaim(server, g0, gc_timeout, m)
    finally:
        os.sched_setaffinity(0, old_aff)
    return Measured(m, [], series, f"version chains: {v} updates x {spec.hot} hot rows, column {spec.column}")


def _reclaimed(g: dict, g0: dict, peak: dict) -> bool:
    """InnoDB: purge has removed the versions of every transaction committed before the snapshot
    ended. PostgreSQL: autovacuum has run on the table and no dead tuple is left."""
    if "purge_done_no" in g:
        return g["purge_done_no"] >= peak["trx_id_counter"]
    return g["n_dead_tup"] == 0 and g["autovacuum_count"] > g0["autovacuum_count"]


def _reclaim(server, g0: dict, timeout_s: float, m: dict) -> list[tuple]:
    """After the old snapshot ended: poll the garbage until purge/autovacuum has reclaimed it."""
    series, t0 = [], time.monotonic()
    peak = vc.garbage(server)
    while True:
        t = time.monotonic() - t0
        g = vc.garbage(server)
        series += [(round(t, 2), "garbage", k, val) for k, val in g.items()]
        if _reclaimed(g, g0, peak):
            m["reclaim_s"] = (t, "s")
            return series
        if t > timeout_s:
            m["reclaim_s"] = (None, "s")  # not reclaimed within the timeout: kept as missing, not as a number
            m["reclaim_timeout_s"] = (timeout_s, "s")
            return series
        time.sleep(0.5)


def run(scale: str = "smoke", *, run: bool = True, publish: bool = False, force: bool = False,
        server_cpus: str = "1", client_cpus: str = "0", **overrides) -> Results:
    sc = scale_for(scale, **overrides)
    sc = replace(sc, servers=add_official_only(sc.servers, scale, run, overrides))
    return collect(EXPERIMENT, points(sc, server_cpus, client_cpus) if run else [], sc.repeats, run=run,
                   publish=publish, force=force, measure_fn=measure_point, order="grouped")


def tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    w["versions"] = w["versions"].astype(int)
    w["variant"] = np.where(w["flavor"] == "postgres",
                            "col " + w["column"] + ", ff " + w["fillfactor"].astype(str),
                            "col " + w["column"])
    return w


def latency_long(res: Results, stat: str = "p50") -> pd.DataFrame:
    """Median over repeats of each reader's latency percentile, long format for charts."""
    w = tidy(res)
    rows = []
    for (name, variant, v), g in w.groupby(["series_name", "variant", "versions"]):
        for reader in ("old", "fresh"):
            rows.append({"server": name, "variant": variant, "versions": v, "reader": reader,
                         "latency_us": g[f"{reader}_{stat}_us"].median()})
    return pd.DataFrame(rows)


def at_largest_v(res: Results) -> pd.DataFrame:
    return at_v(res, int(tidy(res)["versions"].max()))


def at_v(res: Results, vmax: int) -> pd.DataFrame:
    """Median latencies of both readers at V = vmax beside V = 0, the garbage while the old
    snapshot was open (InnoDB history list length, PostgreSQL dead tuples; growth during the
    point), and the reclaim time."""
    w = tidy(res)
    nan = pd.Series(float("nan"), index=w.index)
    w["garbage"] = w.get("garbage_history_list_length", nan).fillna(w.get("garbage_n_dead_tup", nan))
    g = w[w["versions"] == vmax]
    out = g.groupby(["series_name", "variant"]).agg(
        old_p50_us=("old_p50_us", "median"), fresh_p50_us=("fresh_p50_us", "median"),
        old_p99_us=("old_p99_us", "median"), fresh_p99_us=("fresh_p99_us", "median"),
        garbage=("garbage", "median"), reclaim_s=("reclaim_s", "median"),
        repeats=("run_id", "count")).reset_index()
    base = w[w["versions"] == 0].groupby(["series_name", "variant"])[["old_p50_us", "fresh_p50_us"]].median()
    out = out.join(base.rename(columns={"old_p50_us": "old_p50_at_v0", "fresh_p50_us": "fresh_p50_at_v0"}),
                   on=["series_name", "variant"])
    out["old / fresh"] = out["old_p50_us"] / out["fresh_p50_us"]
    out.insert(2, "versions", vmax)
    return out


def garbage_series(res: Results) -> pd.DataFrame:
    s = res.series
    g = s[s["source"] == "garbage"] if len(s) else s
    if g.empty:
        return g
    w = tidy(res)[["run_id", "series_name", "variant", "repeat"]]
    return g.merge(w, on="run_id")


def pageinspect_table(res: Results) -> pd.DataFrame:
    s = res.series
    p = s[s["source"] == "pageinspect"] if len(s) else s
    if p.empty:
        return pd.DataFrame()
    w = tidy(res)[["run_id", "series_name", "variant", "repeat"]]
    p = p.merge(w, on="run_id")
    first = p.sort_values(["series_name", "repeat"]).groupby("series_name")["run_id"].first()
    p = p[p["run_id"].isin(first.values)]
    wide = p.pivot_table(index=["series_name", "variant", "t"], columns="name", values="value").reset_index()
    wide["t_ctid"] = "(" + wide["ctid_block"].astype(int).astype(str) + "," + wide["ctid_lp"].astype(int).astype(str) + ")"
    cols = ["series_name", "variant", "lp", "lp_flags", "t_xmin", "t_xmax", "t_ctid", "hot_updated", "heap_only"]
    out = wide[cols].rename(columns={"series_name": "server"})
    for c in ("lp", "lp_flags", "t_xmin", "t_xmax", "hot_updated", "heap_only"):
        out[c] = out[c].astype(int)
    return out


KERNELMAKER_MVCC = "https://kernelmaker.github.io/mysql-vs-pg-mvcc"


def _ratio_verdict(r: float, expect: str) -> str:
    if r != r:
        return "not measured at this scale"
    if expect == "old pays":
        return "agrees" if r > 1.5 else ("disagrees" if r < 1 / 1.5 else "inconclusive (within 1.5x)")
    return "agrees" if r < 1 / 1.5 else ("disagrees" if r > 1.5 else "inconclusive (within 1.5x)")


def claims(res: Results) -> pd.DataFrame:
    t = at_largest_v(res)

    def pick(flavor_prefix: str, variant: str | None = None) -> pd.DataFrame:
        g = t[t["series_name"].str.startswith(flavor_prefix)]
        return g[g["variant"] == variant] if variant else g

    def measured(g: pd.DataFrame) -> str:
        return "; ".join(f"{r['series_name']} ({r['variant']}): old {r['old_p50_us']:,.0f} us, fresh "
                         f"{r['fresh_p50_us']:,.0f} us" for _, r in g.iterrows()) or "not measured at this scale"

    def verdict(g: pd.DataFrame, expect: str) -> str:
        if g.empty:
            return "not measured at this scale"
        # the payer's excess latency over the other reader, at this V and at V = 0 (where both readers
        # differ already: a fresh statement starts and ends a transaction of its own)
        sign = 1 if expect == "old pays" else -1
        excess = sign * (g["old_p50_us"] - g["fresh_p50_us"])
        excess0 = sign * (g["old_p50_at_v0"] - g["fresh_p50_at_v0"])
        payer = "old" if expect == "old pays" else "fresh"
        return (" / ".join(sorted({_ratio_verdict(r, expect) for r in g["old / fresh"]}))
                + f"; the {payer} reader's excess over the other is larger than at V = 0 in "
                  f"{int((excess > excess0).sum())} of {len(g)}, by {(excess - excess0).median():+.0f} us (median)")

    def link(text: str) -> str:
        return f'{text} (<a href="{KERNELMAKER_MVCC}">source</a>)'

    my = pd.concat([pick("mysql"), pick("mariadb")])
    hot_v = at_v(res, 10)  # the largest V whose chain still fits on one page (see the pageinspect table)
    pg_hot = hot_v[hot_v["series_name"].str.startswith("postgres") & (hot_v["variant"] == "col v, ff 70")]
    pg_nonhot = pick("postgres", "col k, ff 100")
    rows = [
        {"claim": link("InnoDB keeps the newest version in the clustered index and walks undo records from new "
                       "to old, so a reader with an old snapshot pays for every newer version"),
         "measured here": measured(my), "verdict": verdict(my, "old pays")},
        {"claim": link("PostgreSQL reaches versions from the oldest along the HOT chain (old to new), so a "
                       "fresh reader pays for the older versions it must step over (judged at V = 10, where "
                       "the chain stays on one page)"),
         "measured here": measured(pg_hot), "verdict": verdict(pg_hot, "fresh pays")},
        {"claim": link("An update of an indexed column is not HOT: the new version gets its own index entries, "
                       "so the chain is no longer walked within one page"),
         "measured here": measured(pg_nonhot),
         "verdict": "see the latency chart: both readers pay when every version has an index entry"},
        {"claim": link("Purge (InnoDB) and VACUUM (PostgreSQL) cannot remove versions an open snapshot may "
                       "still need; they reclaim them after it ends"),
         "measured here": "; ".join(f"{r['series_name']} ({r['variant']}): "
                                    + ("not reclaimed within the timeout" if r["reclaim_s"] != r["reclaim_s"]
                                       else f"{r['reclaim_s']:.1f} s")
                                    for _, r in t.iterrows()) or "not measured at this scale",
         "verdict": "agrees: the garbage grows while the snapshot is open (chart) and falls after it ends"
                    if len(t) else "not measured at this scale"},
    ]
    return pd.DataFrame(rows)


