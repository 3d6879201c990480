"""Verdicts computed from the data, with their thresholds stated once (the methodology page
quotes them): every claims table in the book takes its verdicts from here.

A verdict is one of: "agrees", "disagrees", "not resolved (why)" where the data cannot decide,
or "not measured at this scale" where the run lacks the servers or points the claim needs.
"""

from __future__ import annotations

import math

NEAR_BAND = 0.05  # "about equal": a ratio's whole interval within 1 +- 5%
PAYS_RATIO = 1.5  # "alike" readers: neither one's time over the other's above 1.5x; a latch "more often": above 1.5x
NOT_MEASURED = "not measured at this scale"


def _nan(*values) -> bool:
    return any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values)


def interval(lo: float, hi: float, expect: str, reference: float = 1.0) -> str:
    """An interval against an expected direction relative to ``reference`` (1 for ratios, 0 for
    slopes): expect "above", "below" or "near" (within NEAR_BAND of the reference)."""
    if _nan(lo, hi):
        return NOT_MEASURED
    if expect == "above":
        return "agrees" if lo > reference else ("disagrees" if hi < reference
                                                else f"not resolved (the interval spans {reference:g})")
    if expect == "below":
        return "agrees" if hi < reference else ("disagrees" if lo > reference
                                                else f"not resolved (the interval spans {reference:g})")
    if expect == "near":
        band = (reference * (1 - NEAR_BAND), reference * (1 + NEAR_BAND))
        if band[0] <= lo and hi <= band[1]:
            return "agrees"
        if hi < band[0] or lo > band[1]:
            return "disagrees"
        return f"not resolved (the interval reaches beyond {reference:g} +- {NEAR_BAND:.0%})"
    raise ValueError(f"bad expectation {expect!r}: valid are above, below or near")


def claimed_range(lo: float, hi: float, low: float, high: float, reference: float = 1.0) -> str:
    """An interval against a claimed range [low, high] of a ratio (an effect on one side of
    ``reference``): agrees where it overlaps the range and excludes the reference; disagrees where it
    lies wholly outside the range (saying on which side); else not resolved (it spans the reference)."""
    if _nan(lo, hi):
        return NOT_MEASURED
    if hi < low or lo > high:
        side = lo > high if low > reference else hi < low
        return f"disagrees ({'larger' if side else 'smaller'} than claimed)"
    if lo <= reference <= hi:
        return f"not resolved (the interval spans {reference:g})"
    return "agrees"


def single_runs(cv: float, band: float = NEAR_BAND) -> str:
    """Whether one run against one run can tell a change of ``band`` from noise, given the runs'
    coefficient of variation: the ratio of two independent single runs moves by about
    1.96 * sqrt(2) * cv either way (95%) on its own. Agrees (one run is not enough) where that exceeds
    ``band``, disagrees where it does not."""
    if _nan(cv):
        return NOT_MEASURED
    spread = 1.96 * math.sqrt(2) * cv
    if spread > band:
        return (f"agrees: the ratio of two single runs moves by up to {spread:.1%} either way on its own (95%), "
                f"more than the {band:.0%} a version comparison is read at: read ratios with their intervals")
    return f"disagrees: two single runs differ by at most {spread:.1%} (95%) here, within {band:.0%}"


def effect(lo: float, hi: float) -> str:
    """What a ratio's 95% interval says in words: the effect it excludes when it contains 1,
    else the range of the difference."""
    if _nan(lo, hi):
        return NOT_MEASURED
    if lo <= 1 <= hi:
        return f"no difference resolved: effects larger than {100 * max(1 - lo, hi - 1):.1f}% are excluded"
    if hi < 1:
        return f"A is {100 * (1 - hi):.1f} to {100 * (1 - lo):.1f}% slower than B"
    return f"A is {100 * (lo - 1):.1f} to {100 * (hi - 1):.1f}% faster than B"


def ratio(r: float, expect: str, threshold: float = PAYS_RATIO) -> str:
    """A point ratio against a threshold: expect "above" (r > threshold) or "below" (r < 1/threshold)."""
    if _nan(r):
        return NOT_MEASURED
    big, small = r > threshold, r < 1 / threshold
    if expect == "above":
        return "agrees" if big else ("disagrees" if small else f"not resolved (within {threshold:g}x)")
    if expect == "below":
        return "agrees" if small else ("disagrees" if big else f"not resolved (within {threshold:g}x)")
    raise ValueError(f"bad expectation {expect!r}: valid are above or below")


def combine(verdicts) -> str:
    """Several servers' verdicts on one claim, as one cell: the verdict where all agree on it, else each
    with how many of the servers gave it ('agrees in 1 of 3 / not resolved (...) in 2 of 3')."""
    given = list(verdicts)
    found = sorted(set(given))
    if not found:
        return NOT_MEASURED
    if len(found) == 1:
        return found[0]
    return " / ".join(f"{v} in {given.count(v)} of {len(given)}" for v in found)
