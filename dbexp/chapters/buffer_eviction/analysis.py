"""The chapter's numbers from its runs: each second's hot QPS and pool state (the timeline), each
run's phases and recovery, and per server and variant the ratio during/before with its interval."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dbexp.book.charts import server_order
from dbexp.experiments import stats
from dbexp.experiments.chapter import Results

from .innodb import BufferPool
from .parts import VARIANT_NAMES, part_of
from .postgres import SharedBuffers

RECOVERED = 0.95  # recovered: hot QPS back to this share of its median before the scan
CACHE_RECOVERED = 0.99  # the pool recovered: the hot table back to this share of what was resident before
PHASES = ("before", "scan", "after")


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
        df["engine"] = part_of(run["flavor"]).engine
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
    order = {name: i for i, name in enumerate(server_order(out["series_name"].unique()))}
    out["_key"] = out["series_name"].map(order)
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
    page = w["flavor"].map(lambda f: part_of(f).page_bytes) / 2 ** 20
    pg = w["flavor"].map(lambda f: part_of(f).reads_through_page_cache)
    return {"hot": float((w["hot_pages"] * page).median()),
            "big_pg": float((w["big_pages"] * page)[pg].median()) if pg.any() else float("nan")}


def chart_frame(tl: pd.DataFrame, y: str) -> pd.DataFrame:
    """The timeline's rows that have ``y``, with each run's scan window and labels as a chart wants them."""
    return tl.dropna(subset=[y]).assign(scan_from=lambda d: d["before_s"],
                                        scan_to=lambda d: d["before_s"] + d["scan_s"],
                                        variant=lambda d: d["variant"].astype(str),
                                        repeat=lambda d: d["repeat"].astype(str))




def of_variant(sm: pd.DataFrame, variant: str) -> pd.DataFrame:
    """The summary's rows of one variant (a variant belongs to one engine: its servers' rows)."""
    return sm[sm["variant"] == variant]


def pool_pages(pool_mb: int) -> int:
    """InnoDB pages (16 kB) in a pool of ``pool_mb`` MiB."""
    return int(pool_mb) * (2 ** 20 // BufferPool.page_bytes)


def page_numbers(res: Results, w: pd.DataFrame, tl: pd.DataFrame) -> dict:
    """The numbers the page's account of the setup quotes: sizes, the phases' seconds, PostgreSQL's
    memory limit, the pool queries' median time per engine, the server's CPU."""
    mb = sizes_mb(res)
    page_cache = w["flavor"].map(lambda f: part_of(f).reads_through_page_cache).astype(bool)
    q = tl.groupby("engine")["query_ms"].median() if "query_ms" in tl else pd.Series(dtype=float)
    return {
        "pool_mb": int(w["pool_mb"].max()),
        "table_rows": int(w["table_size"].max()) if "table_size" in w else 0,
        "hot_rows": int(w["hot_rows"].max()),
        "big_mb": mb["big_pg"] if mb["big_pg"] == mb["big_pg"] else 0.0,
        "hot_mb": mb["hot"],
        "before_s": int(w["before_s"].max()),
        "scan_s": int(w["scan_s"].max()),
        "after_s": int(w["after_s"].max()),
        "pg_memory": ", ".join(sorted(w.loc[page_cache, "memory_limit"].dropna().unique())) or "none",
        "query_ms_innodb": float(q.get(BufferPool.engine, 0.0)),
        "query_ms_pg": float(q.get(SharedBuffers.engine, 0.0)),
        "pool_pages": pool_pages(w["pool_mb"].max()),
        "server_cpu": str(w["server_cpus"].iloc[0]),
    }
