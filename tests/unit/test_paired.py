"""The comparison core (dbexp.experiments.paired) on small made-up windows: ratios paired by window,
the resolution, the A/A control, the run-length check and the windows as measured."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dbexp.experiments import paired

def _windows(drifts=(1.0, 0.8, 1.2), ratio=0.9):
    rows = []
    for rep, d in enumerate(drifts):  # a drift that moves both servers of a window
        rows += [{"config": "A", "repeat": rep, "qps_common": ratio * 1000 * d, "cpu": 50.0},
                 {"config": "B", "repeat": rep, "qps_common": 1000 * d, "cpu": np.nan}]
    return pd.DataFrame(rows)


def test_ratio_rows_pair_by_window_and_skip_values_a_side_lacks():
    rows = paired.ratio_rows(_windows(), "A", "B", {"qps_common": "QPS", "cpu": "cpu/o"}, by="config")
    assert [r["value"] for r in rows] == ["QPS"]  # B has no cpu: no ratio of it
    r = rows[0]
    assert r["ratio"] == pytest.approx(0.9) and r["ci_low"] == pytest.approx(0.9) and r["pairs"] == 3
    assert r["half_width"] == pytest.approx(0.0, abs=1e-9)
    assert list(paired.window_ratios(_windows(), "A", "B")) == pytest.approx([0.9] * 3)
    assert paired.ratio_rows(_windows(), "A", "C", {"qps_common": "QPS"}, by="config") == []


def test_half_width_resolution_and_control():
    assert paired.half_width(1.0, 0.9, 1.1) == pytest.approx(0.1)
    assert np.isnan(paired.half_width(float("nan"), 0.9, 1.1))
    r = pd.DataFrame({"ratio": [1.0, 0.97, 1.04], "ci_low": [0.99, 0.95, 1.01], "ci_high": [1.01, 0.99, 1.07],
                      "half_width": [0.01, 0.02, 0.03]})
    assert paired.resolution(r, 0.02) == {"median": 0.02, "max": 0.03, "within": 2, "n": 3}
    assert paired.resolution(r.iloc[:0], 0.02)["n"] == 0
    c = paired.control(r)
    assert c["n"] == 3 and c["holding_1"] == 1 and c["max_off"] == pytest.approx(0.04)
    assert paired.control(r.iloc[:0]) == {"n": 0}


def test_length_ratio_is_long_over_short_with_an_interval_that_holds_its_point():
    short = pd.Series([0.90, 0.92, 0.88, 0.91])
    long = pd.Series([0.95, 0.97, 0.96])
    got = paired.length_ratio(long, short)
    assert got["ratio"] == pytest.approx(got["long"] / got["short"])
    assert got["ci_low"] < got["ratio"] < got["ci_high"] and got["ci_low"] > 1  # longer windows moved it
    assert (got["windows_short"], got["windows_long"]) == (4, 3)


def test_window_numbers_count_windows_per_point():
    w = pd.DataFrame({"config": ["A", "B"] * 3, "threads": [1] * 6, "common_s": [2.5] * 6,
                      "workload": [{"duration_s": 3, "table_size": 1000}] * 6})
    got = paired.window_numbers(paired.with_duration(w), ["config"])
    assert got == {"n": 6, "duration_s": 3.0, "common_s": 2.5, "repeats": 3, "threads": [1], "table_size": 1000}
    assert paired.window_numbers(w.iloc[:0], ["config"]) == {"n": 0}


def _old_window_ratios(g, a, b, value, by):
    ga, gb = (g[g[by] == s].set_index("repeat")[value] for s in (a, b))
    return (ga / gb).dropna()


def _old_ratio_rows(g, a, b, values, by):
    from dbexp.experiments import stats
    ga, gb = (g[g[by] == s].set_index("repeat") for s in (a, b))
    if ga.empty or gb.empty:
        return []
    rows = []
    for value, label in values.items():
        if value not in g or ga[value].isna().all() or gb[value].isna().all():
            continue
        both = pd.concat([ga[value].rename("a"), gb[value].rename("b")], axis=1, join="inner").dropna()
        r, lo, hi = stats.pair_ratio_ci(both["a"], both["b"])
        rows.append({"value": label, "ratio": r, "ci_low": lo, "ci_high": hi, "pairs": len(both),
                     "half_width": paired.half_width(r, lo, hi)})
    return rows


@pytest.mark.parametrize("repeat_dtype", ["int32", "int64", "uint8"])
@pytest.mark.parametrize("b_repeats", [[0, 1, 2, 3], [3, 0, 2], [0, 1, 2, 3, 4]])
def test_window_ratios_and_ratio_rows_as_masks_and_set_index_gave_them(repeat_dtype, b_repeats):
    # the positions and arrays that replaced g[g[by] == a].set_index("repeat") (speed) give the same
    # series (values, index and its dtype, name) and the same rows, NaN windows and missing repeats included
    g = pd.DataFrame({
        "config": ["A"] * 4 + ["B"] * len(b_repeats) + ["C"] * 2,
        "repeat": np.array([0, 1, 2, 3] + b_repeats + [0, 1], dtype=repeat_dtype),
        "qps": [100.0, 110.0, np.nan, 90.0] + [95.0 + i for i in range(len(b_repeats))] + [1.0, 2.0],
        "cpu": [np.nan] * 4 + [1.0] * len(b_repeats) + [1.0, 1.0],
    })
    values = {"qps": "QPS", "cpu": "cpu/o", "absent": "x"}
    for a, b in [("A", "B"), ("B", "A"), ("A", "C"), ("A", "D")]:
        for value in ("qps", "cpu"):
            got, want = paired.window_ratios(g, a, b, value), _old_window_ratios(g, a, b, value, "config")
            pd.testing.assert_series_equal(got, want)
            assert got.index.dtype == want.index.dtype
        assert paired.ratio_rows(g, a, b, values, by="config") == _old_ratio_rows(g, a, b, values, "config")


def test_nested_splits_windows_by_instance_and_the_interval_widens_with_the_variance_between_them():
    import math

    from dbexp.experiments import stats

    logs = [0.10, 0.12, 0.11, -0.02, 0.00, -0.01]  # two instances that land 12% apart
    part = stats.nested(logs, [0, 0, 0, 1, 1, 1])
    assert part["k"] == 2 and part["n"] == 6 and part["nbar"] == 3
    assert math.isclose(part["mean"], (0.11 + -0.01) / 2)
    assert math.isclose(part["within"], 0.0001)
    between, dof = stats.between_variance([part])
    assert dof == 1 and between > 0.005
    r, lo, hi = stats.nested_ratio_ci(part, between, dof)
    assert lo < 1 < hi  # the two instances' offset is in the interval, not hidden by the windows' agreement
    # no variance between instances beyond the windows': the interval is the windows' own, over two groups
    _, lo0, hi0 = stats.nested_ratio_ci(part, 0.0, 10)
    assert lo < lo0 < hi0 < hi
    # one instance: no interval at that level
    assert math.isnan(stats.nested_ratio_ci(stats.nested(logs[:3], [0, 0, 0]), between, dof)[1])


def test_a_ratio_of_two_ratios_measured_apart_adds_their_log_errors():
    import math

    from dbexp.experiments import stats
    from scipy.stats import t

    half = t.ppf(0.975, 5) * 0.05  # each ratio's log standard error 0.05, 5 degrees of freedom
    a = (1.2, 1.2 * math.exp(-half), 1.2 * math.exp(half), 5)
    b = (1.0, math.exp(-half), math.exp(half), 5)
    r, lo, hi = stats.ratio_of_ratios(a, b)
    assert math.isclose(r, 1.2) and math.isclose(math.log(hi / r), half * math.sqrt(2))
    assert math.isnan(stats.ratio_of_ratios(a, (1.0, float("nan"), float("nan"), 0))[1])


def test_nested_ratios_take_the_interval_at_the_instance_level_pooled_over_the_controls():
    """Two tests, each with A, B and an A/A twin of B in four windows on two instances: the comparisons'
    intervals pool the variance between instances from the twins, and with one instance they fall back to
    the windows' paired interval."""
    rng = np.random.default_rng(7)
    rows = []
    for test in ("t1", "t2"):
        for repeat in range(4):
            inst = repeat % 2
            offset = 1.06 if inst else 0.94  # an instance's offset, the same for every server of it
            for server, level in (("A", 0.8), ("B", 1.0), ("B twin", 1.0)):
                rows.append({"test": test, "server": server, "repeat": repeat, "instance": inst,
                             "qps": 1000 * level * (offset if server != "B" else 1.0) * rng.normal(1, 0.005)})
    w = pd.DataFrame(rows)
    comps = lambda g: [("A", "B", "vs"), ("B twin", "B", "A/A")]  # noqa: E731
    r = paired.nested_ratios(w, ["test"], comps, {"qps": "QPS"}, by="server", control="A/A", pool_by=[])
    assert set(r["instances"]) == {2} and set(r["pairs"]) == {4} and (r["dof"] == 2).all()
    vs = r[r["comparison"] == "vs"]
    assert ((vs["ci_low"] < 0.8) & (vs["ci_high"] > 0.8)).all()
    one = paired.nested_ratios(w[w["instance"] == 0], ["test"], comps, {"qps": "QPS"}, by="server",
                               control="A/A", pool_by=[])
    assert set(one["instances"]) == {1} and (one["dof"] == 1).all()
    assert (one["half_width"] < r.set_index(["test", "comparison"]).loc[
        list(zip(one["test"], one["comparison"])), "half_width"].to_numpy()).all()


def _aa_windows(seed=0, tests=6, k=4, n=2, between=0.0, within=0.03, effect=0.9):
    """An A/A twin and a version B against a base A, in windows nested in k instances."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(tests):
        for i in range(k):
            offset = {"A (twin)": rng.normal(0, np.sqrt(between)), "B": rng.normal(0, np.sqrt(between))}
            for j in range(n):
                rep = i * n + j
                drift = rng.normal(0, 0.2)
                rows.append({"test": f"t{t}", "server": "A", "repeat": rep, "instance": i, "qps": np.exp(drift)})
                for name, r in (("A (twin)", 1.0), ("B", effect)):
                    rows.append({"test": f"t{t}", "server": name, "repeat": rep, "instance": i,
                                 "qps": r * np.exp(drift + offset[name] + rng.normal(0, within))})
    return pd.DataFrame(rows)


def test_component_ratios_judge_each_a_a_control_on_the_other_halfs_fit():
    w = _aa_windows()
    comps = lambda g: [("B", "A", "base"), ("A (twin)", "A", "A/A")]  # noqa: E731
    r = paired.component_ratios(w, ["test"], comps, {"qps": "QPS"}, by="server", control="A/A", pool_by=[],
                                held_out_by="test")
    held = r[r["held_out"]]
    assert set(held["comparison"]) == {"A/A"} and len(held) == 6  # every control once more, held out
    assert len(r[~r["held_out"]]) == 12  # every comparison once, fitted on every control
    assert paired.halves([f"t{t}" for t in range(6)]) == {"t0": 0, "t1": 1, "t2": 0, "t3": 1, "t4": 0, "t5": 1}
    b = r[(r["comparison"] == "base") & ~r["held_out"]]
    assert b["ratio"].between(0.85, 0.95).all() and (b["instances"] == 4).all() and (b["pairs"] == 8).all()
    assert (b["ci_low"] < 0.9).mean() >= 0.5 and (b["ci_high"] > 0.9).all()
    # the held-out fit of t0 is the other half's: t1, t3, t5
    odd = paired.component_ratios(w[w["test"].isin(["t1", "t3", "t5"])], ["test"], comps, {"qps": "QPS"},
                                  by="server", control="A/A", pool_by=[])
    t0 = held[held["test"] == "t0"].iloc[0]
    assert t0["between"] == pytest.approx(odd[odd["comparison"] == "A/A"]["between"].iloc[0])


def test_component_ratios_cover_1_on_simulated_a_a_pairs_nine_times_in_ten():
    covered, n = 0, 0
    for seed in range(30):
        r = paired.component_ratios(_aa_windows(seed, tests=8, between=0.0004), ["test"],
                                    lambda g: [("A (twin)", "A", "A/A")], {"qps": "QPS"}, by="server",
                                    control="A/A", pool_by=[], held_out_by="test")
        h = r[r["held_out"]]
        covered += int(((h["ci_low"] <= 1) & (h["ci_high"] >= 1)).sum())
        n += len(h)
    assert covered / n >= 0.9
