"""The verdict rules give known answers on known intervals and ratios."""

from __future__ import annotations

import pandas as pd
import pytest

from dbexp.experiments import verdicts


@pytest.mark.parametrize("lo,hi,expect,ref,want", [
    (1.1, 1.3, "above", 1.0, "agrees"), (0.7, 0.9, "above", 1.0, "disagrees"),
    (0.9, 1.1, "above", 1.0, "not resolved (the interval spans 1)"),
    (-3.0, -1.0, "below", 0.0, "agrees"), (2.0, 5.0, "above", 0.0, "agrees"),
    (0.97, 1.04, "near", 1.0, "agrees"), (0.80, 0.90, "near", 1.0, "disagrees"),
    (0.90, 1.02, "near", 1.0, "not resolved (the interval reaches beyond 1 +- 5%)"),
    (float("nan"), 1.0, "above", 1.0, "not measured at this scale"),
])
def test_interval_verdicts(lo, hi, expect, ref, want):
    assert verdicts.interval(lo, hi, expect, ref) == want


def test_ratio_verdicts_and_combination():
    assert verdicts.ratio(2.0, "above") == "agrees"
    assert verdicts.ratio(0.5, "above") == "disagrees"
    assert verdicts.ratio(1.2, "below") == "not resolved (within 1.5x)"
    assert verdicts.combine(["agrees", "agrees", "not resolved (x)"]) == "agrees in 2 of 3 / not resolved (x) in 1 of 3"
    assert verdicts.combine(["agrees", "agrees"]) == "agrees"
    assert verdicts.combine([]) == "not measured at this scale"
    with pytest.raises(ValueError):
        verdicts.interval(0, 1, "sideways")


@pytest.mark.parametrize("lo,hi,low,high,ref,want", [
    (0.86, 0.93, 0.85, 0.95, 1.0, "agrees"),
    (0.96, 0.99, 0.85, 0.95, 1.0, "agrees in direction, smaller"),
    (0.70, 0.80, 0.85, 0.95, 1.0, "agrees in direction, larger"),
    (1.01, 1.05, 0.85, 0.95, 1.0, "disagrees"),
    (1.30, 1.40, 1.10, 1.23, 1.0, "agrees in direction, larger"),
    (0.10, 0.30, 0.50, 0.50, 0.0, "agrees in direction, smaller"),
])
def test_magnitude_verdicts(lo, hi, low, high, ref, want):
    assert verdicts.magnitude(lo, hi, low, high, ref) == want


def test_not_resolved_says_what_would_resolve_it():
    # half-width 0.06, effect 0.02: (0.06 / 0.02)^2 = 9 times the repeats
    got = verdicts.magnitude(0.92, 1.04, 0.85, 0.95, point=0.98, n=4)
    assert got == ("not resolved (the interval spans 1; about 9.0x the repeats (36 instead of 4) would resolve "
                   "an effect of the measured size)")
    assert verdicts.not_testable("GTID persistence needs 8.0.17+; this lab runs 8.0.15") == \
        "not testable here (GTID persistence needs 8.0.17+; this lab runs 8.0.15)"


def test_claims_table_shape():
    held = verdicts.witness(True, "3.0 buffers per lookup: an index probe")
    t = verdicts.table([verdicts.ClaimRow("c", "s", "h", "m", "agrees", ("an-id", "another"), held)])
    assert list(t.columns) == list(verdicts.COLUMNS + verdicts.KEYS) and t.iloc[0]["verdict"] == "agrees"
    assert t.iloc[0]["id"] == "an-id, another" and t.iloc[0]["witness"] == held.what and t.iloc[0]["witness_ok"]
    rows = verdicts.by_id(t)
    assert list(rows["id"]) == ["an-id", "another"] and list(rows.columns) == [
        "id", "claim", "measured", "witness", "witness_ok", "verdict"]
    with pytest.raises(ValueError, match="tuple of ledger ids"):
        verdicts.table([verdicts.ClaimRow("c", "s", "h", "m", "agrees", "an-id", held)])


def test_a_verdict_stands_only_where_its_witness_held():
    failed = verdicts.witness(False, "1.00 buffers per lookup: one read of the whole table, no index probe")
    t = verdicts.table([verdicts.ClaimRow("c", "s", "h", "m", "agrees", ("a",), failed),
                        verdicts.ClaimRow("c", "s", "h", "m", "disagrees (why)", ("b",), None),
                        verdicts.ClaimRow("c", "s", "h", "m", "not resolved (spans 1)", ("c",), failed),
                        verdicts.ClaimRow("c", "s", "h", "m", "agrees in direction, smaller", ("d",),
                                          verdicts.witness(True, "seen"))])
    assert t["verdict"][0] == f"not measured here (witness failed: {failed.what})"
    assert t["verdict"][1].startswith("not measured here (no witness")
    assert t["verdict"][2] == "not resolved (spans 1)" and t["verdict"][3] == "agrees in direction, smaller"
    assert [verdicts.category(v) for v in t["verdict"]] == [
        "not measured", "not measured", "not resolved", "agrees in direction"]
    both = verdicts.witnesses({"pg 17": verdicts.witness(True, "probe"), "pg 18": failed})
    assert both.ok and both.what == f"pg 17: probe; pg 18: {failed.what}"
    assert verdicts.witnesses([]) is None and not verdicts.witnesses([failed]).ok


def test_a_verdicts_category_is_its_words_outside_parentheses():
    assert verdicts.category("agrees, under other conditions (one CPU (of 2))") == "agrees"
    assert verdicts.category("not measured here (witness failed: agrees)") == "not measured"
    assert verdicts.category("agrees in 2 of 3 / not resolved (spans 1) in 1 of 3") == "agrees / not resolved"
    assert verdicts.category("disagrees (smaller than claimed)") == "disagrees"
    assert verdicts.category("not testable here (ARM)") == "not testable here"


def test_an_interval_that_spans_1_but_excludes_the_sources_number_disagrees():
    assert verdicts.magnitude(0.95, 1.05, 0.81, 0.81).startswith("disagrees (smaller than claimed")
    assert verdicts.magnitude(0.97, 1.04, 1.10, 1.15).startswith("disagrees (smaller than claimed")
    assert verdicts.magnitude(0.80, 1.05, 0.81, 0.81).startswith("not resolved")


def test_above_zero():
    assert verdicts.above_zero(1.0, 0.5, 1.5) == "agrees"
    assert verdicts.above_zero(-1.0, -1.5, -0.5) == "disagrees"
    assert verdicts.above_zero(0.2, -0.1, 0.5, 4).startswith("not resolved (the interval spans 0; about")
    assert verdicts.above_zero(1.0, float("nan"), float("nan")) == "not resolved (one repeat: no interval)"
    assert verdicts.above_zero(float("nan"), 0, 1) == verdicts.NOT_MEASURED


def test_direction():
    assert verdicts.direction(0.1, 0.3) == verdicts.DIRECTION_ONLY
    assert verdicts.direction(-0.3, -0.1) == "disagrees"
    assert verdicts.direction(-0.1, 0.3).startswith("not resolved (the interval spans 0")
    assert verdicts.direction(float("nan"), 1) == verdicts.NOT_MEASURED


def test_under_other_conditions():
    assert verdicts.under_other_conditions("agrees", "X") == "agrees, under other conditions (X)"
    assert verdicts.under_other_conditions("agrees (why)", "X") == "agrees, under other conditions (X): why"
    assert (verdicts.under_other_conditions("agrees in direction, smaller", "X")
            == "agrees in direction, smaller, under other conditions (X)")
    assert verdicts.under_other_conditions("disagrees", "X") == "disagrees"
    assert verdicts.under_other_conditions("not resolved (y)", "X") == "not resolved (y)"


def test_the_repeats_a_hint_asks_for_are_always_more_than_were_run():
    # the point off the interval's middle (a ratio's geometric mean on a linear interval): the factor is below 1
    hint = verdicts.resolve_hint(0.90, 1.30, 1.0, 1.25, 4)
    assert "(5 instead of 4)" in hint and "1.2x" in hint
    assert "(16 instead of 4)" in verdicts.resolve_hint(0.9, 1.3, 1.0, 1.1, 4)

def test_reproduced_and_inside():
    assert verdicts.reproduced(0.35, 0.40, 0.527) == "disagrees"
    assert verdicts.reproduced(0.50, 0.60, 0.527) == "agrees"
    assert verdicts.reproduced(1.0, 1.1, 1.05, 1.25) == "agrees"
    assert verdicts.reproduced(float("nan"), 1, 0.5) == verdicts.NOT_MEASURED
    assert verdicts.inside(0.745, 0.541, 0.642) == "above"
    assert verdicts.inside(1.160, 1.255, 1.518) == "below"
    assert verdicts.inside(0.6, 0.541, 0.642) == "inside"


def test_not_measured_says_why():
    assert verdicts.not_measured("a table too small") == "not measured at this scale (a table too small)"


def test_more_than_compares_two_intervals():
    # gtid's performance_schema gain: 8.0.15 1.025 [1.015, 1.036] against 5.7.22 1.058 [1.042, 1.075]
    assert verdicts.more_than((1.015, 1.036), (1.042, 1.075)) == "disagrees"
    assert verdicts.more_than((1.042, 1.075), (1.015, 1.036)) == "agrees"
    assert verdicts.more_than((1.0, 1.05), (1.04, 1.1)) == "not resolved (the two intervals overlap)"
    assert verdicts.more_than((float("nan"), 1), (1, 2)) == verdicts.NOT_MEASURED


def test_verdicts_are_counted_by_category_for_the_answer_and_the_front_page():
    claims = pd.DataFrame({"verdict": ["agrees", "agrees (x)", "not resolved (y)", "agrees in 1 of 2 / disagrees in 1 of 2",
                                       "not measured here (witness failed: z)", "agrees in direction, smaller"]})
    assert verdicts.counts(claims) == ("6 claims: 2 agree, 1 agree in direction, 1 not resolved, 1 not measured, "
                                       "1 mixed")
    assert verdicts.counts(claims.iloc[:0]) == "0 claims"


def test_a_line_of_counts_is_judged_by_the_size_of_its_bend_not_by_whether_it_is_resolved():
    """Counts agree between starts to a few instructions, so nearly every bend is 'resolved'; a line of counts is
    one whose bend lies within the band the timed rule asks of a bend's interval (issue 48: MySQL's view functions,
    1.01 instructions per holder from 1 to 100 and 0.74 from 100 to 1,000)."""
    from dbexp.experiments import verdicts

    line = verdicts.counted_line((0.760, 0.7601, 0.7602), (-0.267, -0.2669, -0.2665))
    assert line == "agrees (it grows, and its bend lies within +-50% of the slope: a line)"
    assert verdicts.counted_line((0.76, 0.75, 0.77), (-0.5, -0.51, -0.49)).startswith("disagrees (it grows, but concave")
    assert verdicts.counted_line((0.76, 0.75, 0.77), (0.5, 0.49, 0.51)).startswith("disagrees (it grows, but convex")
    assert verdicts.counted_line((0.0, -0.01, 0.01), (0.0, 0.0, 0.0)).startswith("disagrees (no growth")
    assert verdicts.counted_line((float("nan"),) * 3, (0.0, 0.0, 0.0)) == verdicts.NOT_MEASURED
