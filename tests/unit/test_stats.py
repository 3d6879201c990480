"""dbexp/experiments/stats.py on small inputs whose answers are worked out by hand below."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dbexp.experiments import stats


def all_nan(values) -> bool:
    return len(values) == 3 and all(isinstance(v, float) and math.isnan(v) for v in values)


# --- cv -------------------------------------------------------------------------------------

@pytest.mark.parametrize("values, expected", [
    ([1, 2, 3], 0.5),                              # mean 2, sample sd 1
    ([4, 6], math.sqrt(2) / 5),                    # mean 5, sample sd sqrt((1 + 1) / 1)
    ([2, 4, 4, 4, 5, 5, 7, 9], math.sqrt(32 / 7) / 5),  # mean 5, squared deviations sum to 32
    ([10, 10, 10], 0.0),
    ([100.0, 110.0, 120.0], 10 / 110),
])
def test_cv_known_values(values, expected):
    assert stats.cv(values) == pytest.approx(expected, rel=1e-12)


def test_cv_takes_any_iterable():
    assert stats.cv(v for v in [1, 2, 3]) == pytest.approx(0.5)
    assert stats.cv(np.array([1, 2, 3])) == pytest.approx(0.5)
    assert stats.cv(pd.Series([1, 2, 3])) == pytest.approx(0.5)


@pytest.mark.parametrize("values", [[], [7.0], [-1, 1]], ids=["empty", "one value", "mean zero"])
def test_cv_undefined_is_nan(values):
    assert math.isnan(stats.cv(values))


# --- ratio_ci --------------------------------------------------------------------------------

def test_ratio_ci_identical_samples():
    a = [100.0, 101.0, 103.0, 104.0, 110.0]
    point, lo, hi = stats.ratio_ci(a, list(a))
    assert point == 1.0
    assert lo <= 1.0 <= hi


def test_ratio_ci_a_twice_b():
    b = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]  # median 13
    a = [2 * v for v in b]  # median 26
    point, lo, hi = stats.ratio_ci(a, b)
    assert point == 2.0
    assert lo <= 2.0 <= hi
    assert lo < hi  # the samples vary, so the interval has a width
    # No resample can leave [min(a)/max(b), max(a)/min(b)] = [20/16, 32/10].
    assert 20 / 16 <= lo and hi <= 32 / 10


def test_ratio_ci_constant_samples_have_no_width():
    assert stats.ratio_ci([6.0, 6.0, 6.0], [3.0, 3.0]) == (2.0, 2.0, 2.0)


def test_ratio_ci_is_a_ratio_of_medians():
    # median(a) = (2 + 3) / 2 = 2.5 (the mean would be 26.5), median(b) = 5
    point, _, _ = stats.ratio_ci([1.0, 2.0, 3.0, 100.0], [5.0, 5.0, 5.0])
    assert point == 0.5


def test_ratio_ci_deterministic_for_a_seed():
    a = [31.0, 35.0, 29.0, 40.0, 33.0, 38.0]
    b = [20.0, 22.0, 19.0, 25.0, 21.0]
    assert stats.ratio_ci(a, b, seed=7) == stats.ratio_ci(a, b, seed=7)
    # ... and the seed is what drives the resampling.
    assert len({stats.ratio_ci(a, b, n_boot=500, seed=s) for s in range(5)}) > 1


def test_ratio_ci_level_nests_intervals():
    a = [31.0, 35.0, 29.0, 40.0, 33.0, 38.0]
    b = [20.0, 22.0, 19.0, 25.0, 21.0]
    _, lo95, hi95 = stats.ratio_ci(a, b, level=0.95, seed=3)
    _, lo50, hi50 = stats.ratio_ci(a, b, level=0.50, seed=3)
    assert lo95 <= lo50 <= hi50 <= hi95


@pytest.mark.parametrize("a, b", [([], [1.0, 2.0]), ([1.0, 2.0], []), ([], [])])
def test_ratio_ci_empty_is_nan(a, b):
    assert all_nan(stats.ratio_ci(a, b))


# --- spread ----------------------------------------------------------------------------------

def test_spread_one_key():
    df = pd.DataFrame({"server": ["b", "a", "c", "a", "b", "a"],
                       "qps": [70.0, 120.0, 80.0, 100.0, 50.0, 110.0]})
    out = stats.spread(df, ["server"])
    assert list(out.columns) == ["server", "n", "median", "min", "max", "cv"]
    assert list(out["server"]) == ["a", "b", "c"]
    assert list(out["n"]) == [3, 2, 1]
    assert list(out["median"]) == [110.0, 60.0, 80.0]
    assert list(out["min"]) == [100.0, 50.0, 80.0]
    assert list(out["max"]) == [120.0, 70.0, 80.0]
    # a: mean 110, sd 10; b: mean 60, sd sqrt(10**2 + 10**2); c: one repeat, no CV
    assert out["cv"].iloc[0] == pytest.approx(10 / 110)
    assert out["cv"].iloc[1] == pytest.approx(math.sqrt(200) / 60)
    assert math.isnan(out["cv"].iloc[2])


def test_spread_two_keys_and_another_value_column():
    df = pd.DataFrame({"server": ["a", "a", "a", "a", "b", "b"],
                       "threads": [2, 1, 2, 1, 1, 1],
                       "tps": [40.0, 10.0, 20.0, 30.0, 5.0, 5.0]})
    out = stats.spread(df, ["server", "threads"], value="tps")
    rows = {(r.server, r.threads): (r.n, r.median, r.min, r.max, r.cv) for r in out.itertuples()}
    assert rows.keys() == {("a", 1), ("a", 2), ("b", 1)}
    assert rows[("a", 1)][:4] == (2, 20.0, 10.0, 30.0)
    assert rows[("a", 1)][4] == pytest.approx(math.sqrt(200) / 20)
    assert rows[("a", 2)][:4] == (2, 30.0, 20.0, 40.0)
    assert rows[("a", 2)][4] == pytest.approx(math.sqrt(200) / 30)
    assert rows[("b", 1)] == (2, 5.0, 5.0, 5.0, 0.0)


# --- relative --------------------------------------------------------------------------------

def test_relative_to_a_base_within_groups():
    df = pd.DataFrame({
        "threads": [1, 1, 1, 1, 1, 1, 2, 2, 4],
        "server": ["a", "a", "a", "b", "b", "b", "a", "b", "b"],
        "qps": [100.0, 120.0, 110.0, 55.0, 50.0, 60.0, 200.0, 300.0, 10.0],
    })
    out = stats.relative(df, ["threads"], key="server", base="a")
    assert list(out.columns) == ["threads", "server", "median", "base_median", "relative"]
    got = {(r.threads, r.server): (r.median, r.base_median, r.relative) for r in out.itertuples()}
    assert got[(1, "a")] == (110.0, 110.0, 1.0)
    assert got[(1, "b")] == (55.0, 110.0, 0.5)
    assert got[(2, "a")] == (200.0, 200.0, 1.0)
    assert got[(2, "b")] == (300.0, 200.0, 1.5)
    # threads=4 has no base run: nothing to divide by
    median, base_median, rel = got[(4, "b")]
    assert median == 10.0 and math.isnan(base_median) and math.isnan(rel)
    assert len(out) == 5


# --- slope_ci --------------------------------------------------------------------------------

def test_slope_ci_exact_line():
    x = [1, 1, 2, 2, 3, 3, 4, 4]
    y = [3 * v + 1 for v in x]
    point, lo, hi = stats.slope_ci(x, y)
    assert point == pytest.approx(3.0, abs=1e-9)
    assert lo == pytest.approx(3.0, abs=1e-9)
    assert hi == pytest.approx(3.0, abs=1e-9)


def test_slope_ci_one_point_per_x_has_no_width():
    # Least squares through (0, 0), (1, 1), (2, 1): sum((x-1)(y-2/3)) / sum((x-1)**2) = 1 / 2.
    # Resampling happens within each x, so with one point per x every resample is the data.
    point, lo, hi = stats.slope_ci([0, 1, 2], [0, 1, 1])
    assert (point, lo, hi) == pytest.approx((0.5, 0.5, 0.5), abs=1e-12)


def test_slope_ci_bootstrap_interval_by_hand():
    # Two repeats at each of x = 0 (y: 0, 2) and x = 1 (y: 1, 3). With equal repeats the slope is
    # mean(y | x=1) - mean(y | x=0) = 2 - 1 = 1. A resampled mean at x=0 is 0, 1 or 2 (prob 1/4,
    # 1/2, 1/4), at x=1 1, 2 or 3, so a resampled slope lies in [-1, 3] and takes each end with
    # probability 1/16 = 6.25% > 2.5%: the 95% interval is exactly [-1, 3].
    point, lo, hi = stats.slope_ci([0, 0, 1, 1], [0, 2, 1, 3])
    assert point == pytest.approx(1.0, abs=1e-12)
    assert lo == pytest.approx(-1.0, abs=1e-12)
    assert hi == pytest.approx(3.0, abs=1e-12)


@pytest.mark.parametrize("x, y", [([2, 2, 2], [1.0, 2.0, 3.0]), ([5], [1.0]), ([], [])],
                         ids=["one distinct x", "one point", "empty"])
def test_slope_ci_needs_two_distinct_x(x, y):
    assert all_nan(stats.slope_ci(x, y))


def test_slope_ci_drops_nan_y():
    x = [1, 2, 3, 4, 5, 5]
    y = [4.0, 7.0, 10.0, 13.0, math.nan, 16.0]
    point, lo, hi = stats.slope_ci(x, y)
    assert (point, lo, hi) == pytest.approx((3.0, 3.0, 3.0), abs=1e-9)


def test_slope_ci_nan_y_can_leave_too_few_x():
    assert all_nan(stats.slope_ci([1, 2, 2], [math.nan, 5.0, 6.0]))


def test_slope_ci_deterministic_for_a_seed():
    x = [1, 1, 1, 2, 2, 2, 4, 4, 4]
    y = [10.0, 12.0, 11.0, 19.0, 22.0, 20.0, 41.0, 39.0, 44.0]
    assert stats.slope_ci(x, y, n_boot=300, seed=1) == stats.slope_ci(x, y, n_boot=300, seed=1)


def test_spread_cv_skips_a_missing_value_like_the_other_columns():
    import pandas as pd

    df = pd.DataFrame({"g": ["a"] * 3, "qps": [100.0, float("nan"), 120.0]})
    row = stats.spread(df, ["g"]).iloc[0]
    assert row["n"] == 2 and row["median"] == 110.0
    assert abs(row["cv"] - (14.142135623730951 / 110.0)) < 1e-12  # sd of (100, 120) / 110
