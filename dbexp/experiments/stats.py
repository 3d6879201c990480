"""Spread and ratios: coefficient of variation, relative QPS, bootstrap confidence intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd


def cv(values) -> float:
    """Coefficient of variation (sample standard deviation / mean) of the values that are numbers."""
    v = np.asarray(list(values), dtype=float)
    v = v[~np.isnan(v)]  # as count, median, min and max in spread() skip a missing value
    if len(v) < 2 or v.mean() == 0:
        return float("nan")
    return float(v.std(ddof=1) / v.mean())


def ratio_ci(a, b, n_boot: int = 10000, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """median(a) / median(b) with a percentile bootstrap interval (a and b resampled independently)."""
    a = np.asarray(list(a), dtype=float)
    b = np.asarray(list(b), dtype=float)
    if len(a) == 0 or len(b) == 0:
        return (float("nan"),) * 3
    point = float(np.median(a) / np.median(b))
    rng = np.random.default_rng(seed)
    ra = np.median(rng.choice(a, size=(n_boot, len(a)), replace=True), axis=1)
    rb = np.median(rng.choice(b, size=(n_boot, len(b)), replace=True), axis=1)
    boots = ra / rb
    lo, hi = np.quantile(boots, [(1 - level) / 2, 1 - (1 - level) / 2])
    return point, float(lo), float(hi)


def spread(df: pd.DataFrame, by: list[str], value: str = "qps") -> pd.DataFrame:
    """Per group: repeats, median, min, max and CV of ``value``."""
    g = df.groupby(by)[value]
    out = g.agg(n="count", median="median", min="min", max="max").reset_index()
    out["cv"] = g.apply(cv).values
    return out


def relative(df: pd.DataFrame, by: list[str], key: str, base, value: str = "qps") -> pd.DataFrame:
    """Median ``value`` of each group divided by the base's (``key`` == ``base``) within ``by``."""
    med = df.groupby(by + [key])[value].median().rename("median").reset_index()
    base_med = med[med[key] == base].set_index(by)["median"].rename("base_median")
    out = med.join(base_med, on=by)
    out["relative"] = out["median"] / out["base_median"]
    return out


def slope_ci(x, y, n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """Least-squares slope of y on x with a bootstrap interval (pairs resampled within each x,
    so every x keeps its repeats)."""
    x = np.asarray(list(x), dtype=float)
    y = np.asarray(list(y), dtype=float)
    ok = ~np.isnan(y)
    x, y = x[ok], y[ok]
    if len(np.unique(x)) < 2:
        return (float("nan"),) * 3
    point = float(np.polyfit(x, y, 1)[0])
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(x == v) for v in np.unique(x)]
    boots = []
    for _ in range(n_boot):
        idx = np.concatenate([rng.choice(g, size=len(g), replace=True) for g in groups])
        boots.append(np.polyfit(x[idx], y[idx], 1)[0])
    lo, hi = np.quantile(boots, [(1 - level) / 2, 1 - (1 - level) / 2])
    return point, float(lo), float(hi)
