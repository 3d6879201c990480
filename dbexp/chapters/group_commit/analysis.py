"""The group_commit chapter's analysis: per run C (commits: sysbench's transactions, each one
autocommit statement), G (syncs of the log a durable commit waits on) and W (waits on the group's
wakeup) give the group size C / G, waits per commit and the efficiency bound (C - G) / W; probe runs
give the exact efficiency (waiting sessions over their wakeups) and their cost (QPS probed over not).
The numbers the page's sentences are made of are returned here, as numbers and labels."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from dbexp.experiments.chapter import Results

from .parts import PARTS, part_of_rows

SOURCE_EFFICIENCY = 0.527  # the source's activation efficiency, measured in a patched 8.0
WAIT_LINES = ("measured", "one per follower")


def served(df: pd.DataFrame, attr: str, value) -> pd.Series:
    """Rows whose flavor's engine part has ``attr`` equal to ``value`` (a boolean mask)."""
    return pd.Series([getattr(p, attr) == value for p in part_of_rows(df["flavor"])], index=df.index, dtype=bool)


def probe_sites() -> list[str]:
    """The functions the engine parts' probes count in, in the order the parts are declared."""
    return list(dict.fromkeys(p.probe_site for p in PARTS.parts.values() if p.probe_site))


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


def last_threads(df: pd.DataFrame) -> pd.DataFrame:
    """Each server's rows at its largest thread count."""
    return df[df["threads"] == df.groupby("series_name")["threads"].transform("max")]


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


def _records(df: pd.DataFrame, *cols: str) -> list[dict]:
    """Rows as dicts of plain Python values, NaN as None."""
    return [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
            for r in df[list(cols)].to_dict("records")]


def findings_numbers(res: Results) -> dict:
    """What the page's summary states, every number from the results (notebooks/group_commit/findings.md.j2)."""
    top = at_most_threads(res)
    if top.empty:
        return {"empty": True}
    pr = probes(res)
    out = {"empty": False, "source_efficiency": SOURCE_EFFICIENCY,
           "sized": _records(top.dropna(subset=["group_size"]), "series_name", "group_size", "threads"),
           "bound": _records(top.dropna(subset=["efficiency_bound"]), "series_name", "waits_per_commit",
                             "efficiency_bound") if "efficiency_bound" in top else [],
           "probed": [], "uncounted": [], "probe_cost": bool(len(pr)), "binlog_off": None}
    for site in probe_sites():
        g = pr[served(pr, "probe_site", site)] if len(pr) else pr
        if len(g):
            out["probed"].append({"site": site, "rows": _records(g, "series_name", "threads", "efficiency_exact",
                                                                 "waits_per_waiter", "cost")})
    counted = set(top.dropna(subset=["group_size"])["series_name"])
    uncounted = pr[~pr["series_name"].isin(counted)] if len(pr) else pr
    if len(uncounted):
        out["uncounted"] = _records(last_threads(uncounted), "series_name", "probe_group_size", "threads")
    c = curves(res)
    nb = c[(c["config"] == "no binlog") & (c["workload"] == "update_non_index")]
    dur = c[(c["config"] == "durable") & (c["workload"] == "update_non_index")]
    if len(nb) and len(dur):
        both = last_threads(dur.merge(nb, on=["series_name", "threads"], suffixes=("", "_nb")))
        out["binlog_off"] = _records(both, "series_name", "group_size_nb", "tps_nb", "tps")
    return out


def redo_numbers(res: Results) -> list[dict]:
    """With the binlog off, where the redo log is the only sync, on the servers whose redo log writing
    changed between versions (MySQL 5.7 against 8.0): per server, syncs per commit and TPS at its
    fewest and most threads ([] unless two servers ran)."""
    c = curves(res)
    nb = c[(c["config"] == "no binlog") & (c["workload"] == "update_non_index")]
    nb = nb[served(nb, "compares_redo_writers", True)] if len(nb) else nb
    if nb["series_name"].nunique() < 2:
        return []
    rows = []
    for name, g in nb.groupby("series_name"):
        lo, hi = g.loc[g["threads"].idxmin()], g.loc[g["threads"].idxmax()]
        rows.append({"series_name": name, "lo_threads": int(lo.threads), "hi_threads": int(hi.threads),
                     "lo_syncs": lo.syncs_per_commit, "hi_syncs": hi.syncs_per_commit, "lo_tps": lo.tps,
                     "hi_tps": hi.tps})
    return rows
