"""MVCC version chains: when rows have many versions, who pays to read them?

For each point: a fresh ``chains`` table with a few hot rows; an old REPEATABLE READ
snapshot is taken; V committed updates are applied to each hot row (to a non-indexed
column, HOT-eligible in PostgreSQL, or to an indexed one); then point selects of the
hot rows are timed from (a) the old snapshot and (b) fresh statements, at the client and
at the server by the server's own clock (performance_schema's statement timer in MySQL
and MariaDB; EXPLAIN ANALYZE's execution time and buffers in PostgreSQL), after a
warm-up. At the largest V the lab then asks the collector to reclaim the versions while
the snapshot is still open (how many it cannot remove), and times how long purge
(InnoDB) or autovacuum (PostgreSQL) takes once it has ended; a control point does the
same updates with no snapshot open. Every repeat walks the points in its own random order.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Chapter, Cpus, Part, Results
from dbexp.experiments.measure import Measured, client_pinned, cpu_window
from dbexp.experiments.sources import KERNELMAKER_MVCC
from dbexp.experiments.sweep import Point
from dbexp.metrics import statement_time
from dbexp.servers.registry import FLAVORS, flavor_class, flavor_of_spec
from dbexp.workloads import version_chains as vc


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    versions: tuple[int, ...]
    samples: int  # timed point selects per reader and point (after as many again / 4 unrecorded)
    repeats: int
    gc_timeout_s: float
    hot_rows: int = 2  # each takes V commits
    columns: tuple[str, ...] = ("v", "k")  # undo engines: the updated column
    # heap engines: (updated column, fillfactor). v at 70: room on the page for a HOT chain; k at 100:
    # an indexed column, never HOT, so the page's room does not matter.
    heap_variants: tuple[tuple[str, int], ...] = (("v", 70), ("k", 100))


@dataclass(frozen=True)
class ChainPoint:
    versions: int  # V: committed updates to each hot row while the old snapshot is open
    column: str  # v: not indexed (HOT-eligible in PostgreSQL); k: indexed
    fillfactor: int | None  # heap fillfactor; None where the engine has none
    samples: int
    hot_rows: int
    client_cpus: str
    gc_timeout_s: float  # > 0: try to reclaim with the snapshot open, then time the reclaim after it ends
    snapshot: bool = True  # False: the control, the same updates with no old snapshot (and no readers)


DEFAULT_SERVERS = ("mysql:5.7@offline", "mysql:8.0@offline", "mariadb:10.11@offline", "postgres:12@offline",
                   "postgres:14@offline", "postgres:18@offline")
WARMUP_SHARE = 4  # unrecorded reads per reader before the timed ones: samples / 4
HOLD_S = 3.0  # InnoDB: how long purge may try to catch up (the snapshot still open) before its lag is read


def settings_for(spec: str) -> dict[str, str]:
    """Durability relaxed so that thousands of commits per hot row take seconds, not minutes (it
    changes when a commit reaches the disk, not how versions are kept), a collector that reacts
    within seconds, and a statement clock at the server."""
    flavor = flavor_of_spec(spec)
    return {**flavor.relaxed_commit_settings(), **flavor.prompt_gc_settings(), **flavor.statement_timing_settings()}


def trimmed_mean(x: np.ndarray, cut: float = 0.1) -> float:
    """The mean of the middle values (``cut`` of them off each end): robust to a few statements
    delayed by something else, and finer than a median of times the server rounds to 1 us."""
    x = np.sort(np.asarray(x, dtype=float))
    k = int(len(x) * cut)
    return float(x[k:len(x) - k].mean()) if len(x) > 2 * k else float(x.mean())


def _summary(prefix: str, reads: vc.Reads) -> dict[str, tuple[float, str]]:
    out = {f"{prefix}_p50_us": (float(np.percentile(reads.client_us, 50)), "us"),
           f"{prefix}_p99_us": (float(np.percentile(reads.client_us, 99)), "us"),
           f"{prefix}_server_p50_us": (float(np.percentile(reads.server_us, 50)), "us"),
           f"{prefix}_server_p99_us": (float(np.percentile(reads.server_us, 99)), "us"),
           f"{prefix}_server_us": (trimmed_mean(reads.server_us), "us")}
    if reads.buffers is not None:
        out[f"{prefix}_buffers"] = (float(np.mean(reads.buffers)), "pages")
    return out


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


@contextlib.contextmanager
def statement_clock(server, reader, database: str = "sbtest"):
    """A clock at the server of ``reader``'s timed selects (the flavor's kind), with a monitor
    connection of its own."""
    monitor = server.connect(database)
    try:
        yield statement_time.clock(server.flavor.statement_clock, reader, monitor, vc.SELECT)
    finally:
        monitor.close()


def _read_both(server, old, fresh, spec: vc.ChainSpec, samples: int) -> dict[str, vc.Reads]:
    """Both readers, after an unrecorded warm-up each, in four blocks each, in ABBA order (old fresh,
    fresh old, ...), so that a drift of the machine that is linear in time hits both alike."""
    got: dict[str, list[vc.Reads]] = {"old": [], "fresh": []}
    with statement_clock(server, old) as c_old, statement_clock(server, fresh) as c_fresh:
        for conn, clock in ((old, c_old), (fresh, c_fresh)):
            vc.timed_reads(conn, spec, max(1, samples // WARMUP_SHARE), clock)  # warm-up, not kept
        pair = (("old", old, c_old), ("fresh", fresh, c_fresh))
        for block in range(4):
            for reader, conn, clock in (pair if block % 2 == 0 else pair[::-1]):
                got[reader].append(vc.timed_reads(conn, spec, samples // 4, clock, cold=True))
    return {reader: vc.Reads.joined(parts) for reader, parts in got.items()}


class MvccChains(Chapter):
    name = "mvcc_chains"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), (0, 10, 100), 40, 1, 10),
        # 800 timed selects per reader: the short chains (V = 10) need them, and they take about half a second
        "default": Scale(DEFAULT_SERVERS, (0, 10, 100, 1000), 800, 5, 30),
        "full": Scale(DEFAULT_SERVERS + ("postgres:16@offline",), (0, 10, 100, 1000, 10000), 1000, 6, 120,
                      heap_variants=(("v", 100), ("v", 70), ("k", 100), ("k", 70))),
    }
    # every point is a block of its own: each repeat walks them in its own random order, so neither
    # V nor the variant runs at the same time of a repeat twice
    order = "shuffled"
    add_official = True

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        out = []
        for spec in sc.servers:
            cfg = self.server_config(spec, cpus.server, settings_for(spec))
            heap = flavor_of_spec(spec).version_store == "heap"
            variants = sc.heap_variants if heap else tuple((c, None) for c in sc.columns)
            for column, ff in variants:
                for v in sc.versions:
                    params = ChainPoint(v, column, ff, sc.samples, sc.hot_rows, cpus.client,
                                        sc.gc_timeout_s if v == max(sc.versions) else 0.0)
                    out.append(Point(cfg, params, group=f"mvcc {spec}"))
                control = ChainPoint(max(sc.versions), column, ff, sc.samples, sc.hot_rows, cpus.client,
                                     sc.gc_timeout_s, snapshot=False)
                out.append(Point(cfg, control, group=f"mvcc {spec}"))
        return [Part(out, sc.repeats)]

    def measure(self, server, point: Point, state) -> Measured:
        p: ChainPoint = point.params
        spec = vc.ChainSpec(column=p.column, fillfactor=p.fillfactor or 100, hot=p.hot_rows)
        series: list[tuple] = []
        m: dict[str, tuple[float | None, str]] = {}
        with client_pinned(p.client_cpus), cpu_window(server, p.client_cpus) as cpu:
            server.ensure_database("sbtest")
            vc.reset_table(server, spec)
            # the previous point's versions are gone before this one starts (recorded if they were not)
            m["settle_timed_out"] = (float(not vc.settle_garbage(server)), "bool")
            g0 = vc.garbage(server)
            with (vc.old_snapshot(server) if p.snapshot else contextlib.nullcontext()) as old:
                before = vc.read_value(old, spec.hot_ids()[0]) if old is not None else None
                write_s = vc.update_hot_rows(server, spec, p.versions)
                commits = p.versions * spec.hot
                m["write_s"] = (write_s, "s")
                m["commits"] = (float(commits), "count")
                if commits:
                    m["writer_us"] = (write_s * 1e6 / commits, "us per update")
                if old is not None:
                    fresh = vc.fresh_reader(server)
                    try:
                        reads = _read_both(server, old, fresh, spec, p.samples)
                        if vc.read_value(old, spec.hot_ids()[0]) != before:
                            raise RuntimeError("the old snapshot is not old: it sees the writer's updates")
                        if p.versions and vc.read_value(fresh, spec.hot_ids()[0]) == before:
                            raise RuntimeError("the fresh reader does not see the writer's updates")
                    finally:
                        fresh.close()
                    for reader, r in reads.items():  # hot rows as the reader, cold neighbours apart
                        m.update(_summary(reader, r.part(hot=True)))
                        m.update(_summary(f"{reader}_cold", r.part(hot=False)))
                    if server.flavor.version_store == "heap" and p.column == "v" and p.versions == 10:
                        for pos, item in enumerate(vc.chain_on_page(server, old)):
                            series += [(float(pos), "pageinspect", k, float(val)) for k, val in item.items()]
                g1 = vc.garbage(server)
                for name in ("history_list_length", "purge_lag_trx", "n_dead_tup"):
                    if name in g1:
                        m[f"garbage_{name}"] = (g1[name] - g0.get(name, 0.0), "count")
                if "relation_bytes" in g1:
                    m["relation_bytes"] = (g1["relation_bytes"], "bytes")
                if p.gc_timeout_s > 0:  # can the collector remove them now, while the snapshot (if any) is open?
                    m.update(vc.held_versions(server, HOLD_S))
            if p.gc_timeout_s > 0:
                series += _reclaim(server, g0, p.gc_timeout_s, m)
        m.update(cpu)  # the VM's steal over the whole run
        what = "no snapshot (control)" if not p.snapshot else "old snapshot"
        return Measured(m, [], series, f"version chains: {p.versions} updates x {spec.hot} hot rows, "
                                       f"column {spec.column}, {what}")

    def claims(self, res: Results) -> pd.DataFrame:
        return claims(res)


CHAPTER = MvccChains()
run = CHAPTER.run


READERS = ("fresh", "old")  # the order of the readers in every legend (the first drawn solid, the old dashed)
PAYER = {"undo": "old", "heap": "fresh"}  # who the sources say pays, per kind of version store


def _payer_and_other(store: str) -> tuple[str, str]:
    payer = PAYER.get(store, "old")
    return payer, READERS[1 - READERS.index(payer)]


def tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    w["versions"] = w["versions"].astype(int)
    # a heap fillfactor where the engine has one (results stored before typed parameters say "-")
    ff = w["fillfactor"].where(w["fillfactor"].notna() & (w["fillfactor"].astype(str) != "-"))
    w["variant"] = "col " + w["column"] + np.where(ff.notna(), ", ff " + ff.astype(str).str.replace(
        r"\.0$", "", regex=True), "")
    w["version_store"] = [flavor_class(f).version_store for f in w["flavor"]]
    snap = w["snapshot"] if "snapshot" in w else pd.Series(True, index=w.index)
    w["snapshot"] = [_snapshot_on(x) for x in snap]
    return w


def _snapshot_on(x) -> bool:
    """A point's ``snapshot`` parameter as stored (runs from before the controls have none: True)."""
    if isinstance(x, str):
        return x.strip().lower() not in ("false", "0")
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return True
    return bool(x)


def readers(res: Results) -> pd.DataFrame:
    """The runs with an old snapshot and both readers timed (the controls have neither)."""
    w = tidy(res)
    return w[w["snapshot"]]


def per_version(res: Results, value: str = "server_us") -> pd.DataFrame:
    """Each reader's cost per version at the server: the slope of its time per read (ns) on V, each
    repeat fitted on its own and a t interval over the repeats; and the same for the payer's
    excess over the other reader, paired within each run (both read the same rows, interleaved)."""
    w = readers(res)
    rows = []
    for (name, variant, store), g in w.groupby(["series_name", "variant", "version_store"]):
        payer, other = _payer_and_other(store)
        series = {r: g[f"{r}_{value}"] * 1000 for r in READERS}
        series[f"{payer} - {other}"] = (g[f"{payer}_{value}"] - g[f"{other}_{value}"]) * 1000
        for what, y in series.items():
            slope, lo, hi = stats.slope_ci(g["versions"], y, g["repeat"])
            rows.append({"series_name": name, "variant": variant, "store": store, "reader": what,
                         "ns_per_version": slope, "ci_low": lo, "ci_high": hi, "repeats": g["repeat"].nunique(),
                         "vmax": int(g["versions"].max())})
    return pd.DataFrame(rows)


def excess_at(res: Results, v: int, value: str = "server_us") -> pd.DataFrame:
    """What a chain of v versions costs the reader the sources say pays, per version, one value per
    repeat with a t interval over the repeats. Within each run: the payer's time on the hot rows less
    its time on their cold neighbours (same page, no versions), less the same difference for the
    other reader (a difference in differences: what the rows, the run and a reader's own statement
    share drops out). Runs measured before the cold rows: the payer's excess over the other reader at
    V = v less that at V = 0, across runs."""
    w = readers(res)
    rows = []
    for (name, variant, store), g in w.groupby(["series_name", "variant", "version_store"]):
        payer, other = _payer_and_other(store)
        cold = f"{payer}_cold_{value}" in g and g[f"{payer}_cold_{value}"].notna().all()
        if cold:
            ex = ((g[f"{payer}_{value}"] - g[f"{payer}_cold_{value}"])
                  - (g[f"{other}_{value}"] - g[f"{other}_cold_{value}"])) * 1000
            d = ex[g["versions"] == v].groupby(g["repeat"]).mean().dropna()
        else:
            ex = (g[f"{payer}_{value}"] - g[f"{other}_{value}"]) * 1000
            at = ex[g["versions"] == v].groupby(g["repeat"]).mean()
            base = ex[g["versions"] == 0].groupby(g["repeat"]).mean()
            d = (at - base).dropna()
        if d.empty or not v:
            continue
        m, lo, hi = stats.mean_ci(d.to_numpy() / v)
        rows.append({"series_name": name, "variant": variant, "store": store, "payer": payer, "versions": v,
                     "ns_per_version": m, "ci_low": lo, "ci_high": hi, "repeats": len(d)})
    return pd.DataFrame(rows)


HELD = {  # what the collector could not remove while the snapshot was open: (measurement, unit)
    "undo": ("held_purge_lag_trx", "purge lag (trx numbers)"),
    "heap": ("held_dead_tuples", "dead, not removable"),
}


def at_largest_v(res: Results) -> pd.DataFrame:
    return at_v(res, int(tidy(res)["versions"].max()))


def at_v(res: Results, vmax: int) -> pd.DataFrame:
    """At V = vmax beside V = 0: each reader's time per read at the server (median over repeats of
    each run's trimmed mean) and at the client (median), the pages a read touched (PostgreSQL), the
    writer's time per update; and at the largest V what the collector could not remove with the
    snapshot open and in the control without one, and how long the reclaim took."""
    w = tidy(res)
    r = w[w["snapshot"]]
    g = r[r["versions"] == vmax]
    cols = {c: (c, "median") for c in ("old_server_us", "fresh_server_us", "old_p50_us", "fresh_p50_us",
                                       "old_buffers", "fresh_buffers", "writer_us", "reclaim_s") if c in g}
    out = g.groupby(["series_name", "variant", "version_store"]).agg(
        repeats=("run_id", "count"), **cols).reset_index()
    for c in ("old_buffers", "fresh_buffers", "reclaim_s", "writer_us"):
        if c not in out:
            out[c] = float("nan")
    base = r[r["versions"] == 0].groupby(["series_name", "variant"])[["old_server_us", "fresh_server_us"]].median()
    out = out.join(base.rename(columns={"old_server_us": "old_server_at_v0", "fresh_server_us": "fresh_server_at_v0"}),
                   on=["series_name", "variant"])
    out["old / fresh"] = out["old_server_us"] / out["fresh_server_us"]
    held = w[w["versions"] == vmax].copy()
    held["held"] = [row.get(HELD[s][0], float("nan")) if s in HELD else float("nan")
                    for s, (_, row) in zip(held["version_store"], held.iterrows())]
    for snap, label in ((True, "held_snapshot"), (False, "held_control")):
        h = held[held["snapshot"] == snap].groupby(["series_name", "variant"])["held"].median().rename(label)
        out = out.join(h, on=["series_name", "variant"])
    ctl = held[~held["snapshot"]].groupby(["series_name", "variant"])["reclaim_s"].median().rename("reclaim_control_s") \
        if "reclaim_s" in held else pd.Series(dtype=float, name="reclaim_control_s")
    out = out.join(ctl, on=["series_name", "variant"])
    out["held_unit"] = out["version_store"].map(lambda s: HELD.get(s, ("", ""))[1])
    out["commits"] = vmax * r["hot_rows"].astype(int).max() if len(r) else float("nan")
    out.insert(2, "versions", vmax)
    return out


def garbage_series(res: Results) -> pd.DataFrame:
    s = res.series
    g = s[s["source"] == "garbage"] if len(s) else s
    if g.empty:
        return g
    w = tidy(res)[["run_id", "series_name", "variant", "repeat", "snapshot"]]
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


def claims(res: Results) -> pd.DataFrame:
    t = at_largest_v(res)
    slopes = per_version(res)
    link = KERNELMAKER_MVCC.cite
    hot_v = 10  # the V whose chain still fits on one page (see the pageinspect table)
    ex10 = excess_at(res, hot_v)

    def pick(table: pd.DataFrame, store: str, variant: str | None = None) -> pd.DataFrame:
        if table.empty:
            return table
        g = table[table["store"] == store]
        return g[g["variant"] == variant] if variant else g

    def ns(r) -> str:
        return f"{r['ns_per_version']:+,.0f} ns [{r['ci_low']:+,.0f}, {r['ci_high']:+,.0f}]"

    # 1. InnoDB: the old reader pays per version (its excess over the fresh reader grows with V)
    my = pick(slopes, "undo")
    my = my[my["reader"] == "old - fresh"]
    claim1 = ("; ".join(f"{r['series_name']} ({r['variant']}): old over fresh {ns(r)} per version"
                        for _, r in my.iterrows()) or verdicts.NOT_MEASURED,
              verdicts.combine(verdicts.interval(r["ci_low"], r["ci_high"], "above", 0) for _, r in my.iterrows()))
    # 2. PostgreSQL, HOT chain on one page: the fresh reader pays for the older versions at V = 10
    pg = pick(ex10, "heap", "col v, ff 70")
    claim2 = ("; ".join(f"{r['series_name']}: fresh over old at V = {hot_v} {ns(r)} per version"
                        for _, r in pg.iterrows()) or verdicts.NOT_MEASURED,
              verdicts.combine(verdicts.interval(r["ci_low"], r["ci_high"], "above", 0) for _, r in pg.iterrows()))
    # 3. PostgreSQL, indexed column: a new index entry per version, so both readers visit every version
    nonhot = _indexed_against_hot(slopes)
    claim3 = ("; ".join(f"{r['series_name']} ({r['reader']} reader): {r['k']} ns per version for k, "
                        f"{r['v']} for v" for _, r in nonhot.iterrows()) or verdicts.NOT_MEASURED,
              verdicts.combine(nonhot["verdict"]) if len(nonhot) else verdicts.NOT_MEASURED)
    # 4. no collector removes what an open snapshot may need; it does once the snapshot ends
    claim4 = ("; ".join(f"{r['series_name']} ({r['variant']}): {r['held_snapshot']:,.0f} held with the snapshot, "
                        f"{r['held_control']:,.0f} without; "
                        + ("not reclaimed within the timeout" if r["reclaim_s"] != r["reclaim_s"]
                           else f"reclaimed {r['reclaim_s']:.1f} s after it ended")
                        for _, r in t.iterrows()) or verdicts.NOT_MEASURED,
              _held_verdict(t))
    rows = [
        (link("InnoDB keeps the newest version in the clustered index and walks undo records from new to old, "
              "so a reader with an old snapshot pays for every newer version"), *claim1),
        (link("PostgreSQL reaches versions from the oldest along the HOT chain (old to new), so a fresh reader "
              f"pays for the older versions it must step over (judged at V = {hot_v}, where the chain stays on "
              "one page)"), *claim2),
        (link("An update of an indexed column is not HOT: the new version gets its own index entries, so the "
              "chain is no longer walked within one page") + "; so, we infer, each such version costs a read more "
              "than a HOT one (judged for both readers, the indexed column k against v)", *claim3),
        (link("Purge (InnoDB) and VACUUM (PostgreSQL) cannot remove versions an open snapshot may still need; "
              "they reclaim them after it ends"), *claim4),
    ]
    return pd.DataFrame(rows, columns=["claim", "measured here", "verdict"])


def _indexed_against_hot(slopes: pd.DataFrame) -> pd.DataFrame:
    """Per PostgreSQL server and reader: the cost per version for the indexed column (k) beside the
    HOT-eligible one (v), and whether k's whole interval lies above v's (agrees), below it
    (disagrees), or they overlap (not resolved)."""
    heap = slopes[(slopes["store"] == "heap") & slopes["reader"].isin(READERS)] if len(slopes) else slopes
    rows = []
    for (name, reader), g in heap.groupby(["series_name", "reader"]) if len(heap) else []:
        by = {("k" if v.startswith("col k") else "v"): r for v, r in zip(g["variant"], g.to_dict("records"))}
        if {"k", "v"} <= set(by):
            k, v = by["k"], by["v"]
            verdict = ("agrees" if k["ci_low"] > v["ci_high"] else "disagrees" if k["ci_high"] < v["ci_low"]
                       else "not resolved (the intervals overlap)")
            rows.append({"series_name": name, "reader": reader, "k": _interval(k), "v": _interval(v),
                         "verdict": verdict})
    return pd.DataFrame(rows)


def _alike_verdict(g: pd.DataFrame) -> str:
    """Every version with its own index entry: both readers visit them all, so neither pays much more
    than the other. Agrees where their times at the server are within PAYS_RATIO of each other."""
    if g.empty:
        return verdicts.NOT_MEASURED
    r = g["old / fresh"]
    alike = int(((r < verdicts.PAYS_RATIO) & (r > 1 / verdicts.PAYS_RATIO)).sum())
    if alike == len(g):
        return f"agrees: both readers within {verdicts.PAYS_RATIO:g}x of each other in {alike} of {len(g)}"
    return f"disagrees: one reader pays more than {verdicts.PAYS_RATIO:g}x in {len(g) - alike} of {len(g)}"


HELD_SHARE = 0.5  # "held": at least half the point's commits' versions unremoved with the snapshot open


def _held_verdict(t: pd.DataFrame) -> str:
    """Agrees where, with the snapshot open, the collector could not remove at least half of what
    the updates left (HELD_SHARE of the commits), the control without a snapshot left less than a
    tenth of that, and the versions were reclaimed after the snapshot ended."""
    if t.empty or t["held_snapshot"].isna().all():
        return verdicts.NOT_MEASURED
    held = t["held_snapshot"] >= HELD_SHARE * t["commits"]
    free = t["held_control"] < 0.1 * t["held_snapshot"]
    reclaimed = t["reclaim_s"].notna()
    n = len(t)
    if held.all() and free.all() and reclaimed.all():
        return (f"agrees: held with the snapshot, not without it, and reclaimed after it ended in {n} of {n}")
    if not held.all():
        return f"disagrees: the collector removed most versions under the open snapshot in {int((~held).sum())} of {n}"
    if not free.all():
        return f"not resolved: the control without a snapshot also kept its versions in {int((~free).sum())} of {n}"
    return (f"not resolved: reclaimed within the timeout in {int(reclaimed.sum())} of {n} only "
            "(a missing reclaim time cannot tell slow from never)")


# --- what the page's charts draw ------------------------------------------------------------------

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


def reader_latency(res: Results, value: str = "server_us") -> pd.DataFrame:
    """Each reader's ``value`` (its time per read at the server by default; ``buffers``: pages per read;
    ``p50_us``: median latency at the client) per server, variant and V, the median over repeats,
    with the engine's kind of version store (``store``: undo or heap), its label (``engine``) and
    the variant in words (``panel``): one chart per store, a panel per server and variant, a line
    per reader."""
    w = readers(res).copy()
    w["panel"] = _variant_words(w)
    rows = []
    stores = list(dict.fromkeys(cls.version_store for cls in FLAVORS.values()))  # undo first, as the text
    w = w.assign(_store=w["version_store"].map(lambda s: stores.index(s) if s in stores else len(stores)))
    for (_, store, name, panel, v), g in w.groupby(["_store", "version_store", "series_name", "panel", "versions"]):
        for reader in READERS:
            col = f"{reader}_{value}"
            if col not in g or g[col].isna().all():
                continue
            rows.append({"store": store, "engine": _engine_label(store, w[w["version_store"] == store]["flavor"]),
                         "server": name, "panel": panel, "versions": int(v), "reader": reader,
                         "value": g[col].median(), "repeats": len(g)})
    return pd.DataFrame(rows, columns=["store", "engine", "server", "panel", "versions", "reader", "value", "repeats"])


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
    gs = gs[gs["name"].isin(list(GARBAGE_MEASURES)) & (gs["repeat"] == repeat) & gs["snapshot"]].copy()
    words = tidy(res).assign(panel=lambda d: _variant_words(d))[["run_id", "panel"]]
    return gs.merge(words, on="run_id")[["series_name", "panel", "name", "t", "value", "run_id"]]


def _ordered(t: pd.DataFrame) -> pd.DataFrame:
    t = t.copy()
    t["short"] = t["variant"].str.removeprefix("col ")  # "k, ff 70": the text says which column is indexed
    order = {label: i for i, label in enumerate(variant_order(t["short"]))}
    return t.assign(_o=t["short"].map(order)).sort_values(["series_name", "_o"], kind="stable").drop(columns="_o")


def largest_v_rows(res: Results) -> pd.DataFrame:
    """:func:`at_largest_v` with the variant in words and the writer's time per update at the smallest
    V beside the largest, for the page's table."""
    t = at_largest_v(res)
    r = readers(res)
    first = r[r["versions"] > 0]["versions"].min()
    if "writer_us" in r and first == first:
        w1 = r[r["versions"] == first].groupby(["series_name", "variant"])["writer_us"].median().rename("writer_us_first")
        t = t.join(w1, on=["series_name", "variant"])
    else:
        t["writer_us_first"] = float("nan")
    return _ordered(t)


def _interval(r) -> str:
    if r["ci_low"] != r["ci_low"]:
        return f"{r['ns_per_version']:+,.0f}"
    return f"{r['ns_per_version']:+,.0f} [{r['ci_low']:+,.0f}, {r['ci_high']:+,.0f}]"


def per_version_rows(res: Results) -> pd.DataFrame:
    """:func:`per_version` and, at V = 10, :func:`excess_at`, one row per server and variant, each
    estimate with its 95% interval as text (ns per version), for the page's table."""
    pv = per_version(res)
    if pv.empty:
        return pv
    out = pv.pivot_table(index=["series_name", "variant", "store", "repeats", "vmax"], columns="reader",
                         values="ns_per_version", aggfunc="first").reset_index()[["series_name", "variant", "store",
                                                                                  "repeats", "vmax"]]
    for _, r in pv.iterrows():
        key = (out["series_name"] == r["series_name"]) & (out["variant"] == r["variant"])
        col = "excess" if " - " in r["reader"] else r["reader"]
        out.loc[key, col] = _interval(r)
        if col == "excess":
            out.loc[key, "payer"] = r["reader"].split(" - ")[0]
    ex = excess_at(res, 10)
    for _, r in ex.iterrows():
        key = (out["series_name"] == r["series_name"]) & (out["variant"] == r["variant"])
        out.loc[key, "excess_v10"] = _interval(r)
    return _ordered(out)


def findings(res: Results) -> str:
    """The chapter's findings in sentences, every number computed from these results."""
    pv = per_version(res)
    t = at_largest_v(res)
    if pv.empty or t.empty:
        return "Too few points in these results for findings (a smoke run has one repeat)."
    out = []
    undo = pv[(pv["store"] == "undo") & (pv["reader"] == "old")]
    if len(undo):
        fresh = pv[(pv["store"] == "undo") & (pv["reader"] == "fresh")]
        flat = int(((fresh["ci_low"] <= 0) & (fresh["ci_high"] >= 0)).sum())
        out.append("- **InnoDB, the old reader:** each newer version costs it "
                   + ", ".join(f"{_interval(r)} ns ({r['series_name']}, {r['variant']})" for _, r in undo.iterrows())
                   + " at the server (95% intervals over repeats). The fresh reader's slope is between "
                   f"{fresh['ns_per_version'].min():+.0f} and {fresh['ns_per_version'].max():+.0f} ns per version, "
                   f"its interval containing 0 in {flat} of {len(fresh)}.")
    ex = excess_at(res, 10)
    at10 = ex[(ex["store"] == "undo") | (ex["variant"] == "col v, ff 70")]
    below = ex[ex["ci_high"] < 0]
    if len(below):
        out.append("- **Resolved below 0 at V = 10:** "
                   + ", ".join(f"{r['series_name']} ({r['variant']}: {_interval(r)} ns per version)"
                               for _, r in below.iterrows()) + ".")
    steeper = []
    for _, r in ex[ex["store"] == "undo"].iterrows():
        fit = pv[(pv["series_name"] == r["series_name"]) & (pv["variant"] == r["variant"])
                 & pv["reader"].str.contains(" - ")]
        if len(fit) and r["ci_low"] > fit["ci_high"].iloc[0]:
            steeper.append(f"{r['series_name']} ({r['variant']}: {_interval(r)} at V = 10 against "
                           f"{_interval(fit.iloc[0])} fitted)")
    if steeper:
        out.append("- **The first versions cost more:** in " + "; ".join(steeper) + " ns per version, the excess at "
                   "V = 10 lies above the fitted slope, so part of the old reader's cost does not grow with V.")
    if len(at10):
        resolved = at10[at10["ci_low"] > 0]
        out.append("- **Chains of 10 versions:** the paying reader's extra time on the hot rows over their cold "
                   "neighbours, beyond the other reader's, at V = 10, is "
                   "resolved above 0 for "
                   + (", ".join(f"{r['series_name']} ({r['variant']}: {_interval(r)} ns per version)"
                                for _, r in resolved.iterrows()) or "none")
                   + f", in {len(resolved)} of {len(at10)} (InnoDB's old reader; PostgreSQL's fresh reader of a HOT "
                     "chain on one page).")
    heap = pv[(pv["store"] == "heap") & pv["reader"].isin(READERS)]
    if len(heap):
        def span(column: str, reader: str) -> str:
            g = heap[(heap["reader"] == reader) & heap["variant"].str.startswith(f"col {column}")]["ns_per_version"]
            return f"{g.min():+.0f} to {g.max():+.0f}"
        out.append("- **PostgreSQL, both readers:** over V up to "
                   f"{int(heap['vmax'].max()):,}, each version of the HOT-eligible column v costs the old reader "
                   f"{span('v', 'old')} ns and the fresh one {span('v', 'fresh')} ns per read; of the indexed "
                   f"column k, {span('k', 'old')} and {span('k', 'fresh')} ns (the table below has each with its "
                   "interval).")
    t = _ordered(t)
    heap_t = t[t["version_store"] == "heap"]
    if len(heap_t):
        out.append(f"- **PostgreSQL at V = {int(t['versions'].iloc[0]):,}, shared-buffer accesses per select "
                   "(old / fresh):** "
                   + "; ".join(f"{r['series_name']} {r['short']}: {r['old_buffers']:,.0f} / {r['fresh_buffers']:,.0f}"
                               for _, r in heap_t.iterrows())
                   + ". Both readers touching the same number of buffers is what an index scan that visits every "
                     "version's index entry would give, whichever version it returns (an inference: the index "
                     "entries themselves are not counted here).")
    lv = largest_v_rows(res)
    if "writer_us" in lv and lv["writer_us"].notna().any():
        grow = lv[lv["writer_us"] > 1.5 * lv["writer_us_first"]]
        out.append("- **The writer** (client wall time per committed update): an update took "
                   + "; ".join(f"{r['series_name']} ({r['short']}) {r['writer_us_first']:,.0f} to {r['writer_us']:,.0f} µs"
                               for _, r in grow.iterrows())
                   + f" from the smallest to the largest V, more than 1.5 times as long; elsewhere it stayed within "
                     "1.5 times." if len(grow) else
                   "- **The writer** (client wall time per committed update): no server's update took more than 1.5 "
                   "times as long at the largest V as at the smallest.")
    return "\n".join(out)
