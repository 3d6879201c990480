"""The readview chapter's analysis: slopes per open transaction (at the view, PostgreSQL 14+'s
rebuilds apart from its reuses, in server CPU per read) against this host's copy cost, whether they
are straight lines, the server-side loop's runs in their order (MariaDB), throughput against H, the
probe's cost and the double latch's counts, as tables of numbers (the page's sentences are rendered
from them by dbexp.chapters.readview.findings). Two servers are compared by the interval of their
difference (stats.difference_ci over the repeats' slopes), never by whether their intervals overlap.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from scipy import stats as sp

from dbexp.catalog import versions
from dbexp.chapters.readview.chapter import COUNTED, LATCH_STMTS, OWN_RUNS, of_run
from dbexp.chapters.readview.engines import postgres
from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Results, memo, server_starts


def tidy(res: Results) -> pd.DataFrame:
    """One row per run (not the counted part's: counts.py), with each run's engine labels (``family``, ``panel``) and the bytes each
    holder adds to a view's copy, from the engine part of its flavor and version."""
    return memo(res, "readview.tidy", lambda: _tidy(res))


def _tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    if "mode" in w:  # the counted part's runs are read by counts.py alone
        w = w[w["mode"] != COUNTED].copy()
    for col in ("server_cpu_s", "reads", "total_time_s"):  # the visibility and mechanics runs run no readers
        if col not in w:
            w[col] = np.nan
    for col in ("holders", "readers", "trx_stmts"):
        w[col] = w[col].astype(int)
    w["probe"] = w["probe"].astype(bool)
    # the readers' isolation level (the workload's option; rc where a run's workload names none)
    w["isolation"] = [_options(x).get("isolation", "rc") for x in w["workload"]] if "workload" in w else "rc"
    w["cpu_per_read_us"] = w["server_cpu_s"] / w["reads"] * 1e6
    w["reads_per_s"] = w["reads"] / w["total_time_s"]
    w["major"] = w["version"].map(versions.major).astype(float)
    part = [of_run(f, v) for f, v in zip(w["flavor"], w["version"])]
    w["family"] = [p.family for p in part]
    w["panel"] = [p.panel for p in part]
    w["bytes_per_holder"] = [p.bytes_per_holder for p in part]
    return w


def _options(workload) -> dict:
    """A stored run's workload options ({} where it has none)."""
    if isinstance(workload, str):
        workload = json.loads(workload)
    return dict((workload or {}).get("options") or {})


def throughput(res: Results) -> pd.DataFrame:
    """The autocommit readers' runs without a probe (not the visibility and mechanics runs, which run no
    readers)."""
    w = tidy(res)
    return w[~w["probe"] & (w["trx_stmts"] == 0) & ~w["mode"].isin(OWN_RUNS)]


def by_h(res: Results, value: str, probe: bool = False) -> pd.DataFrame:
    """Median over repeats of ``value`` per server, holding and H (autocommit readers), for charts:
    ``series`` names the server and, for idle sessions, says so; H = 0 starts both holdings' lines;
    ``engine`` puts MySQL and MariaDB apart from PostgreSQL (a panel each)."""
    w = tidy(res)
    w = w[(w["probe"] == probe) & (w["trx_stmts"] == 0) & ~w["mode"].isin(OWN_RUNS)]
    if w.empty or value not in w:
        return pd.DataFrame()
    w = w[w[value].notna()]  # a probe run times the view, or (no symbol) the loop's reads: not both
    modes = w.groupby("series_name")["mode"].agg(set)  # the holdings each server was measured with
    rows = []
    for (name, panel, mode, h), g in w.groupby(["series_name", "panel", "mode", "holders"]):
        for m in ([m for m in ("prepared", "idle") if m in modes[name]] if mode == "none" else [mode]):
            rows.append({"server": name, "holding": m, "holders": h, value: g[value].median(),
                         "series": name + (" (idle sessions)" if m == "idle" else ""), "engine": panel})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    # a panel is named for the engines it holds here (the probe runs time no MariaDB function)
    return out.assign(engine=out.groupby("engine")["server"].transform(_panel_label))


def _panel_label(servers: pd.Series) -> str:
    """The engines a panel holds, as the book names them ("MySQL and MariaDB"), in the registry's order."""
    from dbexp.servers.registry import FLAVORS
    present = set(str(s).partition(" ")[0] for s in servers)
    names = [cls.title for name, cls in FLAVORS.items() if name in present] + sorted(present - set(FLAVORS))
    return " and ".join(names)


def series_colors(res: Results) -> tuple[list[str], list[str]]:
    """One colour per series (a server, or a PostgreSQL server's idle sessions) for every chart on the
    page, so that a colour names the same server in each chart and no two series share one: the
    series in server order, and their colours (Tableau 10, Tableau 20 past ten)."""
    w = tidy(res)
    names = list(w["series_name"].unique())
    if "mode" in w:
        names += [f"{n} (idle sessions)" for n in w.loc[w["mode"] == "idle", "series_name"].unique()]
    from dbexp.book.charts import server_order
    domain = server_order(names)
    t10 = ["#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2", "#ff9da6",
           "#9d755d", "#bab0ac"]
    t20 = ["#4c78a8", "#9ecae9", "#f58518", "#ffbf79", "#54a24b", "#88d27a", "#b79a20", "#f2cf5b",
           "#439894", "#83bcb6", "#e45756", "#ff9d98", "#79706e", "#bab0ac", "#d67195", "#fcbfd2",
           "#b279a2", "#d6a5c9", "#9e765f", "#d8b5a5"]
    palette = t10 if len(domain) <= len(t10) else t20
    return domain, [palette[i % len(palette)] for i in range(len(domain))]


def recolor(chart, colors: tuple[list[str], list[str]], shown) -> object:
    """``chart`` (a chart of charts.lines, faceted or not) with the page's colour per series; its
    legend lists only the series ``shown`` (the ones its data holds)."""
    import altair as alt
    shown = set(shown)
    pairs = [(n, c) for n, c in zip(*colors) if n in shown]
    inner = chart.spec if isinstance(chart, alt.FacetChart) else chart
    for layer in inner.layer:
        layer.encoding.color.scale = alt.Scale(domain=[n for n, _ in pairs], range=[c for _, c in pairs])
    return chart


# what a probe run's timed calls are, by the column that holds their mean: every call, or (where the
# probe told them apart: PostgreSQL 14+) the calls that rebuilt the snapshot
CALLS = {"view_ns_mean": "every call", "view_rebuilt_ns_mean": "rebuilds only"}
MIXED = "every call, reuses included"  # every call where some reuse a snapshot (PostgreSQL 14+)


def _fit_rows(w: pd.DataFrame, value: str, scale: float) -> list[dict]:
    rows = []
    for (name, flavor, family, mode), g in w.groupby(["series_name", "flavor", "family", "mode"]):
        if mode == "none":
            continue
        base = w[(w["series_name"] == name) & (w["mode"] == "none")]
        fit = pd.concat([g, base])  # H = 0 (none held) is the shared start of both holdings
        fit = fit[fit[value].notna()]
        if fit["holders"].nunique() < 2:
            continue
        s, lo, hi = stats.slope_ci(fit["holders"], fit[value] * scale, fit["repeat"])
        rows.append({"server": name, "flavor": flavor, "family": family, "holding": mode,
                     "H": f"{fit['holders'].min()} to {fit['holders'].max()}", "slope": s, "low": lo, "high": hi,
                     "at H=0": fit[fit["holders"] == 0][value].median() * scale, "runs": len(fit),
                     "repeats": fit["repeat"].nunique(),
                     "per_repeat": stats.repeat_slopes(fit["holders"], fit[value] * scale, fit["repeat"])})
    return rows


def cpu_slopes(res: Results) -> pd.DataFrame:
    """Server CPU per read against H, in ns per prepared transaction (or idle session): per-repeat
    least-squares slopes over every H, a t interval over the repeats."""
    return pd.DataFrame(_fit_rows(throughput(res), "cpu_per_read_us", 1000.0))


def copy_cost(res: Results) -> dict:
    """This host's copy time per byte, with a t interval over the repeats, and the time of the call
    around one copy (the prediction's memory speed, measured on the harness's CPU).

    Runs that fitted it themselves store the slope over sizes (``copy_slope_ns_per_byte``, the call's
    time as ``copy_call_ns``): their median per repeat. Runs measured before stored one copy's time
    per byte at max(8 H, 4096) bytes (``copy_ns_per_byte``), the Python call's time included (about
    300 ns, more than the bytes of a small view cost): from those, the slope of the copy times over the
    runs' sizes, fitted per repeat, which leaves the call out. ``how`` says which; ``stored`` is the
    median of what those older runs stored."""
    w = tidy(res)
    nan = float("nan")
    out = {"ns_per_byte": nan, "low": nan, "high": nan, "call_ns": nan, "per_repeat": pd.Series(dtype=float),
           "how": None, "stored": nan}
    if "copy_slope_ns_per_byte" in w and w["copy_slope_ns_per_byte"].notna().any():
        m = w[w["copy_slope_ns_per_byte"].notna()]
        per_repeat = m.groupby("repeat")["copy_slope_ns_per_byte"].median()
        out.update(how="measured", call_ns=float(m["copy_call_ns"].median()))
    elif "copy_ns_per_byte" in w and w["copy_ns_per_byte"].notna().any():
        m = w[w["copy_ns_per_byte"].notna()].assign(nbytes=lambda d: np.maximum(8 * d["holders"], 4096))
        m = m.assign(copy_ns=m["copy_ns_per_byte"] * m["nbytes"])
        fits = {r: sp.linregress(g["nbytes"], g["copy_ns"]) for r, g in m.groupby("repeat") if g["nbytes"].nunique() >= 2}
        per_repeat = pd.Series({r: f.slope for r, f in fits.items()}, dtype=float)
        out.update(how="refitted", stored=float(m["copy_ns_per_byte"].median()),
                   call_ns=float(np.median([f.intercept for f in fits.values()])) if fits else nan)
    else:
        return out
    point, lo, hi = stats.mean_ci(per_repeat)
    out.update(ns_per_byte=point, low=lo, high=hi, per_repeat=per_repeat)
    return out


def view_slopes(res: Results) -> pd.DataFrame:
    """Time per call of the view-building function against H, in ns per prepared transaction (or
    idle session), from the probe runs: every call, and where the probe told them apart (PostgreSQL
    14+), the rebuilds alone (``calls``). Beside each slope of calls that build a view, the predicted
    copy cost per holder (bytes per holder times this host's copy time per byte, with its interval) and
    the slope's excess over it (a Welch interval over the repeats of both)."""
    return memo(res, "readview.view_slopes", lambda: _view_slopes(res))


def _view_slopes(res: Results) -> pd.DataFrame:
    w = tidy(res)
    w = w[w["probe"] & (w["trx_stmts"] == 0)]
    if w.empty or "view_ns_mean" not in w:
        return pd.DataFrame()
    copy = copy_cost(res)
    rows = []
    for col, calls in CALLS.items():
        if col not in w:
            continue
        for r in _fit_rows(w, col, 1.0):
            part = of_run(r["flavor"], w.loc[w["series_name"] == r["server"], "version"].iloc[0])
            builds = col == "view_rebuilt_ns_mean" or part.completion_count_offset is None
            r["calls"] = calls if col != "view_ns_mean" or builds else MIXED
            r["bytes per holder"] = part.bytes_per_holder
            nan = float("nan")
            if builds:
                r["predicted"] = part.bytes_per_holder * copy["ns_per_byte"]
                r["predicted low"] = part.bytes_per_holder * copy["low"]
                r["predicted high"] = part.bytes_per_holder * copy["high"]
                r["excess"], r["excess low"], r["excess high"] = stats.difference_ci(
                    r["per_repeat"], part.bytes_per_holder * copy["per_repeat"])
            else:
                r.update({k: nan for k in ("predicted", "predicted low", "predicted high", "excess", "excess low",
                                           "excess high")})
            g = w[w["series_name"] == r["server"]]
            r["calls per read"] = (g["view_calls"] / g["reads"]).median()
            if "view_switched_share" in g:
                r["switched out"] = g["view_switched_share"].median()
            rows.append(r)
    return pd.DataFrame(rows)


def building(vs: pd.DataFrame) -> pd.DataFrame:
    """The rows of view_slopes whose calls build a view: every call where nothing is reused, the
    rebuilds where they were timed apart (PostgreSQL 14+ runs that lack them keep the mixed row,
    ``calls`` saying so)."""
    if vs.empty:
        return vs
    split = set(vs.loc[vs["calls"] == CALLS["view_rebuilt_ns_mean"], "server"])
    return vs[~(vs["server"].isin(split) & (vs["calls"] != CALLS["view_rebuilt_ns_mean"]))]


def segments(res: Results) -> pd.DataFrame:
    """Whether a view's cost per holder is the same at every H (a straight line): per server, the
    slope of two segments in each repeat, from the smallest H above 0 to the second largest and from
    there to the largest, their means with t intervals over the repeats, and the difference of the
    upper one minus the lower one, paired within each repeat (the two segments share the middle H's run,
    so they are not independent: the repeats' differences, a t interval over them). ``shape``: concave
    where that interval lies below 0 (each holder adds less at larger H), convex above; straight where it
    lies within +-verdicts.LINE_BAND of the segments' mean slope, else not resolved (as
    verdicts.grows_linearly judges the line). H = 0 is left out: InnoDB reuses an autocommit reader's view
    only while it lists nothing."""
    w = tidy(res)
    w = w[w["probe"] & (w["trx_stmts"] == 0) & (w["mode"] == "prepared")]
    vs = building(view_slopes(res))
    rows = []
    for _, r in vs[vs["holding"] == "prepared"].iterrows() if len(vs) else []:
        col = next(c for c, calls in CALLS.items() if r["calls"].startswith(calls))
        g = w[(w["series_name"] == r["server"]) & w[col].notna()]
        hs = sorted(g["holders"].unique())
        if len(hs) < 3:
            continue
        h0, h1, h2 = hs[0], hs[-2], hs[-1]
        piv = g.pivot_table(index="repeat", columns="holders", values=col)
        low = ((piv[h1] - piv[h0]) / (h1 - h0)).dropna()
        high = ((piv[h2] - piv[h1]) / (h2 - h1)).dropna()
        # paired within each repeat: both segments' slopes go through the middle H's run of that repeat
        d, dlo, dhi = stats.mean_ci((high - low).dropna())
        ref = (low.mean() + high.mean()) / 2  # the slope the bend is set against (verdicts.LINE_BAND's band)
        shape = ("concave" if dhi < 0 else "convex" if dlo > 0 else "one repeat: no interval" if dlo != dlo else
                 f"straight (the bend's interval within +-{verdicts.LINE_BAND:.0%} of the slope)"
                 if -verdicts.LINE_BAND * ref <= dlo and dhi <= verdicts.LINE_BAND * ref else
                 verdicts.not_resolved(f"the bend's interval reaches beyond +-{verdicts.LINE_BAND:.0%} of the slope"))
        rows.append({"server": r["server"], "family": r["family"], "calls": r["calls"],
                     "lower": f"{h0:,} to {h1:,}", "upper": f"{h1:,} to {h2:,}",
                     **dict(zip(("low_slope", "low_low", "low_high"), stats.mean_ci(low))),
                     "low_min": low.min(), "low_max": low.max(),
                     **dict(zip(("high_slope", "high_low", "high_high"), stats.mean_ci(high))),
                     "high_min": high.min(), "high_max": high.max(),
                     "difference": d, "diff_low": dlo, "diff_high": dhi, "repeats": len(piv), "shape": shape})
    return pd.DataFrame(rows)


def reuse(res: Results) -> pd.DataFrame:
    """PostgreSQL 14+ (the engines whose snapshots are reused): per server and H (prepared), medians
    over the repeats of the timed calls per read, the median call, the 90th percentile and the mean,
    with the share of rebuilds and each kind's mean where the probe told them apart (NaN where not)."""
    w = tidy(res)
    w = w[w["probe"] & (w["trx_stmts"] == 0) & w["mode"].isin(["none", "prepared"])]
    if w.empty or "view_ns_mean" not in w:
        return pd.DataFrame()
    w = w[[of_run(f, v).completion_count_offset is not None for f, v in zip(w["flavor"], w["version"])]]
    nan = float("nan")
    rows = []
    for (name, h), g in w.groupby(["series_name", "holders"]):
        rows.append({"server": name, "holders": int(h), "calls per read": (g["view_calls"] / g["reads"]).median(),
                     "p50": g["view_ns_p50"].median(), "p90": g["view_ns_p90"].median(),
                     "mean": g["view_ns_mean"].median(),
                     **{k: g[c].median() if c in g else nan for k, c in
                        (("rebuilt share", "view_rebuilt_share"), ("rebuilt mean", "view_rebuilt_ns_mean"),
                         ("reused mean", "view_reused_ns_mean"))}})
    return pd.DataFrame(rows)


REBUILT_AT_MOST, REBUILT_AT_LEAST = 0.5, 0.1  # what a median and a 90th percentile can bound


def rebuild_bounds(res: Results) -> pd.DataFrame:
    """Where rebuilds were not timed apart (PostgreSQL 14+ runs stored before): what the stored
    quantiles bound. At the largest H, a median call in H = 0's log2 bucket means at most half the
    calls rebuilt (a rebuild there takes longer); a 90th percentile two log2 buckets above H = 0's
    means at least a tenth did. A reuse costs what a call at H = 0 does, so the mean's rise from H = 0 to the largest H
    is the rebuilds' share times what a rebuild adds: per holder, a rebuild adds between 1 / 0.5 and
    1 / 0.1 times that rise per holder (the rise per repeat, a t interval over the repeats; the bound
    from its low and high ends, or from the one repeat's rise). NaN where a quantile bounds nothing."""
    w = tidy(res)
    t = reuse(res)
    if t.empty:
        return pd.DataFrame()
    w = w[w["probe"] & (w["trx_stmts"] == 0) & w["mode"].isin(["none", "prepared"])]
    rows = []
    for name, g in t.groupby("server"):
        if g["rebuilt share"].notna().any() or 0 not in set(g["holders"]) or len(g) < 2:
            continue
        top, base = g[g["holders"] == g["holders"].max()].iloc[0], g[g["holders"] == 0].iloc[0]
        at_most = REBUILT_AT_MOST if top["p50"] <= base["p50"] else 1.0
        # two log2 buckets above H = 0's: not the tail of the reuses (a tenth of them above H = 0's p90)
        at_least = REBUILT_AT_LEAST if top["p90"] > 3 * base["p90"] else float("nan")
        runs = w[w["series_name"] == name].pivot_table(index="repeat", columns="holders", values="view_ns_mean")
        rise = ((runs[top["holders"]] - runs[0]) / top["holders"]).dropna()
        r, lo, hi = stats.mean_ci(rise)
        if lo != lo:  # one repeat: the bound from its own rise
            lo = hi = r
        rows.append({"server": name, "holders": int(top["holders"]), "p50": top["p50"], "p50 at 0": base["p50"],
                     "p90": top["p90"], "p90 at 0": base["p90"], "share at most": at_most,
                     "share at least": at_least, "rise": r, "rise low": lo, "rise high": hi, "repeats": len(rise),
                     "rebuild at least": lo / at_most, "rebuild at most": hi / at_least})
    return pd.DataFrame(rows)


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


def _acquisitions(res: Results) -> pd.DataFrame:
    """The non-probe runs (tidy's rows, by run_id) with their acquisitions per read of the trx-sys mutex a view
    is opened and closed under (``acq``; the engine part's ``view_latch``; performance_schema deltas over the
    run, the writer's statements counted with them), the other trx-sys mutexes' summed (``other``) and their
    names (``other_names``); empty where no run counted them."""
    w = tidy(res)
    w = w[~w["probe"]].set_index("run_id")
    c = res.counters
    if c.empty:
        return pd.DataFrame()
    c = c[(c["source"] == "perf_schema") & c["name"].str.endswith(".count") & c["run_id"].isin(w.index)]
    if c.empty:
        return pd.DataFrame()
    view = {run: f"{of_run(f, v).view_latch}.count" for run, f, v in
            zip(w.index, w["flavor"], w["version"])}
    mine = c["name"] == c["run_id"].map(view)
    per_run = c[mine].groupby("run_id")["delta"].sum()
    others = c[~mine].groupby("run_id")["delta"].sum().reindex(per_run.index, fill_value=0.0)
    names = c[~mine].groupby("run_id")["name"].agg(lambda x: ", ".join(sorted(n[:-len(".count")] for n in set(x))))
    w = w.loc[per_run.index]
    return w.assign(acq=per_run / w["reads"], other=others / w["reads"],
                    other_names=names.reindex(per_run.index, fill_value=""))


def latch(res: Results) -> pd.DataFrame:
    """Acquisitions per read statement of the trx-sys mutex a view is opened and closed under
    (_acquisitions), autocommit readers against READ COMMITTED transactions of LATCH_STMTS
    selects: medians, and the ratio of the two with a pair interval (both ran in one block of one
    repeat). Where the server has other trx-sys mutexes (MySQL 9.7), their acquisitions per read
    beside, summed (``other``, named in ``other names``), never in the ratio."""
    w = _acquisitions(res)
    if w.empty:
        return pd.DataFrame()
    w = w[w["isolation"] == "rc"]
    rows = []
    for (name, family, h), g in w.groupby(["series_name", "family", "holders"]):
        if not (g["trx_stmts"] > 0).any():
            continue
        auto = g[g["trx_stmts"] == 0].set_index(["sweep_id", "repeat"])
        multi = g[g["trx_stmts"] > 0].set_index(["sweep_id", "repeat"])
        r, lo, hi, n = stats.pair_ratio_by(multi["acq"], auto["acq"])
        rows.append({"server": name, "holders": h, "autocommit": auto["acq"].median(),
                     f"{LATCH_STMTS} per transaction": multi["acq"].median(), "ratio": r, "low": lo, "high": hi,
                     "pairs": n, "family": family, "latch": of_run(g["flavor"].iloc[0], g["version"].iloc[0]).view_latch,
                     "other autocommit": auto["other"].median(), f"other {LATCH_STMTS} per transaction":
                     multi["other"].median(), "other names": ", ".join(sorted(set(filter(None, g["other_names"]))))})
    return pd.DataFrame(rows)


# a view per statement: READ COMMITTED's transactions of LATCH_STMTS build LATCH_STMTS - 1 views more than
# REPEATABLE READ's one, so each of their reads takes the mutex at least this many times more (one
# acquisition per view opened; closing one under the mutex, as READ COMMITTED does, adds a second)
VIEWS_MORE_PER_READ = (LATCH_STMTS - 1) / LATCH_STMTS


def views_per_statement(res: Results) -> pd.DataFrame:
    """Per server and H where both ran: the same transactions of LATCH_STMTS selects in READ COMMITTED and in
    REPEATABLE READ, the view's mutex acquisitions per read in each (medians over the repeats) and READ
    COMMITTED's minus REPEATABLE READ's, paired within each repeat (both ran in one block), with its 95% t
    interval over the repeats (``low``, ``high``); ``expected``: VIEWS_MORE_PER_READ, what a view built by
    every statement adds at the least."""
    w = _acquisitions(res)
    if w.empty or "isolation" not in w:
        return pd.DataFrame()
    w = w[w["trx_stmts"] > 0]
    rows = []
    for (name, family, h), g in w.groupby(["series_name", "family", "holders"]):
        rc = g[g["isolation"] == "rc"].set_index(["sweep_id", "repeat"])["acq"]
        rr = g[g["isolation"] == "rr"].set_index(["sweep_id", "repeat"])["acq"]
        both = rc.index.intersection(rr.index)
        if not len(both):
            continue
        d = (rc[both] - rr[both]).to_numpy()
        mean, lo, hi = stats.mean_ci(d) if len(d) > 1 else (float(d[0]), np.nan, np.nan)
        rows.append({"server": name, "family": family, "holders": h, "read committed": rc[both].median(),
                     "repeatable read": rr[both].median(), "difference": mean, "low": lo, "high": hi,
                     "pairs": len(d), "expected": VIEWS_MORE_PER_READ,
                     "latch": of_run(g["flavor"].iloc[0], g["version"].iloc[0]).view_latch})
    return pd.DataFrame(rows)


def idle_sessions(res: Results) -> dict:
    """PostgreSQL's snapshots per idle session, from the probe runs: each server's slope per idle
    session beside its slope per prepared transaction (a rebuild's where timed apart), with the
    difference idle minus prepared (paired within each repeat: both lines go through its runs at H = 0, a
    t interval over the repeats' differences); and each server before 14 against each from 14 on, the
    difference of their slopes per idle session (a Welch interval over the repeats' slopes of both)."""
    vs = building(view_slopes(res))
    if vs.empty or not (vs["holding"] == "idle").any():
        return {"servers": [], "pairs": []}
    servers = []
    for name, g in vs.groupby("server", sort=False):
        by = {r["holding"]: r for _, r in g.iterrows()}
        if "idle" not in by:
            continue
        row = {"server": name, "family": by["idle"]["family"], "idle": by["idle"], "prepared": by.get("prepared")}
        if row["prepared"] is not None:
            # paired within each repeat: both slopes are fitted through that repeat's runs at H = 0
            row["difference"] = stats.mean_ci((by["idle"]["per_repeat"] - row["prepared"]["per_repeat"]).dropna())
        servers.append(row)
    old = [s for s in servers if s["family"] == postgres.Snapshots.BEFORE_14]
    new = [s for s in servers if s["family"] == postgres.Snapshots.FROM_14]
    pairs = [{"old": o["server"], "new": n["server"],
              "difference": stats.difference_ci(o["idle"]["per_repeat"], n["idle"]["per_repeat"]),
              "repeats": (len(o["idle"]["per_repeat"]), len(n["idle"]["per_repeat"]))} for o in old for n in new]
    return {"servers": servers, "pairs": pairs}


def loop_runs(res: Results) -> pd.DataFrame:
    """Where no function is exported to time (MariaDB): the server-side loop's time per read and the
    readers' reads per second at each H, each repeat in the order it ran (servers of its own run an
    H's repeats back to back, so a drift of a server shows as a trend along them; ``servers``: how many
    were started for it), and each as a
    ratio to H = 0 (ratios of geometric means over the repeats, Welch intervals); ``instances``: the
    instance each repeat ran on, in run order (empty for runs stored before instances); ``us_spread`` and
    ``reads_spread`` are the largest repeat over the smallest, of the loop's and the readers'."""
    w = tidy(res)
    if "loop_ns_per_read" not in w:
        return pd.DataFrame()
    loop = w[w["probe"] & w["loop_ns_per_read"].notna()]
    thr = throughput(res)
    rows = []
    for name, g in loop.groupby("series_name"):
        base = g[g["holders"] == 0]["loop_ns_per_read"]
        t = thr[thr["series_name"] == name]
        base_reads = t[t["holders"] == 0]["reads_per_s"]
        for h, gh in g.groupby("holders"):
            gh = gh.sort_values("started_at")
            th = t[t["holders"] == h].sort_values("started_at")
            ratio = stats.unpaired_ratio_ci(gh["loop_ns_per_read"], base) if h else (1.0, 1.0, 1.0)
            reads = stats.unpaired_ratio_ci(th["reads_per_s"], base_reads) if h else (1.0, 1.0, 1.0)
            rows.append({"server": name, "holders": int(h), "us_per_read": (gh["loop_ns_per_read"] / 1000).tolist(),
                         "instances": ([int(i) for i in gh["instance"]] if "instance" in gh and gh["instance"].notna().all()
                                       else []),
                         "us_median": gh["loop_ns_per_read"].median() / 1000,
                         "us_min": gh["loop_ns_per_read"].min() / 1000, "us_max": gh["loop_ns_per_read"].max() / 1000,
                         "loop_ratio": ratio[0], "loop_low": ratio[1], "loop_high": ratio[2],
                         "reads_per_s": th["reads_per_s"].tolist(), "reads_ratio": reads[0],
                         "reads_low": reads[1], "reads_high": reads[2], "repeats": len(gh),
                         "servers": int(server_starts(gh).nunique()) if "server_instance" in gh else 1,
                         "us_spread": gh["loop_ns_per_read"].max() / gh["loop_ns_per_read"].min(),
                         "reads_spread": th["reads_per_s"].max() / th["reads_per_s"].min() if len(th) else float("nan")})
    return pd.DataFrame(rows)


def statement_costs(res: Results) -> pd.DataFrame:
    """At H = 0 (throughput runs): reads and writer commits per second and the server's CPU per
    statement (reads and commits together), per server: what the writer's commits cost each engine."""
    w = throughput(res)
    w = w[w["holders"] == 0].assign(writes_per_s=lambda d: d["writes"] / d["total_time_s"],
                                    cpu_per_stmt_us=lambda d: d["server_cpu_s"] / (d["reads"] + d["writes"]) * 1e6)
    return (w.groupby("series_name")[["reads_per_s", "writes_per_s", "cpu_per_stmt_us", "cpu_per_read_us"]]
            .median().reset_index().rename(columns={"series_name": "server"}))


def costly_statements(res: Results, factor: float = 2.0) -> pd.DataFrame | None:
    """Servers whose CPU per statement at H = 0 is more than ``factor`` times the other servers': the
    ratio of its runs over theirs (geometric means, a Welch interval on the logs: ``times``, ``low``,
    ``high``) with the whole interval above ``factor``; ``others`` is their median. None with fewer
    than two servers."""
    st = statement_costs(res)
    if len(st) < 2:
        return None
    w = throughput(res)
    w = w[w["holders"] == 0]
    per_stmt = w["server_cpu_s"] / (w["reads"] + w["writes"]) * 1e6
    rows = []
    for _, r in st.iterrows():
        mine = w["series_name"] == r["server"]
        times, lo, hi = stats.unpaired_ratio_ci(per_stmt[mine], per_stmt[~mine])
        rows.append({**r, "others": per_stmt[~mine].median(), "times": times, "low": lo, "high": hi})
    out = pd.DataFrame(rows)
    return out[out["low"] > factor]


def relative_at_top(res: Results) -> pd.DataFrame:
    """Reads per second relative to H = 0 at the largest H (prepared), lowest first."""
    rel = relative_qps(res)
    if rel.empty:
        return rel
    top = rel[(rel["holding"] == "prepared") & (rel["holders"] == rel["holders"].max())]
    return top.sort_values("relative")


# What the runs stored that shows the mechanism a claim is about happened in them (the claims' witnesses):
# the calls of the view-building function the probe counted, the open transactions (or idle sessions) the
# server listed after each run, the server-side loop's reads, the trx-sys mutex acquisitions and the
# transactions' statements the server counted.


def held(w: pd.DataFrame) -> pd.Series:
    """Whether each run's server listed, after its window, what the run was to hold: H prepared transactions
    (none at H = 0 and with idle sessions), and at least H connected sessions where it held idle ones."""
    h = pd.to_numeric(w["holders"], errors="coerce")
    prepared = pd.to_numeric(w["observed_prepared"], errors="coerce") if "observed_prepared" in w else np.nan
    sessions = pd.to_numeric(w["observed_sessions"], errors="coerce") if "observed_sessions" in w else np.nan
    idle = w["mode"] == "idle"
    want = h.where(~idle, 0)
    return pd.Series(np.where(idle, (prepared == 0) & (sessions >= h), prepared == want), index=w.index, dtype=bool)


def probe_witness(res: Results, modes: tuple[str, ...] = ("none", "prepared")) -> pd.DataFrame:
    """Per server, its probe runs of autocommit readers holding ``modes`` (H = 0 is "none"), timed at a view
    function: ``runs``; ``called``, the runs in which the probe counted calls of it (``view_calls`` > 0),
    and their calls per read (``per_read_min``, ``per_read_max``); ``held``, the runs whose server listed
    what they held (:func:`held`); where rebuilds were timed apart (PostgreSQL 14+), ``rebuilt``, the runs
    at H > 0 whose probe counted rebuilds, of ``at_h`` such runs; ``holders``, the H values."""
    w = tidy(res)
    if "view_calls" not in w:
        return pd.DataFrame()
    w = w[w["probe"] & (w["trx_stmts"] == 0) & w["mode"].isin(modes) & w["view_ns_mean"].notna()]
    rows = []
    for name, g in w.groupby("series_name", sort=False):
        calls = pd.to_numeric(g["view_calls"], errors="coerce")
        per_read = calls / g["reads"]
        split = "view_rebuilt_calls" in g and g["view_rebuilt_calls"].notna().any()
        top = g[g["holders"] > 0]
        rows.append({"server": name, "family": g["family"].iloc[0],
                     "function": of_run(g["flavor"].iloc[0], g["version"].iloc[0]).function,
                     "runs": len(g), "called": int((calls > 0).sum()),
                     "per_read_min": float(per_read.min()), "per_read_max": float(per_read.max()),
                     "held": int(held(g).sum()), "holders": sorted(int(h) for h in g["holders"].unique()),
                     "rebuilt": int((pd.to_numeric(top["view_rebuilt_calls"], errors="coerce") > 0).sum())
                     if split else None, "at_h": len(top)})
    return pd.DataFrame(rows)


def loop_witness(res: Results) -> pd.DataFrame:
    """Per server timed by the server-side loop (no function to probe): ``runs``, those whose loop read
    (``looped``: loop_reads > 0; ``reads_min``, the fewest reads of a run), and those whose server listed the
    H prepared transactions it held (``held``), with the H values."""
    w = tidy(res)
    if "loop_ns_per_read" not in w:
        return pd.DataFrame()
    w = w[w["probe"] & w["loop_ns_per_read"].notna()]
    rows = []
    for name, g in w.groupby("series_name", sort=False):
        reads = pd.to_numeric(g["loop_reads"], errors="coerce")
        rows.append({"server": name, "runs": len(g), "looped": int((reads > 0).sum()), "reads_min": float(reads.min()),
                     "held": int(held(g).sum()), "holders": sorted(int(h) for h in g["holders"].unique())})
    return pd.DataFrame(rows)


def _status(res: Results, runs, names: tuple[str, ...]) -> pd.DataFrame:
    """The server's own counts ``names`` (SHOW GLOBAL STATUS deltas over the window) of ``runs``, one row per
    run (NaN where a run stored none: a count that did not move is not stored)."""
    c = res.counters
    if c.empty:
        return pd.DataFrame(index=pd.Index(list(runs), name="run_id"), columns=list(names), dtype=float)
    c = c[(c["source"] == "status") & c["name"].isin(names) & c["run_id"].isin(set(runs))]
    return c.pivot_table(index="run_id", columns="name", values="delta", aggfunc="sum").reindex(
        index=list(runs), columns=list(names))


def latch_witness(res: Results, isolations: tuple[str, ...] = ("rc",)) -> pd.DataFrame:
    """Per server and H where the double latch ran, its runs of autocommit readers and of transactions of
    LATCH_STMTS selects in ``isolations``: ``runs``; ``counted``, the runs in which performance_schema counted
    acquisitions of the mutex a view is opened under (_acquisitions); in the transactions' runs the server's
    selects per COMMIT (Com_select over Com_commit: ``per_commit_min``, ``per_commit_max``) and ``begun``,
    the autocommit runs that counted no BEGIN; ``held``, the runs whose server listed the H it held."""
    w = _acquisitions(res)
    if w.empty:
        return pd.DataFrame()
    w = w[(w["trx_stmts"] == 0) & (w["isolation"] == "rc") | (w["trx_stmts"] > 0) & w["isolation"].isin(isolations)]
    rows = []
    for (name, h), g in w.groupby(["series_name", "holders"], sort=False):
        multi = g[g["trx_stmts"] > 0]
        if multi.empty:
            continue
        st = _status(res, g.index, ("Com_select", "Com_commit", "Com_begin"))
        per_commit = st.loc[multi.index, "Com_select"] / st.loc[multi.index, "Com_commit"]
        auto = g.index[g["trx_stmts"] == 0]
        rows.append({"server": name, "family": g["family"].iloc[0], "holders": int(h), "runs": len(g),
                     "counted": int((g["acq"] > 0).sum()), "per_commit_min": float(per_commit.min()),
                     "per_commit_max": float(per_commit.max()), "transactions": len(multi), "autocommit": len(auto),
                     "begun": int(st.loc[auto, "Com_begin"].fillna(0).gt(0).sum()),
                     "held": int(held(g.reset_index()).sum()), "latch": of_run(g["flavor"].iloc[0], g["version"].iloc[0]).view_latch})
    return pd.DataFrame(rows)


# --- the visibility runs (visibility.py) and the mechanics runs (mechanics.py) ---------------------------------

def visibility(res: Results) -> pd.DataFrame:
    """Per server and H of its visibility runs: what a row's check adds where its writer lies inside the view's
    range (``extra``: the new table's median scan minus the old one's, per row, in ns; the mean over the runs
    with a t interval, ``low``, ``high``), a row's scan where the check returns at once (``old``, ns per row),
    ``runs``; and what the runs stored of it: ``ordered``, the runs whose old rows' writer was older than every
    holder and new rows' writer younger (as the server listed their ids); ``summed``, the runs whose every scan
    summed every row; ``held``, the runs whose server listed the H holders."""
    w = tidy(res)
    if "vis_extra_ns_per_row" not in w:
        return pd.DataFrame()
    w = w[(w["mode"] == "visibility") & w["vis_extra_ns_per_row"].notna()]
    rows = []
    for (name, family, h), g in w.groupby(["series_name", "family", "holders"], sort=False):
        extra, lo, hi = stats.mean_ci(g["vis_extra_ns_per_row"]) if len(g) > 1 else (
            float(g["vis_extra_ns_per_row"].iloc[0]), np.nan, np.nan)
        rows.append({"server": name, "family": family, "holders": int(h), "extra": extra, "low": lo, "high": hi,
                     "old": float(g["vis_old_ns_per_row"].median()), "runs": len(g),
                     "ordered": int((g["vis_ids_ordered"] == 1).sum()),
                     "summed": int((g["vis_sums_ok"] == g["vis_scans"]).sum()),
                     "held": int((pd.to_numeric(g["vis_held"], errors="coerce") >= h).sum()),
                     "rows": int(g["vis_rows"].max()), "scans": int(g["vis_scans"].min())})
    return pd.DataFrame(rows)


def visibility_growth(res: Results) -> pd.DataFrame:
    """Per server with visibility runs at two H above 0 or more: what the check adds per row at the largest H
    minus at the smallest (``growth``, ns per row, paired within each repeat: both H ran in that repeat, on
    one server or, MariaDB, on servers of their own; a t interval over the repeats, ``low``, ``high``), the
    two H, their extras and their ratio (``times``: largest over smallest)."""
    w = tidy(res)
    if "vis_extra_ns_per_row" not in w:
        return pd.DataFrame()
    w = w[(w["mode"] == "visibility") & w["vis_extra_ns_per_row"].notna() & (w["holders"] > 0)]
    rows = []
    for (name, family), g in w.groupby(["series_name", "family"], sort=False):
        hs = sorted(g["holders"].unique())
        if len(hs) < 2:
            continue
        piv = g.pivot_table(index=["sweep_id", "repeat"], columns="holders", values="vis_extra_ns_per_row")
        d = (piv[hs[-1]] - piv[hs[0]]).dropna()
        growth, lo, hi = stats.mean_ci(d) if len(d) > 1 else (float(d.iloc[0]) if len(d) else np.nan, np.nan, np.nan)
        low_x, high_x = float(piv[hs[0]].mean()), float(piv[hs[-1]].mean())
        rows.append({"server": name, "family": family, "low_h": int(hs[0]), "high_h": int(hs[-1]),
                     "low_extra": low_x, "high_extra": high_x, "growth": growth, "low": lo, "high": hi,
                     "times": high_x / low_x if low_x > 0 else np.nan, "repeats": len(d)})
    return pd.DataFrame(rows)


def mechanics(res: Results) -> pd.DataFrame:
    """Per server, the mechanics runs' counts summed (mechanics.COUNTS: the trials, what each saw), with the
    runs; empty where none ran."""
    from dbexp.chapters.readview.mechanics import COUNTS

    w = tidy(res)
    if "mech_trials" not in w:
        return pd.DataFrame()
    w = w[(w["mode"] == "mechanics") & w["mech_trials"].notna()]
    rows = []
    for (name, family), g in w.groupby(["series_name", "family"], sort=False):
        rows.append({"server": name, "family": family, "runs": len(g),
                     **{k: int(pd.to_numeric(g[f"mech_{k}"], errors="coerce").fillna(0).sum()) for k in COUNTS}})
    return pd.DataFrame(rows)


def open_latch(res: Results) -> pd.DataFrame:
    """Per server where the double latch ran: the autocommit readers' acquisitions per read of the mutex a view
    is opened under, at the largest H (each opens a view per statement: 1 per read if every open takes it, the
    writer's statements counted too): the mean over the repeats with a t interval (``acq``, ``low``, ``high``),
    ``runs``."""
    w = _acquisitions(res)
    if w.empty:
        return pd.DataFrame()
    w = w[(w["trx_stmts"] == 0) & (w["isolation"] == "rc") & ~w["mode"].isin(OWN_RUNS)]
    rows = []
    for (name, family), g in w.groupby(["series_name", "family"], sort=False):
        g = g[g["holders"] == g["holders"].max()]
        acq, lo, hi = stats.mean_ci(g["acq"]) if len(g) > 1 else (float(g["acq"].iloc[0]), np.nan, np.nan)
        rows.append({"server": name, "family": family, "holders": int(g["holders"].max()), "acq": acq,
                     "low": lo, "high": hi, "runs": len(g),
                     "latch": of_run(g["flavor"].iloc[0], g["version"].iloc[0]).view_latch})
    return pd.DataFrame(rows)
