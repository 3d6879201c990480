"""The chapter's numbers from its tidy runs: the spread of single runs (and the repeats the machine,
not the server, slowed), the A / B ratios measured in pairs (of throughput and of CPU per query), the
sampler's cost against the server's sessions, the versions against their base, and the run-length
check (each comparison once more with runs ten times as long)."""

from __future__ import annotations

import math

import numpy as np

import pandas as pd

from dbexp.catalog.versions import version_key
from dbexp.chapters.calibration.chapter import LENGTH_FACTOR, PARTS
from dbexp.experiments import paired, stats, verdicts
from dbexp.experiments.chapter import Results, memo
from dbexp.metrics.noise import EPISODE_BUSY_PCT

RATIOS = {  # name: (label of A, label of B, what it answers)
    "harness": ("harness", "hand", "harness (sampling on) / the same sysbench command by hand"),
    "container": ("container", "bare", "server in a container / same binary as a bare process"),
    "pinning": ("pinned", "unpinned", "server and client pinned / neither pinned"),
    "sessions": ("harness", "hand", "harness / by hand, with N idle server sessions (a process each on PostgreSQL)"),
}
# Where each ratio's A and B runs are, as (part, variant): this design measures one reference run (the
# server pinned in its container, sampled) beside the three B runs in one ABBA group ("ratios", and
# "length" for the long check); the published runs before it measured each ratio in its own group.
SIDES = {
    "harness": ({("ratios", "reference"), ("harness", "harness")}, {("ratios", "hand"), ("harness", "hand")}),
    "container": ({("ratios", "reference"), ("container", "container")}, {("ratios", "bare"), ("container", "bare")}),
    "pinning": ({("ratios", "reference"), ("pinning", "pinned")}, {("ratios", "unpinned"), ("pinning", "unpinned")}),
    "sessions": ({("sessions", "harness")}, {("sessions", "hand")}),
}
LONG_SIDES = {"harness": ("reference", "hand"), "container": ("reference", "bare"),
              "pinning": ("reference", "unpinned")}


def _side(df: pd.DataFrame, sides: set) -> pd.Series:
    return pd.Series([(p, v) in sides for p, v in zip(df["part"], df["variant"])], index=df.index, dtype=bool)


def _sessions(df: pd.DataFrame) -> pd.Series:
    """Idle sessions held during each run (0 where the run held none, or predates the column)."""
    return df["sessions"].fillna(0).astype(int) if "sessions" in df else pd.Series(0, index=df.index)


def with_derived(w: pd.DataFrame) -> pd.DataFrame:
    """The runs with the columns the analysis derives: server and sysbench CPU per query together
    (what vmstat's machine-wide CPU per query counts), the server's CPUs in use (server CPU per
    second of the window), and whether the run fell in an episode of the machine."""
    out = w.copy()
    for col in ("cpu_per_op_us", "client_cpu_per_op_us", "server_busy_pct"):
        if col not in out:
            out[col] = float("nan")
    out["total_cpu_per_op_us"] = out["cpu_per_op_us"] + out["client_cpu_per_op_us"]
    out["server_cpus_used"] = out["qps"] * out["cpu_per_op_us"] / 1e6
    out["episode"] = out["server_busy_pct"] < EPISODE_BUSY_PCT
    if "workload" in out and "script" in out:  # the versions chapter's script names its test by its statement
        out["script"] = _script_label(out)
    return out


def _script_label(w: pd.DataFrame) -> pd.Series:
    """Each run's test: its sysbench script, or the statement the versions chapter's script ran (scan)."""
    opts = [((x or {}).get("options") or {}) if isinstance(x, dict) else {} for x in w["workload"]]
    return pd.Series([o.get("statement") or s for o, s in zip(opts, w["script"])], index=w.index)


def spread_frame(res: Results) -> pd.DataFrame:
    """The spread's runs (:func:`with_derived`, the scan test's script named ``scan``) with their server's label,
    for the page's charts."""
    w = _derived(res)
    w = w[w["part"] == "spread"] if len(w) else w
    return w.assign(server=w["series_name"]) if len(w) else w


def _derived(res: Results) -> pd.DataFrame:
    """Every run of ``res`` :func:`with_derived`. Computed once per results."""
    return memo(res, "calibration.derived", lambda: with_derived(res.wide))


# what tells the runs apart and pairs them: the columns the comparisons select runs by
RUN_COLUMNS = ("part", "variant", "flavor", "version", "script", "sessions", "sweep_id", "repeat", "workload",
               "episode")


def _runs(res: Results, *values: str) -> pd.DataFrame:
    """:func:`_derived` with only RUN_COLUMNS and the columns ``values`` (those the runs have): a frame
    cheap to select runs from."""
    w = _derived(res)
    return w[[c for c in dict.fromkeys(RUN_COLUMNS + values) if c in w]]


def _spread(res: Results) -> pd.DataFrame:
    """The spread part's runs, :func:`with_derived`."""
    w = _derived(res)
    return w[w["part"] == "spread"]


def spread_runs(res: Results) -> pd.DataFrame:
    """Every spread run: its server, workload and repeat, QPS against its server's median, the share
    of the window its server's CPU and the client's CPU were busy, the steal, and whether it fell in
    an episode of the machine (server CPU busy under EPISODE_BUSY_PCT)."""
    df = _spread(res)
    df["server"] = df["flavor"] + " " + df["version"].str.split("-").str[0]
    df["qps_vs_median"] = df["qps"] / df.groupby(["flavor", "version", "script"])["qps"].transform("median")
    cols = ["server", "flavor", "version", "script", "repeat", "qps", "qps_vs_median", "server_busy_pct",
            "client_busy_pct", "steal_server_pct", "cpu_per_op_us", "client_cpu_per_op_us", "episode"]
    out = df[[c for c in cols if c in df]].sort_values(["flavor", "version", "script", "repeat"])
    return out.reset_index(drop=True)


def spread_table(res: Results) -> pd.DataFrame:
    """Per server and workload: repeats, median, min, max and CV of QPS, per-query medians, and the
    spread read the second way: the CV without the runs of machine episodes (``cv_steady``), how
    many there were and the lowest busy share of the server's CPU. Computed once per results."""
    return memo(res, "calibration.spread_table", lambda: _spread_table(res))


def _spread_table(res: Results) -> pd.DataFrame:
    df = _spread(res)
    by = ["flavor", "version", "script"]
    out = stats.spread(df, by, "qps")
    per_op = df.groupby(by)[["cpu_per_op_us", "cs_per_op", "wkb_per_op", "lat_p95_ms"]].median().reset_index()
    steady = df[~df["episode"]].groupby(by)["qps"].apply(stats.cv).rename("cv_steady").reset_index()
    busy = df.groupby(by).agg(episodes=("episode", "sum"), busy_min=("server_busy_pct", "min"),
                              busy_median=("server_busy_pct", "median")).reset_index()
    return out.merge(per_op, on=by).merge(steady, on=by, how="left").merge(busy, on=by)


def ratio_table(res: Results, value: str = "qps") -> pd.DataFrame:
    """Each ratio per server (and per number of held sessions): the geometric mean of its pair
    ratios (A / B of one repeat of one sweep, measured in ABBA order) with a t interval on the log
    pair ratios, and the effect that interval excludes. ``value``: the column compared (qps,
    cpu_per_op_us, ...); a ratio whose B side lacks it (sysbench by hand has no server CPU) has no
    pairs. Computed once per results and value."""
    return memo(res, f"calibration.ratio_table.{value}", lambda: _ratio_table(res, value))


def _pair_labels(w: pd.DataFrame) -> pd.MultiIndex:
    """Each run's sweep and repeat: what pairs a ratio's A and B (the A and B of one repeat of one sweep; a
    resumed sweep's runs pair only with each other)."""
    return pd.MultiIndex.from_frame(w[["sweep_id", "repeat"]])


def _by_pair(values: np.ndarray, labels: pd.MultiIndex, at: np.ndarray) -> pd.Series:
    """The values of the runs at positions ``at``, indexed by their pair labels (as pair_ratio_by takes them)."""
    return pd.Series(values[at], index=labels[at])


def _ratio_table(res: Results, value: str) -> pd.DataFrame:
    w = _runs(res, value)
    labels, values = _pair_labels(w), w[value].to_numpy()
    rows = []
    for part, (a, b, meaning) in RATIOS.items():
        in_a, in_b = _side(w, SIDES[part][0]).to_numpy(), _side(w, SIDES[part][1]).to_numpy()
        df = w[in_a | in_b]
        positions = pd.Series(np.flatnonzero(in_a | in_b), index=df.index)  # each run's position in w
        for (flavor, version, n), at in positions.groupby([df["flavor"], df["version"], _sessions(df)]):
            at = at.to_numpy()
            qa, qb = _by_pair(values, labels, at[in_a[at]]), _by_pair(values, labels, at[in_b[at]])
            ratio, lo, hi, pairs = stats.pair_ratio_by(qa, qb)
            rows.append({"ratio": part, "meaning": meaning, "flavor": flavor, "version": version,
                         "sessions": n, "pairs": pairs, "median_a": qa.median(), "median_b": qb.median(),
                         "ratio_qps": ratio, "ci_low": lo, "ci_high": hi,
                         "half_width_pct": 100 * paired.half_width(ratio, lo, hi) if pairs else float("nan"),
                         "excluded_pct": 100 * stats.excluded_effect(lo, hi)})
    return pd.DataFrame(rows)


def ratio_busy(res: Results) -> dict:
    """How often the ratios' runs fell in an episode of the machine (their server's CPU busy under
    EPISODE_BUSY_PCT): of the reference runs (A of every ratio) and of the B runs, with the lowest
    busy share of each."""
    w = _derived(res)
    w = w[w["part"] == "ratios"]
    ref, b = w[w["variant"] == "reference"], w[w["variant"] != "reference"]
    return {"reference_episodes": int(ref["episode"].sum()), "reference_runs": len(ref),
            "reference_low": ref["server_busy_pct"].min() if len(ref) else float("nan"),
            "b_episodes": int(b["episode"].sum()), "b_runs": len(b),
            "b_low": b["server_busy_pct"].min() if len(b) else float("nan"), "threshold": EPISODE_BUSY_PCT}


def cpu_table(res: Results) -> pd.DataFrame:
    """CPU per query through the ratios whose two sides both read the server's CPU (container and
    pinning; sysbench by hand reads none): the server's cpu/o of A and B (medians), A / B as the
    geometric mean of the pair ratios with its t interval (the pairs of the QPS ratio), sysbench's
    cpu/o of A and B, and the server's CPUs in use (its CPU seconds per second of the window). Computed
    once per results."""
    return memo(res, "calibration.cpu_table", lambda: _cpu_table(res))


def _cpu_table(res: Results) -> pd.DataFrame:
    cpu = ratio_table(res, "cpu_per_op_us")
    cpu = cpu[(cpu["pairs"] > 0) & (cpu["ratio"] != "sessions")]
    w = _runs(res, "client_cpu_per_op_us", "server_cpus_used")
    rows = []
    for _, r in cpu.iterrows():
        runs = w[(w["flavor"] == r["flavor"]) & (w["version"] == r["version"])]
        a = runs[_side(runs, SIDES[r["ratio"]][0])]
        b = runs[_side(runs, SIDES[r["ratio"]][1])]
        pair = ["sweep_id", "repeat"]
        client, client_lo, client_hi, _ = stats.pair_ratio_by(a.set_index(pair)["client_cpu_per_op_us"],
                                                              b.set_index(pair)["client_cpu_per_op_us"])
        rows.append({"ratio": r["ratio"], "flavor": r["flavor"], "version": r["version"], "pairs": r["pairs"],
                     "cpu_a": r["median_a"], "cpu_b": r["median_b"], "ratio_cpu": r["ratio_qps"],
                     "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                     "client_a": a["client_cpu_per_op_us"].median(), "client_b": b["client_cpu_per_op_us"].median(),
                     "ratio_client": client, "client_low": client_lo, "client_high": client_hi,
                     "cpus_a": a["server_cpus_used"].median(), "cpus_b": b["server_cpus_used"].median()})
    return pd.DataFrame(rows)


def sampler_cost(res: Results) -> pd.DataFrame:
    """Part 3: the harness's cost as the server's process count grows: QPS and sysbench's CPU per
    query, harness / by hand (pair ratios), with the server's threads and the sampler's own CPU. Computed
    once per results."""
    return memo(res, "calibration.sampler_cost", lambda: _sampler_cost(res))


def _sampler_cost(res: Results) -> pd.DataFrame:
    df = res.wide[res.wide["part"] == "sessions"]
    if df.empty:
        return pd.DataFrame()
    qps = ratio_table(res)
    cpu = ratio_table(res, "client_cpu_per_op_us")
    rows = []
    for n, g in df.groupby(_sessions(df)):
        q = qps[(qps["ratio"] == "sessions") & (qps["sessions"] == n)].iloc[0]
        c = cpu[(cpu["ratio"] == "sessions") & (cpu["sessions"] == n)].iloc[0]
        harness = g[g["variant"] == "harness"]
        row = {"idle sessions": n, "server": f"{q['flavor']} {q['version']}", "pairs": q["pairs"],
               "server processes": harness["server_processes"].median() if "server_processes" in harness else None,
               "QPS harness / hand": q["ratio_qps"], "QPS low": q["ci_low"], "QPS high": q["ci_high"],
               "sysbench cpu/query harness / hand": c["ratio_qps"], "cpu low": c["ci_low"], "cpu high": c["ci_high"]}
        if "sampler_cpu_pct" in harness:
            row["sampler CPU (% of a CPU)"] = harness["sampler_cpu_pct"].median()
        rows.append(row)
    return pd.DataFrame(rows)


def _of_series(df: pd.DataFrame, series: str) -> pd.DataFrame:
    """The runs of ``df`` whose version (before any '-') is ``series`` or one of its releases (8.0: 8.0.15)."""
    majors = [v.split("-")[0] if isinstance(v, str) else "" for v in df["version"]]
    return df[np.array([m == series or m.startswith(series + ".") for m in majors], dtype=bool)]


def version_ratio(res: Results, flavor: str, num: str, den: str, script: str = "oltp_point_select",
                  value: str = "qps", steady: bool = False) -> tuple[float, float, float]:
    """Geometric-mean ratio of value, num over den, with a Welch interval on the logs (the versions
    ran one after the other, not in pairs); ``steady``: without the runs of machine episodes."""
    df = _version_runs(res, flavor, script, steady)
    return stats.unpaired_ratio_ci(_of_series(df, num)[value], _of_series(df, den)[value])


def version_repeats(res: Results, flavor: str, num: str, den: str, script: str = "oltp_point_select",
                    steady: bool = False) -> int:
    """The fewer repeats of the two versions a version ratio compares."""
    df = _version_runs(res, flavor, script, steady)
    return int(min(len(_of_series(df, num)), len(_of_series(df, den))))


def _version_runs(res: Results, flavor: str, script: str, steady: bool) -> pd.DataFrame:
    """The spread runs of ``flavor`` and ``script`` a version ratio compares (:func:`_derived`; ``steady``:
    without the runs of machine episodes). Computed once per results and arguments."""
    def compute():
        df = _derived(res)
        df = df[(df["part"] == "spread") & (df["flavor"] == flavor) & (df["script"] == script)]
        return df[~df["episode"]] if steady else df
    return memo(res, f"calibration.version_runs.{flavor}.{script}.{steady}", compute)


def relative_versions(res: Results, script: str = "oltp_point_select") -> pd.DataFrame:
    """Each version's QPS over its flavor's base (the series its part names: 5.7, 12, 10.11) as a
    ratio of geometric means, with a Welch interval on the logs (versions are not paired)."""
    df = res.wide.loc[(res.wide["part"] == "spread") & (res.wide["script"] == script), ["flavor", "version", "qps"]]
    rows = []
    for flavor, g in df.groupby("flavor"):
        versions = sorted(g["version"].unique(), key=version_key)
        base = next((v for v in versions if v.startswith(PARTS.part_for_name(flavor).base)), versions[0])
        for v in versions:
            r, lo, hi = stats.unpaired_ratio_ci(g[g["version"] == v]["qps"], g[g["version"] == base]["qps"])
            rows.append({"flavor": flavor, "version": v, "base": base, "ratio_qps": r, "ci_low": lo,
                         "ci_high": hi, "pairs": int((g["version"] == v).sum()),
                         "label": f"{flavor} {v.split('-')[0]} / {base.split('-')[0]}"})
    return pd.DataFrame(rows)


def _durations(df: pd.DataFrame) -> pd.Series:
    return df["workload"].map(lambda x: x["duration_s"]).astype(float)


def _seconds(df: pd.DataFrame) -> float:
    return float(df["workload"].map(lambda x: x["duration_s"]).max()) if len(df) else float("nan")


def _position(lo: float, hi: float) -> str | None:
    """Where the interval of the long runs' ratio over the short runs' lies against 1: "inside" (it
    holds 1: run length did not move the answer beyond the noise), "above", "below", or None where
    there is no interval."""
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (lo, hi)):
        return None
    return "inside" if lo <= 1 <= hi else ("above" if lo > 1 else "below")


def _over(long: float, short_a, short_b=None, long_b: float | None = None) -> dict:
    """The long ratio over the short runs' (stats.longer_over_shorter: one long run read as one more
    short one, its own noise counted), with its interval, its position against 1 and its reading
    (verdicts.interval "near": agrees where the whole interval lies within 1 +- NEAR_BAND, disagrees
    where it lies wholly outside, else not resolved: it may hold 1 and still be too wide to tell)."""
    if long != long:
        return {"over": float("nan"), "over_low": float("nan"), "over_high": float("nan"), "position": None,
                "reading": None}
    over, lo, hi = (stats.longer_over_shorter([long], short_a) if short_b is None
                    else stats.longer_over_shorter([long], short_a, [long_b], short_b))
    position = _position(lo, hi)
    return {"over": over, "over_low": lo, "over_high": hi, "position": position,
            "reading": verdicts.interval(lo, hi, "near") if position else None}


def length_checks(res: Results) -> pd.DataFrame:
    """The run-length check: each comparison the page draws a verdict from (the three ratios on each
    ratio server, and each version claim's ratio), its short runs' ratio with its interval (pair
    ratios for the ratios, Welch for the versions), the same ratio from one run of each side
    ``length_factor`` times as long, and the long ratio over the short runs' (``over``) with an
    interval that counts the long runs' own noise (stats.longer_over_shorter: the long pair against
    the short pair ratios; the long run of each version against each version's short runs):
    ``position`` inside (it holds 1), above or below 1, and ``reading``: the same within 1 +- 5% or
    not (verdicts.interval "near"). Comparisons whose long runs these results
    lack have no long value (the check was not measured at this scale). Computed once per results."""
    return memo(res, "calibration.length_checks", lambda: _length_checks(res))


def _length_checks(res: Results) -> pd.DataFrame:
    w = _runs(res, "qps", "cpu_per_op_us", "total_cpu_per_op_us")
    long = w[w["part"] == "length"]
    rows = []
    for value in ("qps", "cpu_per_op_us", "total_cpu_per_op_us"):
        if value != "total_cpu_per_op_us":
            rows += _ratio_checks(res, w, long, value)
        rows += _version_checks(res, w, long, value)
    return pd.DataFrame(rows)


def _ratio_checks(res: Results, w: pd.DataFrame, long: pd.DataFrame, value: str) -> list[dict]:
    """length_checks' rows of the ratios (ratio_table's of ``value``, its sessions part apart), from the runs
    ``w`` and their long runs ``long``."""
    rt = ratio_table(res, value)
    labels, values = _pair_labels(w), w[value].to_numpy()
    server = {"flavor": w["flavor"].to_numpy(), "version": w["version"].to_numpy(), "sessions": _sessions(w).to_numpy()}
    sides = {part: (_side(w, a).to_numpy(), _side(w, b).to_numpy()) for part, (a, b) in SIDES.items()}
    rows = []
    for r in rt[(rt["ratio"] != "sessions") & (rt["pairs"] > 0)].to_dict("records"):
        a, b = LONG_SIDES[r["ratio"]]
        mine = long[(long["flavor"] == r["flavor"]) & (long["version"] == r["version"])]
        lb = mine[mine["variant"] == b]
        # A's long run of B's length (a server both compared and checked for a version claim may
        # have a reference of the spread's length too)
        la = mine[(mine["variant"] == a) & (_durations(mine) == _seconds(lb))]
        ratio_long = float(la[value].iloc[-1] / lb[value].iloc[-1]) if len(la) and len(lb) else float("nan")
        at = np.flatnonzero(np.logical_and.reduce([server[k] == r[k] for k in server]))  # the server's runs
        in_a, in_b = sides[r["ratio"]]
        short = at[in_a[at]]
        qa, qb = _by_pair(values, labels, short), _by_pair(values, labels, at[in_b[at]])
        pairs = pd.concat([qa.rename("a"), qb.rename("b")], axis=1, join="inner").dropna()
        rows.append({"comparison": r["ratio"], "label": f"{r['flavor']} {r['version']}: {RATIOS[r['ratio']][0]} / "
                                                        f"{RATIOS[r['ratio']][1]}",
                     "value": value, "ratio": r["ratio_qps"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                     "n": r["pairs"], "short_s": _seconds(w.iloc[short]), "long": ratio_long, "long_s": _seconds(lb),
                     **_over(ratio_long, pairs["a"] / pairs["b"])})
    return rows


def _version_checks(res: Results, w: pd.DataFrame, long: pd.DataFrame, value: str) -> list[dict]:
    """length_checks' rows of the version claims that read ``value``, from the runs ``w`` and their long
    runs ``long``."""
    rows = []
    for flavor, part in PARTS.parts.items():
        for c in part.claims:
            if value not in (c.value, c.also[0] if c.also else None):
                continue
            r, lo, hi = version_ratio(res, flavor, c.num, c.den, value=value)
            if r != r:
                continue
            ref = long[(long["flavor"] == flavor) & (long["variant"] == "reference")]
            ref = ref[_durations(ref) == _durations(ref).max()] if len(ref) else ref  # the spread's long runs
            la, lb = _of_series(ref, c.num)[value], _of_series(ref, c.den)[value]
            ratio_long = float(la.iloc[-1] / lb.iloc[-1]) if len(la) and len(lb) else float("nan")
            spread = w[(w["part"] == "spread") & (w["flavor"] == flavor)]
            ps = spread[spread["script"] == "oltp_point_select"]  # the runs version_ratio compares
            num = _of_series(spread, c.num)["version"].iloc[0].split("-")[0]
            den = _of_series(spread, c.den)["version"].iloc[0].split("-")[0]
            rows.append({"comparison": "versions", "label": f"{flavor} {num} / {den}", "value": value,
                         "ratio": r, "ci_low": lo, "ci_high": hi,
                         "n": version_repeats(res, flavor, c.num, c.den), "short_s": _seconds(spread),
                         "long": ratio_long, "long_s": _seconds(_of_series(ref, c.num)),
                         **(_over(la.iloc[-1], _of_series(ps, c.num)[value], _of_series(ps, c.den)[value],
                                  lb.iloc[-1]) if ratio_long == ratio_long else _over(ratio_long, []))})
    return rows


def server_label(r) -> str:
    """A ratio row's server as the page names it: flavor, version and the sessions held (if any)."""
    return f"{r['flavor']} {r['version']}" + (f", {int(r['sessions'])} sessions" if r.get("sessions") else "")


def _ratio_runs(w: pd.DataFrame) -> pd.Series:
    return ~w["part"].isin(["spread", "length", "cotenancy"])


def durations(res: Results, spread: bool) -> str:
    """The seconds of the spread runs (or of the ratios' runs), '4' or '4/6' where they differ."""
    w = res.wide[(res.wide["part"] == "spread") if spread else _ratio_runs(res.wide)]
    return "/".join(f"{d:g}" for d in sorted(w["workload"].map(lambda x: x["duration_s"]).unique()))


def setup(res: Results) -> dict:
    """How the runs were set up, for the page: seconds of a spread run and of a pair's run, client
    threads, rows of the table, and the first and last run's start and end (UTC)."""
    w = res.wide
    seconds = w["workload"].map(lambda x: x["duration_s"])
    return {"duration_s": float(seconds[w["part"] == "spread"].max()),
            "ratio_duration_s": float(seconds[_ratio_runs(w)].max()),
            "threads": int(w["threads"].max()),
            "table_size": int(w["workload"].map(lambda x: x["table_size"]).max()),
            "first_run": f"{pd.to_datetime(w['started_at']).min():%Y-%m-%d %H:%M}",
            "last_run": f"{pd.to_datetime(w['ended_at']).max():%H:%M}"}


def spread_numbers(spread: pd.DataFrame) -> dict:
    """The spread table's CVs the page quotes: point select's median and worst (and its server), the
    same without the machine's episodes, and read-write's median and worst (NaN where not measured)."""
    ps = spread[spread["script"] == "oltp_point_select"]
    rw = spread[spread["script"] == "oltp_read_write"]
    nan = float("nan")
    return {"cv_ps_median": ps["cv"].median(), "cv_ps_max": ps["cv"].max(),
            "cv_ps_max_server": " ".join(ps.loc[ps["cv"].idxmax(), ["flavor", "version"]]) if len(ps) else "",
            "cv_ps_steady_median": ps["cv_steady"].median(), "cv_ps_steady_max": ps["cv_steady"].max(),
            "cv_rw_median": rw["cv"].median() if len(rw) else nan, "cv_rw_max": rw["cv"].max() if len(rw) else nan}


def episode_numbers(res: Results) -> dict:
    """The machine's episodes in the spread: how many runs, of how many, the range of the server's
    busy share in them and in the other runs, their QPS and sysbench's CPU per query against their
    server's medians, the worst steal, and the stretches of time they form (consecutive runs in
    the order measured): each stretch's servers and repeats and its seconds."""
    runs = spread_runs(res)
    w = res.wide[res.wide["part"] == "spread"].sort_values("started_at")
    median_client = runs.groupby(["flavor", "version", "script"])["client_cpu_per_op_us"].transform("median")
    runs["client_vs_median"] = runs["client_cpu_per_op_us"] / median_client
    ep, rest = runs[runs["episode"]], runs[~runs["episode"]]
    busy = dict(zip(w["run_id"], w["server_busy_pct"] < EPISODE_BUSY_PCT))
    stretches, current = [], []
    for _, r in w.iterrows():
        if busy[r["run_id"]]:
            current.append(r)
        elif current:
            stretches.append(current)
            current = []
    if current:
        stretches.append(current)
    spans = [{"seconds": (pd.to_datetime(s[-1]["ended_at"]) - pd.to_datetime(s[0]["started_at"])).total_seconds(),
              "servers": list(dict.fromkeys(f"{r['flavor']} {r['version'].split('-')[0]}" for r in s)),
              "runs": [{"server": f"{r['flavor']} {r['version'].split('-')[0]}", "script": r["script"],
                        "repeat": int(r["repeat"]), "busy": r["server_busy_pct"]} for r in s]} for s in stretches]

    def rng(df: pd.DataFrame, col: str, how: str):
        return getattr(df[col], how)() if len(df) and col in df else None

    return {"runs": len(runs), "episodes": len(ep), "threshold": EPISODE_BUSY_PCT,
            "busy_low": rng(ep, "server_busy_pct", "min"), "busy_high": rng(ep, "server_busy_pct", "max"),
            "rest_low": rng(rest, "server_busy_pct", "min"), "rest_median": rng(rest, "server_busy_pct", "median"),
            "qps_low": rng(ep, "qps_vs_median", "min"), "qps_high": rng(ep, "qps_vs_median", "max"),
            "client_low": rng(ep, "client_vs_median", "min"), "client_high": rng(ep, "client_vs_median", "max"),
            "steal_max": rng(runs, "steal_server_pct", "max"), "stretches": spans}


def ratio_numbers(ratios: pd.DataFrame) -> dict:
    """Each ratio's point and interval, named ``<ratio>_<flavor>[_<sessions>]_ratio`` and ``..._ci``."""
    out = {}
    for _, r in ratios.iterrows():
        key = f"{r['ratio']}_{r['flavor']}" + (f"_{r['sessions']}" if r["sessions"] else "")
        out[f"{key}_ratio"] = r["ratio_qps"]
        out[f"{key}_ci"] = f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
    return out


def cotenancy_table(res: Results) -> pd.DataFrame:
    """Co-tenancy: per server measured with active neighbours and per neighbour count N, its QPS and
    CPU per statement between the window's marks (geometric means over the windows), and each over the
    same server alone (N = 0) in the same repeat (the windows walk N in ABBA order, so a repeat's windows
    are neighbours in time), with a t interval on the logs of those pair ratios. Computed once per results."""
    return memo(res, "calibration.cotenancy_table", lambda: _cotenancy_table(res))


def _cotenancy_table(res: Results) -> pd.DataFrame:
    w = res.wide
    if "part" not in w or not (w["part"] == "cotenancy").any():
        return pd.DataFrame()
    w = w.loc[(w["part"] == "cotenancy") & (w["variant"] == "subject"),
              ["flavor", "version", "neighbours", "sweep_id", "repeat", "qps_common", "cpu_per_op_common_us"]]
    w["neighbours"] = w["neighbours"].fillna(0).astype(int)
    rows = []
    for (flavor, version), g in w.groupby(["flavor", "version"], sort=False):
        alone = g[g["neighbours"] == 0].set_index(["sweep_id", "repeat"])
        for n, gn in g.groupby("neighbours"):
            gn = gn.set_index(["sweep_id", "repeat"])
            row = {"flavor": flavor, "version": version, "server": f"{flavor} {version.split('-')[0]}",
                   "neighbours": int(n), "windows": len(gn), "qps": stats.gmean(gn["qps_common"]),
                   "cpu_per_op_us": stats.gmean(gn["cpu_per_op_common_us"])}
            for col, name in (("qps_common", "qps"), ("cpu_per_op_common_us", "cpu")):
                r, lo, hi, pairs = stats.pair_ratio_by(gn[col], alone[col])
                row.update({f"{name}_ratio": r, f"{name}_low": lo, f"{name}_high": hi, "pairs": pairs})
            rows.append(row)
    out = pd.DataFrame(rows)
    return out.sort_values(["flavor", "version", "neighbours"], key=lambda c: c.map(version_key) if c.name ==
                           "version" else c).reset_index(drop=True)


def variance_components(res: Results, script: str = "oltp_point_select") -> pd.DataFrame:
    """How the spread's QPS splits into a part between independently started instances of a server and a
    part between runs on one instance (Kalibera and Jones' two levels): per flavor, each server's log QPS
    nested in its instances (stats.nested), the between-instance variance pooled over the flavor's servers by
    the method of moments and truncated at 0 only after pooling (stats.pooled_between), with the Satterthwaite
    degrees of freedom of the pooled estimate (``between_df``) and of the within-instance one (``within_df``),
    the estimate before truncation (``raw_pct``, signed: a negative one says the instances agree more than
    their runs predict). Standard deviations on the log scale as percentages. Computed once per results and
    script."""
    return memo(res, f"calibration.variance_components.{script}", lambda: _variance_components(res, script))


def _nested_parts(res: Results, script: str) -> dict[tuple[str, str], dict]:
    """Per spread server (flavor, version) of ``script``: its log QPS nested in its instances (stats.nested)."""
    w = res.wide
    w = w[(w["part"] == "spread") & (w["script"] == script)] if len(w) else w
    if w.empty or "instance" not in w:
        return {}
    return {key: stats.nested(np.log(g["qps"].astype(float)), g["instance"].astype(str))
            for key, g in w.groupby(["flavor", "version"])}


def _variance_components(res: Results, script: str) -> pd.DataFrame:
    parts = _nested_parts(res, script)
    rows = []
    for flavor in dict.fromkeys(f for f, _ in parts):
        mine = [p for (f, _), p in parts.items() if f == flavor]
        fit = stats.pooled_between(mine)
        if not fit["parts"]:
            continue
        between, within = fit["between"], fit["within"]
        rows.append({"flavor": flavor, "servers": fit["parts"], "instances": int(np.median([p["k"] for p in mine])),
                     "runs": int(sum(p["n"] for p in mine)), "between_instances_pct": 100 * math.sqrt(between),
                     "raw_pct": 100 * math.copysign(math.sqrt(abs(fit["raw"])), fit["raw"]),
                     "between_df": fit["df"], "between_runs_pct": 100 * math.sqrt(within),
                     "within_df": fit["df_within"],
                     "instance_share_pct": 100 * between / (between + within) if between + within > 0 else float("nan")})
    return pd.DataFrame(rows)


# --- the lab's own A/A: single runs and intervals, from the spread ---------------------------------------------

AA_BAND = verdicts.NEAR_BAND  # an A/A single-run ratio this far below 1 reads as a regression of 5% or more


def aa_pairs(res: Results, script: str = "oltp_point_select") -> pd.DataFrame:
    """The spread's A/A single-run pairs, the source's practice (one run per version) read on one server against
    itself: per server, its runs on its second instance over its runs on its first, each taken in run order with
    the first unused run of the other instance (so no run is in two pairs): ``ratio``, the two runs' ids, and
    whether the two ran on different server starts of one build (``apart``) and the same image
    (``same_image``)."""
    w = _derived(res)
    w = w[(w["part"] == "spread") & (w["script"] == script)] if len(w) else w
    if w.empty or "instance" not in w:
        return pd.DataFrame()
    rows = []
    for (flavor, version), g in w.groupby(["flavor", "version"], sort=False):
        insts = sorted(g["instance"].dropna().unique())
        if len(insts) < 2:
            continue
        a = g[g["instance"] == insts[0]].sort_values("started_at")
        b = g[g["instance"] == insts[1]].sort_values("started_at")
        for (_, ra), (_, rb) in zip(a.iterrows(), b.iterrows()):
            rows.append({"flavor": flavor, "version": version, "server": f"{flavor} {version.split('-')[0]}",
                         "ratio": float(rb["qps"] / ra["qps"]), "a": ra["run_id"], "b": rb["run_id"],
                         "apart": str(ra.get("server_instance")) != str(rb.get("server_instance")),
                         "same_image": str(ra.get("image_digest", "")) == str(rb.get("image_digest", "")),
                         "episode": bool(ra["episode"] or rb["episode"])})
    return pd.DataFrame(rows)


def aa_summary(res: Results, script: str = "oltp_point_select") -> dict:
    """The A/A single-run pairs summed up: ``n``; ``below`` (ratios under 1 - AA_BAND: noise alone reading as a
    regression of AA_BAND or more) and ``above`` (over 1 + AA_BAND), each with its exact 95% interval as a share
    (stats.proportion_ci); the smallest and largest ratio and the median distance from 1 (``median_gap``);
    ``apart`` and ``same_image``, the pairs whose runs ran on two starts of one image."""
    p = aa_pairs(res, script)
    nan = float("nan")
    if p.empty:
        return {"n": 0}
    n = len(p)
    below, above = int((p["ratio"] < 1 - AA_BAND).sum()), int((p["ratio"] > 1 + AA_BAND).sum())
    # a pair beyond the band whose repeat (the same server's other pair) reads within it: a single run's apparent
    # change that repeating removes
    beyond = (p["ratio"] < 1 - AA_BAND) | (p["ratio"] > 1 + AA_BAND)
    within_other = p.groupby("server")["ratio"].transform(
        lambda r: [bool(((r.drop(i) >= 1 - AA_BAND) & (r.drop(i) <= 1 + AA_BAND)).any()) for i in r.index])
    repeated = p.groupby("server")["ratio"].transform("size") >= 2
    return {"n": n, "below": below, "above": above, "below_ci": stats.proportion_ci(below, n),
            "above_ci": stats.proportion_ci(above, n), "min": float(p["ratio"].min()), "max": float(p["ratio"].max()),
            "median_gap": float(np.median(np.abs(np.log(p["ratio"])))), "servers": int(p["server"].nunique()),
            "apart": int(p["apart"].sum()), "same_image": int(p["same_image"].sum()), "band": AA_BAND,
            "beyond": int((beyond & repeated).sum()), "gone": int((beyond & repeated & within_other.astype(bool)).sum()),
            "episodes": int(p["episode"].sum()) if "episode" in p else 0, "nan": nan}


def aa_intervals(res: Results, script: str = "oltp_point_select", level: float = 0.95) -> pd.DataFrame:
    """Each spread server against itself, its second instance over its first (the mean of its runs there over
    the mean of its runs on the first, on the logs), with the 95% interval this lab would give a comparison of
    two servers measured so: the variance of the difference of two instance means, 2 x the between-instance
    variance plus the within-instance variance over each instance's runs, the components pooled over the
    flavor's OTHER servers (held out: an interval is never checked on the pairs it was fitted on;
    stats.pooled_between) and the t quantile on their Satterthwaite degrees of freedom (stats.satterthwaite):
    ``holds``, whether it holds 1."""
    parts = _nested_parts(res, script)
    w = res.wide
    w = w[(w["part"] == "spread") & (w["script"] == script)] if len(w) else w
    rows = []
    for (flavor, version), part in parts.items():
        if part["k"] != 2:
            continue
        others = [p for (f, v), p in parts.items() if f == flavor and v != version]
        fit = stats.pooled_between(others)
        if not fit["parts"]:
            continue
        g = w[(w["flavor"] == flavor) & (w["version"] == version)]
        insts = sorted(g["instance"].astype(str).unique())
        x = [np.log(g.loc[g["instance"].astype(str) == i, "qps"].astype(float)) for i in insts]
        d = float(x[1].mean() - x[0].mean())
        terms = [(2 * fit["between"], fit["df"]), (fit["within"] * (1 / len(x[0]) + 1 / len(x[1])), fit["df_within"])]
        var = sum(v for v, _ in terms)
        dof = stats.satterthwaite(terms)
        half = stats.t_quantile(level, dof) * math.sqrt(var) if dof == dof else float("nan")
        lo, hi = math.exp(d - half), math.exp(d + half)
        rows.append({"flavor": flavor, "version": version, "server": f"{flavor} {version.split('-')[0]}",
                     "ratio": math.exp(d), "low": lo, "high": hi, "dof": dof, "holds": bool(lo <= 1 <= hi),
                     "fitted_on": fit["parts"]})
    return pd.DataFrame(rows)


# --- the scan test's variance, and the settle part -------------------------------------------------------------

SCAN_LABEL = "scan"  # the spread's scan runs, as the analysis names their script


def _pooled_var(g: pd.DataFrame) -> tuple[float, int]:
    """The variance of log QPS between runs of one server, pooled over the servers of ``g``: (variance, dof)."""
    ss, dof = 0.0, 0
    for _, h in g.groupby(["flavor", "version"]):
        x = np.log(h["qps"].astype(float).to_numpy())
        if len(x) >= 2:
            ss += float(((x - x.mean()) ** 2).sum())
            dof += len(x) - 1
    return (ss / dof if dof else float("nan")), dof


def _var_ratio(a: tuple[float, int], b: tuple[float, int], level: float = 0.95) -> tuple[float, float, float]:
    """The ratio of two variances with their F interval (scipy's F distribution)."""
    from scipy.stats import f

    (va, da), (vb, db) = a, b
    if not (da and db) or va != va or vb != vb or vb == 0:
        return float("nan"), float("nan"), float("nan")
    r = va / vb
    tail = (1 - level) / 2
    return r, r / f.ppf(1 - tail, da, db), r / f.ppf(tail, da, db)


def scan_variance(res: Results) -> pd.DataFrame:
    """Per flavor with scan runs in the spread: the variance of log QPS between runs of one server (pooled over
    its servers, each server's own mean taken out) of the scan test and of point selects, as coefficients of
    variation (``scan_cv``, ``point_cv``, in %), with their degrees of freedom, and the scan's variance over point
    selects' with its F interval (``ratio``, ``low``, ``high``); and per flavor but the one the source names (its
    part's ``scan_named``: PostgreSQL), that flavor's scan variance over this one's (``pg_ratio``, ``pg_low``,
    ``pg_high``). Empty where no scan ran."""
    w = _derived(res)
    w = w[w["part"] == "spread"] if len(w) else w
    if w.empty:
        return pd.DataFrame()
    scans = w[w["script"] == SCAN_LABEL]
    if scans.empty:
        return pd.DataFrame()
    points = w[w["script"] == "oltp_point_select"]
    by = {f: (_pooled_var(scans[scans["flavor"] == f]), _pooled_var(points[points["flavor"] == f]))
          for f in dict.fromkeys(scans["flavor"])}
    named = [f for f in by if PARTS.part_for_name(f).scan_named]  # the flavor the source names (PostgreSQL)
    pg = by[named[0]][0] if named else (float("nan"), 0)
    rows = []
    for flavor, (sv, pv) in by.items():
        r, lo, hi = _var_ratio(sv, pv)
        pr, plo, phi = _var_ratio(pg, sv) if flavor not in named else (float("nan"),) * 3
        rows.append({"flavor": flavor, "servers": int(scans.loc[scans["flavor"] == flavor, "version"].nunique()),
                     "scan_runs": int((scans["flavor"] == flavor).sum()), "scan_cv": 100 * math.sqrt(sv[0]),
                     "scan_df": sv[1], "point_cv": 100 * math.sqrt(pv[0]) if pv[0] == pv[0] else float("nan"),
                     "point_df": pv[1], "ratio": r, "low": lo, "high": hi, "pg_ratio": pr, "pg_low": plo,
                     "pg_high": phi,
                     "scan_s": float(scans.loc[scans["flavor"] == flavor, "workload"].map(
                         lambda x: x["duration_s"]).max())})
    return pd.DataFrame(rows)


SCAN_READ = 0.99  # a scan reads the whole table: at least this share of its rows per query, by the server's count


def scan_witness(res: Results) -> verdicts.Witness | None:
    """What the spread's scan runs stored that shows each scan read the whole table: the rows the server counted
    read per query (InnoDB's Innodb_rows_read, PostgreSQL's tup_returned) against the table's rows, and every run
    as the page says (configuration); None where no scan ran."""
    w = _derived(res)
    w = w[w["part"] == "spread"] if len(w) else w
    if w.empty:
        return None
    scans = w[w["script"] == SCAN_LABEL]
    if scans.empty:
        return None
    counts = _counted(res, scans["run_id"], ("Innodb_rows_read", "tup_returned"))
    read = counts.sum(axis=1, min_count=1).to_numpy() / pd.to_numeric(scans["queries"], errors="coerce").to_numpy()
    rows = scans["workload"].map(lambda x: x["table_size"]).to_numpy(dtype=float)
    whole = int((read >= SCAN_READ * rows).sum())
    c = configuration(res, scans)
    ok = len(scans) > 0 and whole == len(scans) and c["pinned"] == c["container"] == c["alone"] == c["runs"]
    return verdicts.witness(ok, f"the server counted {np.nanmin(read):,.0f} to {np.nanmax(read):,.0f} rows read per "
                                f"scan of a {int(rows.max()):,}-row table (the whole table in {whole} of {len(scans)} "
                                f"runs); pinned as asked in {c['pinned']}, the only server under load in {c['alone']}")


def settle_runs(res: Results) -> pd.DataFrame:
    """The settle part's runs (:func:`with_derived`): each read run right after its burst of writes (immediate)
    or after the wait (settled), with the backlog the writes left as the reads began (``settle_backlog``: InnoDB's
    history list, PostgreSQL's all-visible share of the table's pages)."""
    w = _derived(res)
    return w[w["part"] == "settle"] if len(w) and "part" in w else w.iloc[0:0]


def settle_table(res: Results) -> pd.DataFrame:
    """Per settle server: its immediate and settled reads' CV of QPS (``immediate_cv``, ``settled_cv``, %), the
    immediate over the settled variance of log QPS with its F interval (``ratio``, ``low``, ``high``), their QPS
    (settled over immediate, a pair ratio over the ABBA repeats: ``qps_ratio``, ``qps_low``, ``qps_high``), the
    median backlog at each side's start, the wait and the runs."""
    w = settle_runs(res)
    if w.empty:
        return pd.DataFrame()
    rows = []
    for (flavor, version), g in w.groupby(["flavor", "version"], sort=False):
        im, st = g[g["variant"] == "immediate"], g[g["variant"] == "settled"]
        vi = _pooled_var(im)
        vs = _pooled_var(st)
        r, lo, hi = _var_ratio(vi, vs)
        q, qlo, qhi, n = stats.pair_ratio_by(st.set_index(["sweep_id", "repeat"])["qps"],
                                             im.set_index(["sweep_id", "repeat"])["qps"])
        rows.append({"flavor": flavor, "version": version, "server": f"{flavor} {version.split('-')[0]}",
                     "runs": len(im), "immediate_cv": 100 * stats.cv(im["qps"]), "settled_cv": 100 * stats.cv(st["qps"]),
                     "ratio": r, "low": lo, "high": hi, "qps_ratio": q, "qps_low": qlo, "qps_high": qhi, "pairs": n,
                     "immediate_backlog": float(im["settle_backlog"].median()),
                     "settled_backlog": float(st["settle_backlog"].median()),
                     "wait_s": float(st["settle_wait_s"].max()), "write_s": float(g["settle_write_s"].max()),
                     "read_s": float(g["workload"].map(lambda x: x["duration_s"]).max())})
    return pd.DataFrame(rows)


def neighbour_server(res: Results) -> str:
    """The co-tenancy neighbours' server as the page names it ('mysql 8.0.15'), or 'no neighbour' where none ran."""
    w = res.wide
    n = w[(w["part"] == "cotenancy") & w["variant"].astype(str).str.startswith("neighbour")] if "part" in w else w.iloc[0:0]
    if n.empty:
        return "no neighbour"
    return ", ".join(sorted({f"{f} {v.split('-')[0]}" for f, v in zip(n["flavor"], n["version"])}))


# What the runs stored that shows they ran the configuration a claim's comparison names (the claims'
# witnesses): the server's CPUs and kind read back, the servers under load beside it, its table checked, its
# version as the server reports it, where its CPU was read from, and what the server counted per query.


def _counted(res: Results, runs, names: tuple[str, ...]) -> pd.DataFrame:
    """The servers' own counts ``names`` (deltas over each run's window, any source) of ``runs``, one row per
    run (NaN where a run stored none: a count that did not move is not stored)."""
    c = res.counters
    if c.empty:
        return pd.DataFrame(index=pd.Index(list(runs)), columns=list(names), dtype=float)
    c = c[c["name"].isin(names) & c["run_id"].isin(set(runs))]
    return c.pivot_table(index="run_id", columns="name", values="delta", aggfunc="sum").reindex(
        index=list(runs), columns=list(names))


PER_QUERY = ("Com_select", "Innodb_rows_read", "blks_hit", "blks_read", "tup_fetched")


def configuration(res: Results, w: pd.DataFrame) -> dict:
    """What runs ``w`` (rows of the results' runs) stored of the configuration they ran: ``runs``; ``pinned``, the
    runs whose server CPUs read back as asked (server_cpus_observed == server_cpus) and ``cpus``, those CPUs;
    ``client``, sysbench's CPUs; ``container``, the runs whose server ran in its container; ``alone``, the runs
    that were the only server under load (active_servers 1); ``checked``, those whose starting state held
    (precondition_ok); ``versions``, the versions the servers reported (version_full) and ``reported``, the
    runs that stored one; ``cgroup``, the runs whose server CPU was read from its container's cgroup;
    ``client_cpu``, the runs that read sysbench's CPU; and per query (the server's counts over its queries,
    medians over the runs; NaN where its flavor keeps no such count): selects, rows read, buffer hits and blocks
    read from outside its buffers."""
    if w.empty:
        return {"runs": 0}
    text = lambda c: w[c].astype(str) if c in w else pd.Series("", index=w.index)
    num = lambda c: pd.to_numeric(w[c], errors="coerce") if c in w else pd.Series(np.nan, index=w.index)
    counts = _counted(res, w["run_id"], PER_QUERY)
    # published runs leave out counts that did not move: 0 where the flavor keeps the count (another run of it has it)
    flavor = w["flavor"].to_numpy()
    for f in set(flavor):
        mine = flavor == f
        kept = counts.loc[mine].notna().any()
        counts.loc[mine, kept[kept].index] = counts.loc[mine, kept[kept].index].fillna(0.0)
    per = counts.div(num("queries").to_numpy(), axis=0)
    reported = w["version_full"].notna() & (text("version_full").str.strip() != "") if "version_full" in w else \
        pd.Series(False, index=w.index)
    return {"runs": len(w), "pinned": int((text("server_cpus_observed") == text("server_cpus")).sum()),
            "cpus": sorted(set(text("server_cpus"))), "client": sorted(set(text("client_cpus"))),
            "container": int((text("server_kind") == "container").sum()),
            "alone": int((num("active_servers") == 1).sum()),
            "checked": int(w["precondition_ok"].fillna(False).astype(bool).sum()) if "precondition_ok" in w else 0,
            "reported": int(reported.sum()),
            "versions": sorted({str(v).split(" on ")[0] for v in w.loc[reported, "version_full"]}),
            "cgroup": int((num("cpu_from_cgroup") == 1).sum()), "client_cpu": int(num("client_cpu_per_op_us").notna().sum()),
            **{f"per_query_{k}": float(per[k].median()) for k in PER_QUERY}}
