"""The gtid chapter's analysis: the tidy runs, every ratio A / B with its paired interval, the
source-shaped table, the versions' gap per configuration and how each configuration moves it, the
run-length check, and the resolution, spread and A/A control of the ratios.

One estimator throughout: geometric means. A ratio within a version is the geometric mean of its
windows' ratios (A and B of a window measured in turns), over the instances the windows ran on, with an
interval at the instance level (ratios); how a configuration moves the versions' gap is the ratio of two
versions' within-version ratios, their standard errors added; a ratio between versions (measured in
sweeps of their own, nothing pairs their windows) is the ratio of the geometric means of the windows'
values with a Welch t interval on the logs, and so is a ratio of one comparison at two run lengths.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dbexp.catalog.versions import version_key
from dbexp.chapters.gtid.configs import CONFIGS, CONTROL, RATIOS, TARGET_HALF_WIDTH
from dbexp.experiments import paired, stats
from dbexp.experiments.chapter import Results, memo

# throughput and CPU per query over the interval every workload of the window was running
# (measure_together's marks); context switches and bytes per query over each run's own window.
# Named for what they are: the server's threads' voluntary switches (and all of them, voluntary and
# involuntary, the other reading of the GTID source's vmstat count), its processes' write() bytes.
VALUES = {"qps_common": "throughput", "cpu_per_op_common_us": "server CPU/o", "vcs_per_op": "voluntary cs/o",
          "cs_per_op": "all cs/o", "wchar_kb_per_op": "write() KB/o", "binlog_bytes_per_commit": "binlog bytes per commit"}
KEYS = ["series_name", "test", "threads"]
# each configuration as a change from *binlog* (the regression source's baseline: binlog and
# performance_schema on): the configuration, and what it changes
CHANGES = {"binlog off": "the binlog off", "binlog, P_S off": "performance_schema off",
           "binlog + GTID": "GTIDs on", "binlog, twin": CONTROL}


def tidy(res: Results) -> pd.DataFrame:
    """The runs, one row each, with ``length``: the run's length as a multiple of the scale's
    (1; the run-length check's windows are longer; results stored before the check have none); computed
    once per results."""
    return memo(res, "gtid.tidy", lambda: _tidy(res))


def _tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    if len(w):
        w["config"] = pd.Categorical(w["config"], list(CONFIGS), ordered=True)
        w["length"] = w["length"].fillna(1).astype(int) if "length" in w else 1
        paired.with_duration(w)
    return w


def main_runs(w: pd.DataFrame, length: int = 1) -> pd.DataFrame:
    return w[w["length"] == length] if len(w) else w


POOL_BY = ["flavor"]  # the A/A pairs the variance between instances is pooled over: every version's (one flavor)


def all_ratios(res: Results, length: int = 1) -> pd.DataFrame:
    """Per server, test and threads, and comparison: the ratio A / B of each value, A and B of a window
    paired, with its 95% interval and half-width; runs of ``length``.

    Two levels, as Kalibera and Jones ask (the windows nested in the instances they ran on, sets of servers
    started on their own): the ratio is the geometric mean of the instances' geometric means of their windows'
    ratios, and its interval is taken at the instance level, from two variance components
    (dbexp.experiments.paired.component_ratios): the variance between instances beyond what the windows
    explain, pooled over the tests' A/A controls of every version (the twin over *binlog*: two servers started
    apart, as A and B of every comparison are) by the method of moments and truncated at 0 only after pooling,
    and the comparison's own variance between windows, a t quantile on their Satterthwaite degrees of freedom.
    Each A/A control also a second time (``held_out`` True) with the variance between instances fitted on the
    other half of the tests' controls only: the honest count of how often an interval holds 1. Results from one
    instance (or before instances were recorded) keep the windows' paired t interval."""
    def compute():  # the page, its claims and its findings read it several times: computed once
        w = main_runs(tidy(res), length)
        w = w[[c for c in (*KEYS, "config", "repeat", "instance", *VALUES) if c in w]]
        if w.empty:
            return pd.DataFrame()
        w = w.assign(flavor=w["series_name"].str.split(" ").str[0])
        r = paired.component_ratios(w, ["flavor", *KEYS], lambda g: RATIOS, VALUES, by="config", control=CONTROL,
                                    pool_by=POOL_BY, held_out_by="test")
        return r.drop(columns="flavor") if len(r) else r
    return memo(res, f"gtid.all_ratios.{length}", compute)


def ratios(res: Results, length: int = 1) -> pd.DataFrame:
    """:func:`all_ratios` as the page reads them: every comparison once, the A/A controls with the variance
    between instances fitted on all of them (the held-out intervals are :func:`controls`')."""
    def compute():
        r = all_ratios(res, length)
        return r[~r["held_out"].astype(bool)].drop(columns="held_out").reset_index(drop=True) if len(r) else r
    return memo(res, f"gtid.ratios.{length}", compute)


def source_table(res: Results, comparison: str = "GTIDs") -> pd.DataFrame:
    """Shaped like the GTID source's: per server, test and threads, throughput B / A (how much more B
    does: the source writes nogtid's throughput over gtid's) and A / B for the per-query values."""
    r = ratios(res)
    if r.empty:
        return r
    r = r[r["comparison"] == comparison]
    wide = r.pivot_table(index=KEYS, columns="value", values="ratio", dropna=False).reset_index()
    hw = r.pivot_table(index=KEYS, columns="value", values="half_width", dropna=False).reset_index()
    if "throughput" in wide:
        wide["throughput B / A"] = 1 / wide["throughput"]
        wide["throughput half-width"] = hw["throughput"] if "throughput" in hw else np.nan
    return wide


def versions(w: pd.DataFrame) -> list[str]:
    """The servers in these runs, oldest first."""
    return sorted(w["series_name"].unique(), key=version_key) if len(w) else []


def family(name: str) -> str:
    """'mysql 8.0.15' -> '8.0'."""
    return ".".join(str(n) for n in version_key(name)[:2])


def pick(w: pd.DataFrame, fam: str) -> str | None:
    """The server of version family ``fam`` ('5.7') in these runs (the newest of it), or None."""
    found = [n for n in versions(w) if family(n) == fam]
    return found[-1] if found else None


def _against_base(res: Results, base_family: str) -> tuple[pd.DataFrame, str | None, list[str]]:
    """update-non-index's runs at the scale's length, the ``base_family`` server and the newer ones."""
    w = main_runs(tidy(res))
    w = w[w["test"] == "update-non-index"] if len(w) else w
    base = pick(w, base_family)
    return w, base, [n for n in versions(w) if base is not None and version_key(n) > version_key(base)]


def ablation(res: Results, base_family: str = "5.7") -> pd.DataFrame:
    """Each newer version against the ``base_family`` server on update-non-index, per configuration
    and threads: each one's QPS as the geometric mean over its windows, and their ratio (the ratio of
    those geometric means) with a Welch interval on the logs (the versions ran in sweeps of their own,
    nothing pairs their windows)."""
    w, base, newer = _against_base(res, base_family)
    rows = []
    for new in newer:
        for (config, threads), g in w.groupby(["config", "threads"], observed=True):
            a, b = g[g["series_name"] == new]["qps_common"], g[g["series_name"] == base]["qps_common"]
            if a.dropna().empty or b.dropna().empty:
                continue
            r, lo, hi = stats.unpaired_ratio_ci(a, b)
            rows.append({"config": str(config), "threads": threads, "base": base, "new": new,
                         "qps_base": stats.gmean(b), "qps_new": stats.gmean(a), "ratio": r, "ci_low": lo, "ci_high": hi,
                         "windows_base": int(b.notna().sum()), "windows_new": int(a.notna().sum())})
    return pd.DataFrame(rows)


# each configuration's change from *binlog* as ratios() names its comparison, and whether the ratio is
# configuration / binlog (True) or binlog / configuration (False: the binlog's cost, binlog / binlog off)
CHANGE_COMPARISONS = {"binlog off": ("the binlog", False), "binlog, P_S off": ("performance_schema off", True),
                      "binlog + GTID": ("GTIDs", True), "binlog, twin": (CONTROL, True)}


def gap_changes(res: Results, base_family: str = "5.7") -> pd.DataFrame:
    """How each configuration moves a newer version's gap to the ``base_family`` server on
    update-non-index: per version and threads, the gap at *binlog* (new / base QPS: the ratio of their
    windows' geometric means, a Welch interval on the logs), the gap with the change (its configuration's
    new / base QPS), and the change itself: new's configuration / *binlog* over base's, each as ratios()
    gives it (at the instance level), their standard errors on the log scale added in quadrature and a t
    quantile on the fewer degrees of freedom; ``points``: the change in percentage points of the gap, as
    the regression source states its attributions."""
    w, base, newer = _against_base(res, base_family)
    r = ratios(res)
    r = r[(r["test"] == "update-non-index") & (r["value"] == "throughput")] if len(r) else r
    rows = []
    for new in newer:
        for threads in sorted(w["threads"].unique()):
            gb, gn = (w[(w["series_name"] == s) & (w["threads"] == threads)] for s in (base, new))
            gap, glo, ghi = stats.unpaired_ratio_ci(gn[gn["config"] == "binlog"]["qps_common"],
                                                    gb[gb["config"] == "binlog"]["qps_common"])
            for config, change in CHANGES.items():
                comparison, upright = CHANGE_COMPARISONS[config]
                xb, xn = (r[(r["series_name"] == s) & (r["threads"] == threads) & (r["comparison"] == comparison)]
                          for s in (base, new))
                if xb.empty or xn.empty:
                    continue
                xb, xn = xb.iloc[0], xn.iloc[0]
                n, b = ((x.ratio, x.ci_low, x.ci_high, x.dof) for x in (xn, xb))
                ratio, lo, hi = stats.ratio_of_ratios(n, b) if upright else stats.ratio_of_ratios(b, n)
                rows.append({"new": new, "base": base, "threads": threads, "config": config, "change": change,
                             "gap": gap, "gap_low": glo, "gap_high": ghi, "gap_with": gap * ratio,
                             "gain_base": xb.ratio if upright else 1 / xb.ratio, "gain_new": xn.ratio if upright else 1 / xn.ratio,
                             "ratio": ratio, "ci_low": lo, "ci_high": hi, "points": 100 * gap * (ratio - 1),
                             "windows_base": int(xb.pairs), "windows_new": int(xn.pairs)})
    return pd.DataFrame(rows)


def length_check(res: Results) -> pd.DataFrame:
    """The run-length check: per server, test and threads measured at a longer length as well, and per
    comparison, the throughput ratio A / B at the scale's length and at the longer one (each paired by
    window), and the longer one over the shorter (Welch interval on the logs of the windows' ratios):
    an interval that holds 1 finds no dependence on the run's length."""
    w = tidy(res)
    if w.empty or (w["length"] == 1).all():
        return pd.DataFrame()
    rows = []
    for length in sorted(x for x in w["length"].unique() if x != 1):
        long = main_runs(w, length)
        for (name, test, threads), g in long.groupby(KEYS):
            short = w[(w["length"] == 1) & (w["series_name"] == name) & (w["test"] == test) & (w["threads"] == threads)]
            for a, b, what in RATIOS:
                rl, rs = paired.window_ratios(g, a, b), paired.window_ratios(short, a, b)
                if rl.empty or rs.empty:
                    continue
                rows.append({"series_name": name, "test": test, "threads": threads, "comparison": what,
                             "length": int(length), "duration_short": float(short["duration_s"].median()),
                             "duration_long": float(g["duration_s"].median()),
                             "common_short": float(short["common_s"].median()) if "common_s" in short else np.nan,
                             "common_long": float(g["common_s"].median()) if "common_s" in g else np.nan,
                             **paired.length_ratio(rl, rs)})
    return pd.DataFrame(rows)


def windows(res: Results) -> dict:
    """The design's windows as measured: their length and common interval (medians), windows per
    point, for the runs at the scale's length."""
    return paired.window_numbers(main_runs(tidy(res)), KEYS + ["config"])


def resolution(res: Results) -> dict[str, float]:
    """The 95% half-widths the comparisons' throughput ratios reached (the A/A control left out):
    median and largest, and how many reach the target."""
    r = ratios(res)
    r = r[(r["value"] == "throughput") & (r["comparison"] != CONTROL)] if len(r) else r
    return paired.resolution(r, TARGET_HALF_WIDTH)


def control(res: Results) -> dict[str, float]:
    """The A/A control's throughput ratios (two identical servers in one window), each interval with the
    variance between instances fitted on the other half of the tests' controls (:func:`controls`' held-out
    rows): how far from 1 the ratios lie (the largest distance), how many intervals hold 1, and their median
    half-width; ``cpu_ratio``: the geometric mean of their CPU per query ratios."""
    c = controls(res)
    r = c[c["held_out"]] if len(c) else c
    if r.empty or r["hi"].isna().all():
        return {"n": 0}
    r = r.assign(ci_low=r["lo"], ci_high=r["hi"], half_width=[paired.half_width(x, lo, hi) for x, lo, hi
                                                             in zip(r["ratio"], r["lo"], r["hi"])])
    a = ratios(res)
    cpu = a[(a["value"] == "server CPU/o") & (a["comparison"] == CONTROL)] if len(a) else a
    return {**paired.control(r), "cpu_ratio": stats.gmean(cpu["ratio"]) if len(cpu) else float("nan")}


def twin_over_binlog(w: pd.DataFrame, col: str, keys: list[str]) -> pd.Series:
    """The twin's ``col`` over *binlog*'s, window by window (indexed by ``keys`` and the repeat)."""
    a = w[w["config"] == "binlog, twin"].set_index(keys + ["repeat"])[col]
    b = w[w["config"] == "binlog"].set_index(keys + ["repeat"])[col]
    return (a / b).dropna()


def spread(res: Results) -> dict[str, float]:
    """Why the servers share a window, from the data: per point, how much the *binlog* server's QPS
    moves from window to window (coefficient of variation) against how much its ratio to the twin in
    the same windows moves (standard deviation of the ratio); medians over the points."""
    w = main_runs(tidy(res))
    if w.empty:
        return {"n": 0}
    alone = w[w["config"] == "binlog"].groupby(KEYS)["qps_common"].agg(stats.cv)
    paired = twin_over_binlog(w, "qps_common", KEYS).groupby(level=KEYS).std(ddof=1)
    if alone.dropna().empty or paired.dropna().empty:
        return {"n": 0}
    return {"n": int(paired.notna().sum()), "qps_cv": float(alone.median()), "ratio_sd": float(paired.median())}


CONTROL_COLUMNS = ["flavor", "series_name", "test", "threads", "held_out", "ratio", "lo", "hi", "pairs", "instances",
                   "dof", "between", "between_df", "holds_1"]


def controls(res: Results) -> pd.DataFrame:
    """The A/A pairs per version and test: the twin's throughput over *binlog*'s (two servers of the same build
    and settings, started apart), with its interval at the instance level, twice: with the variance between
    instances fitted on the other half of the tests' pairs (``held_out`` True: what the coverage is counted on)
    and on all of them (False); and whether the interval holds 1 (columns CONTROL_COLUMNS)."""
    r = all_ratios(res)
    r = r[(r["comparison"] == CONTROL) & (r["value"] == "throughput")] if len(r) else r
    if r.empty:
        return pd.DataFrame(columns=CONTROL_COLUMNS)
    out = r.assign(flavor=r["series_name"].str.split(" ").str[0], lo=r["ci_low"], hi=r["ci_high"],
                   held_out=r["held_out"].astype(bool))
    out["holds_1"] = paired.holds_one(out)
    return out[CONTROL_COLUMNS].sort_values(["series_name", "test", "threads", "held_out"], key=lambda col: (
        col.map(version_key) if col.name == "series_name" else col)).reset_index(drop=True)


def derived(res: Results) -> dict[str, pd.DataFrame]:
    """What publishing writes beside the runs: data/gtid/controls.parquet (:func:`controls`)."""
    return {"controls": controls(res)}


# each comparison as the page states it: what turning the feature off gains, "off / on" (the sources' own
# direction: the GTID source's nogtid over gtid, the regression source's gains), the A/A control as twin / binlog;
# (the label, whether ratios()' A / B is inverted to get it)
EFFECTS = {"GTIDs": ("GTIDs: without / with", True), "the binlog": ("binlog: off / on", True),
           "performance_schema off": ("performance_schema: off / on", False),
           CONTROL: ("A/A: twin / binlog", False)}


def effects(res: Results, value: str = "throughput") -> pd.DataFrame:
    """Every comparison's ratio of ``value`` in the page's one direction (EFFECTS: off / on, the A/A control twin
    / binlog), with its 95% interval: columns series_name, version, test, threads, comparison, effect (its label),
    ratio, ci_low, ci_high, pairs, instances, source (the source's own number where it printed one, else NaN)."""
    r = ratios(res)
    r = r[r["value"] == value] if len(r) else r
    if r.empty:
        return pd.DataFrame(columns=["series_name", "version", "test", "threads", "comparison", "effect", "ratio",
                                     "ci_low", "ci_high", "pairs", "instances", "source"])
    rows = []
    for x in r.itertuples():
        label, invert = EFFECTS[x.comparison]
        ratio, lo, hi = (1 / x.ratio, 1 / x.ci_high, 1 / x.ci_low) if invert else (x.ratio, x.ci_low, x.ci_high)
        rows.append({"series_name": x.series_name, "version": x.series_name.split(" ", 1)[-1], "test": x.test,
                     "threads": x.threads, "comparison": x.comparison, "effect": label, "ratio": ratio, "ci_low": lo,
                     "ci_high": hi, "pairs": x.pairs, "instances": x.instances,
                     "source": _source_effect(x.comparison, x.series_name, x.test) if value == "throughput"
                     else float("nan")})
    return pd.DataFrame(rows)


def _source_effect(comparison: str, name: str, test: str) -> float:
    """The sources' own number for one effect (EFFECTS' direction), where they printed one for this version's
    family and test: the regression source's gains on update-non-index (5.7 and 8.0), the GTID source's
    8-core nogtid / gtid on insert and update-index (its versions from 8.0.44: a newer family only)."""
    from dbexp.experiments import ledger as src

    if comparison in ("the binlog", "performance_schema off") and test == "update-non-index":
        g = src.gain("skip-log-bin" if comparison == "the binlog" else "performance_schema=0", name)
        return float("nan") if g is None else g
    if comparison == "GTIDs" and test in ("insert", "update-index") and version_key(name) >= (8, 0, 44):
        low, high = src.EIGHT_TPUT[test]
        return 2 / (low + high)  # the middle of "about 5%", as nogtid / gtid
    return float("nan")


PER_COMMIT = ("binlog_bytes_per_commit", "binlog_events_per_commit", "binlog_gtid_events_per_commit",
              "binlog_anonymous_gtid_events_per_commit", "binlog_table_map_events_per_commit",
              "binlog_rows_events_per_commit", "binlog_query_events_per_commit")


def binlog_per_commit(res: Results) -> pd.DataFrame:
    """What each commit wrote to the binlog, per version, test and thread count: medians over the windows of the
    bytes per commit at *binlog* and *binlog + GTID*, and of the events per commit the runs read back after each
    window (chapter.event_figures), by type: every event, table maps and rows events at *binlog*, anonymous GTID
    events at *binlog* and GTID events at *binlog + GTID* (columns series_name, test, threads, then
    "<measurement> at <configuration>" for those the runs stored)."""
    w = main_runs(tidy(res))
    if w.empty or "binlog_bytes_per_commit" not in w:
        return pd.DataFrame()
    wanted = [("binlog_bytes_per_commit", "binlog"), ("binlog_bytes_per_commit", "binlog + GTID"),
              ("binlog_events_per_commit", "binlog"), ("binlog_table_map_events_per_commit", "binlog"),
              ("binlog_rows_events_per_commit", "binlog"), ("binlog_anonymous_gtid_events_per_commit", "binlog"),
              ("binlog_gtid_events_per_commit", "binlog + GTID")]
    keys = ["series_name", "test", "threads"]
    out = None
    for col, config in wanted:
        if col not in w or w.loc[w["config"] == config, col].isna().all():
            continue
        m = (w[w["config"] == config].groupby(keys)[col].median().rename(f"{col} at {config}").reset_index())
        out = m if out is None else out.merge(m, on=keys, how="outer")
    if out is None:
        return pd.DataFrame()
    return out.sort_values(keys, key=lambda col: (col.map(version_key) if col.name == "series_name" else col),
                           kind="stable").reset_index(drop=True)
