"""The versions chapter's analysis: relative QPS (and cpu/o, cs/o) of every version against its
flavor's base and against the version before it, paired by window; the source-shaped summary per
group; the A/A control; the resolution; the buffer pool's reads; the run-length check; the ablation.

One estimator throughout, the gtid chapter's: geometric means. A ratio of two servers of one group is
the geometric mean of its windows' ratios (both ran in the same window) with a paired t interval on
the logs (dbexp.experiments.stats.pair_ratio_by). A summary over a group's tests (median, average)
is taken per window index, over the tests' ratios of that index, and its interval is a t interval over
the window indexes (each index is one independent draw of every test); min and max are of the tests'
ratios. Ratios between groups measured apart (the run-length check's windows against the scale's; the
ablation's versions, one group each) use Welch intervals on the logs.
"""

from __future__ import annotations

import functools
import json
from typing import NamedTuple

import numpy as np
import pandas as pd

from dbexp.catalog.versions import version_key
from dbexp.chapters.versions.regression import BASELINE, STEPS, configurations, source_gap
from dbexp.chapters.versions.tests import GROUPS, TESTS
from dbexp.experiments import paired, stats
from dbexp.experiments.chapter import Results, memo, server_starts
from dbexp.metrics.profile import OTHER, split_name

TARGET_HALF_WIDTH = 0.03  # the resolution: a 95% half-width of at most 3%
MOVED = 0.05  # "resolved away from 1 by more than 5%": where the page puts cpu/o and cs/o beside
VALUES = {"qps_common": "QPS", "cpu_per_op_common_us": "cpu/o", "cs_per_op": "cs/o", "vcs_per_op": "voluntary cs/o"}
VIEWS = ("base", "previous", "own defaults", "A/A control")
ROLE_SUFFIX = {"baseline": "", "twin": " (twin)", "own defaults": " (own defaults)", "ablation": "", "profile": ""}


def tidy(res: Results) -> pd.DataFrame:
    """One row per run, with ``server`` (the version, marked where it is a twin or at its own
    defaults), ``group`` (the source's), ``length`` (1: the scale's windows) and ``duration_s``."""
    def compute():
        w = res.wide.copy()
        if w.empty:
            return w
        for col, default in (("role", "baseline"), ("length", 1), ("config", "")):
            if col not in w:
                w[col] = default
        w["length"] = w["length"].fillna(1).astype(int)
        w["version"] = w["series_name"].str.split(" ", n=1).str[1]
        w["server"] = w["series_name"] + w["role"].map(ROLE_SUFFIX).fillna("")
        w["group"] = w["test"].map(lambda t: TESTS[t].group if t in TESTS else "")
        return paired.with_duration(w)
    return memo(res, "versions.tidy", compute)


MAIN_ROLES = ("baseline", "twin", "own defaults")


def main_runs(w: pd.DataFrame) -> pd.DataFrame:
    return w[(w["length"] == 1) & w["role"].isin(MAIN_ROLES)] if len(w) else w


def _paired_runs(res: Results) -> pd.DataFrame:
    """:func:`main_runs` with only the columns the paired ratios read: they take a pair's rows out
    of a flavor-test's hundreds of times, and each take copies every column (a third of them text)."""
    def compute():
        w = main_runs(tidy(res))
        return w[[c for c in ("flavor", "test", "role", "series_name", "server", "repeat", "instance", "common_s",
                              "servers_at_once", *VALUES) if c in w]]
    return memo(res, "versions.paired_runs", compute)


@functools.lru_cache(maxsize=None)
def _version_key(name: str) -> tuple[int, ...]:
    """version_key, cached: the same few server names are ordered in every flavor-test."""
    return version_key(name)


def ordered(names) -> list[str]:
    """The distinct ``names`` (servers), oldest version first."""
    return sorted(set(names), key=_version_key)


CONTROL = "A/A control"


def comparisons(g: pd.DataFrame) -> list[tuple[str, str, str]]:
    """One flavor-test's comparisons (A, B, view), A and B named as ``server``: each version over the
    flavor's base (the oldest version's baseline server) and over the version before it, each server at
    its own defaults over the same version at the baseline (and over the base), and the twin over the
    base (the A/A control)."""
    role, series = g["role"].to_numpy(), g["series_name"].to_numpy()
    names = ordered(series[role == "baseline"])
    if not names:
        return []
    base, out = names[0], []
    for i, name in enumerate(names[1:], start=1):
        out += [(name, base, "base"), (name, names[i - 1], "previous")]
    for name in ordered(series[role == "own defaults"]):
        out.append((f"{name} (own defaults)", name, "own defaults"))
        if name != base:
            out.append((f"{name} (own defaults)", base, "base"))
    if (role == "twin").any():
        out.append((f"{base} (twin)", base, CONTROL))
    return out


def ratios(res: Results) -> pd.DataFrame:
    """Per flavor and test, every comparison of two servers that shared the windows (:func:`comparisons`),
    for QPS, cpu/o and cs/o: the ratio with its 95% interval and half-width, the windows nested in the
    instances they ran on, the interval at the instance level, the variance between instances pooled per
    flavor and value over the tests' A/A controls (dbexp.experiments.paired.nested_ratios)."""
    def compute():
        w = _paired_runs(res)
        if w.empty:
            return pd.DataFrame()
        r = paired.nested_ratios(w, ["flavor", "test"], comparisons, VALUES, by="server", control=CONTROL,
                                 pool_by=["flavor"])
        if r.empty:
            return r
        r = r.rename(columns={"a": "server", "b": "against", "comparison": "view"})
        r.insert(2, "group", r["test"].map(lambda t: TESTS[t].group if t in TESTS else ""))
        return r
    return memo(res, "versions.ratios", compute)


def relative(res: Results, view: str = "base", value: str = "QPS") -> pd.DataFrame:
    r = ratios(res)
    return r[(r["view"] == view) & (r["value"] == value)].copy() if len(r) else r


def relative_by_flavor(res: Results, view: str = "base") -> list[tuple[str, pd.DataFrame, list[str]]]:
    """Per flavor, its relative QPS (``relative``, with ``version``: the server's version) and its
    tests in the source's order: what the page draws one chart of."""
    rq = relative(res, view)
    if rq.empty:
        return []
    rq["version"] = rq["server"].str.split(" ", n=1).str[1]
    return [(flavor, g, [t for t in TESTS if t in set(g["test"])]) for flavor, g in rq.groupby("flavor")]


def tests_table(res: Results) -> pd.DataFrame:
    """Every test defined: whether these results ran it, its group, what it runs, its script and options."""
    ran = windows(res).get("tests", [])
    return pd.DataFrame([{"test": k, "measured here": "yes" if k in ran else "", "group": t.group, "runs": t.runs,
                          "sysbench script and options": " ".join([t.script] + [f"--{a}={b}" for a, b in t.options])}
                         for k, t in TESTS.items()])


def _window_ratios(g: pd.DataFrame, a: str, b: str, value: str = "qps_common") -> pd.Series:
    return paired.window_ratios(g, a, b, value, by="server")


def summary(res: Results, view: str = "base") -> pd.DataFrame:
    """Shaped like the sources' tables: per flavor, server and group, the min, max, average (geometric)
    and median of the tests' relative QPS (``view``: against the base, or the version before), as the
    sources take them over their tests. The average's and the median's 95% intervals take the tests'
    errors as shared (the same instances ran every test, so an instance's offset moves them all): the
    geometric mean, and the median, of the tests' own interval bounds."""
    def compute():
        r = relative(res, view)
        if r.empty:
            return pd.DataFrame()
        rows = []
        for (flavor, server, against, group), g in r.groupby(["flavor", "server", "against", "group"]):
            rows.append({"flavor": flavor, "server": server, "against": against, "group": group, "tests": len(g),
                         "min": g["ratio"].min(), "max": g["ratio"].max(),
                         "avg": stats.gmean(g["ratio"]), "avg_low": stats.gmean(g["ci_low"]),
                         "avg_high": stats.gmean(g["ci_high"]),
                         "median": float(np.median(g["ratio"])), "median_low": float(np.median(g["ci_low"])),
                         "median_high": float(np.median(g["ci_high"]))})
        out = pd.DataFrame(rows)
        out["group"] = pd.Categorical(out["group"], list(GROUPS), ordered=True)
        return out.sort_values(["flavor", "group", "server"]).reset_index(drop=True)
    return memo(res, f"versions.summary.{view}", compute)


def resolution(res: Results) -> dict:
    """The 95% half-widths of every relative QPS (against the base, the previous version and the
    own defaults; the control apart): median, largest, how many reach the target and which miss it."""
    r = ratios(res)
    r = r[(r["value"] == "QPS") & (r["view"] != "A/A control")] if len(r) else r
    if len(r):  # the first version after the base is both views' one ratio: counted once
        r = r.drop_duplicates(["flavor", "test", "server", "against"])
    found = paired.resolution(r, TARGET_HALF_WIDTH)
    if not found["n"]:
        return {**found, "missed": []}
    miss = r[~(r["half_width"] <= TARGET_HALF_WIDTH)].sort_values("half_width", ascending=False)
    return {**found, "missed": [{"server": x.server, "against": x.against, "test": x.test, "half_width": x.half_width}
                       for x in miss.itertuples()]}


def headlines(res: Results) -> list[dict]:
    """Per flavor, from the per-group medians against the version before (``summary(res, "previous")``):
    how many medians are resolved below 1 (whole interval under 1) and above 1, and the lowest resolved
    below and the highest resolved above, each with its interval."""
    s = summary(res, "previous")
    out = []
    if s.empty:
        return out
    for flavor, g in s.groupby("flavor", sort=False):
        down = g[g["median_high"] < 1].sort_values("median")
        up = g[g["median_low"] > 1].sort_values("median", ascending=False)
        pick = lambda x: {"server": x["server"], "against": x["against"], "group": str(x["group"]),  # noqa: E731
                          "tests": int(x["tests"]), "median": x["median"], "low": x["median_low"],
                          "high": x["median_high"]}
        out.append({"flavor": flavor, "name": g["server"].iloc[0].split(" ", 1)[0], "n": len(g),
                    "down": len(down), "up": len(up), "lowest": pick(down.iloc[0]) if len(down) else None,
                    "highest": pick(up.iloc[0]) if len(up) else None})
    return out


def widest(res: Results, n: int = 3) -> pd.DataFrame:
    """The ``n`` flavor-tests whose relative QPS (QPS, every view but the control) have the widest
    intervals, with what the windows say about why: how many of their ratios miss the target, the
    statements each server completed between the marks of one window (min, median, max), each
    server's share of the server CPU in a window (min, max: an even share is 1 / servers at once), and
    a version's CPU per statement over the base's in the same window (min, max over the versions and
    windows: a cost that moves between windows, where the shares stay even, widens the interval), and
    the same for the base's A/A twin (one version against itself)."""
    return memo(res, f"versions.widest.{n}", lambda: _widest(res, n))


def _widest(res: Results, n: int) -> pd.DataFrame:
    r = ratios(res)
    r = r[(r["value"] == "QPS") & (r["view"] != "A/A control")] if len(r) else r
    if r.empty or r["half_width"].isna().all():
        return pd.DataFrame()
    r = r.drop_duplicates(["flavor", "test", "server", "against"])
    # the widest half-width of every flavor-test, sorted as the table is: only the top n are described
    top = (r.groupby(["flavor", "test"])["half_width"].max().rename("widest").reset_index()
           .sort_values("widest", ascending=False).head(n))
    w = _paired_runs(res)
    return pd.DataFrame([_widest_row(flavor, test, r[(r["flavor"] == flavor) & (r["test"] == test)],
                                     w[(w["flavor"] == flavor) & (w["test"] == test)])
                         for flavor, test in zip(top["flavor"], top["test"])])


def _widest_row(flavor: str, test: str, g: pd.DataFrame, x: pd.DataFrame) -> dict:
    """One flavor-test's row of :func:`widest`: ``g`` its relative QPS, ``x`` its runs."""
    statements = x["qps_common"] * x["common_s"]
    share = x["qps_common"] * x["cpu_per_op_common_us"] * 1e-6
    names = ordered(x.loc[x["role"] == "baseline", "series_name"].unique())
    cost = pd.concat([_window_ratios(x, s, names[0], "cpu_per_op_common_us") for s in names[1:]]) \
        if len(names) > 1 else pd.Series(dtype=float)
    twin = _window_ratios(x, f"{names[0]} (twin)", names[0], "cpu_per_op_common_us") if names else cost[:0]
    return {"flavor": flavor, "test": test, "widest": float(g["half_width"].max()),
            "missed": int((~(g["half_width"] <= TARGET_HALF_WIDTH)).sum()), "ratios": len(g),
            "at_once": int(x["servers_at_once"].max()) if "servers_at_once" in x else 1,
            "windows": int(x.groupby("server").size().median()),
            "statements_min": float(statements.min()), "statements_median": float(statements.median()),
            "statements_max": float(statements.max()), "share_min": float(share.min()),
            "share_max": float(share.max()), "cost_min": float(cost.min()) if len(cost) else np.nan,
            "cost_max": float(cost.max()) if len(cost) else np.nan,
            "twin_min": float(twin.min()) if len(twin) else np.nan,
            "twin_max": float(twin.max()) if len(twin) else np.nan}


def control(res: Results) -> dict:
    r = relative(res, CONTROL)
    if r.empty:
        return {"n": 0}
    holds = paired.holds_one(r)
    per = [{"flavor": f, "n": len(g), "holding_1": int(holds[g.index].sum()), "median": float(g["ratio"].median()),
            "min": float(g["ratio"].min()), "max": float(g["ratio"].max()),
            "median_half_width": float(g["half_width"].median())} for f, g in r.groupby("flavor")]
    return {**paired.control(r), "flavors": per}


def moved(res: Results, view: str = "base") -> pd.DataFrame:
    """The tests whose relative QPS is resolved away from 1 by more than MOVED (the whole interval
    beyond 1 +- 5%), with the cpu/o and cs/o ratios of the same servers beside it."""
    r = ratios(res)
    if r.empty:
        return r
    r = r[r["view"] == view]
    keys = ["flavor", "test", "group", "server", "against"]
    q = r[r["value"] == "QPS"]
    q = q[(q["ci_high"] < 1 - MOVED) | (q["ci_low"] > 1 + MOVED)]
    out = q[keys + ["ratio", "ci_low", "ci_high"]].rename(columns={"ratio": "qps", "ci_low": "qps_low",
                                                                    "ci_high": "qps_high"})
    for label, col in (("cpu/o", "cpu"), ("cs/o", "cs"), ("voluntary cs/o", "vcs")):
        v = r[r["value"] == label][keys + ["ratio", "ci_low", "ci_high"]].rename(
            columns={"ratio": col, "ci_low": f"{col}_low", "ci_high": f"{col}_high"})
        out = out.merge(v, on=keys, how="left")
    return out


def pool_reads(res: Results) -> pd.DataFrame:
    """Per server: windows, pages read into the buffer pool in all of them, and QPS (median) - the
    cached database's check."""
    w = tidy(res)
    if w.empty or "pool_reads" not in w:
        return pd.DataFrame()
    return (w.groupby(["flavor", "server"]).agg(windows=("run_id", "size"), pool_reads=("pool_reads", "sum"),
                                                max_per_window=("pool_reads", "max"))
            .reset_index())


def length_check(res: Results) -> pd.DataFrame:
    """Per flavor and version: relative QPS against the base in the scale's windows and in the
    check's longer ones (same test), and the longer over the shorter with a Welch interval over the
    windows' ratios: an interval that holds 1 finds no dependence on the run's length (computed once
    per results)."""
    return memo(res, "versions.length_check", lambda: _length_check(res))


def _length_check(res: Results) -> pd.DataFrame:
    w = tidy(res)
    if w.empty or (w["length"] == 1).all():
        return pd.DataFrame()
    rows = []
    w = w[["flavor", "test", "length", "role", "series_name", "server", "repeat", "qps_common", "duration_s"]]
    long = w[(w["length"] > 1) & (w["role"] == "baseline")]
    main = main_runs(w)
    for (flavor, test, length), g in long.groupby(["flavor", "test", "length"]):
        short = main[(main["flavor"] == flavor) & (main["test"] == test)]
        short_s, long_s = float(short["duration_s"].median()), float(g["duration_s"].median())
        names = ordered(g["series_name"].unique())
        for name in names[1:]:
            rl, rs = _window_ratios(g, name, names[0]), _window_ratios(short, name, names[0])
            if rl.empty or rs.empty:
                continue
            found = paired.length_ratio(rl, rs)
            rows.append({"flavor": flavor, "test": test, "server": name, "against": names[0], "length": int(length),
                         "short_s": short_s, "long_s": long_s,
                         **{k: found[k] for k in ("short", "windows_short", "long", "windows_long", "ratio", "ci_low",
                                                  "ci_high")}})
    return pd.DataFrame(rows)


def widest_cells(res: Results, n: int = 3) -> pd.DataFrame:
    """:func:`widest` with its ranges as one text cell each (as the page's table shows them)."""
    wd = widest(res, n)
    if wd.empty:
        return wd
    return wd.assign(
        beyond=[f"{a} of {b}" for a, b in zip(wd["missed"], wd["ratios"])],
        statements=[f"{a:,.0f} / {b:,.0f} / {c:,.0f}" for a, b, c in
                    zip(wd["statements_min"], wd["statements_median"], wd["statements_max"])],
        share=[f"{a:.1%} to {b:.1%}" for a, b in zip(wd["share_min"], wd["share_max"])],
        cost=[f"{a:.2f} to {b:.2f}" for a, b in zip(wd["cost_min"], wd["cost_max"])],
        twin=[f"{a:.2f} to {b:.2f}" for a, b in zip(wd["twin_min"], wd["twin_max"])])


def ablation_beside_source(res: Results) -> pd.DataFrame:
    """:func:`ablation` with ``source``: the regression source's 8.0 / 5.7 for the configuration, on
    the rows of an 8.0 version (the one newer version the source measured), else None."""
    ab = ablation(res)
    if ab.empty:
        return ab
    ab["source"] = ab["config"].map(source_gap)
    ab.loc[~ab["new"].map(lambda n: version_key(n)[:2] == (8, 0)), "source"] = None
    return ab


def ablation_gaps(ab: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What the ablation's chart draws: each gap named by its versions ('8.0.15 / 5.7.22'), and the
    source's gaps (ablation_beside_source's ``source``) named as the source's."""
    pts = ab.assign(version=ab["new"].str.split(" ", n=1).str[1] + " / " + ab["old"].str.split(" ", n=1).str[1])
    src = ab.dropna(subset=["source"]).assign(version="source: 8.0.45 / 5.7.44")[["config", "source", "version"]]
    return pts, src


def ablation(res: Results) -> pd.DataFrame:
    """The regression ablation (computed once per results: the page, its findings and its claims read it)."""
    return memo(res, "versions.ablation", lambda: _ablation(res))


def _switched(value) -> dict:
    """A run's ``switched`` parameter (pairs of name and value, stored as lists) as a dict ({}: none)."""
    if value is None or isinstance(value, float):  # absent in runs measured before it existed
        return {}
    return {str(k): str(v) for k, v in value}


class Asked(NamedTuple):
    """What one server of one ablation configuration ran with, as JSON texts."""

    ran: str  # its settings: started with, and switched before each window
    client: str  # its client's options
    started: str  # the settings it was started with alone


def _asked(a: pd.DataFrame) -> dict[tuple[str, str], Asked]:
    """Per server and configuration of the ablation's runs ``a``: what it ran with (its first run's)."""
    first = a.drop_duplicates(["series_name", "config"])
    switched = first["switched"] if "switched" in first else [None] * len(first)
    return {(name, config): Asked(json.dumps({**requested, **_switched(sw)}, sort_keys=True),
                                  json.dumps((workload or {}).get("options", {}), sort_keys=True),
                                  json.dumps(requested, sort_keys=True))
            for name, config, requested, workload, sw in zip(first["series_name"], first["config"],
                                                              first["config_requested"], first["workload"], switched)}


def _ablation(res: Results) -> pd.DataFrame:
    """The regression ablation: per configuration (regression.configurations(), in its order) and newer
    version, each version's QPS (geometric mean over its windows), the gap (newer over the oldest,
    paired by window: a configuration's versions share its windows), how the configuration moves the
    gap from the source's baseline, whether it changes nothing on either version (``unchanged``) and
    whether it ran on the baseline's own servers (``shared``). The gap's windows are nested in the
    instances they ran on and its interval is at the instance level (paired.nested_ratios, the variance
    between instances pooled over the configurations); how a configuration moves the gap is the ratio of
    its gap to the baseline's, their errors taken as independent (stats.ratio_of_ratios: on shared
    servers the two share their instances' offsets, so the interval is if anything too wide), and in
    percentage points (the gaps' difference, as the source states it)."""
    w = tidy(res)
    a = w[w["role"] == "ablation"] if len(w) else w
    if a.empty:
        return pd.DataFrame()
    names = ordered(a["series_name"].unique())
    old = names[0]
    known = configurations()
    asked = _asked(a)  # what each server of each configuration ran with, its client sent, and it was started with
    qps = {k: stats.gmean(g["qps_common"]) for k, g in a.groupby(["series_name", "config"])}
    named = "server_instance" in a and a["server_instance"].notna().all()
    starts = {c: set(server_starts(g)) for c, g in a.groupby("config")} if named else {}

    # the gap per configuration, its windows nested in the instances; the variance between instances
    # pooled over the configurations (the same versions, started afresh for each group of servers)
    cfgs = [c for c in known if c in set(a["config"])]
    gaps = paired.nested_ratios(a[["config", "series_name", "repeat", "instance", "qps_common"]
                                  if "instance" in a else ["config", "series_name", "repeat", "qps_common"]],
                                ["config"], lambda g: [(new, old, "gap") for new in names[1:]], {"qps_common": "QPS"},
                                by="series_name", control="gap", pool_by=[])
    rows = []
    for new in names[1:]:
        mine = gaps[gaps["a"] == new].set_index("config") if len(gaps) else gaps
        for config in [c for c in cfgs if c in mine.index]:
            x = mine.loc[config]
            factors = known[config]
            kind = ("baseline" if not factors else f"step {len(factors)}" if factors == STEPS[:len(factors)] else "alone")
            row = {"config": config, "kind": kind, "old": old, "new": new, "qps_old": qps[(old, config)],
                   "qps_new": qps[(new, config)], "gap": x["ratio"], "gap_low": x["ci_low"], "gap_high": x["ci_high"],
                   "windows": int(x["pairs"]), "instances": int(x["instances"]), "dof": int(x["dof"])}
            # a configuration that changes nothing on either version (an option it lacks): an A/A
            # control of comparing its windows with the baseline's (on the baseline's servers where shared)
            row["unchanged"] = config != BASELINE and all(
                (asked[n, config].ran, asked[n, config].client) == (asked[n, BASELINE].ran, asked[n, BASELINE].client)
                for n in (old, new))
            # whether its windows ran on the baseline's own servers (what differs, if anything, is switched
            # before each window or sent by the client): the same server starts where the runs name them,
            # else the same startup settings
            row["shared"] = config != BASELINE and (
                starts[config] == starts[BASELINE] if starts else
                all(asked[n, config].started == asked[n, BASELINE].started for n in (old, new)))
            if config != BASELINE and BASELINE in mine.index:
                b = mine.loc[BASELINE]
                m, mlo, mhi = stats.ratio_of_ratios((x["ratio"], x["ci_low"], x["ci_high"], x["dof"]),
                                                    (b["ratio"], b["ci_low"], b["ci_high"], b["dof"]))
                row.update({"moves": m, "moves_low": mlo, "moves_high": mhi, "points": 100 * (x["ratio"] - b["ratio"])})
            rows.append(row)
    return pd.DataFrame(rows)


def profile(res: Results) -> pd.DataFrame:
    """The profiled windows (role 'profile'): per test, server and symbol, the server CPU per statement
    it took (samples / perf's rate / the statements sysbench completed, summed over the windows, in
    us), and the server's total of it beside the CPU the sampler measured per statement (a check: the
    samples should account for about all of it). Computed once per results."""
    return memo(res, "versions.profile", lambda: _profile(res))


def _profile(res: Results) -> pd.DataFrame:
    w = tidy(res)
    p = w[w["role"] == "profile"] if len(w) else w
    c = res.counters
    if p.empty or c is None or c.empty or "profile_samples" not in p:
        return pd.DataFrame()
    c = c[(c["source"] == "perf") & c["run_id"].isin(p["run_id"])].merge(
        p[["run_id", "flavor", "series_name", "test", "queries", "profile_hz"]], on="run_id")
    totals = p.groupby(["flavor", "series_name", "test"]).agg(queries=("queries", "sum"), windows=("run_id", "size"),
                                                               samples=("profile_samples", "sum"),
                                                               hz=("profile_hz", "first"),
                                                               cpu_s=("server_cpu_s", "sum"))
    by_sym = c.groupby(["flavor", "series_name", "test", "name"])["delta"].sum().rename("samples").reset_index()
    out = by_sym.merge(totals[["queries", "hz", "windows"]].reset_index(), on=["flavor", "series_name", "test"])
    out["us_per_statement"] = out["samples"] / out["hz"] / out["queries"] * 1e6
    t = totals.reset_index()
    t["profiled_us"] = t["samples"] / t["hz"] / t["queries"] * 1e6
    t["measured_us"] = t["cpu_s"] / t["queries"] * 1e6
    out = out.merge(t[["flavor", "series_name", "test", "profiled_us", "measured_us"]], on=["flavor", "series_name", "test"])
    out["function"] = [split_name(n)[0] for n in out["name"]]
    out["module"] = [split_name(n)[1] or "(the rest)" for n in out["name"]]
    return out.rename(columns={"series_name": "server", "name": "symbol"})


MODULE_KINDS = ("server binary", "kernel", "C library", "other libraries", "(the rest)")


def module_kind(module: str) -> str:
    """A binary's kind: the kernel (and its vDSO), the C library, other libraries, the functions
    beyond a window's top ones, or the server's own binary (mysqld, mariadbd, postgres)."""
    if module in ("kernel", "vdso"):
        return "kernel"
    if module == "(the rest)":
        return module
    if module.startswith("libc.") or module.startswith("libc-"):
        return "C library"
    return "other libraries" if module.startswith("lib") or module.startswith("ld-") else "server binary"


def profile_modules(res: Results) -> pd.DataFrame:
    """Per profiled test and server, the CPU per statement in each kind of binary (module_kind), in
    us, and the share of the server binary's samples perf could not name (a stripped binary keeps only
    the functions it exports). Computed once per results."""
    return memo(res, "versions.profile_modules", lambda: _profile_modules(res))


def _profile_modules(res: Results) -> pd.DataFrame:
    pr = profile(res)
    if pr.empty:
        return pr
    pr = pr.assign(kind=pr["module"].map(module_kind))
    out = (pr.groupby(["flavor", "test", "server", "kind"])["us_per_statement"].sum().reset_index()
           .pivot_table(index=["flavor", "test", "server"], columns="kind", values="us_per_statement", fill_value=0.0))
    out = out[[k for k in MODULE_KINDS if k in out.columns]].reset_index()
    own = pr[pr["kind"] == "server binary"]
    unnamed = own[own["function"] == "[unknown]"].groupby(["flavor", "test", "server"])["us_per_statement"].sum()
    share = (unnamed / own.groupby(["flavor", "test", "server"])["us_per_statement"].sum()).rename("unnamed")
    return out.merge(share.reset_index(), on=["flavor", "test", "server"], how="left").fillna({"unnamed": 0.0})


def profile_difference(res: Results, n: int = 8) -> pd.DataFrame:
    """Per profiled test, each version against the one before it: the ``n`` symbols whose CPU per
    statement grew or shrank the most (newer minus older, us), with both versions' figures and what
    the whole profile differs by. A symbol one version has and the other lacks (renamed, inlined)
    counts as 0 where missing: read the pair of names, not one of them alone."""
    pr = profile(res)
    if pr.empty:
        return pr
    rows = []
    for (flavor, test), g in pr.groupby(["flavor", "test"]):
        names = ordered(g["server"].unique())
        for old, new in zip(names, names[1:]):
            a = g[g["server"] == old].set_index("symbol")["us_per_statement"]
            b = g[g["server"] == new].set_index("symbol")["us_per_statement"]
            both = pd.concat([a.rename("old"), b.rename("new")], axis=1).fillna(0.0)
            both["difference"] = both["new"] - both["old"]
            total = float(both["difference"].sum())
            named = both.drop(index=OTHER, errors="ignore")
            pick = named.reindex(named["difference"].abs().sort_values(ascending=False).index).head(n)
            for sym, x in pick.iterrows():
                fn, module = split_name(sym)
                rows.append({"flavor": flavor, "test": test, "new": new, "old": old, "symbol": sym, "function": fn,
                             "module": module, "old_us": x["old"],
                             "new_us": x["new"], "difference_us": x["difference"], "total_difference_us": total})
    return pd.DataFrame(rows)


def windows(res: Results) -> dict:
    """The windows' numbers the page quotes (computed once per results)."""
    return memo(res, "versions.windows", lambda: _windows(res))


def _windows(res: Results) -> dict:
    w = main_runs(tidy(res))
    if w.empty:
        return {"n": 0}
    ran = set(w["test"])
    return {**paired.window_numbers(w, ["server", "test"]),
            "at_once": int(w["servers_at_once"].max()) if "servers_at_once" in w else 1,
            "active": int(w["active_servers"].max()) if "active_servers" in w and w["active_servers"].notna().any()
            else int(w["servers_at_once"].max()) if "servers_at_once" in w else 1,
            "instances": int(w["instance"].nunique()) if "instance" in w and w["instance"].notna().any() else 1,
            "slice_s": float(w["slice_s"].max()) if "slice_s" in w and w["slice_s"].notna().any() else 0.0,
            "tests": [t for t in TESTS if t in ran]}


def controls(res: Results) -> pd.DataFrame:
    """The A/A pairs per flavor and test: the base's twin over the base (two servers of the same build
    and settings, started apart, in every window), relative QPS with its interval at the instance level
    (ratios), and whether the interval holds 1 (columns flavor, series_name, test, ratio, lo, hi, pairs,
    instances, holds_1)."""
    r = relative(res, CONTROL)
    cols = ["flavor", "series_name", "test", "ratio", "lo", "hi", "pairs", "instances", "holds_1"]
    if r.empty:
        return pd.DataFrame(columns=cols)
    out = r.assign(series_name=r["against"], lo=r["ci_low"], hi=r["ci_high"])
    out["holds_1"] = paired.holds_one(out)
    return out[cols].reset_index(drop=True)


def derived(res: Results) -> dict[str, pd.DataFrame]:
    """What publishing writes beside the runs: data/versions/controls.parquet (:func:`controls`)."""
    return {"controls": controls(res)}


def short_function(name: str) -> str:
    """A profiled C++ function's name without its template arguments and parameter list, for a table that
    must fit the page (``mutex_enter_inline<PolicyMutex<...>>(...)`` -> ``mutex_enter_inline<…>``)."""
    out, depth = [], 0
    for ch in str(name):
        if ch == "<":
            if depth == 0:
                out.append("<…>")
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif ch == "(" and depth == 0:
            break
        elif depth == 0:
            out.append(ch)
    return "".join(out).strip() or str(name)
