"""The versions chapter's analysis: relative QPS (and cpu/o, cs/o) of every version against its
flavor's base and against the version before it, paired by window; the source-shaped summary per
group; the A/A control, judged on tests its fit did not see; the variance components and the design they
give; the host's speed per window; the resolution; the buffer pool's reads; the statements each test ran (the
claims' witness); the run-length check; the ablation.

One estimator throughout: geometric means. A ratio of two servers of one group is the geometric mean over the
instances of each instance's geometric mean of its windows' ratios (both servers ran in the same windows), its
interval at the instance level from two variance components (Kalibera and Jones, ISMM 2013): the variance
between instances, pooled over the flavor's A/A pairs by the method of moments and only then truncated at 0,
and the comparison's own variance between windows within an instance, each with its degrees of freedom, a t
quantile on their Satterthwaite degrees of freedom (dbexp.experiments.paired.component_ratios). The A/A pairs'
own intervals are judged on the other half of the tests' fit (``held_out``). A summary over a group's tests
(min, max, median and geometric mean of its tests' ratios, as the sources tabulate them) takes the tests'
errors as independent but for one offset per instance that every test of the instance shares, estimated from
the tests' instance means (stats.shared_offset, stats.summary_intervals). Ratios between groups measured apart
(the run-length check's windows against the scale's; the ablation's configurations) use Welch intervals on the
logs, or two gaps' standard errors added.
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

TARGET_HALF_WIDTH = 0.05  # issue 47: the median 95% half-width of a relative QPS at most 5%
TARGET_HEADLINE = 0.03  # ... and at most 3% for MySQL 8.0 / 5.7 and 9.7 / 8.0 on point-query and update-nonindex
HEADLINE_CELLS = ((("8", "0"), ("5", "7")), (("9", "7"), ("8", "0")))  # (newer, older) families: major, minor
HEADLINE_TESTS = ("point-query", "update-nonindex")
LEAST_ACTIVE_S = 8.0  # issue 47: each server's own turns per test at default, summed over its instances
LEAST_INSTANCES = 4
MOVED = 0.05  # "resolved away from 1 by more than 5%": where the page puts cpu/o and cs/o beside
VALUES = {"qps_common": "QPS", "cpu_per_op_common_us": "cpu/o", "cs_per_op": "cs/o", "vcs_per_op": "voluntary cs/o"}
VIEWS = ("base", "previous", "own defaults", "A/A control")
ROLE_SUFFIX = {"baseline": "", "twin": " (twin)", "own defaults": " (own defaults)", "ablation": "", "profile": "",
               "counted": ""}


def tidy(res: Results) -> pd.DataFrame:
    """One row per run, with ``server`` (the version, marked where it is a twin or at its own
    defaults), ``group`` (the source's), ``length`` (1: the scale's windows) and ``duration_s``.

    Where the windows' instances live together (runs that carry ``turns_s``: every repeat runs a window on every
    instance), ``repeat`` is made the window's own number, unique per instance and repeat (instance x the repeats
    + the repeat; the sweep's repeat kept as ``sweep_repeat``): the paired analysis pairs two servers by it."""
    def compute():
        w = res.wide.copy()
        if w.empty:
            return w
        if "turns_s" in w and w["turns_s"].notna().any() and "instance" in w:
            together = w["turns_s"].notna() & w["instance"].notna()
            span = int(w.loc[together, "repeat"].max()) + 1 if together.any() else 1
            w["sweep_repeat"] = w["repeat"]
            inst = w["instance"].fillna(0).astype("int64").to_numpy()
            w["repeat"] = np.where(together.to_numpy(), inst * span + w["repeat"].astype("int64").to_numpy(),
                                   w["repeat"].astype("int64").to_numpy())
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


def timed_runs(w: pd.DataFrame) -> pd.DataFrame:
    """Every run but the counted part's (role 'counted': counts under callgrind, no window, no QPS)."""
    return w[w["role"] != "counted"] if len(w) else w


def _paired_runs(res: Results) -> pd.DataFrame:
    """:func:`main_runs` with only the columns the paired ratios read: they take a pair's rows out
    of a flavor-test's hundreds of times, and each take copies every column (a third of them text)."""
    def compute():
        w = main_runs(tidy(res))
        return w[[c for c in ("flavor", "test", "role", "series_name", "server", "repeat", "instance", "common_s",
                              "active_s", "servers_at_once", *VALUES) if c in w]]
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


def all_ratios(res: Results) -> pd.DataFrame:
    """Per flavor and test, every comparison of two servers that shared the windows (:func:`comparisons`),
    for QPS, cpu/o and cs/o: the ratio with its 95% interval and half-width, the windows nested in the
    instances they ran on, the interval at the instance level from the variance between instances pooled per
    flavor and value over the tests' A/A controls (method of moments, truncated after pooling) and the
    comparison's own variance between windows (dbexp.experiments.paired.component_ratios); each A/A control a
    second time with the variance between instances fitted on the other half of the tests' controls
    (``held_out`` True)."""
    def compute():
        w = _paired_runs(res)
        if w.empty:
            return pd.DataFrame()
        r = paired.component_ratios(w, ["flavor", "test"], comparisons, VALUES, by="server", control=CONTROL,
                                    pool_by=["flavor"], held_out_by="test")
        if r.empty:
            return r
        r = r.rename(columns={"a": "server", "b": "against", "comparison": "view"})
        r.insert(2, "group", r["test"].map(lambda t: TESTS[t].group if t in TESTS else ""))
        return r
    return memo(res, "versions.all_ratios", compute)


def ratios(res: Results) -> pd.DataFrame:
    """:func:`all_ratios` as the page reads them: every comparison once, the A/A controls with the variance
    between instances fitted on all of them (the held-out intervals are :func:`controls`')."""
    def compute():
        r = all_ratios(res)
        return r[~r["held_out"].astype(bool)].drop(columns="held_out").reset_index(drop=True) if len(r) else r
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


def size_note(test: str) -> str:
    """What a table of a million rows changes for ``test`` against the source's 50M (its 1-thread server's)."""
    t = TESTS[test]
    if test in ("hot-points", "update-one"):
        return "nothing: the same rows every time, at either size"
    if test == "scan":
        return "a statement reads 1M rows, not 50M: its fixed cost weighs about 50 times more"
    if t.group == "writes":
        return ("the same rows per statement; purge, flushing and the secondary index's pages work on a table about "
                "50 times smaller")
    return ("the same rows per statement; the rows drawn at random are spread over about 250 MB, not about 12 GB, "
            "so fewer of them miss the CPU's caches and TLB")


def tests_table(res: Results) -> pd.DataFrame:
    """Every test defined: whether these results ran it, its group, what it runs, the project's script and
    options, the source harness's script and options it follows, and what the table's size changes."""
    ran = windows(res).get("tests", [])
    return pd.DataFrame([{"test": k, "measured here": "yes" if k in ran else "", "group": t.group, "runs": t.runs,
                          "sysbench script and options": " ".join([t.script] + [f"--{a}={b}" for a, b in t.options]),
                          "his harness (run.sh)": t.follows, "1M rows against his 50M": size_note(k)}
                         for k, t in TESTS.items()])


def ran_table(res: Results) -> pd.DataFrame:
    """Per test and flavor of the main runs: what the servers counted per sysbench event (the median over the
    runs: statements of each type, rows read), and how many runs ran what the test names
    (:func:`statements_check`)."""
    from dbexp.chapters.versions.engines import ROWS
    from dbexp.chapters.versions.tests import TYPES

    sc = statements_check(res)
    if sc.empty:
        return sc
    main = set(main_runs(tidy(res))["run_id"])
    sc = sc[sc["run_id"].isin(main)]
    cols = [c for c in (*TYPES, ROWS) if c in sc]
    out = sc.groupby(["test", "flavor"]).agg(runs=("ok", "size"), ok=("ok", "sum"),
                                             **{c: (c, "median") for c in cols}).reset_index()
    out["test"] = pd.Categorical(out["test"], [t for t in TESTS if t in set(out["test"])] +
                                 sorted(set(out["test"]) - set(TESTS)), ordered=True)
    return out.sort_values(["test", "flavor"]).reset_index(drop=True)


def _window_ratios(g: pd.DataFrame, a: str, b: str, value: str = "qps_common") -> pd.Series:
    return paired.window_ratios(g, a, b, value, by="server")


def instance_logs(res: Results, view: str = "base") -> pd.DataFrame:
    """Per flavor, comparison (server over against) of ``view`` and test: each instance's mean log QPS ratio over
    its windows (columns flavor, server, against, test, instance, log)."""
    def compute():
        r = relative(res, view)
        if r.empty:
            return pd.DataFrame(columns=["flavor", "server", "against", "test", "instance", "log"])
        w = _paired_runs(res)
        rows = []
        for (flavor, test), g in w.groupby(["flavor", "test"]):
            mine = r[(r["flavor"] == flavor) & (r["test"] == test)]
            if mine.empty:
                continue
            inst = g.drop_duplicates("repeat").set_index("repeat")["instance"] if "instance" in g else None
            for a, b in zip(mine["server"], mine["against"]):
                x = _window_ratios(g, a, b)
                x = x[x > 0]
                if x.empty:
                    continue
                where = inst.reindex(x.index).fillna(-1).to_numpy() if inst is not None else np.zeros(len(x))
                for i in np.unique(where):
                    rows.append({"flavor": flavor, "server": a, "against": b, "test": test, "instance": i,
                                 "log": float(np.log(x.to_numpy()[where == i]).mean())})
        return pd.DataFrame(rows)
    return memo(res, f"versions.instance_logs.{view}", compute)


def summary(res: Results, view: str = "base") -> pd.DataFrame:
    """Shaped like the sources' tables: per flavor, server and group, the min, max, average (geometric) and
    median of the tests' relative QPS (``view``: against the base, or the version before), as the sources take
    them over their tests. The average's and the median's 95% intervals take the tests' errors as they are:
    independent between tests but for an offset per instance that every test run on it shares (the same
    servers ran them all), its variance estimated from the tests' instance means (a two-way layout, tests by
    instances: stats.shared_offset), the rest of each test's variance its own (its interval's, less the shared
    part); the median's by a parametric bootstrap (stats.summary_intervals). ``shared`` is the shared offset's
    share of a test's variance (the median over the group's tests)."""
    def compute():
        r = relative(res, view)
        r = r[r["group"].isin(GROUPS)] if len(r) else r  # tests of this chapter's groups only
        if r.empty:
            return pd.DataFrame()
        logs = instance_logs(res, view)
        rows = []
        for (flavor, server, against, group), g in r.groupby(["flavor", "server", "against", "group"]):
            g = g.dropna(subset=["ratio"])
            if g.empty:
                continue
            mine = logs[(logs["flavor"] == flavor) & (logs["server"] == server) & (logs["against"] == against)
                        & logs["test"].isin(g["test"])] if len(logs) else logs
            table = mine.pivot_table(index="test", columns="instance", values="log") if len(mine) else pd.DataFrame()
            shared = stats.shared_offset(table.to_numpy()) if len(table) else stats.shared_offset([])
            k = table.shape[1] if len(table) else 0
            shared_var = shared["between"] / k if k and shared["between"] == shared["between"] else float("nan")
            t = np.array([stats.t_quantile(0.95, d) if d == d and d > 0 else np.nan for d in g["dof"]])
            se = (np.log(g["ci_high"].to_numpy()) - np.log(g["ci_low"].to_numpy())) / 2 / t
            if len(g) < 2 or shared_var != shared_var:  # one test: its own interval is the summary's
                own, shared_var, shared_df = se, 0.0, 0.0
            else:
                own = np.sqrt(np.maximum(se * se - shared_var, 0.25 * se * se))
                shared_df = float(shared["df_groups"])
            found = stats.summary_intervals(np.log(g["ratio"].to_numpy()), own, g["dof"].to_numpy(), shared_var,
                                            shared_df)
            rows.append({"flavor": flavor, "server": server, "against": against, "group": group, "tests": len(g),
                         "min": g["ratio"].min(), "max": g["ratio"].max(),
                         **{k2: float(np.exp(v)) for k2, v in (("avg", found["mean"]), ("avg_low", found["mean_low"]),
                                                               ("avg_high", found["mean_high"]),
                                                               ("median", found["median"]),
                                                               ("median_low", found["median_low"]),
                                                               ("median_high", found["median_high"]))},
                         "shared": float(np.median(shared_var / (se * se))) if len(g) > 1 and shared_var == shared_var
                         else 0.0})
        out = pd.DataFrame(rows)
        out["group"] = pd.Categorical(out["group"], list(GROUPS), ordered=True)
        return out.sort_values(["flavor", "group", "server"]).reset_index(drop=True)
    return memo(res, f"versions.summary.{view}", compute)


def headline_cells(r: pd.DataFrame) -> pd.DataFrame:
    """The rows of relative QPS ``r`` the issue's tighter target is for: MySQL 8.0 over 5.7 and 9.7 over 8.0
    (the plain servers; only MySQL's series carry these numbers) on point-query and update-nonindex."""
    if r.empty:
        return r
    fam = lambda name: tuple(str(x) for x in version_key(name)[:2])  # noqa: E731
    keep = [r_["test"] in HEADLINE_TESTS and "(" not in r_["server"] + r_["against"]
            and (fam(r_["server"]), fam(r_["against"])) in HEADLINE_CELLS for _, r_ in r.iterrows()]
    return r[np.array(keep, dtype=bool)]


def resolution(res: Results) -> dict:
    """The 95% half-widths of every relative QPS (against the base, the previous version and the own defaults;
    the control apart): median, largest, how many reach TARGET_HALF_WIDTH and which miss it; and the headline
    cells' (:func:`headline_cells`) against TARGET_HEADLINE."""
    r = ratios(res)
    r = r[(r["value"] == "QPS") & (r["view"] != "A/A control")] if len(r) else r
    if len(r):  # the first version after the base is both views' one ratio: counted once
        r = r.drop_duplicates(["flavor", "test", "server", "against"])
    found = paired.resolution(r, TARGET_HALF_WIDTH)
    if not found["n"]:
        return {**found, "missed": [], "headline": []}
    miss = r[~(r["half_width"] <= TARGET_HALF_WIDTH)].sort_values("half_width", ascending=False)
    head = headline_cells(r)
    return {**found, "missed": [{"server": x.server, "against": x.against, "test": x.test, "half_width": x.half_width}
                                for x in miss.itertuples()],
            "headline": [{"server": x.server, "against": x.against, "test": x.test, "half_width": x.half_width,
                          "within": bool(x.half_width <= TARGET_HEADLINE)} for x in head.itertuples()]}


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
    """The A/A control judged honestly: its intervals with the variance between instances fitted on the other
    half of the tests (held out): how many hold 1, per flavor and in all; and, beside, how many of the
    intervals fitted on every control hold 1 (in sample)."""
    c = controls(res)
    held = c[c["held_out"]] if len(c) else c
    if held.empty:
        return {"n": 0}
    r = held.rename(columns={"lo": "ci_low", "hi": "ci_high"})
    r = r.assign(half_width=[paired.half_width(a, b, c_) for a, b, c_ in zip(r["ratio"], r["ci_low"], r["ci_high"])])
    inside = c[~c["held_out"]]
    per = [{"flavor": f, "n": len(g), "holding_1": int(g["holds_1"].sum()), "median": float(g["ratio"].median()),
            "min": float(g["ratio"].min()), "max": float(g["ratio"].max()),
            "median_half_width": float(r.loc[g.index, "half_width"].median())} for f, g in held.groupby("flavor")]
    return {**paired.control(r), "flavors": per, "in_sample": int(inside["holds_1"].sum()), "in_sample_n": len(inside)}


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
    w = timed_runs(tidy(res))
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
    from dbexp.chapters.versions.chapter import PARTS  # the engine parts (chapter.py imports no analysis)

    first = a.drop_duplicates(["series_name", "config"])
    switched = first["switched"] if "switched" in first else [None] * len(first)
    flavors = first["flavor"] if "flavor" in first else [None] * len(first)
    out = {}
    for name, config, requested, workload, sw, flavor in zip(first["series_name"], first["config"],
                                                             first["config_requested"], first["workload"], switched,
                                                             flavors):
        # the instance's tag (a server id) tells copies apart and changes nothing: not part of what was asked
        tag = PARTS.part_for_name(flavor).tag_setting if flavor else None
        requested = {k: v for k, v in (requested or {}).items() if k != tag} if "turns_s" in a else (requested or {})
        out[(name, config)] = Asked(json.dumps({**requested, **_switched(sw)}, sort_keys=True),
                                    json.dumps((workload or {}).get("options", {}), sort_keys=True),
                                    json.dumps(requested, sort_keys=True))
    return out


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
    gaps = paired.component_ratios(a[["config", "series_name", "repeat", "instance", "qps_common"]
                                     if "instance" in a else ["config", "series_name", "repeat", "qps_common"]],
                                   ["config"], lambda g: [(new, old, "gap") for new in names[1:]],
                                   {"qps_common": "QPS"}, by="series_name", control="gap", pool_by=[])
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
            **_slices(w),
            "active_s": float(w["active_s"].median()) if "active_s" in w and w["active_s"].notna().any()
            else float("nan"),
            "active_per_test_s": float(w.groupby(["server", "test"])["active_s"].sum().median())
            if "active_s" in w and w["active_s"].notna().any() else float("nan"),
            "active_least_s": float(w.groupby(["server", "test"])["active_s"].sum().min())
            if "active_s" in w and w["active_s"].notna().any() else float("nan"),
            "tests": [t for t in TESTS if t in ran]}


def _slices(w: pd.DataFrame) -> dict:
    """The windows' slice (``slice_s``: most tests'), and the tests whose turns have another (``other_slices``:
    test -> slice; scan's long statements, chapter.LONG_STATEMENTS)."""
    if "slice_s" not in w or not w["slice_s"].notna().any():
        return {"slice_s": 0.0, "other_slices": {}}
    per_test = w.dropna(subset=["slice_s"]).groupby("test")["slice_s"].max()
    common = float(per_test.mode().max())
    return {"slice_s": common, "other_slices": {t: float(v) for t, v in per_test.items() if v != common}}


def controls(res: Results) -> pd.DataFrame:
    """The A/A pairs per flavor and test: the base's twin over the base (two servers of the same build and
    settings, started apart, in every window), relative QPS with its interval at the instance level, twice: with
    the variance between instances fitted on the other half of the tests' pairs (``held_out`` True: what the
    coverage is counted on) and on all of them (False); whether the interval holds 1 (columns flavor,
    series_name, test, held_out, ratio, lo, hi, pairs, instances, dof, between, holds_1)."""
    r = all_ratios(res)
    cols = ["flavor", "series_name", "test", "held_out", "ratio", "lo", "hi", "pairs", "instances", "dof", "between",
            "holds_1"]
    r = r[(r["view"] == CONTROL) & (r["value"] == "QPS")] if len(r) else r
    if r.empty:
        return pd.DataFrame(columns=cols)
    out = r.assign(series_name=r["against"], lo=r["ci_low"], hi=r["ci_high"], held_out=r["held_out"].astype(bool))
    out["holds_1"] = paired.holds_one(out)
    return out[cols].sort_values(["flavor", "test", "held_out"]).reset_index(drop=True)


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


# --- the variance components, and the design they give ---------------------------------------------------

def components(res: Results) -> pd.DataFrame:
    """Per flavor, the variance components of a window's log QPS ratio (Kalibera and Jones, ISMM 2013), each
    with its degrees of freedom: between instances (``between``: pooled over the flavor's A/A pairs by the method
    of moments, ``raw`` before it is truncated at 0, its Satterthwaite ``between_df`` and the instances less one
    summed, ``instances_df``), and within an instance, between its windows (``within``: pooled over the A/A
    pairs, ``within_df``; ``within_all``: over every comparison of the flavor, ``within_all_df``); the windows'
    own turns (``active_s``: each server's seconds of them per window, the median), and the noise per second of
    a server's turns (``c``: within x active_s, the A/A pairs'; ``c_all``: every comparison's): a window's
    variance is c / active_s. Also the instances, the windows per instance and the seconds of own turns each
    server had per test (medians)."""
    def compute():
        r = all_ratios(res)
        w = _paired_runs(res)
        if r.empty or w.empty:
            return pd.DataFrame()
        q = r[(r["value"] == "QPS") & ~r["held_out"].astype(bool)]
        rows = []
        for flavor, g in q.groupby("flavor"):
            aa = g[g["view"] == CONTROL]
            x = w[w["flavor"] == flavor]
            active = float(x["active_s"].median()) if "active_s" in x and x["active_s"].notna().any() else float("nan")
            fit = aa.iloc[0] if len(aa) else None
            pool = lambda d: (float((d["within"] * d["within_df"]).sum() / d["within_df"].sum())  # noqa: E731
                              if d["within_df"].sum() > 0 else float("nan"), int(d["within_df"].sum()))
            within, within_df = pool(aa.dropna(subset=["within"]))
            within_all, within_all_df = pool(g.dropna(subset=["within"]).drop_duplicates(["test", "server", "against"]))
            parts = [_nested_part(x, t, a, b) for t, a, b in zip(aa["test"], aa["server"], aa["against"])]
            pooled = stats.pooled_between([p for p in parts if p is not None])
            per_test = (x.groupby(["server", "test"])["active_s"].sum().median()
                        if "active_s" in x and x["active_s"].notna().any() else float("nan"))
            rows.append({"flavor": flavor, "between": pooled["between"], "raw": pooled["raw"],
                         "between_df": pooled["df"], "instances_df": pooled["df_groups"], "within": within,
                         "within_df": within_df, "within_all": within_all, "within_all_df": within_all_df,
                         "active_s": active, "c": within * active, "c_all": within_all * active,
                         "instances": int(x["instance"].nunique()) if "instance" in x else 1,
                         "windows": float(x.groupby(["server", "test", "instance"]).size().median())
                         if "instance" in x else float(x.groupby(["server", "test"]).size().median()),
                         "active_per_test_s": float(per_test), "aa_pairs": len(aa),
                         "between_fit": float(fit["between"]) if fit is not None else float("nan")})
        return pd.DataFrame(rows)
    return memo(res, "versions.components", compute)


def _nested_part(x: pd.DataFrame, test: str, a: str, b: str) -> dict | None:
    """One comparison's windows nested in their instances (stats.nested of the log ratios), or None."""
    g = x[x["test"] == test]
    s = _window_ratios(g, a, b)
    s = s[s > 0]
    if s.empty:
        return None
    inst = g.drop_duplicates("repeat").set_index("repeat")["instance"] if "instance" in g else None
    groups = inst.reindex(s.index).fillna(-1).to_numpy() if inst is not None else np.zeros(len(s))
    return stats.nested(np.log(s.to_numpy()), groups)


def start_seconds(res: Results) -> dict[str, float]:
    """Per flavor, what a server's start cost these runs beyond the container's own start (the median over its
    servers of loading or restoring the table and settling or warming it, from the dataset record)."""
    w = timed_runs(tidy(res))
    if w.empty or "workload" not in w:
        return {}
    steps = ("prepare_s", "settle_s", "restore_s", "save_s", "warm_s")
    took = [sum(float((x or {}).get("dataset", {}).get(k, 0.0) or 0.0) for k in steps) for x in w["workload"]]
    d = pd.DataFrame({"flavor": w["flavor"], "start": w.get("server_instance", w["series_name"]), "s": took})
    return {f: float(g.drop_duplicates("start")["s"].median()) for f, g in d.groupby("flavor")}


def best_windows(between: float, c: float, active_s: float, start_s: float, window_s: float, servers: int) -> float:
    """Kalibera and Jones's cost-optimal repetitions of the lower level: windows per instance
    sqrt((cost of an instance / cost of a window) x (a window's variance / the variance between instances)), an
    instance costing ``servers`` starts of ``start_s`` and a window ``window_s``; NaN without a variance between
    instances (then every second is best spent on windows)."""
    if not between > 0 or not window_s > 0 or not active_s > 0:
        return float("nan")
    return float(np.sqrt(servers * start_s / window_s * (c / active_s) / between))


def predicted_half_width(c: float, between: float, between_df: float, instances: int, windows: int,
                         active_s: float, level: float = 0.95) -> float:
    """The reviewers' model of a relative QPS's 95% half-width (as a fraction, on the log scale) for a design of
    ``instances`` x ``windows`` windows of ``active_s`` seconds of each server's own turns: variance
    between / k + c / (k n a), a t quantile on the Satterthwaite degrees of freedom of the two terms (the
    between term's ``between_df``, the within term's k (n - 1))."""
    k, n = int(instances), int(windows)
    terms = [(between / k, between_df), (c / (k * n * active_s), k * (n - 1) if n > 1 else k - 1)]
    dof = stats.satterthwaite(terms)
    if dof != dof:
        return float("nan")
    return float(np.expm1(stats.t_quantile(level, dof) * np.sqrt(sum(v for v, _ in terms))))


def designs() -> list[tuple[str, int, int, float]]:
    """The designs the page weighs, read from the chapter's scales: (label, instances, windows per instance, each
    server's own turns per window) for the previous publication's (2 x 2 windows of 0.2 s), the default scale's
    (and its long tests'), and the full scale's."""
    from dbexp.chapters.versions.chapter import CHAPTER  # the scales (chapter.py imports no analysis)

    d, f = CHAPTER.scales["default"], CHAPTER.scales["full"]
    out = [("the previous publication", 2, 2, 0.2), ("default", d.instances, d.repeats, d.active_s)]
    if d.long_tests and d.long_factor > 1:
        out.append((f"default, {' and '.join(d.long_tests)}", d.instances, d.repeats, d.active_s * d.long_factor))
    return out + [("full", f.instances, f.repeats, f.active_s)]


def design_estimate(res: Results) -> pd.DataFrame:
    """Per flavor and design (:func:`designs`), the half-width the variance components of these runs (:func:`components`)
    predict, for the A/A pairs' noise per second (``c``) and for every comparison's (``c_all``)."""
    comp = components(res)
    rows = []
    for x in comp.itertuples() if len(comp) else ():
        for label, k, n, a in designs():
            rows.append({"flavor": x.flavor, "design": label, "instances": k, "windows": n, "active_s": a,
                         "per_test_s": k * n * a,
                         "half_width_aa": predicted_half_width(x.c, x.between, x.between_df, k, n, a),
                         "half_width_all": predicted_half_width(x.c_all, x.between, x.between_df, k, n, a)})
    return pd.DataFrame(rows)


def default_minutes(res: Results) -> dict[str, float]:
    """The default scale's main windows in minutes, per flavor these runs have, at the cost they measured: every
    window (tests x instances x windows per instance) as long as its first client's sysbench run (chapter.turns_of
    and measure.client_times: the scale's own turns, its long tests' longer, scan's turns of long statements) plus what a window cost beyond its run here (its start to the next one's,
    less its run, the median: resets, checks, marks, the host's speed timed)."""
    from dbexp.chapters.versions.chapter import CHAPTER, by_flavor, turns_of  # chapter.py imports no analysis
    from dbexp.chapters.versions.chapter import turn_options
    from dbexp.experiments.measure import client_times

    tim = timing(res)
    w = main_runs(tidy(res))
    if not tim or w.empty:
        return {}
    sc = CHAPTER.scales["default"]
    beyond = {f: t["beyond_s"] for f, t in tim.items() if t["beyond_s"] == t["beyond_s"]}
    out = {}
    for key, specs in by_flavor(sc.servers).items():
        flavor = specs[0].split(":", 1)[0]
        if flavor not in beyond:
            continue
        servers = len(specs) + (1 if sc.twin else 0) + len([s for s in specs if s in sc.own_defaults])
        seconds = 0.0
        for t in sc.tests:  # the first client's --time: the window's and the starts after its own
            window = turns_of(sc, t, sc.active_s * (sc.long_factor if t in sc.long_tests else 1), servers)[2]
            first = client_times([window] * servers, turn_options(t, sc.table_size)["start_s"])[0] if sc.slice_s \
                else window
            seconds += sc.instances * sc.repeats * (first + max(0.0, beyond[flavor]))
        out[flavor] = seconds / 60
    return out


def timing(res: Results) -> dict:
    """What a window cost in these runs: per flavor, the windows, the servers in one, the median seconds from one
    window's start to the next one's (the window and what surrounds it: resets, checks, marks, the host-speed
    loop) and the median window itself; with the server starts (the first run of each server start's time
    after the group's first window can be no better than the spans between)."""
    w = main_runs(tidy(res))
    if w.empty or "started_at" not in w:
        return {}
    out = {}
    for flavor, g in w.groupby("flavor"):
        win = g.groupby(["sweep_id", "test", "instance", "repeat"])
        starts = pd.to_datetime(win["started_at"].min()).sort_values()
        ends = pd.to_datetime(win["ended_at"].max()).reindex(starts.index)
        runs = win["duration_s"].median().reindex(starts.index)
        step = (-starts.diff(-1)).dt.total_seconds()  # to the next window's start
        beyond = (step - runs)[step < 120].dropna()
        out[flavor] = {"windows": len(starts), "servers": int(g.groupby(["test", "instance", "repeat"]).size().median()),
                       "step_s": float(step[step < 120].median()) if step.notna().any() else float("nan"),
                       "window_s": float((ends - starts).dt.total_seconds().median()),
                       "beyond_s": float(beyond.median()) if len(beyond) else float("nan")}
    return out


# --- the host's speed, timed between windows ------------------------------------------------------------

def host_speed(res: Results) -> pd.DataFrame:
    """Per window (flavor, test, instance, repeat) of the main runs: when it started, the reference loop's time
    on the server CPU before and after it (µs; more is slower), their mean, and the window's mean log QPS of its
    servers less that server's mean over the windows of its test (how fast the window ran, the servers'
    differences taken out)."""
    def compute():
        w = main_runs(tidy(res))
        if w.empty or "ref_loop_before_us" not in w:
            return pd.DataFrame()
        w = w.dropna(subset=["ref_loop_before_us"]).copy()
        w["log_qps"] = np.log(w["qps_common"])
        w["dev"] = w["log_qps"] - w.groupby(["server", "test"])["log_qps"].transform("mean")
        keys = ["flavor", "test", "instance", "repeat"]
        out = w.groupby(keys).agg(started=("started_at", "min"), before_us=("ref_loop_before_us", "first"),
                                  after_us=("ref_loop_after_us", "first"), speed_dev=("dev", "mean")).reset_index()
        out["loop_us"] = (out["before_us"] + out["after_us"]) / 2
        out["started"] = pd.to_datetime(out["started"])
        return out.sort_values("started").reset_index(drop=True)
    return memo(res, "versions.host_speed", compute)


def host_speed_summary(res: Results) -> pd.DataFrame:
    """Per flavor: windows, the reference loop's median and its spread (CV, and the slowest over the median), and
    how much of the windows' own speed it explains (the correlation of the loop's log time with the windows'
    mean log QPS deviation: negative where a slow host made a slow window)."""
    h = host_speed(res)
    if h.empty:
        return h
    rows = []
    for flavor, g in h.groupby("flavor"):
        lt = np.log(g["loop_us"])
        rows.append({"flavor": flavor, "windows": len(g), "median_us": float(g["loop_us"].median()),
                     "cv": stats.cv(g["loop_us"]), "slowest": float(g["loop_us"].max() / g["loop_us"].median()),
                     "correlation": float(np.corrcoef(lt, g["speed_dev"])[0, 1]) if len(g) > 2 and lt.std() > 0
                     else float("nan")})
    return pd.DataFrame(rows)


def active_totals(res: Results) -> pd.DataFrame:
    """Per server and test of the main windows: the seconds of its own turns summed over its windows (what its
    QPS is measured over), its windows and instances; ``enough``: at least LEAST_ACTIVE_S over at least
    LEAST_INSTANCES instances (issue 47's rule at default scale)."""
    w = main_runs(tidy(res))
    if w.empty or "active_s" not in w:
        return pd.DataFrame()
    out = w.groupby(["flavor", "server", "test"]).agg(active_s=("active_s", "sum"), windows=("run_id", "size"),
                                                      instances=("instance", "nunique")).reset_index()
    out["enough"] = (out["active_s"] >= LEAST_ACTIVE_S) & (out["instances"] >= LEAST_INSTANCES)
    return out


# --- what each test ran: the claims' witness ---------------------------------------------------------------

STATEMENTS_SOURCE = "statements"  # the counters the windows take around themselves (chapter.window)
TYPE_TOLERANCE = 0.1  # statements of a type per event within 10% of the test's (and 5 over the events, the lab's own)
ROWS_BAND = (0.5, 3.0)  # rows read per event within half and three times the test's (plus 5)


def _run_counts(res: Results) -> dict[str, dict[str, float]]:
    """Per run id, its server's statement counts by type and rows read over the window: the chapter's own
    counters where it took them, else what the engine part reads from the run's other stored counters."""
    c = res.counters
    if c is None or c.empty:
        return {}
    from dbexp.chapters.versions.chapter import PARTS  # the engine parts (chapter.py imports no analysis)

    flavor = dict(zip(res.wide["run_id"], res.wide["flavor"])) if "flavor" in res.wide else {}
    own = c[c["source"] == STATEMENTS_SOURCE]
    out = {rid: dict(zip(g["name"], g["delta"].astype(float))) for rid, g in own.groupby("run_id")}
    rest = c[~c["run_id"].isin(out) & c["source"].isin(["status"])]
    for rid, g in rest.groupby("run_id"):
        if rid not in flavor:
            continue
        found = PARTS.part_for_name(flavor[rid]).stored_counts(
            {(s, n): float(d) for s, n, d in zip(g["source"], g["name"], g["delta"])})
        if found is not None:
            out[rid] = found
    return out


def statements_check(res: Results) -> pd.DataFrame:
    """Per main run: whether it ran what its test names (``ok``): the test's script and options (as stored with
    the run), and per sysbench event the statements of each type and the rows read that the test's definition
    says (tests.TESTS: ``statements``, ``rows``), from the server's own counters; ``what`` says what was seen
    where it differs. Columns run_id, flavor, server, test, ok, what, per-event counts."""
    def compute():
        from dbexp.chapters.versions.engines import ROWS, XACT
        from dbexp.chapters.versions.tests import TYPES, expected_rows

        w = timed_runs(tidy(res))
        if w.empty:
            return pd.DataFrame()
        counts = _run_counts(res)
        rows = []
        for x in w.itertuples():
            t = TESTS.get(x.test)
            wl = x.workload if isinstance(x.workload, dict) else {}
            events = float(getattr(x, "transactions", float("nan")) or float("nan"))
            why = []
            if t is None:
                why.append(f"{x.test} is no test of this chapter now")
            else:
                opts = {str(k): str(v) for k, v in (wl.get("options") or {}).items() if k != "db-ps-mode"}
                want = {k: v for k, v in t.options}
                if wl.get("script") != t.script or opts != want:
                    why.append(f"ran {wl.get('script')} {opts or ''}, the test is {t.script} {want or ''}".strip())
            got = counts.get(x.run_id)
            per = {}
            if got is None:
                why.append("no statement counts by type stored with the run")
            elif not events == events or events <= 0:
                why.append("no sysbench events counted")
            elif t is not None:
                per = {k: got.get(k, 0.0) / events for k in (*TYPES, ROWS)}
                if XACT in got:  # a server whose counts lack each BEGIN and COMMIT: its statements per commit
                    per[XACT] = got[XACT] / events
                    worked = sum(per[k] for k in TYPES if k not in ("begin", "commit"))
                    if per["begin"] < 0.5 and per[XACT] > 0 and worked / per[XACT] > 1.5:
                        per["begin"] = per["commit"] = per[XACT]  # several statements per commit: a transaction
                for kind in TYPES:
                    want = float(t.statements.get(kind, 0.0))
                    if abs(per[kind] - want) > TYPE_TOLERANCE * want + 5 / events + 0.05:
                        why.append(f"{per[kind]:.2f} {kind.upper()} per event, the test {want:g}")
                rows_want = expected_rows(x.test, int(wl.get("table_size") or 0))
                lo, hi = ROWS_BAND[0] * rows_want - 1, ROWS_BAND[1] * rows_want + 5
                if not lo <= per[ROWS] <= hi:
                    why.append(f"{per[ROWS]:,.1f} rows read per event, the test about {rows_want:,.0f}")
            rows.append({"run_id": x.run_id, "flavor": x.flavor, "server": x.server, "test": x.test,
                         "role": getattr(x, "role", ""), "ok": not why, "what": "; ".join(why), **per})
        return pd.DataFrame(rows)
    return memo(res, "versions.statements_check", compute)
