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
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dbexp.experiments import verdicts
from dbexp.experiments.chapter import Chapter, Cpus, Part, Results
from dbexp.experiments.measure import Measured
from dbexp.experiments.sources import KERNELMAKER_MVCC
from dbexp.experiments.sweep import Point
from dbexp.servers.config import cpus_of
from dbexp.servers.registry import FLAVORS, flavor_class, flavor_of_spec
from dbexp.workloads import version_chains as vc


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    versions: tuple[int, ...]
    samples: int  # timed point selects per reader and point
    repeats: int
    gc_timeout_s: float
    hot_rows: int = 2  # each takes V commits; on PostgreSQL each update walks the row's chain, so V=10000 dominates
    fillfactors: tuple[int, ...] = (100, 70)  # heap engines only
    columns: tuple[str, ...] = ("v", "k")


@dataclass(frozen=True)
class ChainPoint:
    versions: int  # V: committed updates to each hot row while the old snapshot is open
    column: str  # v: not indexed (HOT-eligible in PostgreSQL); k: indexed
    fillfactor: int | None  # heap fillfactor; None where the engine has none
    samples: int
    hot_rows: int
    client_cpus: str
    gc_timeout_s: float  # > 0: time the reclaim after the snapshot ends (the largest V only)


DEFAULT_SERVERS = ("mysql:5.7@offline", "mysql:8.0@offline", "mariadb:10.11@offline", "postgres:12@offline",
                   "postgres:14@offline", "postgres:16@offline", "postgres:18@offline")


def settings_for(spec: str) -> dict[str, str]:
    """Durability relaxed so that 10,000 commits per hot row take seconds, not minutes (it changes when
    a commit reaches the disk, not how versions are kept), and a collector that reacts within seconds."""
    flavor = flavor_of_spec(spec)
    return {**flavor.relaxed_commit_settings(), **flavor.prompt_gc_settings()}


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


def _reclaim(server, g0: dict, timeout_s: float, m: dict) -> list[tuple]:
    """After the old snapshot ended: poll the garbage until purge/autovacuum has reclaimed it."""
    series, t0 = [], time.monotonic()
    peak = vc.garbage(server)
    while True:
        t = time.monotonic() - t0
        g = vc.garbage(server)
        series += [(round(t, 2), "garbage", k, val) for k, val in g.items()]
        if server.flavor.reclaimed(g, g0, peak):
            m["reclaim_s"] = (t, "s")
            return series
        if t > timeout_s:
            m["reclaim_s"] = (None, "s")  # not reclaimed within the timeout: kept as missing, not as a number
            m["reclaim_timeout_s"] = (timeout_s, "s")
            return series
        time.sleep(0.5)


class MvccChains(Chapter):
    name = "mvcc_chains"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), (0, 10, 100), 40, 1, 10),
        "default": Scale(DEFAULT_SERVERS, (0, 10, 100, 1000, 10000), 200, 2, 30),
        "full": Scale(DEFAULT_SERVERS, (0, 10, 100, 1000, 10000, 30000), 1000, 3, 120),
    }
    order = "grouped"
    add_official = True

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        out = []
        for spec in sc.servers:
            cfg = self.server_config(spec, cpus.server, settings_for(spec))
            heap = flavor_of_spec(spec).version_store == "heap"
            for column in sc.columns:
                for ff in (sc.fillfactors if heap else (None,)):
                    for v in sc.versions:
                        params = ChainPoint(v, column, ff, sc.samples, sc.hot_rows, cpus.client,
                                            sc.gc_timeout_s if v == max(sc.versions) else 0.0)
                        out.append(Point(cfg, params, group=f"mvcc {spec}"))
        return [Part(out, sc.repeats)]

    def measure(self, server, point: Point, state) -> Measured:
        p: ChainPoint = point.params
        spec = vc.ChainSpec(column=p.column, fillfactor=p.fillfactor or 100, hot=p.hot_rows)
        old_aff = _pin_client(p.client_cpus)
        series: list[tuple] = []
        m: dict[str, tuple[float | None, str]] = {}
        try:
            server.ensure_database("sbtest")
            vc.reset_table(server, spec)
            # the previous point's versions are gone before this one starts (recorded if they were not)
            m["settle_timed_out"] = (float(not vc.settle_garbage(server)), "bool")
            g0 = vc.garbage(server)
            with vc.old_snapshot(server) as old:
                before = vc.read_value(old, spec.hot_ids()[0])
                m["write_s"] = (vc.update_hot_rows(server, spec, p.versions), "s")
                m["commits"] = (float(p.versions * spec.hot), "count")
                fresh = vc.fresh_reader(server)
                try:
                    # interleave the two readers in blocks so a drift of the machine hits both
                    lat_old, lat_fresh = [], []
                    for _ in range(4):
                        lat_old.append(vc.timed_reads(old, spec, p.samples // 4))
                        lat_fresh.append(vc.timed_reads(fresh, spec, p.samples // 4))
                    if vc.read_value(old, spec.hot_ids()[0]) != before:
                        raise RuntimeError("the old snapshot is not old: it sees the writer's updates")
                    if p.versions and vc.read_value(fresh, spec.hot_ids()[0]) == before:
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
                if server.flavor.version_store == "heap" and p.column == "v" and p.fillfactor == 70 \
                        and p.versions == 10:
                    for pos, item in enumerate(vc.chain_on_page(server, old)):
                        series += [(float(pos), "pageinspect", k, float(val)) for k, val in item.items()]
            if p.gc_timeout_s > 0:
                series += _reclaim(server, g0, p.gc_timeout_s, m)
        finally:
            os.sched_setaffinity(0, old_aff)
        return Measured(m, [], series, f"version chains: {p.versions} updates x {spec.hot} hot rows, "
                                       f"column {spec.column}")

    def claims(self, res: Results) -> pd.DataFrame:
        return claims(res)


CHAPTER = MvccChains()
run = CHAPTER.run


def tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    w["versions"] = w["versions"].astype(int)
    # a heap fillfactor where the engine has one (results stored before typed parameters say "-")
    ff = w["fillfactor"].where(w["fillfactor"].notna() & (w["fillfactor"].astype(str) != "-"))
    w["variant"] = "col " + w["column"] + np.where(ff.notna(), ", ff " + ff.astype(str).str.replace(
        r"\.0$", "", regex=True), "")
    w["version_store"] = [flavor_class(f).version_store for f in w["flavor"]]
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


def _ratio_verdict(r: float, expect: str) -> str:
    return verdicts.ratio(r, "above" if expect == "old pays" else "below")


def claims(res: Results) -> pd.DataFrame:
    t = at_largest_v(res)

    def pick(store: str, variant: str | None = None, table: pd.DataFrame = t) -> pd.DataFrame:
        stores = table["series_name"].str.split().str[0].map(lambda f: flavor_class(f).version_store)
        g = table[stores == store]
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

    link = KERNELMAKER_MVCC.cite
    my = pick("undo")
    hot_v = at_v(res, 10)  # the largest V whose chain still fits on one page (see the pageinspect table)
    pg_hot = pick("heap", "col v, ff 70", hot_v)
    pg_nonhot = pick("heap", "col k, ff 100")
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
         "measured here": measured(pg_nonhot), "verdict": _alike_verdict(pg_nonhot)},
        {"claim": link("Purge (InnoDB) and VACUUM (PostgreSQL) cannot remove versions an open snapshot may "
                       "still need; they reclaim them after it ends"),
         "measured here": "; ".join(f"{r['series_name']} ({r['variant']}): "
                                    + ("not reclaimed within the timeout" if r["reclaim_s"] != r["reclaim_s"]
                                       else f"{r['reclaim_s']:.1f} s")
                                    for _, r in t.iterrows()) or "not measured at this scale",
         "verdict": _reclaim_verdict(t)},
    ]
    return pd.DataFrame(rows)


def _alike_verdict(g: pd.DataFrame) -> str:
    """Without a chain inside the page, neither reader walks versions the other skips: the claim holds
    where the two readers' latencies are within PAYS_RATIO of each other."""
    if g.empty:
        return verdicts.NOT_MEASURED
    alike = ((g["old / fresh"] < verdicts.PAYS_RATIO) & (g["old / fresh"] > 1 / verdicts.PAYS_RATIO)).sum()
    if alike == len(g):
        return f"agrees: both readers within {verdicts.PAYS_RATIO:g}x of each other in {alike} of {len(g)}"
    return f"disagrees: one reader pays more than {verdicts.PAYS_RATIO:g}x in {len(g) - alike} of {len(g)}"


def _reclaim_verdict(t: pd.DataFrame) -> str:
    """Agrees where the garbage grew while the snapshot was open and was reclaimed after it ended."""
    if t.empty:
        return verdicts.NOT_MEASURED
    grew = int((t["garbage"] > 0).sum())
    reclaimed = int(t["reclaim_s"].notna().sum())
    if grew == len(t) and reclaimed == len(t):
        return (f"agrees: the garbage grew while the snapshot was open and was reclaimed after it ended "
                f"in {len(t)} of {len(t)}")
    if grew < len(t):
        return f"disagrees: no garbage grew under the open snapshot in {len(t) - grew} of {len(t)}"
    return (f"not resolved: reclaimed within the timeout in {reclaimed} of {len(t)} only "
            "(a missing reclaim time cannot tell slow from never)")




# --- what the page's charts draw ------------------------------------------------------------------

READERS = ("fresh", "old")  # the order of the readers in every legend (the first drawn solid, the old dashed)
COLUMN_WORDS = {"k": "k (indexed)", "v": "v (no index)"}


def _engine_label(store: str, flavors) -> str:
    titles = sorted({flavor_class(f).title for f in flavors})
    return f"{' and '.join(titles)} ({store} versions)"


def _variant_words(w: pd.DataFrame) -> pd.Series:
    """'k (indexed)' or 'k (indexed), ff 70': the updated column and, where the engine has one, the
    heap fillfactor, in words a chart's panel header can carry."""
    ff = w["fillfactor"].where(w["fillfactor"].notna() & (w["fillfactor"].astype(str) != "-"))
    words = w["column"].map(lambda c: COLUMN_WORDS.get(c, f"column {c}"))
    return words + np.where(ff.notna(), ", ff " + ff.astype(str).str.replace(r"\.0$", "", regex=True), "")


def variant_order(labels) -> list[str]:
    """Panels in the chapter's order: the non-indexed column first (the HOT case), fillfactor 100 before
    70."""
    def key(label: str):
        column = 0 if label.startswith("v") else 1
        ff = int(label.rsplit("ff ", 1)[1]) if "ff " in label else 1000
        return (column, -ff, label)
    return sorted(dict.fromkeys(labels), key=key)


def reader_latency(res: Results, stat: str = "p50") -> pd.DataFrame:
    """Each reader's latency (median over repeats) per server, variant and V, with the engine's kind of
    version store (``store``: undo or heap), its label (``engine``) and the variant in words
    (``panel``): one chart per store, a panel per server and variant, a line per reader."""
    w = tidy(res)
    w["panel"] = _variant_words(w)
    rows = []
    stores = list(dict.fromkeys(cls.version_store for cls in FLAVORS.values()))  # undo first, as the text
    w = w.assign(_store=w["version_store"].map(lambda s: stores.index(s) if s in stores else len(stores)))
    for (_, store, name, panel, v), g in w.groupby(["_store", "version_store", "series_name", "panel", "versions"]):
        for reader in READERS:
            rows.append({"store": store, "engine": _engine_label(store, w[w["version_store"] == store]["flavor"]),
                         "server": name, "panel": panel, "versions": int(v), "reader": reader,
                         "latency_us": g[f"{reader}_{stat}_us"].median(), "repeats": len(g)})
    return pd.DataFrame(rows)


GARBAGE_MEASURES = {
    # InnoDB: how far purge trails the transaction counter; PostgreSQL: dead tuples. Different units:
    # (a chart's title, its y axis).
    "purge_lag_trx": ("InnoDB: purge lag behind the transaction counter", "purge lag (transaction numbers)"),
    "n_dead_tup": ("PostgreSQL: dead tuples in the table", "dead tuples (n_dead_tup)"),
}


def garbage_long(res: Results, repeat: int = 0) -> pd.DataFrame:
    """The garbage series after the old snapshot ended, one repeat, for :data:`GARBAGE_MEASURES`, with
    the variant in words."""
    gs = garbage_series(res)
    if gs.empty:
        return gs
    gs = gs[gs["name"].isin(list(GARBAGE_MEASURES)) & (gs["repeat"] == repeat)].copy()
    words = tidy(res).assign(panel=lambda d: _variant_words(d))[["run_id", "panel"]]
    return gs.merge(words, on="run_id")[["series_name", "panel", "name", "t", "value", "run_id"]]


def largest_v_rows(res: Results) -> pd.DataFrame:
    """:func:`at_largest_v` with the variant in words and the unit of its garbage column (InnoDB's
    history list counts undo logs, PostgreSQL's n_dead_tup dead tuples), for the page's table."""
    t = at_largest_v(res)
    store = t["series_name"].str.split().str[0].map(lambda f: flavor_class(f).version_store)
    undo = store == "undo"
    t["garbage_unit"] = np.where(undo, "undo logs", "dead tuples")
    t["short"] = t["variant"].str.removeprefix("col ")  # "k, ff 70": the text says which column is indexed
    order = {label: i for i, label in enumerate(variant_order(t["short"]))}
    return t.assign(_o=t["short"].map(order)).sort_values(["series_name", "_o"], kind="stable").drop(columns="_o")
