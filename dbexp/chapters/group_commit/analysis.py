"""The group_commit chapter's analysis: per run C (commits: sysbench's transactions, each one
autocommit statement), G (syncs of the log a durable commit waits on) and W (waits on the group's
wakeup) give the group size C / G, waits per commit and the efficiency bound (C - G) / W; probe runs
give the exact efficiency (waiting sessions over their wakeups) and their cost (QPS probed over not).
The numbers the page's sentences are made of are returned here, as numbers and labels."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from dbexp.experiments import stats
from dbexp.experiments.chapter import Results, memo

from .chapter import PARTS, part_of_rows

# The source's activation efficiency as its text gives it (section 8.1.2, "calculated to be 52.7%", from its
# figure 8-15, whose counts the text does not give): one TPC-C test at 500 concurrent users on a NUMA server.
# The text gives a follower woken k times an efficiency of 1 / k and does not say how followers are summed up:
# the page reads the runs both ways (waiting followers over their waits, and the mean of 1 / k) and, under
# conditions that are not the source's, compares neither with it (the claims table says not testable here).
SOURCE_EFFICIENCY = 0.527
WAIT_LINES = ("measured", "one per follower")


# the waiting sessions by their wakeups: once, twice, three times or more (by k, their wakeups)
SHARES = {"share_k1": lambda k: k == 1, "share_k2": lambda k: k == 2, "share_k3_or_more": lambda k: k >= 3}


def waits_histogram(df: pd.DataFrame) -> dict[int, pd.Series]:
    """The probe runs' sessions by how many times each waited (k: the ``probe_k<k>`` columns, 0 where
    a run has none; bpftrace's last bucket, k = 11, holds 11 or more)."""
    ks = sorted(int(c.removeprefix("probe_k")) for c in df if c.startswith("probe_k") and c[7:].isdigit())
    return {k: df[f"probe_k{k}"].fillna(0.0) for k in ks}



def served(df: pd.DataFrame, attr: str, value) -> pd.Series:
    """Rows whose flavor's engine part has ``attr`` equal to ``value`` (a boolean mask)."""
    return pd.Series([getattr(p, attr) == value for p in part_of_rows(df["flavor"])], index=df.index, dtype=bool)


def over_repeats(df: pd.DataFrame, by: list[str], cols) -> pd.DataFrame:
    """Per group of ``by`` (one run per repeat in each): the runs (``n``) and, for each of ``cols``,
    the mean over them with its 95% t interval (``<col>``, ``<col>_lo``, ``<col>_hi``; no interval
    from one run; a column whose runs all agree has an interval of that one value)."""
    rows = []
    for key, g in df.groupby(by, sort=False):
        row = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        row["n"] = len(g)
        for c in cols:
            v = g[c].dropna().to_numpy(dtype=float) if c in g else np.array([])
            if len(v) >= 2 and np.ptp(v) == 0:
                mean = lo = hi = float(v[0])
            else:
                mean, lo, hi = stats.mean_ci(v)
            row[c], row[f"{c}_lo"], row[f"{c}_hi"] = mean, lo, hi
        rows.append(row)
    return pd.DataFrame(rows)


def probe_sites() -> list[str]:
    """The functions the engine parts' probes count in, in the order the parts are declared."""
    return list(dict.fromkeys(p.probe_site for p in PARTS.parts.values() if p.probe_site))


def tidy(res: Results) -> pd.DataFrame:
    """One row per run with the commit path's derived columns (computed once per results)."""
    return memo(res, "group_commit.tidy", lambda: _tidy(res))


def _tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    if w.empty:
        return w
    for flag in ("probe", "beside", "check"):  # results from before a flag was a parameter lack it
        w[flag] = w[flag].fillna(False).astype(bool) if flag in w else False
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
        # a session woken k times before its commit was done has efficiency 1 / k; a run's sessions
        # summed up two ways: waiting sessions over their waits (1 / mean k) and the mean of 1 / k
        w["efficiency_waiters_over_waits"] = w["probe_waiters"] / w["probe_waits"].where(w["probe_waits"] > 0)
        hist = waits_histogram(w)
        if hist:
            sessions = sum(hist.values()).where(lambda n: n > 0)
            w["efficiency_mean_1_over_k"] = sum(n / k for k, n in hist.items()) / sessions
            # the waiting sessions by their wakeups: once, twice, three times or more
            for name, ks in SHARES.items():
                counted = sum((hist[k] for k in hist if ks(k)), pd.Series(0.0, index=w.index))
                w[f"{name}_count"], w[f"{name}_of"] = counted, sessions
                w[name] = counted / sessions
    w["syncs_per_commit"] = w["gc_syncs"] / w["commits"] if "gc_syncs" in w else np.nan
    w["duration_s"] = _durations(w) if "workload" in w else np.nan  # the seconds the workload was asked to run
    w["workload"] = w["script"].str.removeprefix("oltp_")
    return w


def _durations(w: pd.DataFrame) -> pd.Series:
    """The seconds each run's workload was asked to run."""
    return pd.Series([float((json.loads(x) if isinstance(x, str) else x or {}).get("duration_s", 0))
                      for x in w["workload"]], index=w.index, dtype=float)


def duration_s(res: Results) -> float:
    """The seconds each run's workload was asked to run, the run-length check's aside (the longest,
    where they differ)."""
    w = tidy(res)
    if w.empty or (~w["check"]).sum() == 0:
        return 0.0
    got = w.loc[~w["check"], "duration_s"].max()
    return float(got) if got == got else 0.0


def throughput(res: Results) -> pd.DataFrame:
    """The runs without probes: those measured beside a probe run (its control, where the main curve
    has no run there) and the run-length check's runs left out."""
    w = tidy(res)
    return w[~w["probe"] & ~w["beside"] & ~w["check"]] if len(w) else w


def main_curve(w: pd.DataFrame) -> pd.DataFrame:
    """Of ``w`` (tidy rows), the durable update workload's runs (the chapter's main curve)."""
    return w[(w["config"] == "durable") & (w["workload"] == "update_non_index")]


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


PROBE_MEASURES = ("efficiency_waiters_over_waits", "efficiency_mean_1_over_k", "share_k1", "share_k2",
                  "share_k3_or_more", "waits_per_waiter", "probe_group_size", "cost", "long_share", "wait_ms",
                  "cs_per_wait", "sleeps_per_needless", "sleeps_per_wait", "long_k")
PROBE_COUNTS = ("probe_commits", "probe_syncs", "probe_waiters", "probe_waits")


def probe_runs(res: Results) -> pd.DataFrame:
    """The probe runs, one row each, with their ratios, their control's QPS (``control_qps``: the run
    without probes measured next to it, same server, workload, threads and repeat: a ``beside`` run
    where there is one, else the main curve's) and their cost, QPS over the control's."""
    w = tidy(res)
    if w.empty or not w["probe"].any():
        return pd.DataFrame()
    pr = w[w["probe"]].copy()
    key = ["series_name", "workload", "threads", "repeat"]
    controls = pd.concat([w[w["beside"]], main_curve(throughput(res))]).drop_duplicates(key)
    base = controls.set_index(key)["qps"]
    pr["control_qps"] = [base.get(k, np.nan) for k in pr[key].itertuples(index=False, name=None)]
    pr["cost"] = pr["qps"] / pr["control_qps"]
    pr["probe_group_size"] = pr["probe_commits"] / pr["probe_syncs"].where(pr["probe_syncs"] > 0)
    pr["waits_per_waiter"] = pr["probe_waits"] / pr["probe_waiters"].where(pr["probe_waiters"] > 0)
    waiters = pr["probe_waiters"].where(pr["probe_waiters"] > 0)
    # where the probe timed each follower's wait (MySQL's, from this publication on): the share of waiting
    # followers whose wait passed 100 ms, their mean wait, and the context switches per wakeup (a woken
    # follower that goes back to sleep switches out again: at least one per wait): the server's threads'
    # voluntary ones where /proc counted them, else every switch on the server CPU (perf's count, which
    # on one CPU is the server's)
    if "probe_long" in pr:
        pr["long_share"] = pr["probe_long"] / waiters
        pr["long_share_count"], pr["long_share_of"] = pr["probe_long"], waiters
        pr["wait_ms"] = pr["probe_wait_ns"] / waiters / 1e6
    per_op = pr["vcs_per_op"] if "vcs_per_op" in pr else pd.Series(np.nan, index=pr.index)
    if "cs_per_op" in pr:
        per_op = per_op.fillna(pr["cs_per_op"])
    if "queries" in pr:
        pr["cs_per_wait"] = per_op * pr["queries"] / pr["probe_waits"].where(pr["probe_waits"] > 0)
    # where the probe counted the followers' own switches out (MySQL's, from this code on): their sleeps per
    # wait, their sleeps after a wakeup that found the commit not done per such wakeup (waits beyond one per
    # waiting follower), and the waits of the followers whose wait passed 100 ms, per such follower
    if "probe_fsleeps" in pr:
        needless = (pr["probe_waits"] - pr["probe_waiters"]).where(lambda x: x > 0)
        pr["sleeps_per_needless"] = pr["probe_needless_sleeps"] / needless
        pr["sleeps_per_wait"] = pr["probe_fsleeps"] / pr["probe_waits"].where(pr["probe_waits"] > 0)
        pr["long_k"] = pr["probe_long_waits"] / pr["probe_long"].where(pr["probe_long"] > 0)
    return pr


def probes(res: Results) -> pd.DataFrame:
    """Per server and thread count, over the probe runs' repeats: the mean of each of PROBE_MEASURES
    with its interval (over_repeats), and the median of the counts."""
    pr = probe_runs(res)
    if pr.empty:
        return pr
    by = ["series_name", "flavor", "threads"]
    out = over_repeats(pr, by, PROBE_MEASURES)
    # a share of sessions is a proportion: its value and exact interval pooled over the runs' sessions
    # (stats.proportion_ci), never a t interval that can reach below 0 or above 1
    for name in (*SHARES, "long_share"):
        if f"{name}_count" not in pr:
            continue
        sums = pr.groupby(by, sort=False)[[f"{name}_count", f"{name}_of"]].sum(min_count=1)
        for i, key in enumerate(out[by].itertuples(index=False, name=None)):
            k, n = sums.loc[key] if key in sums.index else (np.nan, np.nan)
            if n == n and n > 0 and k == k:
                lo, hi = stats.proportion_ci(int(round(k)), int(round(n)))
                out.loc[i, [name, f"{name}_lo", f"{name}_hi"]] = [k / n, lo, hi]
    # the cost is a paired ratio: the geometric mean of the pairs' ratios, its interval on their logs
    pairs = {k: stats.pair_ratio_ci(g["qps"], g["control_qps"]) for k, g in pr.groupby(by, sort=False)}
    for i, name in enumerate(("cost", "cost_lo", "cost_hi")):
        out[name] = [pairs[k][i] for k in out[by].itertuples(index=False, name=None)]
    return out.merge(pr.groupby(by)[list(PROBE_COUNTS)].median().reset_index(), on=by)


TOP_MEASURES = ("tps", "lat_p95_ms", "group_size", "group_size_own", "waits_per_commit", "efficiency_bound",
                "cpu_per_op_us", "cs_per_op")


def at_most_threads(res: Results) -> pd.DataFrame:
    """The durable update workload at the largest thread count, per server: the runs (``n``: one per
    repeat) and the mean of each of TOP_MEASURES with its interval (over_repeats)."""
    w = throughput(res)
    if w.empty:
        return w
    w = main_curve(w)
    w = w[w["threads"] == w.groupby("series_name")["threads"].transform("max")]
    return over_repeats(w, ["series_name", "flavor", "threads"], [c for c in TOP_MEASURES if c in w])


CHECK_MEASURES = ("tps", "group_size", "efficiency_bound")
RARELY = 0.01  # PostgreSQL's flushes woken "rarely" a third time: fewer than this share of the waiting ones


def group_growth(res: Results) -> pd.DataFrame:
    """Per server that counts its syncs: the durable update workload's group size at its fewest
    threads (``low_threads``, ``group_size_low``: the mean over its runs) and at its most (``threads``,
    ``group_size_high``), and the growth, most over fewest paired by repeat: the geometric mean of the
    repeats' ratios with a t interval on their logs (stats.pair_ratio_by; ``n`` pairs)."""
    w = throughput(res)
    if w.empty or "group_size" not in w:
        return pd.DataFrame()
    w = main_curve(w).dropna(subset=["group_size"])
    rows = []
    for (name, flavor), g in w.groupby(["series_name", "flavor"], sort=False):
        lo_t, hi_t = g["threads"].min(), g["threads"].max()
        if lo_t == hi_t:
            continue
        low, high = (g[g["threads"] == t].set_index("repeat")["group_size"] for t in (lo_t, hi_t))
        growth, glo, ghi, n = stats.pair_ratio_by(high, low)
        rows.append({"series_name": name, "flavor": flavor, "low_threads": int(lo_t), "threads": int(hi_t),
                     "group_size_low": float(low.mean()), "group_size_high": float(high.mean()),
                     "growth": growth, "growth_lo": glo, "growth_hi": ghi, "n": n})
    return pd.DataFrame(rows)


def run_length(res: Results) -> pd.DataFrame:
    """The run-length check: per server and thread count where it ran, each of CHECK_MEASURES of the
    check's runs (``n_long``, ``long_s`` seconds) over the main curve's there (``n_short``, ``short_s``),
    with its interval (stats.longer_over_shorter)."""
    w = tidy(res)
    if w.empty or not w["check"].any():
        return pd.DataFrame()
    long, short = main_curve(w[w["check"]]), main_curve(throughput(res))
    rows = []
    for (name, t), g in long.groupby(["series_name", "threads"]):
        s = short[(short["series_name"] == name) & (short["threads"] == t)]
        row = {"series_name": name, "flavor": g["flavor"].iloc[0], "threads": t, "n_long": len(g),
               "n_short": len(s), "long_s": g["duration_s"].max(), "short_s": s["duration_s"].max()}
        for c in CHECK_MEASURES:
            got = stats.longer_over_shorter(g[c], s[c]) if c in g and c in s else (np.nan,) * 3
            row[c], row[f"{c}_lo"], row[f"{c}_hi"] = got
        rows.append(row)
    return pd.DataFrame(rows)


def repeats(res: Results) -> dict[str, dict]:
    """Per kind of run (``main``: the durable update curve; ``probe``; ``other``: the other
    configurations and the insert workload; ``check``: the run-length check): its points, the fewest and
    most runs of a point, and its runs' seconds (the longest); kinds these results lack are left out."""
    w = tidy(res)
    if w.empty:
        return {}
    th = w[~w["probe"] & ~w["beside"] & ~w["check"]]
    mc = main_curve(th)
    kinds = {"main": mc, "probe": w[w["probe"]], "other": th.drop(mc.index), "check": main_curve(w[w["check"]])}
    out = {}
    for kind, g in kinds.items():
        if len(g):
            n = g.groupby(["series_name", "config", "workload", "threads"]).size()
            out[kind] = {"points": int(len(n)), "fewest": int(n.min()), "most": int(n.max()),
                         "seconds": float(g["duration_s"].max())}
    return out


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


def side(lo: float, hi: float, reference: float) -> str | None:
    """Where an interval lies against a number: "below", "above", "reaches" (holds it), or None where
    there is no interval (one run)."""
    if lo is None or hi is None or lo != lo or hi != hi:
        return None
    return "below" if hi < reference else ("above" if lo > reference else "reaches")


def _with_ci(*cols: str) -> list[str]:
    """``cols`` and their ``_lo``/``_hi``: the names _records takes for values with intervals."""
    return [n for c in cols for n in (c, f"{c}_lo", f"{c}_hi")]


def findings_numbers(res: Results) -> dict:
    """What the page's summary states, every number from the results (notebooks/group_commit/findings.md.j2):
    MySQL's followers both ways (beside the source's 52.7%, which is not compared: other conditions),
    performance_schema's count, PostgreSQL's wakeups, group sizes, and the run-length check; each value with
    its interval over the repeats."""
    top = at_most_threads(res)
    if top.empty:
        return {"empty": True}
    pr = probes(res)
    top_pr = last_threads(pr) if len(pr) else pr
    out = {"empty": False, "source": SOURCE_EFFICIENCY, "rarely": RARELY, "followers": [], "bound": [], "lock": [],
           "own": [], "sized": [], "length": []}
    if len(top_pr):
        fol = top_pr[served(top_pr, "wakeup", "broadcast")]
        out["followers"] = _records(fol, "series_name", "threads", "n",
                                    *_with_ci("waits_per_waiter", "efficiency_waiters_over_waits",
                                              "efficiency_mean_1_over_k"))
        lock = top_pr[served(top_pr, "wakeup", "lock release")]
        out["lock"] = _records(lock, "series_name", "threads", "n", "share_k2", *_with_ci("share_k3_or_more"))
        for r in out["lock"]:
            r["side"] = side(r["share_k3_or_more_lo"], r["share_k3_or_more_hi"], RARELY)
    bounded = top.dropna(subset=["efficiency_bound"]) if "efficiency_bound" in top else top.iloc[0:0]
    mine = bounded[served(bounded, "wakeup", "broadcast")]
    out["bound"] = _records(mine, "series_name", "threads", "n", *_with_ci("efficiency_bound"))
    own = bounded[served(bounded, "wakeup", "own")]
    out["own"] = _records(own.assign(followers_per_commit=1 - 1 / own["group_size"]), "series_name", "threads", "n",
                          "waits_per_commit", "followers_per_commit", *_with_ci("efficiency_bound"))
    sized = top.dropna(subset=["group_size"])
    out["sized"] = _records(sized, "series_name", "threads", "n", *_with_ci("group_size"))
    uncounted = top_pr[~top_pr["series_name"].isin(set(sized["series_name"]))] if len(top_pr) else top_pr
    if len(uncounted):  # no count of its own: the probe runs' count of syncs
        out["sized"] += [{**r, "probed": True} for r in _records(
            uncounted.rename(columns={c: c.replace("probe_group_size", "group_size") for c in uncounted}),
            "series_name", "threads", "n", *_with_ci("group_size"))]
    rl = run_length(res)
    if len(rl):
        out["length"] = _records(rl, "series_name", "threads", "long_s", "short_s", "n_long", "n_short",
                                 *_with_ci(*CHECK_MEASURES))
    return out


def redo_numbers(res: Results) -> list[dict]:
    """With the binlog off, where the redo log is the only sync, on the servers whose redo log writing
    changed between versions (MySQL 5.7 against 8.0): per server, syncs per commit and TPS at its
    fewest and most threads, and the most runs of a point ([] unless two servers ran)."""
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
                     "hi_tps": hi.tps, "runs": int(g["repeats"].max())})
    return rows


# What the runs stored that shows the mechanism a claim is about happened in them (the claims' witnesses):
# the waits, waiting sessions, commits and syncs the probes counted where a commit waits, the waits and
# syncs the servers counted themselves, and the run-length check's runs as they ran.


def probe_witness(res: Results) -> pd.DataFrame:
    """Per server, its probe runs at its most probe threads: ``runs``; ``waited`` (sessions that waited
    counted), ``synced`` (syncs counted), ``grouped`` (more commits than syncs: groups with followers) and
    ``timed`` (each waiting session's wait timed, where the program times it) as counts of runs; over the
    runs, the ``commits``, ``syncs``, waiting sessions (``waiters``) and their ``waits``, those woken twice or
    more (``again``), the waits past 100 ms (``long``, NaN where not timed) and the runs in which
    performance_schema's count of waits on the commit condition equals the probe's (``pfs_same``, of
    ``pfs_runs`` that have it); ``switched``, the runs whose server CPU's context switches were counted."""
    pr = probe_runs(res)
    if pr.empty:
        return pr
    pr = last_threads(pr)
    hist = waits_histogram(pr)
    again = sum((hist[k] for k in hist if k >= 2), pd.Series(0.0, index=pr.index))
    rows = []
    for (name, flavor, threads), g in pr.groupby(["series_name", "flavor", "threads"], sort=False):
        timed = g["probe_wait_ns"] if "probe_wait_ns" in g else pd.Series(np.nan, index=g.index)
        pw = g["gc_waits"] if "gc_waits" in g else pd.Series(np.nan, index=g.index)
        pfs = pw.notna()
        rows.append({"series_name": name, "flavor": flavor, "threads": int(threads), "runs": len(g),
                     "waited": int((g["probe_waiters"] > 0).sum()), "synced": int((g["probe_syncs"] > 0).sum()),
                     "grouped": int((g["probe_commits"] > g["probe_syncs"]).sum()), "timed": int((timed > 0).sum()),
                     "commits": float(g["probe_commits"].sum()), "syncs": float(g["probe_syncs"].sum()),
                     "waiters": float(g["probe_waiters"].sum()), "waits": float(g["probe_waits"].sum()),
                     "again": float(again[g.index].sum()),
                     "long": float(g["probe_long"].sum()) if "probe_long" in g and g["probe_long"].notna().all()
                     else np.nan, "long_runs": [int(x) for x in g["probe_long"]] if "probe_long" in g and
                     g["probe_long"].notna().all() else [],
                     "pfs_runs": int(pfs.sum()), "pfs_same": int((pw[pfs] == g.loc[pfs, "probe_waits"]).sum()),
                     "switched": int(g["cs_per_op"].notna().sum()) if "cs_per_op" in g else 0,
                     # the followers' own switches out, where the probe counted them (NaN where not)
                     "sleeps": _sum_all(g, "probe_fsleeps"), "needless_sleeps": _sum_all(g, "probe_needless_sleeps"),
                     "preempted": _sum_all(g, "probe_fpreempted"), "long_waits": _sum_all(g, "probe_long_waits"),
                     "slept": int((g["probe_fsleeps"] > 0).sum()) if "probe_fsleeps" in g else 0})
    return pd.DataFrame(rows)


def _sum_all(g: pd.DataFrame, col: str) -> float:
    """``col`` summed over the runs of ``g``, NaN where any run lacks it."""
    return float(g[col].sum()) if col in g and g[col].notna().all() else np.nan


def counter_witness(res: Results) -> pd.DataFrame:
    """Per server, the durable update workload's runs at its fewest and at its most threads: ``runs`` at each
    (``runs_low``, ``runs``), those whose server counted its syncs (``synced_low``, ``synced``: G > 0), at the
    most threads those whose server counted waits on its group's wakeup (``waited``: W > 0), its own count of
    binlog groups (``groups``: > 0, where it keeps one) and groups of more than one commit (``grouped``: C > G),
    and the runs whose settings read back as declared (``as_set``: precondition_ok)."""
    w = throughput(res)
    if w.empty:
        return w
    w = main_curve(w)
    rows = []
    for (name, flavor), g in w.groupby(["series_name", "flavor"], sort=False):
        lo, hi = g[g["threads"] == g["threads"].min()], g[g["threads"] == g["threads"].max()]
        col = lambda d, c: pd.to_numeric(d[c], errors="coerce") if c in d else pd.Series(np.nan, index=d.index)
        rows.append({"series_name": name, "flavor": flavor, "low_threads": int(lo["threads"].iloc[0]),
                     "threads": int(hi["threads"].iloc[0]), "runs_low": len(lo), "runs": len(hi),
                     "synced_low": int((col(lo, "gc_syncs") > 0).sum()), "synced": int((col(hi, "gc_syncs") > 0).sum()),
                     "waited": int((col(hi, "gc_waits") > 0).sum()),
                     "groups": int((col(hi, "gc_binlog_groups") > 0).sum()),
                     "grouped": int((hi["commits"] > col(hi, "gc_syncs")).sum()),
                     "as_set": int(col(g, "precondition_ok").fillna(0).astype(bool).sum()), "all_runs": len(g)})
    return pd.DataFrame(rows)


def check_witness(res: Results) -> pd.DataFrame:
    """Per server of the run-length check: its runs, those that ran the seconds asked of them (the workload's
    own clock, total_time_s, within 5% of duration_s), those whose settings read back as declared
    (precondition_ok), the seconds asked and the seconds run (the shortest)."""
    w = tidy(res)
    if w.empty or not w["check"].any():
        return pd.DataFrame()
    c = main_curve(w[w["check"]])
    rows = []
    for (name, threads), g in c.groupby(["series_name", "threads"], sort=False):
        ran = pd.to_numeric(g["total_time_s"], errors="coerce") if "total_time_s" in g else pd.Series(np.nan, index=g.index)
        rows.append({"series_name": name, "threads": int(threads), "runs": len(g),
                     "full": int((ran >= 0.95 * g["duration_s"]).sum()),
                     "as_set": int(g["precondition_ok"].fillna(False).astype(bool).sum()) if "precondition_ok" in g else 0,
                     "asked_s": float(g["duration_s"].max()), "ran_s": float(ran.min())})
    return pd.DataFrame(rows)
