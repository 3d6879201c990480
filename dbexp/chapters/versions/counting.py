"""The versions chapter's counted part, analysed: instructions per statement under callgrind for every counted
point on each of its two separately started servers and their agreement (dbexp.experiments.counted.agreement), each
version's instructions over its flavor's base and over the counted version before it beside the relative QPS of
the same servers on the same test, and the functions whose inclusive instructions per statement moved the most
between two versions (dbexp.experiments.counted.functions).

A time per statement is instructions per statement times the time each instruction takes; so a relative QPS ``Q``
(newer over older) and an instruction ratio ``I`` split the newer version's time per statement, ``1 / Q``, into the
work ``I`` (the same on every x86-64 machine) and the time per instruction ``1 / (Q I)`` (this machine's: caches,
branches, waits). The counts are read through counted's own functions, from the chapter's results rather than a
store (:class:`_Counted`): the same rows, published or just measured.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from dbexp.chapters.versions.analysis import ordered, ratios, short_function, tidy
from dbexp.chapters.versions.tests import TESTS
from dbexp.experiments import counted
from dbexp.experiments.chapter import Results, memo

ROLE = "counted"  # the counted points' role (chapter.COUNTED; chapter.py imports no analysis)
MEASURE = counted.MEASURE  # instructions per statement (sysbench's queries)
FUNCTIONS = 40  # the functions read per run (callgrind.TOP are stored, by inclusive and by exclusive count)


def counted_runs(res: Results) -> pd.DataFrame:
    """The counted part's runs (role ``counted``), one row each, as :func:`analysis.tidy` gives them."""
    w = tidy(res)
    if w.empty or MEASURE not in w:
        return w.iloc[:0]
    return w[(w["role"] == ROLE) & w[MEASURE].notna()]


class _Counted:
    """What dbexp.experiments.counted reads of a store (runs, their measurements, their counters), from a chapter's
    results: one row per run with its measurements as columns (``wide``) and the counters table."""

    def __init__(self, wide: pd.DataFrame, counters: pd.DataFrame):
        self.wide, self.counters = wide, counters

    def runs(self, experiment=None) -> pd.DataFrame:
        return self.wide

    def measurements_wide(self, runs: pd.DataFrame) -> pd.DataFrame:
        return self.wide.loc[runs.index]

    def table(self, name: str, ids) -> pd.DataFrame:
        ids = list(ids)
        if name == "counters":
            c = self.counters
            return c[c["run_id"].isin(ids)] if len(c) else pd.DataFrame(columns=["run_id", "source", "name", "delta"])
        row = self.wide[self.wide["run_id"].isin(ids)]
        names = [n for n in ("ops_counted", "instructions_counted") if n in row]
        return pd.DataFrame({"name": names, "value": [float(row[n].iloc[0]) for n in names]})


def _source(res: Results) -> _Counted:
    """The counted runs as counted reads them: a point is a server, a test and a way of counting, counted on several
    starts (``instance``: the chapter's own, one group per start), whatever the sweep's points were."""
    w = counted_runs(res).copy()
    if len(w):  # counted.agreement reads the workload's script from the stored JSON or a dict
        w["workload"] = [x if isinstance(x, (dict, str)) else {} for x in w["workload"]]
        w["point_key"] = w["server"] + " | " + w["test"] + " | " + w["config"].astype(str)
    return _Counted(w, res.counters)


def points(res: Results) -> pd.DataFrame:
    """One row per counted point (a server and a test): flavor, server, test, the counts of instructions per
    statement on each server start (``counts``, ``count_0``, ``count_1``), their mean, their largest difference over
    the mean (``spread``) and whether it is at most 0.5% (``agree``: counted.agreement), the start under valgrind
    and the counted passes' statements per second (medians)."""
    def compute():
        src = _source(res)
        w = src.wide
        if w.empty:
            return pd.DataFrame()
        a = counted.agreement(src, w["run_id"])
        info = w.drop_duplicates("point_key").set_index("point_key")[["flavor", "server", "series_name", "test"]]
        a = a.join(info, on="point_key")
        for i in range(max(2, int(a["servers"].max()))):  # the table shows two starts' columns, filled or not
            a[f"count_{i}"] = [c[i] if len(c) > i else np.nan for c in a["counts"]]
        warm = w.groupby("point_key")["counted_warm_s"].max() if "counted_warm_s" in w else pd.Series(dtype=float)
        a["warm_s"] = a["point_key"].map(warm)
        a["rows"] = a["point_key"].map(w.drop_duplicates("point_key").set_index("point_key")["workload"].map(
            lambda x: (json.loads(x) if isinstance(x, str) else x or {}).get("table_size")))
        order = {t: i for i, t in enumerate(TESTS)}
        names = ordered(a["server"])
        a = a.assign(_t=a["test"].map(order), _s=a["server"].map(names.index))
        return a.sort_values(["flavor", "_t", "_s"]).drop(columns=["_t", "_s"]).reset_index(drop=True)
    return memo(res, "versions.counted_points", compute)


def pairs(names: list[str]) -> list[tuple[str, str, str]]:
    """(newer, older, view) for a flavor's counted versions, oldest first: each over the base (the oldest) and over
    the one before it (once where that is the base)."""
    out = []
    for i, name in enumerate(names[1:], start=1):
        out.append((name, names[0], "base"))
        if i > 1:
            out.append((name, names[i - 1], "previous"))
    return out


def instruction_ratios(res: Results) -> pd.DataFrame:
    """Per flavor, test and pair of counted versions (:func:`pairs`): the instruction ratio (newer over older, the
    means of their two starts; ``low`` and ``high`` the smallest and largest ratio of one start's count to one of the
    other's), whether both points' counts agree, the relative QPS of the same two servers on the same test from the
    main windows (``qps`` with its 95% interval; NaN where those servers shared no window) and the time per
    instruction it leaves (``per_instruction`` = 1 / (qps x ratio): above 1, each instruction took longer)."""
    def compute():
        p = points(res)
        if p.empty:
            return pd.DataFrame()
        r = ratios(res)
        qps = r[r["value"] == "QPS"].set_index(["flavor", "test", "server", "against"]) if len(r) else None
        rows = []
        for (flavor, test), g in p.groupby(["flavor", "test"], sort=False):
            g = g.set_index("server")
            for a, b, view in pairs(ordered(g.index)):
                ca = [c for c in g.loc[a, "counts"] if c == c]
                cb = [c for c in g.loc[b, "counts"] if c == c]
                ratio = g.loc[a, "mean"] / g.loc[b, "mean"]
                q = qps.loc[(flavor, test, a, b)] if qps is not None and (flavor, test, a, b) in qps.index else None
                if isinstance(q, pd.DataFrame):
                    q = q.iloc[0]
                qv = float(q["ratio"]) if q is not None else np.nan
                rows.append({"flavor": flavor, "test": test, "server": a, "against": b, "view": view,
                             "instructions": g.loc[a, "mean"], "against_instructions": g.loc[b, "mean"],
                             "ratio": ratio, "low": min(ca) / max(cb), "high": max(ca) / min(cb),
                             "agree": bool(g.loc[a, "agree"] and g.loc[b, "agree"]),
                             "qps": qv, "qps_low": float(q["ci_low"]) if q is not None else np.nan,
                             "qps_high": float(q["ci_high"]) if q is not None else np.nan,
                             "per_instruction": 1 / (qv * ratio) if qv == qv else np.nan})
        return pd.DataFrame(rows)
    return memo(res, "versions.instruction_ratios", compute)


def run_functions(res: Results, run_id: str, n: int = FUNCTIONS) -> pd.DataFrame:
    """A counted run's functions by inclusive instructions per statement (counted.functions), named short
    (:func:`analysis.short_function`: no parameters, no binary), the first of a name where several shorten alike."""
    f = counted.functions(_source(res), run_id, "inclusive", n)
    f["function"] = [short_function(x) for x in f["function"]]
    return f.drop_duplicates("function")


def consecutive(res: Results) -> pd.DataFrame:
    """The rows of :func:`instruction_ratios` that set each counted version against the counted version before it
    (``older`` and ``newer`` short: the versions alone), tests in the chapter's order: the version-over-version
    view the sources tabulate."""
    r = instruction_ratios(res)
    if r.empty:
        return r
    keep = []
    for flavor, g in r.groupby("flavor", sort=False):
        names = ordered(pd.concat([g["server"], g["against"]]))
        before = dict(zip(names[1:], names[:-1]))
        keep += list(g.index[[before.get(a) == b for a, b in zip(g["server"], g["against"])]])
    out = r.loc[keep].copy()
    out["newer"] = out["server"].str.split().str[-1]
    out["older"] = out["against"].str.split().str[-1]
    order = {t: i for i, t in enumerate(TESTS)}
    return out.assign(_t=out["test"].map(order)).sort_values(["_t"], kind="stable").drop(columns="_t")


def consecutive_table(res: Results) -> pd.DataFrame:
    """:func:`consecutive` as one compact table: a row per test, a column per pair of versions ('MySQL 8.0.15 /
    5.7.22': the flavor's title, newer / older), each
    cell the instruction ratio and the relative QPS of the same two servers on the same test ('1.064 / 0.912';
    '1.064 / -' where they shared no window; a trailing '*' where the two starts' counts do not agree)."""
    c = consecutive(res)
    if c.empty:
        return c
    from dbexp.servers.registry import FLAVORS

    title = c["flavor"].map(lambda f: FLAVORS[f].title if f in FLAVORS else f)
    c = c.assign(pair=title + " " + c["newer"] + " / " + c["older"],
                 cell=[f"{x.ratio:.3f} / {x.qps:.3f}" if x.qps == x.qps else f"{x.ratio:.3f} / -"
                       for x in c.itertuples()])
    c["cell"] = c["cell"] + np.where(c["agree"], "", "*")
    rank = {f: i for i, f in enumerate(FLAVORS)}  # the registry's order (MySQL, PostgreSQL, MariaDB)
    pairs = list(dict.fromkeys(c.assign(_f=c["flavor"].map(rank)).sort_values("_f", kind="stable")["pair"]))
    return c.pivot(index="test", columns="pair", values="cell").reindex(
        index=list(dict.fromkeys(c["test"])), columns=pairs).fillna("").reset_index()


def work(res: Results) -> list[dict]:
    """The findings' split of the first publication's largest regressions (chapter.PROFILED, each counted version
    over the one before it): per pair whose counts agree and that shared windows, the instruction ratio, the
    relative QPS with its interval and the time per instruction they leave (newer over older, versions alone)."""
    from dbexp.chapters.versions.chapter import PROFILED  # chapter.py imports no analysis

    c = consecutive(res)
    if c.empty:
        return []
    c = c[c["test"].isin(PROFILED) & c["agree"] & c["qps"].notna()]
    return [{"test": x["test"], "server": x["newer"], "against": x["older"], "ratio": x["ratio"], "qps": x["qps"],
             "qps_low": x["qps_low"], "qps_high": x["qps_high"], "per_instruction": x["per_instruction"]}
            for x in c.to_dict("records")]


def function_pairs(res: Results) -> list[tuple[str, str, str, str]]:
    """(flavor, test, newer, older) of the counted regressions whose functions the page tabulates (issue 48): each
    counted version over the one before it on the first publication's largest regressions (chapter.PROFILED, where
    counted), and each flavor's newest over its base on the first counted test of each of the source's groups."""
    from dbexp.chapters.versions.chapter import PROFILED  # chapter.py imports no analysis
    from dbexp.chapters.versions.tests import GROUPS

    p = points(res)
    if p.empty:
        return []
    out = []
    for flavor, g in p.groupby("flavor", sort=False):
        names = ordered(g["server"])
        tests = [t for t in TESTS if t in set(g["test"])]
        for test in (t for t in tests if t in PROFILED):
            out += [(flavor, test, a, b) for a, b in zip(names[1:], names[:-1])]
        if len(names) > 2:
            for group in GROUPS:
                first = next((t for t in tests if TESTS[t].group == group), None)
                if first is not None:
                    out.append((flavor, first, names[-1], names[0]))
    return list(dict.fromkeys(out))


def functions_moved(res: Results, n: int = 8) -> pd.DataFrame:
    """Per pair of :func:`function_pairs` (flavor, test, newer over older): the ``n`` functions whose inclusive
    instructions per statement moved the most (newer less older, each the mean over its starts' runs), of those
    named in both versions' stored top (a function in one side's alone is renamed, new, gone or below the other's
    top, and an address names no function of another build), with each side's value and calls per statement."""
    def compute():
        w = counted_runs(res)
        rows = []
        for flavor, test, a, b in function_pairs(res):
            side = {}
            for name in (a, b):
                ids = w.loc[(w["server"] == name) & (w["test"] == test), "run_id"]
                f = pd.concat([run_functions(res, rid) for rid in ids])
                side[name] = f.groupby("function")[["per_op", "calls_per_op"]].mean()
            # a function named in both versions' stored top (an address names nothing a reader can look up, nor the
            # same code in another build; one side's alone is renamed, new, gone, or below the other's top)
            both = side[a].add_suffix("_new").join(side[b].add_suffix("_old"), how="inner")
            both = both[~both.index.str.match(r"0x[0-9a-fA-F]+")]
            both["moved"] = both["per_op_new"] - both["per_op_old"]
            top = both.reindex(both["moved"].abs().sort_values(ascending=False).index).head(n)
            for fn, x in top.iterrows():
                rows.append({"flavor": flavor, "test": test, "server": a, "against": b, "function": fn,
                             "new": x["per_op_new"], "old": x["per_op_old"], "moved": x["moved"],
                             "calls_new": x["calls_per_op_new"], "calls_old": x["calls_per_op_old"]})
        return pd.DataFrame(rows)
    return memo(res, "versions.functions_moved", compute)


def pace(res: Results) -> pd.DataFrame:
    """Per counted server and test: the table's rows, the start under valgrind and the pool's warm-up under valgrind
    (seconds, medians over its starts), the counted passes' statements per second and one count's seconds (all its
    passes), what the default scale's counted part is sized from (:func:`default_minutes`)."""
    w = counted_runs(res)
    if w.empty:
        return pd.DataFrame()
    cols = {"valgrind_start_s": "start_s", "counted_warm_s": "warm_s", "count_ops_per_s": "ops_per_s",
            "count_s": "count_s", "ops_counted": "ops"}
    w = w.assign(**{c: np.nan for c in cols if c not in w})
    out = w.groupby(["flavor", "server", "test"], sort=False)[list(cols)].median().rename(columns=cols)
    first = w.groupby(["flavor", "server", "test"], sort=False)["workload"].first().map(
        lambda x: json.loads(x) if isinstance(x, str) else x or {})
    out["rows"] = first.map(lambda x: x.get("table_size"))
    out["restore_s"] = first.map(lambda x: float((x.get("dataset") or {}).get("restore_s", np.nan)))
    return out.reset_index()


def default_minutes(res: Results, native_start_s: float = 10.0) -> float:
    """The default scale's counted part in minutes at the pace these runs measured (:func:`pace`): per counted server
    start, a native start (``native_start_s``) and the table's restore (as measured, where it was restored), the start
    under valgrind, the warm-up (scaled to the default table's rows) and one count per test (scaled to the default's
    events); each server's flavor's median. NaN without counted runs. Measured on a smaller table (the smoke scale's
    10,000 rows) it is an upper bound: the warm-up's fixed costs (logins, the dump that ends its window) are scaled
    with the rows too."""
    from dbexp.chapters.versions.chapter import COUNTED_STARTS, CHAPTER  # chapter.py imports no analysis

    pc = pace(res)
    if pc.empty:
        return float("nan")
    sc = CHAPTER.scales["default"]
    rows = sc.counted_table_size or sc.table_size
    pc = pc.assign(warm_row_s=pc["warm_s"] / pc["rows"], count_op_s=pc["count_s"] / pc["ops"])
    by_flavor = pc.groupby("flavor")[["start_s", "warm_row_s", "count_op_s", "restore_s"]].median()
    total = 0.0
    for spec in sc.counted_servers:
        flavor = _flavor_of(spec)
        if flavor not in by_flavor.index:
            continue
        f = by_flavor.loc[flavor]
        restore = f["restore_s"] if f["restore_s"] == f["restore_s"] else 0.0
        total += COUNTED_STARTS * (native_start_s + restore + f["start_s"] + f["warm_row_s"] * rows
                                   + len(sc.counted_tests) * f["count_op_s"] * sc.counted_events)
    return total / 60


def _flavor_of(spec: str) -> str:
    from dbexp.servers.registry import flavor_of_spec

    return flavor_of_spec(spec).name


def numbers(res: Results) -> dict:
    """What the page's counted section says (the template counted.md.j2): whether anything was counted, the points
    and how many agree, the servers and tests, and per flavor the version over the one before it whose work moved
    the most (of the pairs whose counts agree: the instruction ratio beside the relative QPS)."""
    p = points(res)
    if p.empty:
        return {"counted": False}
    items = []
    c = consecutive(res)
    c = c[c["agree"]] if len(c) else c
    for _, g in c.groupby("flavor", sort=False) if len(c) else ():  # each flavor's largest move in work
        x = g.loc[np.log(g["ratio"]).abs().idxmax()]
        items.append({"test": x["test"], "server": x["server"], "against": x["against"], "ratio": x["ratio"],
                      "low": x["low"], "high": x["high"], "agree": bool(x["agree"]), "qps": x["qps"],
                      "qps_low": x["qps_low"], "qps_high": x["qps_high"], "has_qps": x["qps"] == x["qps"],
                      "time": 1 / x["qps"] if x["qps"] == x["qps"] else None,
                      "per_instruction": x["per_instruction"]})
    return {"counted": True, "points": len(p), "agree": int(p["agree"].sum()), "servers": int(p["servers"].min()),
            "versions": ordered(p["server"]), "tests": [t for t in TESTS if t in set(p["test"])],
            "rows": int(p["rows"].dropna().max()) if p["rows"].notna().any() else 0,
            "spread_max": float(p["spread"].max()), "within": counted.AGREE, "pairs": items}
