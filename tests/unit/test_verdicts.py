"""The verdict rules give known answers on known intervals and ratios."""

from __future__ import annotations

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
