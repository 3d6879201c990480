"""The chapter's numbers from its runs: each second's hot QPS, pool state and sessions' CPU (the
timeline), each run's phases and recovery, and per server and variant what the scan did to the hot
table (its misses per hot query, with an interval over the repeats), to the CPU (the scan's share,
the hot sessions' CPU per query during/before) and to hot QPS (during/before, with its interval).

Hot QPS during the scan is not a measure of eviction here: the scan and the hot sessions share the
server's one CPU, so it falls with the CPU the scan takes even where no hot page is evicted. Eviction
is read from the hot table's misses (pages read from disk, or into shared buffers) and residency;
the CPU the scan took, from the sessions' own CPU time (sessions.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dbexp.book.charts import server_order
from dbexp.experiments import stats, steps
from dbexp.experiments.chapter import Results, memo

from .chapter import VARIANT_NAMES, part_of
from .engines.innodb import BufferPool
from .engines.postgres import SharedBuffers, bulkread_ring

RECOVERED = 0.95  # recovered: hot QPS back to this share of its median before the scan
CACHE_RECOVERED = 0.99  # the pool recovered: the hot table back to this share of what was resident before
PHASES = ("before", "scan", "after")


def mechanics(res: Results) -> pd.DataFrame:
    """The step-by-step runs (chapter.MechanicsPoint), one row each with its ``probe`` and observations."""
    w = res.wide
    return w[steps.is_step_run(w)].copy() if len(w) else w


def tidy(res: Results) -> pd.DataFrame:
    """The eviction runs (the step-by-step runs apart: mechanics()), computed once per results."""
    return memo(res, "buffer_eviction.tidy", lambda: _tidy(res))


def _tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    if w.empty:
        return w
    w = w[~steps.is_step_run(w)]
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
    the hot table's resident share and misses, the device's reads, pages made young (computed once
    per results)."""
    return memo(res, "buffer_eviction.timeline", lambda: _timeline(res))


def _timeline(res: Results) -> pd.DataFrame:
    w = tidy(res)
    s = res.series
    if w.empty or s.empty:
        return pd.DataFrame()
    s = s[s["run_id"].isin(w["run_id"])]
    # each source's series as one table per run (run_id, t) x name, pivoted once for all runs
    wide = {src: g.pivot_table(index=["run_id", "t"], columns="name", values="value")
            for src, g in s.groupby("source") if src in ("sysbench", "pool", "sessions", "server")}
    # each source's table split by run once (a lookup per run and source would scan the index each time)
    by_run = {src: {rid: g.droplevel("run_id").dropna(axis=1, how="all").sort_index()
                    for rid, g in t.groupby(level="run_id", sort=False)} for src, t in wide.items()}
    runs = w.drop_duplicates("run_id").set_index("run_id", drop=False)
    empty = pd.DataFrame()
    rows = []
    for rid in sorted(s["run_id"].unique()):
        run = runs.loc[rid]
        per = {src: split.get(rid, empty) for src, split in by_run.items()}
        sb, pool, cpu = (per.get(src, empty) for src in ("sysbench", "pool", "sessions"))
        server = per.get("server", empty)
        disk = server["disk_rbytes/s"].dropna() if "disk_rbytes/s" in server else pd.Series(dtype=float)
        server_cpu = server["cpu_s/s"].dropna() if "cpu_s/s" in server else pd.Series(dtype=float)
        # the columns gathered first and the frame made once (a column added to a frame costs ~0.5 ms)
        t = np.asarray(sb.index, dtype=float)
        qps = sb["qps"].to_numpy(dtype=float)
        per_q = np.where(qps > 0, qps, np.nan)
        df = {"t": t, "qps": qps, "p95_ms": sb["lat_p95_ms"].to_numpy(dtype=float)}
        if len(pool):
            # the sample nearest each report's end, and rates between consecutive samples
            pool = pool.reindex(pool.index.union(t)).interpolate("index").reindex(t)
            d = pool.diff()
            df["hit_ratio"] = (1 - d["reads"] / d["requests"]).values
            df["hot_resident"] = (pool["resident.hot"] / run["hot_pages"]).values
            df["big_resident"] = pool["resident.big"].values
            young = _hot_young(pool, run["flavor"])
            if young is not None:  # InnoDB: the hot table's pages in the young sublist
                df["hot_young"] = young.values
            if "usage.hot.2" in pool:  # PostgreSQL: its buffers at usage count 2 or more
                df["hot_used_twice"] = pool[[f"usage.hot.{u}" for u in range(2, 6)]].sum(axis=1, min_count=1).values
            df["hot_reads_s"] = d["hot_reads"].values
            if "buffers_alloc" in d:
                df["alloc_s"] = d["buffers_alloc"].values
            if "made_young" in d:
                df["made_young_s"] = d["made_young"].values
                df["old_share"] = (pool["lru_old_pages"] / pool["lru_pages"]).values
                df["free_pages"] = pool["free_pages"].values
                df["lru_pages"] = pool["lru_pages"].values
                df["pool_size"] = pool["pool_pages"].values  # the pages the server made of pool_mb
            df["query_ms"] = pool["lru_query_ms"].values
            df["hot_misses_per_q"] = df["hot_reads_s"] / per_q
        if len(cpu):  # CPU seconds per second of the hot sessions and of the scanning session
            cpu = cpu.reindex(cpu.index.union(t)).interpolate("index").reindex(t).diff()
            for role in ("hot", "scan"):
                if f"cpu.{role}" in cpu:
                    df[f"{role}_cpu"] = cpu[f"cpu.{role}"].values
            if "hot_cpu" in df:
                df["hot_cpu_us_per_q"] = 1e6 * df["hot_cpu"] / per_q
        if len(server_cpu):
            df["server_cpu"] = np.interp(t, server_cpu.index, server_cpu.values)
        if len(disk):
            df["device_mb_s"] = np.interp(t, disk.index, disk.values) / 2 ** 20
        df["phase"] = [phase_of(x, run) for x in t]
        for col in ("run_id", "series_name", "variant", "repeat", "flavor", "before_s", "scan_s", "after_s"):
            df[col] = run[col]
        df["engine"] = part_of(run["flavor"]).engine
        df = pd.DataFrame(df)
        rows.append(df)
    out = pd.concat(rows, ignore_index=True)
    out["variant"] = pd.Categorical(out["variant"], w["variant"].cat.categories, ordered=True)
    return out


def _hot_young(pool: pd.DataFrame, flavor: str) -> pd.Series | None:
    """InnoDB: the hot table's pages in the young sublist in each sample: what the sample says (``young.hot``,
    by LRU position where IS_OLD is empty), or, in runs sampled before that, its resident pages less those IS_OLD
    marked old where the server fills IS_OLD (MySQL; MariaDB's samples then counted no page old); None elsewhere."""
    if "young.hot" in pool:
        return pool["young.hot"]
    if "old.hot" in pool and getattr(part_of(flavor), "fills_is_old", False):
        return pool["resident.hot"] - pool["old.hot"]
    return None


# where a run's hot-set standing at the scan's start comes from
STORED, SAMPLED = "stored", "sampled"


def hot_at_scan(res: Results) -> pd.DataFrame:
    """Per eviction run: where the hot table stood as the scan started: its pages resident, those the pool keeps
    first (``kept``: InnoDB's young sublist, by LRU position; PostgreSQL's usage count 2 or more) and, InnoDB, those
    old; ``source`` STORED where the run stored it at the scan's start (issue 43: the run's own check), SAMPLED
    where it is the run's last per-second sample before the scan (runs measured before; only where that sample
    shows it: MySQL's IS_OLD, PostgreSQL's usage counts), '' where neither (MariaDB's runs before issue 43)."""
    return memo(res, "buffer_eviction.hot_at_scan", lambda: _hot_at_scan(res))


def _hot_at_scan(res: Results) -> pd.DataFrame:
    w = tidy(res)
    cols = ["run_id", "series_name", "variant", "flavor", "hot_pages", "resident", "kept", "old", "source"]
    if w.empty:
        return pd.DataFrame(columns=cols)
    s = res.series
    names = ["resident.hot", "old.hot", "young.hot", *(f"usage.hot.{u}" for u in range(2, 6))]
    last = pd.DataFrame()
    if len(s):  # each run's last pool sample before the scan started (sysbench's clock, as before_s is)
        pool = s[(s["source"] == "pool") & s["name"].isin(names)].merge(w[["run_id", "before_s"]], on="run_id")
        pool = pool[pool["t"] <= pool["before_s"].astype(float)].sort_values("t", kind="stable")
        last = pool.groupby(["run_id", "name"])["value"].last().unstack()
    rows = []
    for r in w.itertuples():
        part = part_of(r.flavor)
        kept = getattr(r, f"hot_{part.kept_first}_at_scan", None)
        row = {"run_id": r.run_id, "series_name": r.series_name, "variant": r.variant, "flavor": r.flavor,
               "hot_pages": float(r.hot_pages), "resident": float("nan"), "kept": float("nan"),
               "old": float("nan"), "source": ""}
        if kept is not None and kept == kept:
            row.update(resident=float(r.hot_resident_at_scan), kept=float(kept),
                       old=float(getattr(r, "hot_old_at_scan", float("nan"))), source=STORED)
        elif r.run_id in last.index:
            sample = last.loc[[r.run_id]]
            if part.kept_first == "young":
                young = _hot_young(sample, r.flavor)
                if young is not None and young.notna().all():
                    resident = float(sample["resident.hot"].iloc[0])
                    row.update(resident=resident, kept=float(young.iloc[0]), old=resident - float(young.iloc[0]),
                               source=SAMPLED)
            elif "usage.hot.2" in sample:
                row.update(resident=float(sample["resident.hot"].iloc[0]), source=SAMPLED,
                           kept=float(sum(sample[f"usage.hot.{u}"].iloc[0] for u in range(2, 6))))
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def pool_deltas(res: Results, names: tuple[str, ...]) -> pd.DataFrame:
    """Per eviction run (index run_id): how much each cumulative pool series of ``names`` grew over the run (its
    last sample less its first; NaN where the run did not sample it), e.g. pg_stat_io's ``io.bulkread.reuses``
    or pg_statio's ``hot_requests``."""
    w = tidy(res)
    s = res.series
    out = pd.DataFrame(index=pd.Index(w["run_id"] if len(w) else [], name="run_id"), columns=list(names), dtype=float)
    if w.empty or s.empty:
        return out
    g = s[(s["source"] == "pool") & s["name"].isin(names) & s["run_id"].isin(w["run_id"])]
    if g.empty:
        return out
    g = g.sort_values("t", kind="stable").groupby(["run_id", "name"])["value"].agg(["first", "last"])
    got = (g["last"] - g["first"]).unstack()
    return got.reindex(index=out.index, columns=list(names)).astype(float)


def recovery_s(g: pd.DataFrame, column: str, level: float) -> float:
    """Seconds after the scan stopped until ``column`` first reached ``level`` (1: within the first
    second after it); NaN where it did not within the run."""
    g = g.sort_values("t", kind="stable")
    end = float(g["before_s"].iloc[0] + g["scan_s"].iloc[0])
    return _recovered_after(g["t"].to_numpy(dtype=float), g[column].to_numpy(dtype=float), end, level)


def per_run(res: Results) -> pd.DataFrame:
    """One row per run: hot QPS before and during the scan (medians of its seconds), recovery, and
    what the pool did during the scan (computed once per results)."""
    return memo(res, "buffer_eviction.per_run", lambda: _per_run(res))


_AGGREGATES = (("hot_resident", "min"), ("hot_young", "min"), ("hot_used_twice", "min"), ("hot_reads_s", "mean"), ("hit_ratio", "median"), ("device_mb_s", "mean"),
               ("made_young_s", "mean"), ("alloc_s", "mean"), ("free_pages", "median"), ("old_share", "median"),
               ("lru_pages", "min"), ("pool_size", "median"), ("query_ms", "median"), ("hot_cpu", "mean"),
               ("scan_cpu", "mean"), ("server_cpu", "mean"))


def _phase_stat(values: np.ndarray, how: str) -> float:
    """pandas' skipna min, max, mean or median of one phase's seconds, to the last bit (its mean sums the
    values with each NaN as 0, then divides by the count); NaN where none is a number."""
    missing = np.isnan(values)
    count = int((~missing).sum())
    if not count:
        return float("nan")
    if how == "mean":
        return float(np.where(missing, 0.0, values).sum() / count)
    v = values[~missing]
    return float({"min": np.min, "max": np.max, "median": np.median}[how](v))


def _recovered_after(t: np.ndarray, values: np.ndarray, end: float, level: float) -> float:
    """recovery_s on one run's arrays (its seconds in order of t)."""
    after = (t > end) & (values >= level)
    return float(t[after][0] - end) if after.any() else float("nan")


def _per_run(res: Results) -> pd.DataFrame:
    tl = timeline(res)
    if tl.empty:
        return tl
    rows = []
    present = [(col, how) for col, how in _AGGREGATES if col in tl]
    numeric = ["qps", "p95_ms", "t", *(c for c, _ in present), *(c for c in ("big_resident",) if c in tl)]
    for rid, g in tl.sort_values("t", kind="stable").groupby("run_id", observed=True, sort=True):
        x = {c: g[c].to_numpy(dtype=float) for c in dict.fromkeys(numeric)}  # each column's seconds, once
        phase = g["phase"].to_numpy()
        b, s = phase == "before", phase == "scan"
        first = g.iloc[0]
        before = _phase_stat(x["qps"][b], "median")
        end = float(first["before_s"] + first["scan_s"])
        row = {c: first[c] for c in ("run_id", "series_name", "variant", "repeat", "flavor")}
        row.update(qps_before=before, qps_scan=_phase_stat(x["qps"][s], "median"),
                   p95_before=_phase_stat(x["p95_ms"][b], "median"), p95_scan=_phase_stat(x["p95_ms"][s], "median"),
                   recovery_s=_recovered_after(x["t"], x["qps"], end, RECOVERED * before),
                   # the pool's own recovery: the hot table as resident as it was before the scan
                   cache_recovery_s=_recovered_after(x["t"], x["hot_resident"], end,
                                                     CACHE_RECOVERED * float(x["hot_resident"][b][-1]))
                   if "hot_resident" in x else float("nan"))
        for col, how in present:
            row[f"{col}_scan"] = _phase_stat(x[col][s], how)
            row[f"{col}_before"] = _phase_stat(x[col][b], how)
        # per hot query over the phase: the hot table's misses, the hot sessions' CPU (us)
        for phase_name, mask in (("scan", s), ("before", b)):
            q = float(np.nansum(x["qps"][mask]))
            if "hot_reads_s" in x:
                row[f"misses_per_q_{phase_name}"] = float(np.nansum(x["hot_reads_s"][mask])) / q if q > 0 else float("nan")
            if "hot_cpu" in x:
                row[f"cpu_us_per_q_{phase_name}"] = 1e6 * float(np.nansum(x["hot_cpu"][mask])) / q if q > 0 else float("nan")
        if "big_resident" in x:  # buffers of the big table the scan took beyond what it held before
            row["big_taken"] = _phase_stat(x["big_resident"][s], "max") - float(x["big_resident"][b][-1])
        rows.append(row)
    out = pd.DataFrame(rows)
    # where the hot set stood as the scan started (hot_at_scan): kept first, old, and where that was read
    at = hot_at_scan(res).set_index("run_id")
    for col, name in (("hot_pages", "hot_pages"), ("resident", "resident_at_scan"), ("kept", "kept_at_scan"),
                      ("old", "old_at_scan"), ("source", "at_scan_from")):
        out[name] = out["run_id"].map(at[col]) if len(at) else float("nan")
    out["variant"] = pd.Categorical(out["variant"], tl["variant"].cat.categories, ordered=True)
    return out


def summary(res: Results) -> pd.DataFrame:
    """Per server and variant: the hot table's misses per hot query during the scan (mean over the
    repeats, t interval over them), hot QPS during the scan relative to before and the hot sessions'
    CPU per query during relative to before (geometric means of each repeat's ratio, t intervals over
    the repeats: before and during are one run's, so the pair is the repeat), the scan's share of the
    CPU, the seconds to recover, and the pool's state during the scan (medians over repeats)."""
    r = per_run(res)
    if r.empty:
        return r
    rows = []
    nan3 = (float("nan"),) * 3
    for (name, variant), g in r.groupby(["series_name", "variant"], observed=True):
        ratio, lo, hi = stats.pair_ratio_ci(g["qps_scan"], g["qps_before"])
        misses = stats.mean_ci(g["misses_per_q_scan"]) if "misses_per_q_scan" in g else nan3
        cpu = g[["cpu_us_per_q_scan", "cpu_us_per_q_before"]].dropna() if "cpu_us_per_q_scan" in g else pd.DataFrame()
        cpu = cpu[(cpu > 0).all(axis=1)]  # a phase with no CPU tick recorded has no ratio
        cpu_ratio = stats.pair_ratio_ci(cpu["cpu_us_per_q_scan"], cpu["cpu_us_per_q_before"]) if len(cpu) else nan3
        row = {"series_name": name, "variant": variant, "flavor": g["flavor"].iloc[0], "repeats": len(g),
               "qps_before": g["qps_before"].median(), "ratio": ratio, "ci_low": lo, "ci_high": hi,
               "misses_per_q": misses[0], "misses_low": misses[1], "misses_high": misses[2],
               "cpu_ratio": cpu_ratio[0], "cpu_ratio_low": cpu_ratio[1], "cpu_ratio_high": cpu_ratio[2],
               "recovery_s": g["recovery_s"].median(), "recovery_max_s": g["recovery_s"].max(),
               "not_recovered": int(g["recovery_s"].isna().sum()),
               "cache_recovery_s": g["cache_recovery_s"].median()}
        for col in ("hot_resident_scan", "hot_reads_s_scan", "hit_ratio_scan", "hit_ratio_before",
                    "device_mb_s_scan", "made_young_s_scan", "made_young_s_before", "alloc_s_scan", "alloc_s_before",
                    "free_pages_scan", "old_share_scan", "pool_size_scan", "big_taken", "query_ms_scan",
                    "p95_before", "p95_scan", "qps_scan", "scan_cpu_scan", "hot_cpu_scan", "hot_cpu_before",
                    "server_cpu_scan", "server_cpu_before", "cpu_us_per_q_before", "cpu_us_per_q_scan",
                    "misses_per_q_before"):
            if col in g:
                row[col] = g[col].median()
        if "lru_pages_scan" in g:  # the shortest the LRU list was in any second of any repeat's scan
            row["lru_pages_min"] = g["lru_pages_scan"].min()
        # the hot set at the scan's start over the repeats (kept first, old), and the least kept first during it
        row.update(hot_pages=g["hot_pages"].median(), kept_at_scan_min=g["kept_at_scan"].min(),
                   kept_at_scan_max=g["kept_at_scan"].max(), old_at_scan_max=g["old_at_scan"].max(),
                   at_scan_stored=int((g["at_scan_from"] == STORED).sum()),
                   at_scan_known=int(g["kept_at_scan"].notna().sum()))
        for col in ("hot_young_scan", "hot_used_twice_scan"):
            if col in g:
                row[f"{col}_min"] = g[col].min()
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
    """InnoDB pages (16 kB) in a pool of ``pool_mb`` MiB, as asked: each server makes a few fewer or
    none fewer of them (pool_sizes)."""
    return int(pool_mb) * (2 ** 20 // BufferPool.page_bytes)


def pool_sizes(res: Results) -> dict[str, int]:
    """Per InnoDB server: the pages its buffer pool held (INNODB_BUFFER_POOL_STATS.POOL_SIZE, the
    median sample of its runs): MySQL 8.0.15 makes 3,072 of 48 MiB, 9.7.4 3,071, MariaDB 10.11.19 and
    11.8.9 3,042. Empty where the runs did not sample it."""
    tl = timeline(res)
    if tl.empty or "pool_size" not in tl:
        return {}
    got = tl.dropna(subset=["pool_size"]).groupby("series_name", observed=True)["pool_size"].median()
    return {name: int(got[name]) for name in server_order(got.index)}


def pool_pages_text(res: Results) -> str:
    """The InnoDB pool's pages in words: one number where every server made the same, else the
    range; the nominal pages of pool_mb where the runs did not sample it."""
    sizes = pool_sizes(res)
    if not sizes:
        w = res.wide
        return f"{pool_pages(w['pool_mb'].max()):,}" if len(w) else "no"
    lo, hi = min(sizes.values()), max(sizes.values())
    return f"{lo:,}" if lo == hi else f"{lo:,} to {hi:,}"


def pool_sizes_text(res: Results) -> str:
    """Each InnoDB server's pool pages in words ('mysql 8.0.15 3,072, ...'), or '' where not sampled."""
    return ", ".join(f"{name} {pages:,}" for name, pages in pool_sizes(res).items())


def scan_depths(res: Results, variant: str) -> dict[str, int]:
    """Per InnoDB server: innodb_lru_scan_depth as its runs of ``variant`` ran with it (the settings
    each run stored; for the variant at the server's default: MySQL 1,024, MariaDB 1,536)."""
    import json

    w = tidy(res)
    if w.empty or "settings_effective" not in w:
        return {}
    out = {}
    for name, g in w[w["variant"] == variant].groupby("series_name", observed=True):
        settings = g["settings_effective"].iloc[0]
        settings = json.loads(settings) if isinstance(settings, str) else dict(settings)
        if settings.get("innodb_lru_scan_depth") is not None:
            out[name] = int(settings["innodb_lru_scan_depth"])
    return out


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
        "pool_pages": pool_pages_text(res),
        "pool_sizes": pool_sizes_text(res) or "not sampled in these runs",
        "pg_buffers": int(w["pool_mb"].max()) * 2 ** 20 // SharedBuffers.page_bytes,
        "server_cpu": str(w["server_cpus"].iloc[0]),
        "hot_load": (f"at {hot_rate(w):,} queries a second between them (sysbench `--rate`)" if hot_rate(w)
                     else "as fast as they could (these runs predate the chapter's rate limit)"),
        "rings": ring_sentence(rings(res)) or "no PostgreSQL server in these results",
        "old_min_len": BufferPool.old_min_len,
        "starting_state": starting_state(w),
    }


def starting_state(w: pd.DataFrame) -> str:
    """How each run began, from the runs' stored checks (issue 32): restarted, the page cache dropped
    where the engine reads through it, the hot table read twice, the pool checked; or, for runs
    stored before that rule, that each began where the previous variant left the pool."""
    from .chapter import BIG_RESIDENT, HOT_RESIDENT, WARM_GAP_S

    if "precondition_ok" not in w or w["precondition_ok"].isna().all() or "restart_s" not in w:
        return ("These runs were measured before each run began from a declared state: a server's first run "
                "found the hot table just written, each later run the pool its previous variant left.")
    ok = int(w["precondition_ok"].fillna(False).astype(bool).sum())
    from dbexp.experiments.chapter import server_starts

    per = server_starts(w).groupby(w["spec"]).nunique() if "server_instance" in w else pd.Series(dtype=int)
    span = f"{per.min()}" if len(per) and per.min() == per.max() else f"{per.min()} to {per.max()}"
    starts = f", on {span} independently started servers per server" if len(per) else ""
    if "hot_resident_at_scan" not in w or w["hot_resident_at_scan"].isna().all():
        return (f"Every run began on a server restarted just before it (a fresh process: the pool or shared buffers "
                f"empty; median restart {w['restart_s'].median():.1f} s), with the host's page cache dropped for "
                f"PostgreSQL, the variant's settings set and the hot table read twice {WARM_GAP_S:g} s apart; before "
                f"the run, at least {HOT_RESIDENT:.0%} of the hot table and at most {BIG_RESIDENT:.0%} of the big "
                f"table had to be in the pool: {ok} of {len(w)} runs held it{starts}, the repeats spread over them. "
                "Where the hot table stood in InnoDB's LRU list was not checked: in a pool just restarted InnoDB "
                "makes no page young before it has evicted one, so part of it began the scan in the old sublist "
                "(the claims table's witnesses say how much).")
    from .chapter import FILLER_SHARE, HOT_KEPT_FIRST

    return (f"Every run began on a server restarted just before it (a fresh process: the pool or shared buffers "
            f"empty; median restart {w['restart_s'].median():.1f} s), with the host's page cache dropped for "
            f"PostgreSQL. The hot table was then read twice, {WARM_GAP_S:g} s apart, so that each pool keeps it "
            f"first: InnoDB makes a page young when it is read again after innodb_old_blocks_time (1 s), but only "
            f"once it has evicted a page (buf_page_peek_if_too_old: until then the free-page clock is 0 and no page "
            f"moves), so InnoDB first read a filler table of {FILLER_SHARE:g} times its pool, and the two reads ran "
            f"under the defaults' LRU settings, the variant's set after them; PostgreSQL counts a use at each read "
            f"(usage count 2). Before the run, at least {HOT_RESIDENT:.0%} of the hot table had to be in the pool and "
            f"{HOT_KEPT_FIRST:.0%} kept first (InnoDB: in the young sublist, read by LRU position; PostgreSQL: at usage "
            f"count 2 or more), and at most {BIG_RESIDENT:.0%} of the big table: {ok} of {len(w)} runs held it{starts}, "
            f"the repeats spread over them; each run checked the hot table's standing again as its scan started, "
            f"and stored it.")


def ring_sentence(r: pd.DataFrame) -> str:
    """The rings per PostgreSQL version in words: the versions that share a size together, and
    how the size was computed where it is not the plain 256 kB."""
    parts = []
    for (buffers, kb), g in r.groupby(["ring_buffers", "ring_kb"], sort=False):
        names = ", ".join(n.split()[-1] for n in g["series_name"])
        hows = [f"{n.split()[-1]}: {h}" for n, h in zip(g["series_name"], g["ring_how"]) if "asked" in h or "capped" in h]
        parts.append(f"{buffers} buffers ({kb} kB) on {names}" + (f" ({'; '.join(hows)})" if hows else ""))
    return "; ".join(parts)


def rings(res: Results) -> pd.DataFrame:
    """Per PostgreSQL server: the bulk-read ring its sequential scan read through, as its version
    sizes it from the settings the server ran with (postgres.bulkread_ring)."""
    import json

    w = tidy(res)
    rows = []
    for name, g in w.groupby("series_name"):
        if part_of(g["flavor"].iloc[0]) is not SharedBuffers:
            continue
        settings = g["settings_effective"].iloc[0]
        ring = bulkread_ring(name, json.loads(settings) if isinstance(settings, str) else dict(settings))
        rows.append({"series_name": name, "ring_buffers": ring.buffers, "ring_kb": ring.kb, "ring_how": ring.how})
    out = pd.DataFrame(rows, columns=["series_name", "ring_buffers", "ring_kb", "ring_how"])
    order = {n: i for i, n in enumerate(server_order(out["series_name"].unique()))}
    return out.sort_values("series_name", key=lambda s: s.map(order)).reset_index(drop=True)


def hot_rate(w: pd.DataFrame) -> int:
    """The hot workload's rate limit (queries per second) of these runs; 0 where it ran unlimited
    (the runs measured before the rate was part of the design)."""
    if "rate" not in w or w["rate"].isna().all():
        return 0
    return int(w["rate"].max())


def per_variant_runs(res: Results, variant: str) -> pd.DataFrame:
    """per_run's rows of one variant (one per server and repeat)."""
    r = per_run(res)
    return r[r["variant"] == variant] if len(r) else r


WRITTEN = "Innodb_buffer_pool_pages_flushed"  # pages InnoDB wrote during a run (SHOW GLOBAL STATUS, before/after)


def free_after_scan(res: Results) -> pd.DataFrame:
    """InnoDB: per eviction run, the page cleaner's target of free pages (innodb_lru_scan_depth as the run
    stored it; one instance) and the free pages after the scan: the most seen and the last sample (the cleaner
    frees pages from the LRU list's tail until the free list holds the target, then stops); the fewest in the
    scan's seconds and the first second after it (``low``: where the cleaner starts from), and the pages the run
    wrote (``written``, WRITTEN: a page the cleaner frees only when its write completes)."""
    tl = timeline(res)
    if tl.empty or "free_pages" not in tl:
        return pd.DataFrame()
    seen = tl[tl["phase"].isin(["scan", "after"]) & tl["free_pages"].notna()].sort_values(["run_id", "t"])
    depths = {v: scan_depths(res, v) for v in seen["variant"].astype(str).unique()}  # once per variant
    c = res.counters
    written = (c[c["name"] == WRITTEN].set_index("run_id")["delta"] if c is not None and len(c) and "name" in c
               else pd.Series(dtype=float))
    rows = []
    for (name, variant), g in seen.groupby(["series_name", "variant"], observed=True):
        depth = depths[str(variant)].get(name)
        if depth is None:
            continue
        for rid, r in g.groupby("run_id"):
            after = r[r["phase"] == "after"]
            if after.empty:
                continue
            during = pd.concat([r[r["phase"] == "scan"], after.iloc[:1]])
            rows.append({"series_name": name, "variant": str(variant), "run_id": rid, "depth": depth,
                         "flavor": r["flavor"].iloc[0], "most": float(after["free_pages"].max()),
                         "last": float(after["free_pages"].iloc[-1]), "low": float(during["free_pages"].min()),
                         "written": float(written.get(rid, float("nan")))})
    return pd.DataFrame(rows)


# the step-by-step probes' observations as the page names them, in each probe's order
INNODB_STEPS = {
    "table_pages": "1. the hot table's pages in the pool after its first read",
    "new_pages": "1. ... brought in by that read", "new_pages_old": "1. ... of the table's pages in the old sublist",
    "list_growth": "1. the LRU list's length, change during the read (pages)",
    "big_young_pages": "1. the big table's pages in the young sublist",
    "early_reread_after_s": "2. read again, ending this long after the first read began (s)",
    "early_made_young": "2. ... pages made young", "early_old_pages": "2. ... of the old ones still old",
    "late_reread_after_s": "2. read again this long after the first read ended (s)",
    "late_made_young": "2. ... pages made young", "late_old_pages": "2. ... pages still old",
    "pool_instances": "3. instances (rows of INNODB_BUFFER_POOL_STATS), a 1 GiB pool",
    "new_table_pages": "3. a new table's pages in the pool", "instances_holding_table": "3. ... in this many instances",
    "largest_instance_share": "3. ... the largest instance's share (%)",
    "extents_seen": "4. runs of 64 pages of the table in the pool",
    "extents_split": "4. ... spread over two instances or more",
    "chunk_mb": "5. chunk size (MiB; 0: the server sizes them)",
    "pool_mb_before": "5. pool before the resize (MiB)", "pool_mb_after": "5. ... after SET GLOBAL (MiB)",
    "resize_s": "5. the pool had grown within (s)", "uptime_continued": "5. the server kept running",
    "table_pages_kept": "5. the table's pages still resident",
}
POSTGRES_STEPS = {
    "pool_buffers": "shared buffers (8 kB each)",
    "hot_buffers": "1. a small table's buffers, read 6 times", "hot_usage_min_before": "1. ... their lowest usage count",
    "sweep_laps": "1. laps of the sweep's hand while a table 1.5 times the pool was loaded",
    "hot_passes_after": "1. ... passes over the small table's buffers",
    "hot_resident_after": "1. ... its buffers still resident", "hot_usage_max_after": "1. ... their highest usage count",
    "hot_count_matches_passes": "1. looks where a buffer's count was 5 less the passes over it (%)",
    "sweep_laps_end": "1. laps after the table was loaded again", "hot_evicted": "1. ... the small table's buffers evicted",
    "hot_evicted_last_seen_max": "1. ... the highest count one was last seen at",
    "copy_table_pages": "2. COPY into a new table: its pages", "copy_resident": "2. ... in shared buffers after",
    "copy_ring_buffers": "2. ... the bulk-write ring (buffers)",
    "insert_resident": "2. the same rows by INSERT ... SELECT: in shared buffers",
    "vacuum_table_pages": "2. VACUUM after a restart: the table's pages", "vacuum_resident": "2. ... in shared buffers after",
    "vacuum_ring_buffers": "2. ... the vacuum ring (buffers)",
    "bgwriter_elapsed_s": "3. a session updating a table 1.5 times the pool for (s)",
    "bgwriter_clean": "3. ... buffers the background writer wrote", "bgwriter_rounds_max": "3. ... in at most this many rounds",
    "bgwriter_maxwritten": "3. ... rounds stopped at bgwriter_lru_maxpages",
    "bgwriter_lru_maxpages": "3. bgwriter_lru_maxpages",
    "spread_window_s": "4. the checkpoint window (s)", "spread_buffers": "4. a requested checkpoint wrote (buffers)",
    "spread_s": "4. ... in (s)", "immediate_buffers": "4. CHECKPOINT wrote (buffers)", "immediate_s": "4. ... in (s)",
    "shared_buffers_context_postmaster": "5. shared_buffers changes only at a server start",
    "resize_pending_restart": "5. after ALTER SYSTEM and a reload: waiting for a restart",
    "shared_buffers_after_reload_mb": "5. ... shared_buffers then (MiB)",
}
SHARE = ("largest_instance_share", "hot_count_matches_passes")
YES_NO = ("uptime_continued", "shared_buffers_context_postmaster", "resize_pending_restart")
RANGES = ("early_reread_after_s", "late_reread_after_s", "resize_s", "spread_s", "immediate_s", "bgwriter_elapsed_s")


# each engine's part and the observations its probe makes, in the page's order
STEPS_OF = {BufferPool.engine: INNODB_STEPS, SharedBuffers.engine: POSTGRES_STEPS}
MECHANICS_ENGINES = tuple(STEPS_OF)


def mechanics_rows(res: Results, engine: str) -> pd.DataFrame:
    """The step-by-step runs of one engine (one of MECHANICS_ENGINES, a part's ``engine``) as the page's
    table: one row per observation, one column per server (steps.table)."""
    m = mechanics(res)
    if m.empty:
        return m
    m = m[[part_of(f).engine == engine for f in m["flavor"]]]
    for c in SHARE:
        if c in m:
            m[c] = 100 * m[c]
    return steps.table(m, STEPS_OF[engine], YES_NO, RANGES, range_fmt=".2f")
