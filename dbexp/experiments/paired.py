"""The comparison core: servers measured side by side (in one window, or in ABBA pairs of runs) and
read as ratios A / B, shared by the chapters that compare that way (gtid, versions, calibration).

- :func:`window_ratios` and :func:`ratio_rows`: A over B window by window, and per value the paired
  ratio (geometric mean of the windows' ratios, t interval on the logs: stats.pair_ratio_by) with its
  half-width as a fraction of the ratio (:func:`half_width`);
- :func:`nested_ratios`: the same ratios with the windows nested in the instances they ran on (sets of
  servers started apart), the interval taken at the instance level, the variance between instances
  pooled over the chapter's A/A controls (stats.nested_ratio_ci);
- :func:`resolution`: how far the half-widths reached against a target;
- :func:`control`: an A/A control (two identical servers in one window): how far from 1 its ratios
  lie and how many of their intervals hold 1 (:func:`holds_one`);
- :func:`length_ratio`: the run-length check, a ratio from longer windows over the same ratio from
  the scale's (Welch on the logs of the windows' ratios: the two were measured apart);
- :func:`with_duration` and :func:`window_numbers`: the windows as measured (length, common
  interval, windows per point, threads, table size); :func:`cell`: a ratio and its interval as a
  claims table writes it.

Each chapter says which servers are A and B (a column naming them, ``by``) and which values it reads;
what it concludes from them stays in the chapter.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dbexp.experiments import stats


def half_width(r: float, lo: float, hi: float) -> float:
    """The 95% interval's half-width as a fraction of the ratio (NaN without a ratio)."""
    return (hi - lo) / 2 / r if r == r and r else np.nan


def holds_one(r: pd.DataFrame, low: str = "ci_low", high: str = "ci_high") -> pd.Series:
    """Per row of ratios, whether its interval holds 1."""
    return (r[low] <= 1) & (r[high] >= 1)


def cell(r: float, lo: float, hi: float) -> str:
    """A ratio with its interval as a claims table's cell: '0.912 [0.900, 0.925]' (one window: no interval)."""
    return f"{r:.3f} [{lo:.3f}, {hi:.3f}]" if lo == lo else f"{r:.3f} (one window: no interval)"


def _sides(g: pd.DataFrame, by: str, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``g``'s rows whose ``by`` column names A, and of those naming B."""
    names = g[by].to_numpy()
    return np.flatnonzero(names == a), np.flatnonzero(names == b)


def _by_repeat(g: pd.DataFrame, rows: np.ndarray, value: str) -> pd.Series:
    """``g``'s ``value`` at the positions ``rows``, indexed by the repeat (``g[g[by] == a].set_index("repeat")[value]``)."""
    return g.iloc[rows].set_index("repeat")[value]


def _one_each(ka: np.ndarray, kb: np.ndarray) -> bool:
    """Whether A's and B's rows name the same windows (repeats), in the same order, each once: then A over B
    is a division of aligned arrays."""
    return np.array_equal(ka, kb) and len(np.unique(ka)) == len(ka)


def window_ratios(g: pd.DataFrame, a: str, b: str, value: str = "qps_common", by: str = "config") -> pd.Series:
    """A's ``value`` over B's, window by window (indexed by the repeat): A and B are the rows of ``g``
    whose ``by`` column names them."""
    ra, rb = _sides(g, by, a, b)
    rep, col = g["repeat"], g[value]
    ka, kb = rep.to_numpy()[ra], rep.to_numpy()[rb]
    if col.dtype == np.float64 and rep.dtype.kind == "i" and _one_each(ka, kb):
        # the same repeats on both sides, each once: the series divide as the arrays do (set_index
        # makes a signed integer column an int64 index)
        x = col.to_numpy()
        return pd.Series(x[ra] / x[rb], index=pd.Index(ka.astype(np.int64), name="repeat"), name=value).dropna()
    return (_by_repeat(g, ra, value) / _by_repeat(g, rb, value)).dropna()


def ratio_rows(g: pd.DataFrame, a: str, b: str, values: dict[str, str], by: str) -> list[dict]:
    """Per value of ``values`` (column -> label) that A and B both have: the ratio A / B paired by
    window, with its interval, pairs and half-width (one dict each: value, ratio, ci_low, ci_high,
    pairs, half_width)."""
    ra, rb = _sides(g, by, a, b)
    rows: list[dict] = []
    if len(ra) == 0 or len(rb) == 0:
        return rows
    rep = g["repeat"].to_numpy()
    for value, label in values.items():
        if value not in g:
            continue
        x = g[value].to_numpy(dtype=float, na_value=np.nan)
        xa, xb = x[ra], x[rb]
        if np.isnan(xa).all() or np.isnan(xb).all():
            continue
        keyed = stats.pair_ratio_keyed(rep[ra], xa, rep[rb], xb)
        r, lo, hi, n = keyed if keyed is not None else \
            stats.pair_ratio_by(_by_repeat(g, ra, value), _by_repeat(g, rb, value))
        rows.append({"value": label, "ratio": r, "ci_low": lo, "ci_high": hi, "pairs": n,
                     "half_width": half_width(r, lo, hi)})
    return rows


def nested_ratios(w: pd.DataFrame, keys: list[str], comparisons, values: dict[str, str], by: str,
                  control: str, pool_by: list[str]) -> pd.DataFrame:
    """Per group of ``keys`` (the runs ``w``: one row per run, ``repeat`` the window and ``instance`` the
    set of servers it ran on), per comparison ``comparisons(g)`` yields for the group (``(a, b, label)``:
    A and B named in column ``by``), and per value of ``values`` (column -> label): the ratio A / B.

    Two levels: the ratio is the geometric mean of the instances' geometric means of their windows'
    ratios, and its interval is taken at the instance level, from the variance between instances beyond
    what the windows explain, pooled over the groups of the same ``pool_by`` columns and value among the
    comparisons labelled ``control`` (an A/A pair: two servers of one build and settings, started apart,
    as A and B of every comparison are), plus the comparison's own variance between windows
    (stats.nested_ratio_ci: a t quantile on the pooled degrees of freedom). Runs from one instance (or
    before instances were recorded) keep the windows' paired t interval.

    Columns: ``keys``, comparison, a, b, value, ratio, ci_low, ci_high, pairs, instances, dof, half_width."""
    if w.empty:
        return pd.DataFrame()
    parts = []
    for key, g in w.groupby(keys):
        key = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        parts += _group_parts(key, g, comparisons(g), values, by)
    if not parts:
        return pd.DataFrame()
    pooled = _pooled_between(parts, control, [*pool_by, "value"])
    rows = []
    for p in parts:
        between, dof = pooled.get(tuple(p[c] for c in (*pool_by, "value")), (float("nan"), 0))
        if p["k"] >= 2 and dof:
            r, lo, hi = stats.nested_ratio_ci(p, between, dof)
        else:  # one instance: the windows' paired interval
            r, lo, hi = stats.pair_ratio_ci(p["windows"], np.ones(len(p["windows"])))
            dof = p["n"] - 1
        rows.append({k: p[k] for k in (*keys, "comparison", "a", "b", "value")}
                    | {"ratio": r, "ci_low": lo, "ci_high": hi, "pairs": p["n"], "instances": p["k"],
                       "dof": dof, "half_width": half_width(r, lo, hi)})
    return pd.DataFrame(rows)


def _group_parts(key: dict, g: pd.DataFrame, comparisons, values: dict[str, str], by: str) -> list[dict]:
    """One group's parts for :func:`nested_ratios`: per comparison ``(a, b, label)`` and value, the
    windows' ratios A / B (``windows``) and their nested() summary by instance, with ``key`` and the
    comparison's names."""
    instance_of = _instances(g)
    names, rep = g[by].to_numpy(), g["repeat"].to_numpy()
    cols = {v: g[v].to_numpy(dtype=float, na_value=np.nan) for v in values if v in g}
    parts = []
    for a, b, label in comparisons:
        ra, rb = np.flatnonzero(names == a), np.flatnonzero(names == b)
        ka, kb = rep[ra], rep[rb]
        aligned = _one_each(ka, kb)
        for value, name in values.items():
            if value not in cols:
                continue
            if aligned:  # the same windows on both sides, each once (window_ratios' quick path)
                r, windows = cols[value][ra] / cols[value][rb], ka
            else:
                s = window_ratios(g, a, b, value, by=by)
                r, windows = s.to_numpy(dtype=float), s.index.to_numpy()
            keep = r > 0  # NaN too
            r, windows = r[keep], windows[keep]
            if not len(r):
                continue
            groups = (np.array([instance_of.get(k, -1) for k in windows.tolist()], dtype=float)
                      if instance_of is not None else np.zeros(len(r)))
            parts.append({**key, "comparison": label, "a": a, "b": b, "value": name, "windows": r,
                          **stats.nested(np.log(r), groups)})
    return parts


def _pooled_between(parts: list[dict], control: str, pool: list[str]) -> dict[tuple, tuple[float, int]]:
    """Per combination of the ``pool`` entries of ``parts`` (a tuple, in ``pool``'s order): the variance
    between instances pooled over its parts of the comparison ``control`` (stats.between_variance, the
    parts in their order), (NaN, 0) where it has none."""
    controls: dict[tuple, list[dict]] = {}
    for p in parts:
        found = controls.setdefault(tuple(p[c] for c in pool), [])
        if p["comparison"] == control:
            found.append(p)
    return {k: stats.between_variance(ps) for k, ps in controls.items()}


def _instances(g: pd.DataFrame) -> dict | None:
    """Each window's (repeat's) instance in the runs ``g`` (its first run's), -1 where it has none; None
    where no run records one (runs from before instances were recorded)."""
    if "instance" not in g:
        return None
    instance = g["instance"].to_numpy(dtype=float, na_value=np.nan)
    if np.isnan(instance).all():
        return None
    repeats, first = np.unique(g["repeat"].to_numpy(), return_index=True)
    return {k: (-1.0 if v != v else v) for k, v in zip(repeats.tolist(), instance[first].tolist())}


def resolution(r: pd.DataFrame, target: float) -> dict:
    """The half-widths the ratios ``r`` reached (one row each, a ``half_width`` column): median,
    largest, and how many reach ``target``."""
    if r.empty or r["half_width"].isna().all():
        return {"median": float("nan"), "max": float("nan"), "within": 0, "n": 0}
    return {"median": float(r["half_width"].median()), "max": float(r["half_width"].max()),
            "within": int((r["half_width"] <= target).sum()), "n": len(r)}


def control(r: pd.DataFrame) -> dict:
    """An A/A control's ratios ``r`` (two identical servers in one window): how many, how far from 1
    they lie (the largest distance), how many intervals hold 1, and their median half-width."""
    if r.empty:
        return {"n": 0}
    return {"n": len(r), "max_off": float((r["ratio"] - 1).abs().max()), "holding_1": int(holds_one(r).sum()),
            "median_half_width": float(r["half_width"].median())}


def length_ratio(long: pd.Series, short: pd.Series) -> dict:
    """The run-length check of one comparison: its windows' ratios in longer windows (``long``) and in
    the scale's (``short``), each as a geometric mean with its t interval, and long over short with a
    Welch interval on the logs (``ratio``, ``ci_low``, ``ci_high``): an interval that holds 1 finds no
    dependence on the run's length."""
    pl, pll, plh = stats.pair_ratio_ci(long.values, np.ones(len(long)))
    ps, psl, psh = stats.pair_ratio_ci(short.values, np.ones(len(short)))
    r, lo, hi = stats.unpaired_ratio_ci(long, short)
    return {"short": ps, "short_low": psl, "short_high": psh, "windows_short": len(short),
            "long": pl, "long_low": pll, "long_high": plh, "windows_long": len(long),
            "ratio": r, "ci_low": lo, "ci_high": hi}


def with_duration(w: pd.DataFrame) -> pd.DataFrame:
    """``w`` with ``duration_s``: each run's seconds, from its workload (NaN where it has none); the
    column is set on ``w`` itself, which is returned."""
    w["duration_s"] = [float((x or {}).get("duration_s", np.nan)) for x in w["workload"]] \
        if "workload" in w else np.nan
    return w


def window_numbers(w: pd.DataFrame, point: list[str]) -> dict:
    """The windows as measured (``w``: the runs, with_duration's): how many, their length and common
    interval (medians), windows per point (the median over the groups of ``point``), the client
    threads and the table size."""
    if w.empty:
        return {"n": 0}
    per_point = w.groupby(point, observed=True).size()
    return {"n": len(w), "duration_s": float(w["duration_s"].median()),
            "common_s": float(w["common_s"].median()) if "common_s" in w else float("nan"),
            "repeats": int(per_point.median()), "threads": sorted(int(t) for t in w["threads"].unique()),
            "table_size": int(w["workload"].map(lambda x: (x or {}).get("table_size", 0)).median())
            if "workload" in w else 0}


def halves(labels) -> dict:
    """Each distinct label (a test's name) in one of two halves, 0 or 1: the labels sorted, alternately."""
    return {label: i % 2 for i, label in enumerate(sorted(set(labels), key=str))}


def component_ratios(w: pd.DataFrame, keys: list[str], comparisons, values: dict[str, str], by: str,
                     control: str, pool_by: list[str], held_out_by: str | None = None) -> pd.DataFrame:
    """:func:`nested_ratios` with the variance components estimated as Kalibera and Jones ask (ISMM 2013): the
    variance between instances pooled over the ``control`` comparisons (A/A pairs) of the same ``pool_by``
    columns and value by the method of moments, truncated at 0 only after pooling (stats.pooled_between), and
    each comparison's interval from it and its own variance within instances, on their Satterthwaite degrees
    of freedom (stats.component_ci).

    With ``held_out_by`` (a column of ``keys``, the test), the A/A controls are also judged honestly: their
    ``held_out_by`` values are split in two halves (:func:`halves`), and each control's interval is computed a
    second time with the between-instance variance fitted on the other half's controls only (``held_out``
    True); the other rows (``held_out`` False) use every control of their pool.

    Columns: ``keys``, comparison, a, b, value, ratio, ci_low, ci_high, pairs, instances, dof, half_width,
    between, between_df, within, within_df, held_out."""
    if w.empty:
        return pd.DataFrame()
    parts = []
    for key, g in w.groupby(keys):
        key = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        parts += _group_parts(key, g, comparisons(g), values, by)
    if not parts:
        return pd.DataFrame()
    pool = [*pool_by, "value"]
    pooled = _pooled_components(parts, control, pool)
    half = halves(p[held_out_by] for p in parts if p["comparison"] == control) if held_out_by else {}
    by_half = {h: _pooled_components([p for p in parts if half.get(p.get(held_out_by)) == h], control, pool)
               for h in (0, 1)} if held_out_by else {}
    rows = []
    for p in parts:
        fits = [(False, pooled.get(tuple(p[c] for c in pool)))]
        if held_out_by and p["comparison"] == control and p.get(held_out_by) in half:
            fits.append((True, by_half[1 - half[p[held_out_by]]].get(tuple(p[c] for c in pool))))
        for held, fit in fits:
            rows.append(_component_row(p, keys, fit, held))
    return pd.DataFrame(rows)


def _pooled_components(parts: list[dict], control: str, pool: list[str]) -> dict[tuple, dict]:
    """Per combination of the ``pool`` entries of ``parts``: stats.pooled_between over its parts of the
    comparison ``control``."""
    found: dict[tuple, list[dict]] = {}
    for p in parts:
        mine = found.setdefault(tuple(p[c] for c in pool), [])
        if p["comparison"] == control:
            mine.append(p)
    return {k: stats.pooled_between(ps) for k, ps in found.items()}


def _component_row(p: dict, keys: list[str], fit: dict | None, held_out: bool) -> dict:
    between, between_df = (fit["between"], fit["df"]) if fit else (float("nan"), 0.0)
    if p["k"] >= 2:
        r, lo, hi, dof = stats.component_ci(p, between, between_df)
    else:  # one instance: the windows' paired interval
        r, lo, hi = stats.pair_ratio_ci(p["windows"], np.ones(len(p["windows"])))
        dof = float(p["n"] - 1)
    return ({k: p[k] for k in (*keys, "comparison", "a", "b", "value")}
            | {"ratio": r, "ci_low": lo, "ci_high": hi, "pairs": p["n"], "instances": p["k"], "dof": dof,
               "half_width": half_width(r, lo, hi), "between": between, "between_df": between_df,
               "within": p["within"], "within_df": p["n"] - p["k"], "held_out": held_out})
