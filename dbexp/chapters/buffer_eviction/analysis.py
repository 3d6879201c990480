"""Buffer eviction under a scan: does a full scan of a table larger than the buffer pool evict the
hot working set, and how fast does the hot workload recover?

Each server gets a buffer pool (shared buffers) made small on purpose and a sysbench table about
four times its size (``sbtest1``), and beside it a hot table (``hot``): a copy of the big table's
first rows, about a twentieth of them. Point selects on the hot table run for the whole run and
are reported every second. After ``before_s`` seconds a second session reads the big table from
end to end, again and again, for ``scan_s`` seconds; it is then cancelled mid-pass and the hot
workload runs on for ``after_s`` seconds, to show the recovery.

Misses are reads from the device: InnoDB reads its data files with O_DIRECT; PostgreSQL reads
through the page cache, so its container's memory limit is set so that the page cache cannot
hold the big table (the cgroup charges the page cache to the container), and the device's reads
are recorded beside ``blks_read``.

Variants (one server per version; the variants of a repeat run on it in ABBA order):
- InnoDB (MySQL, MariaDB), set at run time: ``innodb_old_blocks_time`` at its default (1000 ms) and
  at 0 (a scan's pages are made young on their second touch), ``innodb_old_blocks_pct`` at its
  default (37) and at 5;
- PostgreSQL: a sequential scan (over a quarter of shared buffers: the bulk-read ring), the same
  rows through the primary key (no ring: the clock sweep), an UPDATE of every row (dirty buffers
  are not reused by the ring), and the index read followed by ``pg_prewarm`` of the hot table when
  the scan stops (a warm start instead of waiting for the workload to read it back).

Once a second the sampler asks the server which pages of the hot and big tables are in the pool
(``INNODB_BUFFER_PAGE_LRU``, ``pg_buffercache``: the query's own time is recorded), the usage
counts, and the cumulative page requests and reads.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dbexp.catalog.versions import major, version_key
from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Chapter, Cpus, Part, Results, check_names
from dbexp.experiments.measure import Measured, summarize, sysbench_series
from dbexp.experiments.sources import KERNELMAKER_BUFFERPOOL
from dbexp.experiments.sweep import Point
from dbexp.metrics.sampler import Sampler
from dbexp.servers.mariadb import MariaDB
from dbexp.servers.mysql import MySQL
from dbexp.servers.postgres import Postgres
from dbexp.servers.registry import flavor_class, flavor_of_spec
from dbexp.workloads import sysbench
from dbexp.workloads.scan import Scanner
from dbexp.workloads.sysbench import Workload

HOT, BIG = "hot", "sbtest1"
RECOVERED = 0.95  # recovered: hot QPS back to this share of its median before the scan
CACHE_RECOVERED = 0.99  # the pool recovered: the hot table back to this share of what was resident before
RING_BUFFERS = 32  # PostgreSQL's bulk-read ring before 17: 256 kB of 8 kB buffers
RING_LEAK = 0.10  # a ring holds while a scan takes at most this share of the buffers it takes without one
PHASES = ("before", "scan", "after")


@dataclass(frozen=True)
class Variant:
    name: str
    flavors: tuple[str, ...]  # flavors it applies to
    scan: str  # seq | index | update (Flavor.full_read_sql)
    settings: tuple[tuple[str, str], ...] = ()  # dynamic settings made before the run
    prewarm: bool = False  # load the hot table with pg_prewarm the moment the scan stops


INNODB = (MySQL.name, MariaDB.name)
PG = (Postgres.name,)
DEPTH = ("innodb_lru_scan_depth", "100")  # free pages the page cleaner keeps per instance: scaled to the tiny pool
VARIANTS = (
    Variant("defaults (scan depth 100)", INNODB, "seq",
            (("innodb_old_blocks_time", "1000"), ("innodb_old_blocks_pct", "37"), DEPTH)),
    Variant("old_blocks_time=0", INNODB, "seq",
            (("innodb_old_blocks_time", "0"), ("innodb_old_blocks_pct", "37"), DEPTH)),
    Variant("old_blocks_pct=5", INNODB, "seq",
            (("innodb_old_blocks_time", "1000"), ("innodb_old_blocks_pct", "5"), DEPTH)),
    # the server's own innodb_lru_scan_depth (MySQL 1024, MariaDB 1536), large against a pool this small
    Variant("scan depth at its default", INNODB, "seq",
            (("innodb_old_blocks_time", "1000"), ("innodb_old_blocks_pct", "37"), ("innodb_lru_scan_depth", "DEFAULT"))),
    Variant("seq scan (ring)", PG, "seq"),
    Variant("index scan (no ring)", PG, "index"),
    Variant("UPDATE scan", PG, "update"),
    Variant("index scan, then pg_prewarm", PG, "index", prewarm=True),
)
VARIANT_NAMES = tuple(v.name for v in VARIANTS)
MORE = ("UPDATE scan", "index scan, then pg_prewarm")  # by default on two PostgreSQL versions only
CORE = tuple(n for n in VARIANT_NAMES if n not in MORE)


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    variants: tuple[str, ...]  # run on every server they apply to
    more_variants: tuple[str, ...]  # run only on the servers in all_variants_on
    all_variants_on: tuple[str, ...]  # servers (specs) that get more_variants too
    pool_mb: int  # buffer pool / shared buffers
    table_size: int  # rows of the big table (about 4x the pool)
    hot_rows: int  # rows of the hot table (about 5% of the big table's)
    threads: int  # hot-workload threads
    before_s: int
    scan_s: int
    after_s: int
    repeats: int
    pg_memory_mb: int  # PostgreSQL's container memory limit: shared buffers, processes and a page cache smaller than the table
    warmup_s: float = 0.0


@dataclass(frozen=True)
class EvictionPoint:
    variant: str
    scan: str
    settings: tuple[tuple[str, str], ...]
    prewarm: bool
    pool_mb: int
    table_size: int
    hot_rows: int
    before_s: int
    scan_s: int
    after_s: int


DEFAULT_SERVERS = ("mysql:5.7@offline", "mysql:8.0@offline", "mariadb:10.11@offline", "postgres:12@offline",
                   "postgres:14@offline", "postgres:16@offline", "postgres:17@offline", "postgres:18@offline")


def server_config(spec: str, sc: Scale, cpus: str):
    flavor = flavor_of_spec(spec)
    cfg = Chapter.server_config(spec, cpus, flavor.buffer_pool_settings(sc.pool_mb))
    if flavor.reads_through_page_cache:  # a page cache smaller than the table: misses reach the device
        cfg = dataclasses.replace(cfg, memory=f"{sc.pg_memory_mb}m")
    return cfg


class BufferEviction(Chapter):
    name = "buffer_eviction"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"),
                       ("defaults (scan depth 100)", "old_blocks_time=0", "seq scan (ring)",
                        "index scan (no ring)"), (), (), 16, 300_000, 15_000, 2, 3, 4, 3, 1, 160),
        "default": Scale(DEFAULT_SERVERS, CORE, MORE, ("postgres:16@offline", "postgres:18@offline"),
                         32, 500_000, 25_000, 2, 3, 5, 4, 3, 128),
        "full": Scale(DEFAULT_SERVERS, CORE, MORE, DEFAULT_SERVERS, 128, 2_400_000, 120_000, 4, 10, 20, 20, 5, 400),
    }
    order = "abba"  # a repeat walks a server's variants forward, the next one backward

    def adjust(self, sc: Scale, scale: str, cpus: Cpus, overrides: dict) -> Scale:
        check_names(sc.variants + sc.more_variants, VARIANT_NAMES, "variant")
        return sc

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        points = []
        for spec in sc.servers:
            flavor = flavor_of_spec(spec)
            cfg = server_config(spec, sc, cpus.server)
            wanted = sc.variants + (sc.more_variants if spec in sc.all_variants_on else ())
            for v in VARIANTS:
                if v.name not in wanted or flavor.name not in v.flavors:
                    continue
                wl = Workload("hot_select", sc.threads, sc.before_s + sc.scan_s + sc.after_s, 1, sc.table_size,
                              cpuset=cpus.client, options=(("hot-table", HOT), ("hot-rows", str(sc.hot_rows))))
                params = EvictionPoint(v.name, v.scan, v.settings, v.prewarm, sc.pool_mb, sc.table_size, sc.hot_rows,
                                       sc.before_s, sc.scan_s, sc.after_s)
                points.append(Point(cfg, params, wl, group=f"buffer_eviction {spec}"))
        return [Part(points, sc.repeats)]

    def claims(self, res: Results) -> pd.DataFrame:
        return claims(res)

    def session(self, server):
        from contextlib import nullcontext
        return nullcontext({})  # per server: the hot table, made at the first run (after sysbench's prepare)

    def measure(self, server, point: Point, state: dict) -> Measured:
        p: EvictionPoint = point.params
        wl = point.workload
        flavor = server.flavor
        conn = server.connect(wl.database)
        try:
            if "hot_pages" not in state:
                flavor.copy_rows(conn, BIG, HOT, p.hot_rows)
                state["hot_pages"] = flavor.primary_pages(conn, HOT)
                state["big_pages"] = flavor.primary_pages(conn, BIG)
            for name, value in p.settings:
                flavor.set_global(conn, name, value)
        finally:
            conn.close()
        got = timed_window(server, point, state)
        if p.scan == "update":  # the next run must read the same table
            conn = server.connect(wl.database)
            try:
                flavor.restore_table(conn, BIG)
            finally:
                conn.close()
        return got


def timed_window(server, point: Point, state: dict) -> Measured:
    """The hot workload for before + scan + after seconds with the scan in the middle, sampled
    every second; every series on sysbench's clock (its first report is t = 1)."""
    p: EvictionPoint = point.params
    wl = point.workload
    flavor = server.flavor
    probe = {"pool": lambda c: flavor.buffer_sample(c, HOT, BIG)}
    m: dict[str, tuple[float | None, str]] = {}
    with Sampler(server, probes=probe, sql_series=False, cpus=wl.cpuset, database=wl.database) as sampler:
        running = sysbench.start_run(wl, server)
        try:
            with Scanner(server, BIG, p.scan, wl.database, cpus=wl.cpuset, clock_zero=running.started) as scan:
                _sleep_until(running.started + p.before_s)
                scan.start()
                _sleep_until(running.started + p.before_s + p.scan_s)
                m["cancel_s"] = (scan.stop(), "s")
                if p.prewarm:
                    t0 = time.monotonic()
                    m["prewarm_pages"] = (flavor.prewarm(scan.connection, HOT), "pages")
                    m["prewarm_s"] = (time.monotonic() - t0, "s")
            done = sysbench.finish_run(running, wl)
        except BaseException:
            running.kill()
            raise
    shift = running.started - sampler.t0  # sampler time - shift = sysbench time
    m.update(summarize(done, sampler.totals()))
    m["hot_pages"] = (float(state["hot_pages"]), "pages")
    m["big_pages"] = (float(state["big_pages"]), "pages")
    m["scan_passes"] = (float(sum(ok for *_, ok in scan.passes)), "count")
    series = sysbench_series(done)
    series += [(round(t - shift, 3), src, name, v) for t, src, name, v in sampler.series]
    series += [(round(a, 3), "scan", "pass_start", float(ok)) for a, b, ok in scan.passes]
    series += [(round(b, 3), "scan", "pass_end", float(ok)) for a, b, ok in scan.passes]
    return Measured(m, sampler.counters, series,
                    " ".join(done.cmd) + f" | from {p.before_s} s to {p.before_s + p.scan_s} s: "
                    + "; ".join(flavor.full_read_sql(BIG, p.scan)) + " in a loop")


def _sleep_until(t: float) -> None:
    time.sleep(max(0.0, t - time.monotonic()))


CHAPTER = BufferEviction()
run = CHAPTER.run


# --- analysis ---------------------------------------------------------------------------------------
def tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    if w.empty:
        return w
    w["variant"] = pd.Categorical(w["variant"], [v for v in VARIANT_NAMES if v in set(w["variant"])], ordered=True)
    return w


def phase_of(t: float, p) -> str | None:
    """The phase of sysbench's report at second t (covering t-1 to t): the first second of the scan
    and of the recovery are transitions, in neither."""
    if 2 <= t <= p["before_s"]:
        return "before"
    if p["before_s"] + 2 <= t <= p["before_s"] + p["scan_s"]:
        return "scan"
    if t > p["before_s"] + p["scan_s"]:
        return "after"
    return None


def timeline(res: Results) -> pd.DataFrame:
    """One row per run and second on sysbench's clock: hot QPS and p95, the pool's hit ratio,
    the hot table's resident share and misses, the device's reads, pages made young."""
    w = tidy(res)
    s = res.series
    if w.empty or s.empty:
        return pd.DataFrame()
    s = s[s["run_id"].isin(w["run_id"])]
    rows = []
    for rid, g in s.groupby("run_id"):
        run = w[w["run_id"] == rid].iloc[0]
        sb = g[g["source"] == "sysbench"].pivot_table(index="t", columns="name", values="value")
        pool = g[g["source"] == "pool"].pivot_table(index="t", columns="name", values="value").sort_index()
        disk = g[(g["source"] == "server") & (g["name"] == "disk_rbytes/s")].set_index("t")["value"]
        df = pd.DataFrame({"t": sb.index, "qps": sb["qps"].values, "p95_ms": sb.get("lat_p95_ms").values})
        if len(pool):
            # the sample nearest each report's end, and rates between consecutive samples
            pool = pool.reindex(pool.index.union(df["t"])).interpolate("index").reindex(df["t"])
            d = pool.diff()
            df["hit_ratio"] = (1 - d["reads"] / d["requests"]).values
            df["hot_resident"] = (pool["resident.hot"] / run["hot_pages"]).values
            df["big_resident"] = pool["resident.big"].values
            df["hot_reads_s"] = d["hot_reads"].values
            if "buffers_alloc" in d:
                df["alloc_s"] = d["buffers_alloc"].values
            if "made_young" in d:
                df["made_young_s"] = d["made_young"].values
                df["old_share"] = (pool["lru_old_pages"] / pool["lru_pages"]).values
                df["free_pages"] = pool["free_pages"].values
            df["query_ms"] = pool["lru_query_ms"].values
        if len(disk):
            df["device_mb_s"] = np.interp(df["t"], disk.index, disk.values) / 2 ** 20
        df["phase"] = [phase_of(t, run) for t in df["t"]]
        for col in ("run_id", "series_name", "variant", "repeat", "flavor", "before_s", "scan_s", "after_s"):
            df[col] = run[col]
        rows.append(df)
    out = pd.concat(rows, ignore_index=True)
    out["variant"] = pd.Categorical(out["variant"], w["variant"].cat.categories, ordered=True)
    return out


def recovery_s(g: pd.DataFrame, column: str, level: float) -> float:
    """Seconds after the scan stopped until ``column`` first reached ``level`` (1: within the first
    second after it); NaN where it did not within the run."""
    end = g["before_s"].iloc[0] + g["scan_s"].iloc[0]
    after = g[g["t"] > end].sort_values("t")
    hit = after[after[column] >= level]
    return float(hit["t"].iloc[0] - end) if len(hit) else float("nan")


def per_run(res: Results) -> pd.DataFrame:
    """One row per run: hot QPS before and during the scan (medians of its seconds), recovery, and
    what the pool did during the scan."""
    tl = timeline(res)
    if tl.empty:
        return tl
    rows = []
    for rid, g in tl.groupby("run_id", observed=True):
        b, s = g[g["phase"] == "before"], g[g["phase"] == "scan"]
        before = float(b["qps"].median())
        row = {c: g[c].iloc[0] for c in ("run_id", "series_name", "variant", "repeat", "flavor")}
        row.update(qps_before=before, qps_scan=float(s["qps"].median()),
                   p95_before=float(b["p95_ms"].median()), p95_scan=float(s["p95_ms"].median()),
                   recovery_s=recovery_s(g, "qps", RECOVERED * before),
                   # the pool's own recovery: the hot table as resident as it was before the scan
                   cache_recovery_s=recovery_s(g, "hot_resident", CACHE_RECOVERED * float(b["hot_resident"].iloc[-1]))
                   if "hot_resident" in g else float("nan"))
        for col, how in (("hot_resident", "min"), ("hot_reads_s", "mean"), ("hit_ratio", "median"),
                         ("device_mb_s", "mean"), ("made_young_s", "mean"), ("alloc_s", "mean"), ("free_pages", "median"), ("old_share", "median"),
                         ("query_ms", "median")):
            if col in g:
                row[f"{col}_scan"] = float(getattr(s[col], how)())
                row[f"{col}_before"] = float(getattr(b[col], how)())
        if "big_resident" in g:  # buffers of the big table the scan took beyond what it held before
            row["big_taken"] = float(s["big_resident"].max() - b["big_resident"].iloc[-1])
        rows.append(row)
    out = pd.DataFrame(rows)
    out["variant"] = pd.Categorical(out["variant"], tl["variant"].cat.categories, ordered=True)
    return out


def summary(res: Results) -> pd.DataFrame:
    """Per server and variant: hot QPS during the scan relative to before (geometric mean of each
    repeat's ratio, with a t interval over the repeats: before and during are one run's, so the pair
    is the repeat), the seconds to recover, and the pool's state during the scan (medians over repeats)."""
    r = per_run(res)
    if r.empty:
        return r
    rows = []
    for (name, variant), g in r.groupby(["series_name", "variant"], observed=True):
        ratio, lo, hi = stats.pair_ratio_ci(g["qps_scan"], g["qps_before"])
        row = {"series_name": name, "variant": variant, "flavor": g["flavor"].iloc[0], "repeats": len(g),
               "qps_before": g["qps_before"].median(), "ratio": ratio, "ci_low": lo, "ci_high": hi,
               "recovery_s": g["recovery_s"].median(), "recovery_max_s": g["recovery_s"].max(),
               "not_recovered": int(g["recovery_s"].isna().sum()),
               "cache_recovery_s": g["cache_recovery_s"].median()}
        for col in ("hot_resident_scan", "hot_reads_s_scan", "hit_ratio_scan", "hit_ratio_before",
                    "device_mb_s_scan", "made_young_s_scan", "made_young_s_before", "alloc_s_scan", "alloc_s_before", "free_pages_scan", "old_share_scan",
                    "big_taken", "query_ms_scan", "p95_before", "p95_scan"):
            if col in g:
                row[col] = g[col].median()
        rows.append(row)
    out = pd.DataFrame(rows)
    out["variant"] = pd.Categorical(out["variant"], r["variant"].cat.categories, ordered=True)
    # servers as the book orders them: InnoDB's flavors, then PostgreSQL, each by version
    flavors = {name: i for i, name in enumerate(INNODB + PG)}
    key = [(flavors.get(f, 99), version_key(n)) for f, n in zip(out["flavor"], out["series_name"])]
    out["_key"] = key
    return out.sort_values(["_key", "variant"]).drop(columns="_key").reset_index(drop=True)


def usage_counts(res: Results) -> pd.DataFrame:
    """PostgreSQL: shared buffers by usage count and by what they hold (hot table, big table,
    other, free), as shares of shared buffers, averaged over each phase's samples and the repeats."""
    s = res.series
    w = tidy(res)
    if s.empty or w.empty:
        return pd.DataFrame()
    u = s[(s["source"] == "pool") & s["name"].str.startswith("usage.")]
    if u.empty:
        return pd.DataFrame()
    u = u.merge(w[["run_id", "series_name", "variant", "before_s", "scan_s", "after_s"]], on="run_id")
    u["phase"] = [phase_of(t, r) for t, r in zip(u["t"], u[["before_s", "scan_s"]].to_dict("records"))]
    u = u.dropna(subset=["phase"])
    parts = u["name"].str.split(".", expand=True)
    u["holds"], u["usage"] = parts[1], parts[2].astype(int)
    total = u.groupby(["run_id", "t"])["value"].transform("sum")
    u["share"] = u["value"] / total
    out = u.groupby(["series_name", "variant", "phase", "holds", "usage"], observed=True)["share"].mean().reset_index()
    return out


def sizes_mb(res: Results) -> dict[str, float]:
    """Median MiB of the hot table's and the big table's primary key, from the pages each run counted."""
    w = tidy(res)
    page = w["flavor"].map(lambda f: flavor_class(f).page_bytes) / 2 ** 20
    pg = w["flavor"].map(lambda f: flavor_class(f).reads_through_page_cache)
    return {"hot": float((w["hot_pages"] * page).median()),
            "big_pg": float((w["big_pages"] * page)[pg].median()) if pg.any() else float("nan")}


def chart_frame(tl: pd.DataFrame, y: str) -> pd.DataFrame:
    """The timeline's rows that have ``y``, with each run's scan window and labels as a chart wants them."""
    return tl.dropna(subset=[y]).assign(scan_from=lambda d: d["before_s"],
                                        scan_to=lambda d: d["before_s"] + d["scan_s"],
                                        variant=lambda d: d["variant"].astype(str),
                                        repeat=lambda d: d["repeat"].astype(str))


# --- claims -------------------------------------------------------------------------------------------
def _innodb(sm: pd.DataFrame, variant: str) -> pd.DataFrame:
    return sm[(sm["flavor"].isin(INNODB)) & (sm["variant"] == variant)]


def _pg(sm: pd.DataFrame, variant: str) -> pd.DataFrame:
    return sm[(sm["flavor"].isin(PG)) & (sm["variant"] == variant)]


def claims(res: Results) -> pd.DataFrame:
    sm = summary(res)
    src = KERNELMAKER_BUFFERPOOL
    rows = []
    nm = verdicts.NOT_MEASURED
    d = _innodb(sm, VARIANT_NAMES[0])
    if len(d):
        share = d["old_share_scan"]
        rows.append((src.cite("InnoDB inserts a page read from disk at the midpoint of its LRU list, about 3/8 "
                              "from the tail (the old sublist, innodb_old_blocks_pct = 37)"),
                     "old sublist during the scan: " + ", ".join(f"{n} {100 * v:.1f}%" for n, v in
                                                                  zip(d["series_name"], share)) + " of the LRU pages",
                     verdicts.combine("agrees" if abs(v - 0.375) <= 0.02 else "disagrees" for v in share)))
        rows.append((src.cite("A full scan's pages stay in the old sublist for less than innodb_old_blocks_time "
                              "(1 s) and are evicted from there: the scan does not push the hot pages out"),
                     "least share of the hot table resident during the scan: "
                     + ", ".join(f"{n} {100 * v:.0f}%" for n, v in zip(d["series_name"], d["hot_resident_scan"]))
                     + "; hot-table reads from disk during the scan: "
                     + ", ".join(f"{v:,.0f}/s" for v in d["hot_reads_s_scan"]),
                     verdicts.combine(_kept(v) for v in d["hot_resident_scan"])))
        z = _innodb(sm, "old_blocks_time=0")
        if len(z):
            both = d.merge(z, on="series_name", suffixes=("", "_zero"))
            cells = [f"{r.series_name}: {r.made_young_s_scan_zero:,.0f} against {r.made_young_s_scan:,.0f} pages "
                     f"made young per second, {100 * r.hot_resident_scan_zero:.0f}% of the hot table resident at "
                     f"least (against {100 * r.hot_resident_scan:.0f}%)" for r in both.itertuples()]
            rows.append((src.cite("That protection is innodb_old_blocks_time's: a page touched again after it is "
                                  "moves to the young end"),
                         "with innodb_old_blocks_time = 0 during the scan: " + "; ".join(cells),
                         verdicts.combine(verdicts.ratio(r.made_young_s_scan_zero / max(r.made_young_s_scan, 1.0),
                                                         "above") for r in both.itertuples())))
        else:
            rows.append((src.cite("That protection is innodb_old_blocks_time's"), "", nm))
    k = _innodb(sm, "scan depth at its default")
    if len(k):
        rows.append(("Our extension: the midpoint keeps the hot set at the server's own innodb_lru_scan_depth too, "
                     "on a pool this small",
                     "least share of the hot table resident during the scan: "
                     + ", ".join(f"{r.series_name} {100 * r.hot_resident_scan:.0f}%" for r in k.itertuples()),
                     verdicts.combine(_kept(v) for v in k["hot_resident_scan"])))
    seq, idx = _pg(sm, "seq scan (ring)"), _pg(sm, "index scan (no ring)")
    if len(seq):
        both = seq.merge(idx, on="series_name", suffixes=("", "_idx")) if len(idx) else pd.DataFrame()
        if len(both):
            cells = [f"{r.series_name}: {r.alloc_s_scan:,.0f} against {r.alloc_s_scan_idx:,.0f} without the ring, "
                     f"{100 * r.hot_resident_scan:.0f}% of the hot table resident at least" for r in both.itertuples()]
            rows.append((src.cite("A PostgreSQL sequential scan reads through a small ring of buffers of its own, so "
                                  "that a large scan does not flood shared buffers"),
                         "buffers taken from the clock sweep per second during the sequential scan: " + "; ".join(cells),
                         verdicts.combine(_ring(r.alloc_s_scan / max(r.alloc_s_scan_idx, 1.0), r.hot_resident_scan)
                                          for r in both.itertuples())))
            old = both[[major(n) <= 16 for n in both["series_name"]]]
            new = both[[major(n) >= 17 for n in both["series_name"]]]
            if len(old) and len(new):
                share = both["alloc_s_scan"] / both["alloc_s_scan_idx"].clip(lower=1.0)
                worst_old = float(share[old.index].max())
                rows.append(("Our extension: PostgreSQL 17 and 18 (read streams; asynchronous I/O in 18) keep a "
                             "sequential scan inside its ring as 12 to 16 do",
                             "clock-sweep allocations of the sequential scan as a share of the index read's: "
                             + "; ".join(f"{n} {100 * v:.1f}%" for n, v in zip(both["series_name"], share)),
                             verdicts.combine("agrees" if share[i] <= max(2 * worst_old, RING_LEAK) else "disagrees"
                                              for i in new.index)))
        else:
            rows.append(("Our extension: PostgreSQL 17 and 18 keep a sequential scan inside its ring as 12 to 16 do",
                         "", nm))
    u = usage_counts(res)
    if len(u):
        hot5 = u[(u["holds"] == "hot") & (u["phase"] == "before")]
        share5 = hot5.groupby("series_name").apply(
            lambda g: g[g["usage"] == 5]["share"].sum() / max(g["share"].sum(), 1e-12), include_groups=False)
        rows.append((src.cite("usage_count counts a buffer's accesses and stops at 5; the clock sweep lowers it "
                              "and evicts a buffer once it reaches 0"),
                     "share of the hot table's buffers at usage count 5 before the scan: "
                     + ", ".join(f"{n} {100 * v:.0f}%" for n, v in share5.items()),
                     verdicts.combine("agrees" if v >= 0.5 else "disagrees" for v in share5)))
    return pd.DataFrame(rows, columns=["claim", "measured here", "verdict"])


def findings(res: Results) -> str:
    """What this run found, as markdown bullets, every number from the summary."""
    sm = summary(res)
    if sm.empty:
        return "No runs in these results."

    def pct(v):
        return f"{100 * v:.0f}%"

    def names(df):
        return ", ".join(df["series_name"])

    out = []
    d = _innodb(sm, VARIANT_NAMES[0])
    if len(d):
        out.append(f"- **InnoDB at its defaults** ({names(d)}; page-cleaner depth scaled to the pool): the least share "
                   f"of the hot table left in the pool during the scan was {', '.join(pct(v) for v in d['hot_resident_scan'])}, "
                   f"with {', '.join(f'{v:,.0f}' for v in d['hot_reads_s_scan'])} hot-table reads from disk per second "
                   f"and {', '.join(f'{v:,.0f}' for v in d['made_young_s_scan'])} pages made young per second.")
    z = _innodb(sm, "old_blocks_time=0")
    if len(z) and len(d):
        out.append(f"- **innodb_old_blocks_time = 0**: the scan's pages are made young "
                   f"({', '.join(f'{v:,.0f}' for v in z['made_young_s_scan'])} per second) and the hot table fell to "
                   f"{', '.join(pct(v) for v in z['hot_resident_scan'])} resident, with "
                   f"{', '.join(f'{v:,.0f}' for v in z['hot_reads_s_scan'])} hot reads from disk per second; hot QPS "
                   f"during the scan was {', '.join(f'{v:.2f}' for v in z['ratio'])} of before, against "
                   f"{', '.join(f'{v:.2f}' for v in d['ratio'])} at the defaults (same servers, same order).")
    k = _innodb(sm, "scan depth at its default")
    if len(k):
        out.append(f"- **innodb_lru_scan_depth at the server's default** (MySQL 1,024, MariaDB 1,536 free pages per "
                   f"instance, in a pool of {int(res.wide['pool_mb'].max()) * 64:,} pages): during the scan the page "
                   "cleaner kept " + ", ".join(f"{r.free_pages_scan:,.0f} ({r.series_name})" for r in k.itertuples())
                   + " pages free (median), against "
                   + ", ".join(f"{r.free_pages_scan:,.0f}" for r in d.itertuples())
                   + " at a depth of 100, and the hot table kept "
                   + ", ".join(f"{pct(r.hot_resident_scan)} ({r.series_name})" for r in k.itertuples())
                   + " at least. Where the cleaner keeps most of the pool free, the LRU list is too short to hold the "
                     "hot table beside the scan's pages, midpoint or not.")
    seq, idx = _pg(sm, "seq scan (ring)"), _pg(sm, "index scan (no ring)")
    if len(seq):
        out.append(f"- **PostgreSQL's sequential scan** ({names(seq)}) took "
                   f"{', '.join(f'{v:,.0f}' for v in seq['alloc_s_scan'])} buffers per second from the clock sweep "
                   f"(the ring reusing its own buffers is not counted), and the hot table stayed "
                   f"{', '.join(pct(v) for v in seq['hot_resident_scan'])} resident.")
    if len(idx):
        out.append(f"- **The same rows through the primary key** (no ring) took "
                   f"{', '.join(f'{v:,.0f}' for v in idx['alloc_s_scan'])} buffers per second from the sweep, yet the "
                   f"hot table stayed {', '.join(pct(v) for v in idx['hot_resident_scan'])} resident: its buffers sit "
                   "at usage count 5 and are read again long before five sweeps pass over them.")
    up = _pg(sm, "UPDATE scan")
    if len(up):
        out.append(f"- **An UPDATE of every row** ({names(up)}) took {', '.join(f'{v:,.0f}' for v in up['alloc_s_scan'])} "
                   "buffers per second from the sweep, between the ring and no ring: a bulk-read ring gives up a buffer "
                   "it could only reuse after flushing WAL for it (StrategyRejectBuffer) and takes another from the sweep.")
    r = sm["recovery_s"]
    out.append(f"- **Recovery**: hot QPS was back at 95% of before within {r.max():.0f} s of the scan stopping in every "
               f"server and variant (median {r.median():.0f} s; resolution 1 s)" if r.notna().all() else
               f"- **Recovery**: {int(r.isna().sum())} server-variant(s) did not get back to 95% of before within "
               f"the seconds measured; the others within {r.max():.0f} s.")
    return "\n".join(out)


def _kept(resident: float) -> str:
    """A hot set kept: at least 95% of it resident all through the scan; lost: under 80% at some point."""
    if resident != resident:
        return verdicts.NOT_MEASURED
    if resident >= 0.95:
        return "agrees"
    if resident < 0.80:
        return "disagrees"
    return "not resolved (between 80% and 95% of the hot table stayed)"


def _ring(share: float, resident: float) -> str:
    """A ring holds: the sequential scan took at most RING_LEAK of the buffers the same read takes
    without a ring from the clock sweep, and the hot set was kept; it fails above 50% or when the hot
    set was lost."""
    if share != share:
        return verdicts.NOT_MEASURED
    if share <= RING_LEAK and resident >= 0.95:
        return "agrees"
    if share > 0.5 or resident < 0.80:
        return "disagrees"
    return f"not resolved (the scan took {100 * share:.0f}% of the buffers the read without a ring took)"
