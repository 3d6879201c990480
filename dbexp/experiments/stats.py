"""Spread, ratios and slopes: coefficient of variation, and intervals that follow the design (pair
ratios for paired runs, Welch on logs for unpaired groups, whole repeats for slopes, a prediction
interval for one longer run against the shorter runs, and two levels for windows nested in server
instances: :func:`nested`, :func:`between_variance`, :func:`nested_ratio_ci`)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as sp

_NAN3 = (float("nan"),) * 3


def cv(values) -> float:
    """Coefficient of variation (sample standard deviation / mean) of the values that are numbers."""
    v = np.asarray(list(values), dtype=float)
    v = v[~np.isnan(v)]  # as count, median, min and max in spread() skip a missing value
    if len(v) < 2 or v.mean() == 0:
        return float("nan")
    return float(sp.variation(v, ddof=1))


def gmean(values) -> float:
    """Geometric mean of the values that are numbers; NaN where there are none or one is not positive."""
    v = np.asarray(list(values), dtype=float)
    v = v[~np.isnan(v)]
    return _gmean(v) if len(v) and (v > 0).all() else float("nan")


def _mean_ci(d: np.ndarray, level: float) -> tuple[float, float, float]:
    """Mean of d with its t interval (scipy's one-sample t, n - 1 degrees of freedom, computed as
    :func:`_t_ci` does); no interval below two values."""
    if len(d) == 0:
        return _NAN3
    if len(d) < 2:
        return float(d.mean()), float("nan"), float("nan")
    return (float(d.mean()), *_t_ci(d, level))


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of the values that are numbers, with a t interval (one value per independent unit,
    e.g. per repeat)."""
    d = np.asarray(list(values), dtype=float)
    return _mean_ci(d[~np.isnan(d)], level)


def _positive(values) -> np.ndarray:
    v = np.asarray(list(values), dtype=float)
    if (v <= 0).any():
        raise ValueError("ratios need positive values")
    return v


def _gmean(v: np.ndarray) -> float:
    """scipy.stats.gmean of positive values, as scipy computes it (exp of the mean log), without its
    array-API and NaN-policy wrapper (about 1 ms a call, and the chapters make thousands)."""
    return float(np.exp(np.mean(np.log(v), axis=0)))


# scipy.stats' t tests, computed as scipy computes them but without the array-API and NaN-policy
# wrappers, which cost about 2 ms a call (the chapters make thousands): the same floats, bit for bit
# (tests/unit/test_stats.py compares each with scipy's on thousands of samples).

def _var1(d: np.ndarray):
    """scipy's _var(d, ddof=1): the second central moment times n / (n - 1)."""
    n = len(d)
    var = np.mean((d - np.mean(d, axis=0, keepdims=True)) ** 2, axis=0)
    var *= np.float64(n) / (np.float64(n) - 1)
    return var


def _t_bounds(dof, se, estimate, level: float) -> tuple[float, float]:
    """scipy's two-sided t confidence interval: special.stdtrit's quantiles at the two tails, q * se +
    estimate."""
    tail = (1 - np.float64(level)) / 2
    q = special.stdtrit(dof, np.stack((tail, 1 - tail)))
    return float(q[0] * se + estimate), float(q[1] * se + estimate)


def _t_ci(d: np.ndarray, level: float) -> tuple[float, float]:
    """scipy.stats.ttest_1samp(d, 0).confidence_interval(level), for two values or more."""
    return _t_bounds(len(d) - 1, np.sqrt(_var1(d) / len(d)), np.mean(d, axis=0), level)


def _paired_t_ci(la: np.ndarray, lb: np.ndarray, level: float) -> tuple[float, float]:
    """scipy.stats.ttest_rel(la, lb).confidence_interval(level): the one-sample interval of la - lb."""
    return _t_ci(la - lb, level)


def _welch_ci(a: np.ndarray, b: np.ndarray, level: float) -> tuple[float, float]:
    """scipy.stats.ttest_ind(a, b, equal_var=False).confidence_interval(level), two values or more on
    each side: Welch-Satterthwaite degrees of freedom (1 where both variances are 0, as scipy)."""
    vn1, vn2 = _var1(a) / len(a), _var1(b) / len(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        dof = (vn1 + vn2) ** 2 / (vn1 ** 2 / (len(a) - 1) + vn2 ** 2 / (len(b) - 1))
    return _t_bounds(1.0 if np.isnan(dof) else dof, np.sqrt(vn1 + vn2), np.mean(a) - np.mean(b), level)


def _ols_slope(x: np.ndarray, y: np.ndarray) -> float:
    """scipy.stats.linregress(x, y).slope: the biased covariance over the biased variance of x."""
    ssxm, ssxym, _, _ = np.cov(x, y, bias=1).flat
    return float(ssxym / ssxm)


def _floats(values) -> np.ndarray:
    return np.asarray(values if hasattr(values, "__len__") else list(values), dtype=float)


def pair_ratio_ci(a, b, level: float = 0.95) -> tuple[float, float, float]:
    """Geometric mean of the pair ratios a[i] / b[i], with a t interval on the log pair ratios.

    For paired runs (A and B measured next to each other, ABBA order): each pair shares whatever
    drifts slowly (the VM's neighbours, the page cache, thermal state), so the log pair ratio
    removes it and its spread is the noise left between adjacent runs. The t interval (scipy's
    paired t on the logs, n - 1 degrees of freedom, taken back by exp; computed as scipy does by
    :func:`_paired_t_ci`) assumes the pairs are independent and their log ratios roughly normal,
    which a small number of pairs cannot check, but does not assume A and B vary alike. Pairs where
    either value is missing are dropped."""
    a = _floats(a)
    b = _floats(b)
    if len(a) != len(b):
        raise ValueError(f"pairs need as many A as B values ({len(a)} against {len(b)})")
    ok = ~(np.isnan(a) | np.isnan(b))
    a, b = _positive(a[ok]), _positive(b[ok])
    if len(a) == 0:
        return _NAN3
    point = _gmean(a / b)
    if len(a) < 2:
        return point, float("nan"), float("nan")
    low, high = _paired_t_ci(np.log(a), np.log(b), level)
    return point, float(np.exp(low)), float(np.exp(high))


def aligned(ka: np.ndarray, kb: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The positions (in ``ka``, in ``kb``) of the labels both have, in ``ka``'s order: how an inner
    concat of two series indexed by ``ka`` and ``kb`` pairs their rows. None where a label repeats on
    either side (the concat raises there)."""
    la, lb = ka.tolist(), kb.tolist()
    if len(set(la)) != len(la) or len(set(lb)) != len(lb):
        return None
    if la == lb:
        every = np.arange(len(la))
        return every, every
    where = {k: i for i, k in enumerate(lb)}
    ia = [i for i, k in enumerate(la) if k in where]
    return np.asarray(ia, dtype=np.intp), np.asarray([where[la[i]] for i in ia], dtype=np.intp)


def pair_ratio_keyed(ka, a, kb, b, level: float = 0.95) -> tuple[float, float, float, int] | None:
    """:func:`pair_ratio_by` on arrays: the values ``a`` labelled ``ka`` against ``b`` labelled ``kb``
    (numpy arrays); None where a label repeats on either side."""
    pos = aligned(ka, kb)
    if pos is None:
        return None
    va, vb = a[pos[0]], b[pos[1]]
    ok = ~(np.isnan(va) | np.isnan(vb))
    return (*pair_ratio_ci(va[ok], vb[ok], level), int(ok.sum()))


def pair_ratio_by(a: pd.Series, b: pd.Series, level: float = 0.95) -> tuple[float, float, float, int]:
    """:func:`pair_ratio_ci` of two series indexed by what pairs them (the repeat index), over the
    pairs both have; returns (ratio, low, high, pairs). The pairs are those an inner concat of the two
    makes (:func:`aligned`), found without building the frame."""
    keyed = pair_ratio_keyed(a.index.to_numpy(), a.to_numpy(dtype=float, na_value=np.nan),
                             b.index.to_numpy(), b.to_numpy(dtype=float, na_value=np.nan), level)
    if keyed is not None:
        return keyed
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()  # raises, as before
    return (*pair_ratio_ci(both["a"], both["b"], level), len(both))


def unpaired_ratio_ci(a, b, level: float = 0.95) -> tuple[float, float, float]:
    """Ratio of geometric means of a and b with a Welch t interval on the logs.

    For groups that were not measured side by side (two versions measured one after the other):
    nothing pairs them, so each group's own spread enters (scipy's Welch t: unequal variances, the
    Welch-Satterthwaite degrees of freedom; the interval on the logs is taken back by exp)."""
    a, b = _positive([v for v in a if v == v]), _positive([v for v in b if v == v])
    if len(a) == 0 or len(b) == 0:
        return _NAN3
    point = _gmean(a) / _gmean(b)
    if len(a) < 2 or len(b) < 2:
        return point, float("nan"), float("nan")
    la, lb = np.log(a), np.log(b)
    if la.var() == 0 and lb.var() == 0:  # no spread: scipy's degrees of freedom would be 0 / 0
        return (point,) * 3
    low, high = _welch_ci(la, lb, level)
    return point, float(np.exp(low)), float(np.exp(high))


def difference_ci(a, b, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of a minus mean of b with a Welch t interval (unequal variances): how two servers are
    compared, e.g. their per-repeat slopes. NaN bounds below two values on either side."""
    a = np.asarray([v for v in a if v == v], dtype=float)
    b = np.asarray([v for v in b if v == v], dtype=float)
    if len(a) == 0 or len(b) == 0:
        return _NAN3
    point = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return point, float("nan"), float("nan")
    if a.var() == 0 and b.var() == 0:
        return (point,) * 3
    return (point, *_welch_ci(a, b, level))


def _log_gap(long, short) -> tuple[float, list[tuple[float, int]] | None]:
    """The mean log of ``long`` minus that of ``short`` and the variance terms of that difference, each
    with its degrees of freedom: Welch's two where ``long`` has two values or more; with one, the short
    values' spread as for one more of theirs (s^2 (1 + 1 / n), n - 1 degrees of freedom). No terms
    (None) below two short values; NaN where either side has none."""
    a, b = (np.log(_positive([v for v in x if v == v])) for x in (long, short))
    if len(a) == 0 or len(b) == 0:
        return float("nan"), None
    gap = float(a.mean() - b.mean())
    if len(b) < 2:
        return gap, None
    vb = float(b.var(ddof=1))
    if len(a) >= 2:
        return gap, [(float(a.var(ddof=1)) / len(a), len(a) - 1), (vb / len(b), len(b) - 1)]
    return gap, [(vb * (1 + 1 / len(b)), len(b) - 1)]


def longer_over_shorter(long, short, long_den=None, short_den=None,
                        level: float = 0.95) -> tuple[float, float, float]:
    """The run-length check: a measure from longer runs over the same from the page's shorter runs,
    the geometric means' ratio with an interval on the logs that holds both sides' noise.

    ``long`` and ``short``: one value per run (or per pair of runs: pair ratios). With ``long_den``
    and ``short_den``: the measure is a ratio of two unpaired groups (two versions), and the check is
    (long / long_den) over (short / short_den). Each group whose long side has two values or more
    enters as Welch's (unpaired_ratio_ci); one long value is read as one more run of the short ones,
    so its own noise counts: a prediction interval (the short runs' spread times sqrt(1 + 1 / n)),
    not the short runs' interval of their mean. Degrees of freedom by Welch-Satterthwaite over the
    terms. NaN bounds where a short side has fewer than two values."""
    parts = [_log_gap(long, short)] + ([_log_gap(long_den, short_den)] if long_den is not None else [])
    if any(g != g for g, _ in parts):
        return _NAN3
    point = float(np.exp(parts[0][0] - (parts[1][0] if len(parts) > 1 else 0.0)))
    if any(t is None for _, t in parts):
        return point, float("nan"), float("nan")
    terms = [t for _, ts in parts for t in ts]
    var = sum(v for v, _ in terms)
    if var == 0:
        return (point,) * 3
    df = var ** 2 / sum(v ** 2 / k for v, k in terms if v > 0)
    half = float(sp.t.ppf(1 - (1 - level) / 2, df) * np.sqrt(var))
    return point, point * float(np.exp(-half)), point * float(np.exp(half))


def single_runs_spread(cv: float) -> float:
    """How far the ratio of two independent single runs moves on its own (95%, either way), given the
    runs' coefficient of variation: about 1.96 * sqrt(2) * cv."""
    return float(1.96 * np.sqrt(2) * cv)


def excluded_effect(lo: float, hi: float) -> float:
    """The smallest X such that the interval [lo, hi] of a ratio lies within [1 - X, 1 + X]:
    effects larger than X (as a fraction) are excluded by the data."""
    return float(max(1 - lo, hi - 1))


def spread(df: pd.DataFrame, by: list[str], value: str = "qps") -> pd.DataFrame:
    """Per group: repeats, median, min, max and CV of ``value``."""
    g = df.groupby(by)[value]
    out = g.agg(n="count", median="median", min="min", max="max").reset_index()
    out["cv"] = g.apply(cv).values
    return out


def _ols_slope_ci(x: np.ndarray, y: np.ndarray, level: float) -> tuple[float, float, float]:
    """Least-squares slope with its classic regression t interval (scipy's linregress standard
    error, n - 2 degrees of freedom)."""
    fit = sp.linregress(x, y)
    if len(x) < 3:
        return float(fit.slope), float("nan"), float("nan")
    half = sp.t.ppf(1 - (1 - level) / 2, len(x) - 2) * fit.stderr
    return float(fit.slope), float(fit.slope - half), float(fit.slope + half)


def repeat_slopes(x, y, repeat) -> pd.Series:
    """The least-squares slope of y on x in each repeat on its own, indexed by repeat (sorted): the
    values :func:`slope_ci` takes its interval over, kept so that two slopes can be compared by the
    interval of their difference. Missing y are left out; a repeat with fewer than two distinct x
    has no slope."""
    x = np.asarray(list(x), dtype=float)
    y = np.asarray(list(y), dtype=float)
    rep = np.asarray(list(repeat))
    ok = ~np.isnan(y)
    x, y, rep = x[ok], y[ok], rep[ok]
    out = {r: _ols_slope(x[rep == r], y[rep == r]) for r in np.unique(rep)
           if len(np.unique(x[rep == r])) >= 2}
    return pd.Series(out, dtype=float)


def slope_ci(x, y, repeat=None, level: float = 0.95) -> tuple[float, float, float]:
    """Slope of y on x, with an interval over whole repeats.

    With ``repeat`` (the repeat index of each value) and at least two repeats that each span two
    or more x: the least-squares slope of every repeat on its own, their mean, and a t interval
    over those slopes (one value per repeat: a repeat's points share its drift, so they are not
    independent of each other); with ``repeat`` but fewer than two such repeats: the least-squares
    slope over every value with NaN bounds (no interval over repeats). Without ``repeat``: one
    least-squares fit over every value with the regression t interval, which treats each value as
    independent."""
    x = np.asarray(list(x), dtype=float)
    y = np.asarray(list(y), dtype=float)
    ok = ~np.isnan(y)
    rep = None if repeat is None else np.asarray(list(repeat))[ok]
    x, y = x[ok], y[ok]
    if len(np.unique(x)) < 2:
        return _NAN3
    if rep is not None:
        per_repeat = repeat_slopes(x, y, rep).to_numpy()
        if len(per_repeat) >= 2:
            return _mean_ci(per_repeat, level)
        # one repeat (or none) spans two x: its points share its drift, so no interval over repeats
        return _ols_slope(x, y), float("nan"), float("nan")
    return _ols_slope_ci(x, y, level)


@functools.lru_cache(maxsize=4096)
def proportion_ci(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of the share k / n, n > 0 (scipy's binomtest; cached: the
    same counts recur across a page's tables and verdicts)."""
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


@functools.lru_cache(maxsize=256)
def t_quantile(level: float, dof: float) -> float:
    """The two-sided ``level`` quantile of Student's t on ``dof`` degrees of freedom (cached: the same few
    levels and degrees of freedom recur in thousands of intervals)."""
    return float(sp.t.ppf(0.5 + level / 2, dof))


def nested(values, groups) -> dict:
    """Two levels, values (log ratios of windows, say) nested in groups (the instances they ran on): the
    groups (``k``), values (``n``) and values per group (``nbar``), the mean of the group means (``mean``),
    the variance of the group means (``var_means``, NaN with one group) and the pooled variance of the
    values within their groups (``within``, NaN without a group of two)."""
    x = np.asarray(values, dtype=float)
    g = np.asarray(groups)
    keep = ~np.isnan(x)
    x, g = x[keep], g[keep]
    labels = list(dict.fromkeys(g.tolist()))
    parts = [x[g == label] for label in labels]
    means = np.array([p.mean() for p in parts]) if parts else np.array([])
    dof = sum(len(p) - 1 for p in parts)
    within = sum(((p - p.mean()) ** 2).sum() for p in parts) / dof if dof > 0 else float("nan")
    return {"k": len(parts), "n": int(len(x)), "nbar": len(x) / len(parts) if parts else float("nan"),
            "mean": float(means.mean()) if len(means) else float("nan"),
            "var_means": float(means.var(ddof=1)) if len(means) > 1 else float("nan"), "within": within}


def between_variance(parts) -> tuple[float, int]:
    """The variance between groups beyond what the values within them explain, pooled over ``parts``
    (nested() dicts of the same design, an A/A control's, say): the mean over the parts of
    max(0, var_means - within / nbar), and its degrees of freedom (the parts' groups less one, summed);
    (NaN, 0) where no part has two groups."""
    est, dof = [], 0
    for p in parts:
        if p["k"] >= 2 and p["var_means"] == p["var_means"] and p["within"] == p["within"]:
            est.append(max(0.0, p["var_means"] - p["within"] / p["nbar"]))
            dof += p["k"] - 1
    return (float(np.mean(est)), dof) if est else (float("nan"), 0)


def nested_ratio_ci(part: dict, between: float, dof: int, level: float = 0.95) -> tuple[float, float, float]:
    """A ratio from nested() log ratios with its interval at the group level: the standard error of the
    mean of the group means from ``between`` (the variance between groups, between_variance()) and the
    part's own variance within groups, (between + within / nbar) / k, and a t quantile on ``dof`` degrees of
    freedom. Without a pooled ``between`` or with one group, (ratio, NaN, NaN)."""
    r = math.exp(part["mean"]) if part["mean"] == part["mean"] else float("nan")
    if part["k"] < 2 or not dof or between != between or part["within"] != part["within"]:
        return r, float("nan"), float("nan")
    se = math.sqrt((between + part["within"] / part["nbar"]) / part["k"])
    t = t_quantile(level, dof)
    return r, math.exp(part["mean"] - t * se), math.exp(part["mean"] + t * se)


def ratio_of_ratios(a: tuple, b: tuple, level: float = 0.95) -> tuple[float, float, float]:
    """A / B of two ratios measured apart, each given as (ratio, lo, hi, dof) with its t interval on the logs:
    the ratio of the two, its standard error on the logs the two read back from their intervals and added
    in quadrature, and a t quantile on the fewer degrees of freedom (NaN interval where either has none)."""
    def log_se(x) -> float:
        r, lo, hi, dof = x
        if not (lo == lo and hi == hi and dof):
            return float("nan")
        return (math.log(hi) - math.log(lo)) / (2 * t_quantile(level, dof))

    lr = math.log(a[0]) - math.log(b[0])
    dof = min(a[3], b[3])
    half = t_quantile(level, dof) * math.hypot(log_se(a), log_se(b)) if dof else float("nan")
    return math.exp(lr), math.exp(lr - half), math.exp(lr + half)


# --- variance components without truncation before pooling (Kalibera and Jones, ISMM 2013) ------------------

def satterthwaite(terms) -> float:
    """The Welch-Satterthwaite degrees of freedom of a sum of variance terms, each ``(variance, dof)``: the
    sum squared over the sum of each term squared over its degrees of freedom (terms of 0 or without degrees
    of freedom carry no weight); NaN where no term has both."""
    terms = [(float(v), float(d)) for v, d in terms if v == v and v > 0 and d and d == d and d > 0]
    if not terms:
        return float("nan")
    return float(sum(v for v, _ in terms) ** 2 / sum(v * v / d for v, d in terms))


def pooled_between(parts) -> dict:
    """The variance between groups beyond what the values within them explain, by the method of moments pooled
    over ``parts`` (nested() dicts of the same design: an A/A control's parts, say) BEFORE it is truncated at 0:
    each part's var_means - within / nbar, an unbiased estimate of its between-group variance, averaged with
    weights its groups less one (the degrees of freedom of its var_means); only then is a negative average set
    to 0 (truncating each part first, then averaging, biases it upwards). Returns a dict: ``between`` (the
    pooled estimate, truncated), ``raw`` (before the truncation), ``df`` (the Satterthwaite degrees of freedom
    of the raw estimate, a difference of mean squares), ``df_groups`` (the groups less one, summed),
    ``within`` (the parts' within-group variance pooled over their degrees of freedom), ``df_within`` and
    ``parts`` (how many parts had two groups). NaN estimates and 0 degrees of freedom where none had."""
    use = [p for p in parts if p["k"] >= 2 and p["var_means"] == p["var_means"] and p["within"] == p["within"]]
    if not use:
        return {"between": float("nan"), "raw": float("nan"), "df": 0.0, "df_groups": 0, "within": float("nan"),
                "df_within": 0, "parts": 0}
    weights = np.array([p["k"] - 1 for p in use], dtype=float)
    w = weights / weights.sum()
    means = np.array([p["var_means"] for p in use])
    inner = np.array([p["within"] / p["nbar"] for p in use])
    raw = float(np.sum(w * (means - inner)))
    df_inner = np.array([p["n"] - p["k"] for p in use], dtype=float)
    df = satterthwaite([(x, d) for x, d in zip(w * means, weights)]
                       + [(x, d) for x, d in zip(w * inner, df_inner)]) if raw > 0 else float(weights.sum())
    within = float(sum(p["within"] * (p["n"] - p["k"]) for p in use) / df_inner.sum()) if df_inner.sum() else float("nan")
    return {"between": max(0.0, raw), "raw": raw, "df": df, "df_groups": int(weights.sum()), "within": within,
            "df_within": int(df_inner.sum()), "parts": len(use)}


def component_ci(part: dict, between: float, between_df: float, level: float = 0.95) -> tuple[float, float, float, float]:
    """A ratio from nested() log ratios with its interval at the group level, its variance in two components:
    the variance between groups (``between``, pooled elsewhere, with ``between_df`` degrees of freedom) over the
    groups, and the part's own variance within groups over its values (within / n, n - k degrees of freedom);
    a t quantile on their Satterthwaite degrees of freedom. With one value per group (no within variance) the
    variance of its group means over k (k - 1 degrees of freedom): the groups' spread holds both. Returns
    (ratio, low, high, dof); NaN bounds with one group, or without a between-group variance where it is needed."""
    r = math.exp(part["mean"]) if part["mean"] == part["mean"] else float("nan")
    k = part["k"]
    if k < 2:
        return r, float("nan"), float("nan"), float("nan")
    if part["within"] != part["within"] or part["n"] <= k:
        if part["var_means"] != part["var_means"]:
            return r, float("nan"), float("nan"), float("nan")
        var, dof = part["var_means"] / k, float(k - 1)
    else:
        if between != between:
            return r, float("nan"), float("nan"), float("nan")
        terms = [(between / k, between_df), (part["within"] / part["n"], part["n"] - k)]
        var = sum(v for v, _ in terms)
        dof = satterthwaite(terms)
        if dof != dof:  # no spread at all
            return r, r, r, float(part["n"] - k)
    half = t_quantile(level, dof) * math.sqrt(var)
    return r, math.exp(part["mean"] - half), math.exp(part["mean"] + half), float(dof)


def shared_offset(means) -> dict:
    """Tests x groups of group means (rows: tests; columns: the groups every test ran on, e.g. instances), read
    as a two-way layout without replication: the variance of a shared group offset (one per group, common to
    every test) by the method of moments, (MS_groups - MS_residual) / tests truncated at 0 after it is formed,
    with the residual mean square and the degrees of freedom of each (``between``, ``raw``, ``df_groups``,
    ``residual``, ``df_residual``). NaN where fewer than two tests or two groups are complete."""
    m = np.asarray(means, dtype=float)
    m = m[~np.isnan(m).any(axis=1)] if m.ndim == 2 else m.reshape(0, 0)
    t, k = m.shape if m.ndim == 2 else (0, 0)
    if t < 2 or k < 2:
        return {"between": float("nan"), "raw": float("nan"), "df_groups": 0, "residual": float("nan"),
                "df_residual": 0}
    grand = m.mean()
    col = m.mean(axis=0)
    resid = m - m.mean(axis=1, keepdims=True) - col[None, :] + grand
    ms_groups = t * float(np.sum((col - grand) ** 2)) / (k - 1)
    df_res = (t - 1) * (k - 1)
    ms_res = float(np.sum(resid ** 2)) / df_res
    raw = (ms_groups - ms_res) / t
    return {"between": max(0.0, raw), "raw": raw, "df_groups": k - 1, "residual": ms_res, "df_residual": df_res}


def summary_intervals(logs, se_own, dof_own, shared_var: float, shared_df: float, level: float = 0.95,
                      draws: int = 20_000, seed: int = 0) -> dict:
    """The median and the mean of several estimates (log ratios ``logs`` of tests, each with its own standard
    error ``se_own`` on ``dof_own`` degrees of freedom) whose errors are independent but for a shared offset
    (variance ``shared_var`` on ``shared_df`` degrees of freedom, common to all of them: the same instances ran
    every test). The mean's interval: its variance is the shared one plus the own ones over the tests squared, a
    t quantile on their Satterthwaite degrees of freedom. The median's: a parametric bootstrap (``draws`` draws,
    ``seed`` fixed: the same interval every time), each estimate less one shared draw and its own, each a t
    variate scaled to its standard error; the percentiles of the draws' medians. Returns {"median",
    "median_low", "median_high", "mean", "mean_low", "mean_high"} on the log scale."""
    x = np.asarray(logs, dtype=float)
    se = np.asarray(se_own, dtype=float)
    df = np.asarray(dof_own, dtype=float)
    out = {"median": float(np.median(x)), "mean": float(x.mean())}
    nan = float("nan")
    if len(x) == 0 or np.isnan(se).any() or np.isnan(df).any() or shared_var != shared_var:
        return {**out, "median_low": nan, "median_high": nan, "mean_low": nan, "mean_high": nan}
    n = len(x)
    terms = [(shared_var, shared_df)] + [(s * s / n / n, d) for s, d in zip(se, df)]
    var = shared_var + float(np.sum(se * se)) / n / n
    dof = satterthwaite(terms)
    half = t_quantile(level, dof) * math.sqrt(var) if dof == dof else 0.0
    rng = np.random.default_rng(seed)
    shared = (rng.standard_t(shared_df, draws) if shared_df and shared_var > 0 else np.zeros(draws)) * math.sqrt(shared_var)
    own = rng.standard_t(np.maximum(df, 1.0)[None, :], (draws, n)) * se[None, :]
    medians = np.median(x[None, :] - shared[:, None] - own, axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail])
    return {**out, "median_low": float(low), "median_high": float(high), "mean_low": out["mean"] - half,
            "mean_high": out["mean"] + half}
