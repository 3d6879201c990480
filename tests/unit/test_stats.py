"""dbexp/experiments/stats.py on small inputs whose answers are worked out by hand below."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

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


# --- pair_ratio_ci / unpaired_ratio_ci -----------------------------------------------------
T2 = 4.302652729911275  # Student's t, 97.5th percentile, 2 degrees of freedom (tables: 4.303)
T1 = 12.706204736174707  # ... 1 degree of freedom (tables: 12.706)


def test_pair_ratio_ci_by_hand():
    # log pair ratios 0.01, 0.03, 0.02: mean 0.02, sample sd 0.01, n = 3
    b = [100.0, 200.0, 50.0]
    a = [v * math.exp(d) for v, d in zip(b, [0.01, 0.03, 0.02])]
    point, lo, hi = stats.pair_ratio_ci(a, b)
    half = T2 * 0.01 / math.sqrt(3)
    assert point == pytest.approx(math.exp(0.02), rel=1e-12)
    assert lo == pytest.approx(math.exp(0.02 - half), rel=1e-9)
    assert hi == pytest.approx(math.exp(0.02 + half), rel=1e-9)


def test_pair_ratio_ci_removes_what_the_pairs_share():
    # B drifts from 100 to 200 across the pairs; A is always 10% above its own B: the pair
    # ratios are all 1.1, so the interval has no width, where an unpaired one is wide.
    b = [100.0, 150.0, 200.0, 120.0]
    a = [1.1 * v for v in b]
    assert stats.pair_ratio_ci(a, b) == pytest.approx((1.1, 1.1, 1.1), rel=1e-12)
    point, lo, hi = stats.unpaired_ratio_ci(a, b)
    assert point == pytest.approx(1.1, rel=1e-12)
    assert lo < 0.85 and hi > 1.4


def test_pair_ratio_ci_drops_incomplete_pairs_and_needs_two():
    assert stats.pair_ratio_ci([2.0, float("nan"), 2.0], [1.0, 1.0, 1.0]) == pytest.approx((2.0, 2.0, 2.0))
    point, lo, hi = stats.pair_ratio_ci([3.0], [1.5])
    assert point == pytest.approx(2.0) and math.isnan(lo) and math.isnan(hi)
    assert all_nan(stats.pair_ratio_ci([], []))


def test_pair_ratio_ci_needs_aligned_pairs():
    with pytest.raises(ValueError, match="as many A as B"):
        stats.pair_ratio_ci([1.0, 2.0], [1.0])


def test_pair_ratio_ci_level_nests_intervals():
    a, b = [101.0, 97.0, 104.0, 99.0, 102.0], [100.0, 100.0, 100.0, 100.0, 100.0]
    _, lo90, hi90 = stats.pair_ratio_ci(a, b, level=0.90)
    _, lo99, hi99 = stats.pair_ratio_ci(a, b, level=0.99)
    assert lo99 < lo90 < hi90 < hi99


def test_unpaired_ratio_ci_welch_by_hand():
    # logs of a: 0.1, 0.3 (mean 0.2, variance 0.02); of b: 0.0, 0.2 (mean 0.1, variance 0.02)
    # se = sqrt(0.02/2 + 0.02/2); Welch-Satterthwaite df = 0.02^2 / (0.01^2 + 0.01^2) = 2
    a, b = [math.exp(0.1), math.exp(0.3)], [1.0, math.exp(0.2)]
    point, lo, hi = stats.unpaired_ratio_ci(a, b)
    half = T2 * math.sqrt(0.02)
    assert point == pytest.approx(math.exp(0.1), rel=1e-12)
    assert (lo, hi) == pytest.approx((math.exp(0.1 - half), math.exp(0.1 + half)), rel=1e-9)


T3 = 3.182446305284263  # ... 3 degrees of freedom (tables: 3.182)


def test_pair_ratio_ci_scipy_paired_t_against_a_hand_computation():
    # four pairs with log ratios 0.00, 0.02, 0.04, 0.06: mean 0.03, sample sd sqrt(0.002 / 3)
    b = [200.0, 50.0, 120.0, 80.0]
    a = [v * math.exp(d) for v, d in zip(b, [0.0, 0.02, 0.04, 0.06])]
    half = T3 * math.sqrt(0.002 / 3) / 2
    assert stats.pair_ratio_ci(a, b) == pytest.approx(
        (math.exp(0.03), math.exp(0.03 - half), math.exp(0.03 + half)), rel=1e-12)


def _scipy_pair_ratio_ci(a, b, level):
    """What pair_ratio_ci computed through scipy.stats before it computed the same steps itself."""
    import warnings

    from scipy import stats as sp
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ci = sp.ttest_rel(np.log(a), np.log(b)).confidence_interval(level)
    return float(sp.gmean(a / b)), float(np.exp(ci.low)), float(np.exp(ci.high))


def test_pair_ratio_ci_gives_scipys_floats_exactly():
    # the geometric mean and paired t interval are computed without scipy.stats' wrappers (speed):
    # the same floats, bit for bit, from 2 pairs to 60, spreads from none to wide, several levels
    rng = np.random.default_rng(29)
    for trial in range(2000):
        n = int(rng.integers(2, 61))
        a = np.exp(rng.normal(rng.normal(0, 3), rng.choice([1e-9, 1e-4, 0.01, 0.3, 2.0]), n))
        b = a.copy() if trial % 50 == 0 else np.exp(rng.normal(0, rng.choice([1e-9, 0.01, 0.3]), n))
        level = float(rng.choice([0.95, 0.9, 0.99, 0.5]))
        assert stats.pair_ratio_ci(a, b, level) == _scipy_pair_ratio_ci(a, b, level), (n, level)


def _concat_pair_ratio_by(a, b):
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()
    return (*stats.pair_ratio_ci(both["a"], both["b"]), len(both))


@pytest.mark.parametrize("a, b", [
    (pd.Series([1.0, 2.0, 3.0, 4.0]), pd.Series([1.1, 2.5, 2.9, 4.4])),
    (pd.Series([1.0, np.nan, 3.0, 4.0, 5.0]), pd.Series([1.1, 2.5, 2.9, np.nan, 5.5])),
    (pd.Series([1.0, 2.0, 3.0, 4.0], index=[3, 1, 0, 2]), pd.Series([1.1, 2.5, 2.9, 4.4, 7.0], index=[0, 1, 2, 3, 4])),
    (pd.Series([1.0, 2.0, 3.0], index=[5, 6, 7]), pd.Series([1.1, 2.5], index=[7, 5])),
    (pd.Series([1.0, 2.0], index=[0, 1]), pd.Series([1.1, 2.5], index=[2, 3])),
])
def test_pair_ratio_by_pairs_as_an_inner_concat_does(a, b):
    got, want = stats.pair_ratio_by(a, b), _concat_pair_ratio_by(a, b)
    assert len(got) == len(want) and got[3] == want[3]
    assert all(x == y or (x != x and y != y) for x, y in zip(got, want))


def test_unpaired_ratio_ci_welch_with_fractional_degrees_of_freedom():
    # logs of a: 0.1, 0.2, 0.3, 0.4 (variance 1/60); of b: 0.0, 0.3 (variance 0.045): df is not whole
    from scipy.stats import t
    a, b = [math.exp(v) for v in (0.1, 0.2, 0.3, 0.4)], [1.0, math.exp(0.3)]
    va, vb = (1 / 60) / 4, 0.045 / 2
    df = (va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 1)
    half = t.ppf(0.975, df) * math.sqrt(va + vb)
    assert 1 < df < 2
    assert stats.unpaired_ratio_ci(a, b) == pytest.approx(
        (math.exp(0.1), math.exp(0.1 - half), math.exp(0.1 + half)), rel=1e-12)


def test_mean_ci_by_hand_and_skips_nan():
    # 1, 2, 3, 4: mean 2.5, sample sd sqrt(5 / 3), n = 4
    half = T3 * math.sqrt(5 / 3) / 2
    assert stats.mean_ci([1.0, 2.0, float("nan"), 3.0, 4.0]) == pytest.approx((2.5, 2.5 - half, 2.5 + half))
    assert all_nan(stats.mean_ci([]))
    m, lo, hi = stats.mean_ci([4.0])
    assert m == 4.0 and math.isnan(lo) and math.isnan(hi)


def test_near_constant_ratios_print_no_warning():
    # scipy warns of precision loss on nearly identical values; a chapter's pages would show it
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert stats.pair_ratio_ci([6.6, 7.7, 8.8], [6.0, 7.0, 8.0]) == pytest.approx((1.1,) * 3)
        assert stats.unpaired_ratio_ci([6.0, 6.0, 6.0], [3.0, 3.0, 3.0 + 1e-12])[0] == pytest.approx(2.0)
        assert stats.slope_ci([0, 1, 0, 1], [1, 2, 1, 2], repeat=[0, 0, 1, 1]) == pytest.approx((1.0,) * 3)


def test_unpaired_ratio_ci_constant_groups_and_empty():
    assert stats.unpaired_ratio_ci([6.0, 6.0, 6.0], [3.0, 3.0]) == pytest.approx((2.0, 2.0, 2.0))
    assert all_nan(stats.unpaired_ratio_ci([], [1.0]))


def test_excluded_effect():
    assert stats.excluded_effect(0.98, 1.01) == pytest.approx(0.02)
    assert stats.excluded_effect(0.995, 1.03) == pytest.approx(0.03)


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


# --- slope_ci --------------------------------------------------------------------------------

def test_slope_ci_exact_line():
    x = [0, 1, 2, 0, 1, 2]
    y = [5 + 3 * v for v in x]
    assert stats.slope_ci(x, y, repeat=[0, 0, 0, 1, 1, 1]) == pytest.approx((3.0, 3.0, 3.0))


def test_slope_ci_over_whole_repeats_by_hand():
    # repeat slopes 1.0, 1.2, 1.4: mean 1.2, sample sd 0.2, n = 3
    x = [0, 1, 2] * 3
    y = [0, 1, 2, 0, 1.2, 2.4, 1, 2.4, 3.8]
    point, lo, hi = stats.slope_ci(x, y, repeat=[0] * 3 + [1] * 3 + [2] * 3)
    half = T2 * 0.2 / math.sqrt(3)
    assert point == pytest.approx(1.2)
    assert (lo, hi) == pytest.approx((1.2 - half, 1.2 + half))


def test_slope_ci_repeats_are_the_unit_not_the_points():
    # three repeats whose slopes are 1.0, 1.2 and 1.4 over five x each: read as fifteen independent
    # points the interval is narrower than over the three repeats they came from (a repeat's
    # points share its drift, so fifteen points are not fifteen independent measurements)
    x = [0, 1, 2, 3, 4] * 3
    y = [s * v for s in (1.0, 1.2, 1.4) for v in range(5)]
    _, lo_r, hi_r = stats.slope_ci(x, y, repeat=[r for r in range(3) for _ in range(5)])
    _, lo_p, hi_p = stats.slope_ci(x, y)
    assert (lo_r, hi_r) == pytest.approx((1.2 - T2 * 0.2 / math.sqrt(3), 1.2 + T2 * 0.2 / math.sqrt(3)))
    assert hi_r - lo_r > 2 * (hi_p - lo_p)


def test_slope_ci_regression_interval_by_hand():
    # y = 0, 1, 2.1 at x = 0, 1, 2: slope 1.05, residuals 1/60, -1/30, 1/60, Sxx = 2, df = 1
    point, lo, hi = stats.slope_ci([0, 1, 2], [0, 1, 2.1])
    se = math.sqrt((2 * (1 / 60) ** 2 + (1 / 30) ** 2) / 1 / 2)
    assert point == pytest.approx(1.05)
    assert (lo, hi) == pytest.approx((1.05 - T1 * se, 1.05 + T1 * se))


def test_slope_ci_with_one_repeat_has_no_interval():
    # one repeat's points share its drift: no interval over repeats, never a pooled regression's
    point, lo, hi = stats.slope_ci([0, 1, 2], [0, 1, 2.1], repeat=[0, 0, 0])
    assert point == pytest.approx(1.05) and math.isnan(lo) and math.isnan(hi)
    # two repeats, one of them at a single x: still one usable repeat
    point, lo, hi = stats.slope_ci([0, 1, 2, 1], [0, 1, 2, 5], repeat=[0, 0, 0, 1])
    assert math.isnan(lo) and math.isnan(hi)


@pytest.mark.parametrize("x, y", [([1, 1, 1], [1, 2, 3]), ([], [])], ids=["one x", "empty"])
def test_slope_ci_needs_two_distinct_x(x, y):
    assert all_nan(stats.slope_ci(x, y))


def test_slope_ci_drops_nan_y():
    x = [0, 1, 2, 3]
    y = [1.0, 3.0, float("nan"), 7.0]
    assert stats.slope_ci(x, y)[0] == pytest.approx(2.0)


def test_slope_ci_nan_y_can_leave_too_few_x():
    assert all_nan(stats.slope_ci([0, 1], [1.0, float("nan")]))


def test_spread_cv_skips_a_missing_value_like_the_other_columns():
    import pandas as pd

    df = pd.DataFrame({"g": ["a"] * 3, "qps": [100.0, float("nan"), 120.0]})
    row = stats.spread(df, ["g"]).iloc[0]
    assert row["n"] == 2 and row["median"] == 110.0
    assert abs(row["cv"] - (14.142135623730951 / 110.0)) < 1e-12  # sd of (100, 120) / 110


def test_two_single_runs_move_by_their_cv_times_1_96_sqrt_2():
    # CV 4.4%: two single runs' ratio moves by 1.96 * sqrt(2) * 4.4% = 12.2% either way on its own
    assert stats.single_runs_spread(0.044) == pytest.approx(0.122, abs=5e-4)
    assert math.isnan(stats.single_runs_spread(float("nan")))


def test_a_claimed_number_outside_the_interval_disagrees_with_its_side():
    from dbexp.experiments import verdicts

    # calibration's cpu/o claim: the source's +23% against 1.024 [0.943, 1.112]
    assert verdicts.magnitude(0.943, 1.112, 1.23, 1.23).startswith("disagrees (smaller than claimed")
    assert verdicts.magnitude(1.20, 1.30, 1.23, 1.23) == "agrees"


# --- longer_over_shorter ---------------------------------------------------------------------

def test_one_longer_run_is_read_as_one_more_short_run():
    # three short runs (logs 0, +-d): one long run's interval is the short runs' spread times
    # sqrt(1 + 1 / 3), wider than the short runs' interval of their mean by sqrt(4) = 2
    short = [1.0, math.exp(0.02), math.exp(-0.02)]
    point, lo, hi = stats.longer_over_shorter([1.01], short)
    half = T2 * 0.02 * math.sqrt(1 + 1 / 3)
    assert point == pytest.approx(1.01)
    assert (lo, hi) == pytest.approx((1.01 * math.exp(-half), 1.01 * math.exp(half)))
    mean_half = T2 * 0.02 / math.sqrt(3)
    assert math.log(hi / lo) / 2 == pytest.approx(2 * mean_half)


def test_longer_runs_against_shorter_ones_are_welchs_interval():
    long, short = [1.1, 1.2, 1.15], [1.0, 1.05, 0.98, 1.02]
    assert stats.longer_over_shorter(long, short) == pytest.approx(stats.unpaired_ratio_ci(long, short))


def test_a_ratio_of_two_groups_counts_the_noise_of_each_side():
    # one long run of each version against three short runs of each: both groups' spreads enter
    num, den = [1.0, math.exp(0.02), math.exp(-0.02)], [1.0, math.exp(0.01), math.exp(-0.01)]
    point, lo, hi = stats.longer_over_shorter([1.1], num, [1.0], den)
    assert point == pytest.approx(1.1)
    # logs' variances 0.0004 and 0.0001, each as for one more run (x 4 / 3), Welch-Satterthwaite's df
    from scipy import stats as sp

    v = [0.0004 * 4 / 3, 0.0001 * 4 / 3]
    df = sum(v) ** 2 / sum(x ** 2 / 2 for x in v)
    half = sp.t.ppf(0.975, df) * math.sqrt(sum(v))
    assert (lo, hi) == pytest.approx((1.1 * math.exp(-half), 1.1 * math.exp(half)))


def test_longer_over_shorter_needs_two_short_runs():
    point, lo, hi = stats.longer_over_shorter([1.1], [1.0])
    assert point == pytest.approx(1.1) and math.isnan(lo) and math.isnan(hi)
    assert all_nan(stats.longer_over_shorter([], [1.0, 1.1]))
    with pytest.raises(ValueError):
        stats.longer_over_shorter([0.0], [1.0, 1.1])


def test_difference_of_two_servers_by_welch():
    from scipy import stats as sp

    a, b = [1.9, 2.1, 2.0, 2.2], [1.1, 1.3, 1.2, 1.0]
    d, lo, hi = stats.difference_ci(a, b)
    ci = sp.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert d == pytest.approx(0.9) and (lo, hi) == pytest.approx((ci.low, ci.high))
    assert lo > 0  # resolved: the whole interval of the difference is above 0
    assert all(x != x for x in stats.difference_ci([1.0], [2.0])[1:])


def test_repeat_slopes_are_the_slopes_slope_ci_takes_its_interval_over():
    x = [0, 1, 2, 0, 1, 2, 0, 1]
    y = [0.0, 2.0, 4.0, 1.0, 4.0, 7.0, 5.0, float("nan")]  # repeat 2 keeps one x: no slope
    rep = [0, 0, 0, 1, 1, 1, 2, 2]
    per = stats.repeat_slopes(x, y, rep)
    assert list(per.index) == [0, 1] and list(per) == pytest.approx([2.0, 3.0])
    s, lo, hi = stats.slope_ci(x, y, rep)
    assert s == pytest.approx(per.mean()) and lo < s < hi


def test_t_quantile_is_scipys_two_sided_quantile():
    from scipy import stats as sp
    assert stats.t_quantile(0.95, 7) == pytest.approx(sp.t.ppf(0.975, 7))
    assert stats.t_quantile(0.90, 30) == pytest.approx(sp.t.ppf(0.95, 30))


def _samples(rng, trials):
    """Samples as the chapters' intervals see them: 2 to 60 values, spreads from none to wide."""
    for trial in range(trials):
        n = int(rng.integers(2, 61))
        v = rng.normal(rng.normal(0, 3), rng.choice([0.0, 1e-9, 1e-4, 0.01, 0.3, 2.0]), n)
        yield trial, v, float(rng.choice([0.95, 0.9, 0.99, 0.5]))


def test_mean_ci_gives_scipys_one_sample_floats_exactly():
    rng = np.random.default_rng(32)
    for _, d, level in _samples(rng, 2000):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ci = sp.ttest_1samp(d, 0.0).confidence_interval(level)
        assert stats.mean_ci(d, level) == (float(d.mean()), float(ci.low), float(ci.high)), (len(d), level)


def test_welch_intervals_give_scipys_floats_exactly():
    rng = np.random.default_rng(33)
    for trial, a, level in _samples(rng, 1500):
        b = a.copy() if trial % 40 == 0 else rng.normal(rng.normal(0, 3), rng.choice([0.0, 0.01, 1.0]),
                                                        int(rng.integers(2, 30)))
        if (a.var() == 0 and b.var() == 0) or (np.log(np.exp(a)).var() == 0 and np.log(np.exp(b)).var() == 0):
            continue  # no spread: both functions say so without scipy
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ci = sp.ttest_ind(a, b, equal_var=False).confidence_interval(level)
            ea, eb = np.exp(a), np.exp(b)
            logs = sp.ttest_ind(np.log(ea), np.log(eb), equal_var=False).confidence_interval(level)
        assert stats.difference_ci(a, b, level) == (float(a.mean() - b.mean()), float(ci.low), float(ci.high))
        assert stats.unpaired_ratio_ci(ea, eb, level) == (
            float(sp.gmean(ea) / sp.gmean(eb)), float(np.exp(logs.low)), float(np.exp(logs.high)))


def test_repeat_slopes_are_scipys_least_squares_slopes_exactly():
    rng = np.random.default_rng(34)
    for _ in range(500):
        n = int(rng.integers(2, 12))
        x = np.sort(rng.choice([1, 2, 4, 8, 16, 100, 1000, 10000], n, replace=True)).astype(float)
        if len(np.unique(x)) < 2:
            continue
        y = rng.normal(3, 2) * x + rng.normal(0, rng.choice([0.0, 0.1, 50.0]), n)
        got = stats.repeat_slopes(x, y, [0] * n)
        assert got.iloc[0] == float(sp.linregress(x, y).slope)


# --- variance components (Kalibera and Jones): pooled before truncation, degrees of freedom per level ---------

def test_satterthwaite_of_one_term_is_its_own_and_of_equal_terms_the_sum():
    assert stats.satterthwaite([(0.3, 7)]) == pytest.approx(7)
    assert stats.satterthwaite([(1.0, 4), (1.0, 4)]) == pytest.approx(8)
    assert stats.satterthwaite([(1.0, 4), (0.0, 2)]) == pytest.approx(4)  # a zero term carries no weight
    assert np.isnan(stats.satterthwaite([(0.0, 3)]))


def _part(var_means, within, k=4, n=8):
    return {"k": k, "n": n, "nbar": n / k, "mean": 0.0, "var_means": var_means, "within": within}


def test_pooled_between_averages_before_it_truncates():
    # two parts: one estimate of +0.002, one of -0.004: pooled -0.001, truncated to 0 only then
    parts = [_part(0.002 + 0.01 / 2, 0.01), _part(-0.004 + 0.01 / 2, 0.01)]
    got = stats.pooled_between(parts)
    assert got["raw"] == pytest.approx(-0.001) and got["between"] == 0.0
    assert got["df_groups"] == 6 and got["df_within"] == 8 and got["within"] == pytest.approx(0.01)
    # the old rule truncates first: max(0, .002) and max(0, -.004) average to +0.001, biased up
    assert stats.between_variance(parts)[0] == pytest.approx(0.001)
    pos = stats.pooled_between([_part(0.02, 0.01)])
    assert pos["between"] == pytest.approx(0.015) and 0 < pos["df"] <= 3 + 4
    assert stats.pooled_between([_part(float("nan"), 0.01)])["parts"] == 0


def test_pooled_between_is_unbiased_on_simulated_instances():
    rng = np.random.default_rng(7)
    raws = []
    for _ in range(400):
        parts = []
        for _ in range(10):  # ten A/A pairs of 4 instances x 2 windows, a true between variance of 0.0004
            offsets = rng.normal(0, 0.02, 4)
            x = np.repeat(offsets, 2) + rng.normal(0, 0.05, 8)
            parts.append(stats.nested(x, np.repeat(np.arange(4), 2)))
        raws.append(stats.pooled_between(parts)["raw"])
    assert np.mean(raws) == pytest.approx(0.0004, abs=0.0001)


def test_component_ci_adds_the_two_terms_on_their_satterthwaite_degrees_of_freedom():
    p = {"k": 4, "n": 8, "nbar": 2.0, "mean": 0.1, "var_means": 0.002, "within": 0.004}
    r, lo, hi, dof = stats.component_ci(p, 0.0008, 20.0)
    var = 0.0008 / 4 + 0.004 / 8
    want = stats.satterthwaite([(0.0008 / 4, 20.0), (0.004 / 8, 4)])
    assert dof == pytest.approx(want) and r == pytest.approx(np.exp(0.1))
    half = stats.t_quantile(0.95, want) * np.sqrt(var)
    assert (lo, hi) == pytest.approx((np.exp(0.1 - half), np.exp(0.1 + half)))
    # no variance between instances: the within term alone, its own n - k degrees of freedom
    assert stats.component_ci(p, 0.0, 20.0)[3] == pytest.approx(4)
    # one window per instance: the instances' own spread, k - 1 degrees of freedom
    one = {"k": 4, "n": 4, "nbar": 1.0, "mean": 0.0, "var_means": 0.004, "within": float("nan")}
    r, lo, hi, dof = stats.component_ci(one, float("nan"), 0)
    assert dof == 3 and hi == pytest.approx(np.exp(stats.t_quantile(0.95, 3) * np.sqrt(0.001)))
    assert np.isnan(stats.component_ci({**one, "k": 1}, 0.0, 3)[1])


def test_shared_offset_of_a_two_way_layout():
    rng = np.random.default_rng(3)
    offsets = np.array([0.05, -0.05, 0.02, -0.02])
    means = np.array([[t + o for o in offsets] for t in (0.1, -0.2, 0.3)]) + rng.normal(0, 1e-4, (3, 4))
    got = stats.shared_offset(means)
    assert got["between"] == pytest.approx(np.var(offsets, ddof=1), rel=0.05)
    assert got["df_groups"] == 3 and got["df_residual"] == 6
    assert np.isnan(stats.shared_offset(means[:1])["between"])  # one test: nothing to separate


def test_summary_intervals_of_one_test_are_its_own_and_a_shared_offset_does_not_average_out():
    one = stats.summary_intervals([0.1], [0.02], [10], 0.0, 0.0)
    half = stats.t_quantile(0.95, 10) * 0.02
    assert (one["mean_low"], one["mean_high"]) == pytest.approx((0.1 - half, 0.1 + half))
    assert one["median_low"] == pytest.approx(0.1 - half, abs=0.003)
    many = stats.summary_intervals([0.1] * 9, [0.02] * 9, [10] * 9, 0.0, 0.0)
    shared = stats.summary_intervals([0.1] * 9, [0.0] * 9, [10] * 9, 0.02 ** 2, 10)
    assert many["mean_high"] - many["mean"] < (one["mean_high"] - one["mean"]) / 2.5  # independent errors average
    assert shared["mean_high"] - shared["mean"] == pytest.approx(half)  # a shared one does not
    again = stats.summary_intervals([0.1] * 9, [0.02] * 9, [10] * 9, 0.0, 0.0)
    assert again == many  # a fixed seed: the same interval every time
