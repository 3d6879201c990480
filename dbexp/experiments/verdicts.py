"""Verdicts computed from the data, with their thresholds stated once (the methodology page
quotes them): every claims table in the book takes its verdicts from here. The rules (an interval
against a reference or a limit, a share against "most", a source's number reproduced or not, a count
between two marks, events that should or should not happen) and the words' constructors (agrees(),
disagrees(), not_resolved(), not_measured(), not_testable()) are the only places a verdict is
spelled: tests/unit/test_architecture.py fails on a verdict word written inside dbexp/chapters/.

A verdict is one of: "agrees", "agrees in direction, smaller" / "agrees in direction, larger"
(the effect is there, its size outside the source's), "disagrees", "not resolved (why, and what
would resolve it)" where the data cannot decide, "not testable here (the condition this lab cannot
meet)", or "not measured at this scale" where the run lacks the servers or points the claim needs.

A claims table has one row per claim (:class:`ClaimRow`, :func:`table`): the claim as the source
states it (with its link), the source's number and conditions (version, clients, cores, run length,
workload), this lab's conditions, what was measured here, its witness and the verdict, and the ids of
the ledger entries (claims.yaml) it tests.

A verdict needs a witness (:class:`Witness`): an observation stored with the runs it judges that shows
the mechanism the claim is about happened in them (the plan of an index probe, the LRU position of the
hot set, the pins a benchmark touched, why an answer changed). "agrees" and "disagrees" stand only where
the witness held; anywhere else :func:`witnessed` (which :func:`table` applies to every row) makes the
verdict "not measured here (witness failed: ...)", or "(no witness: ...)" where none was observed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

NEAR_BAND = 0.05  # "about equal": a ratio's whole interval within 1 +- 5%
PAYS_RATIO = 1.5  # "alike" readers: neither one's time over the other's above 1.5x; a latch "more often": above 1.5x
NOT_MEASURED = "not measured at this scale"
AGREES, DISAGREES, NOT_RESOLVED = "agrees", "disagrees", "not resolved"  # the words; a why follows in brackets
IN_DIRECTION = "agrees in direction"  # the effect is there, its size outside the source's: ", smaller" / ", larger"


# the kinds of verdict, as "what moved" counts them: a verdict's category is its words outside parentheses
CATEGORIES = ("agrees", "agrees in direction", "disagrees", "not resolved", "not testable here", "not measured")
_CATEGORY = re.compile(r"not testable here|not measured|not resolved|disagrees|agrees in direction|agrees")


def category(verdict: str) -> str:
    """The kind of ``verdict`` (CATEGORIES) from its words outside parentheses: "agrees, under other
    conditions (...)" is "agrees", "not measured here (witness failed: ...)" is "not measured"; a verdict
    combined over servers (:func:`combine`) gives each kind once, in its order ("agrees / not resolved")."""
    depth, outside = 0, []
    for ch in str(verdict):
        depth += ch == "("
        if depth == 0:
            outside.append(ch)
        depth -= ch == ")" and depth > 0
    found = dict.fromkeys(_CATEGORY.findall("".join(outside)))
    return " / ".join(found) or "?"


COUNTED = {"agrees": "agree", "agrees in direction": "agree in direction", "disagrees": "disagree",
           "not resolved": "not resolved", "not testable here": "not testable here", "not measured": "not measured"}


def counts(claims: pd.DataFrame) -> str:
    """A claims table's verdicts counted by category, in CATEGORIES' order, for a page's answer and the front
    page: "14 claims: 6 agree, 2 agree in direction, 1 disagree, 3 not resolved, 2 not measured" (a row whose
    servers differ counts as "mixed")."""
    found = [category(v) for v in claims["verdict"]] if len(claims) else []
    parts = [f"{found.count(c)} {COUNTED[c]}" for c in CATEGORIES if found.count(c)]
    mixed = sum(" / " in c for c in found)
    parts += [f"{mixed} mixed"] if mixed else []
    return f"{len(found)} claim{'s' if len(found) != 1 else ''}" + (f": {', '.join(parts)}" if parts else "")


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


def magnitude(lo: float, hi: float, low: float, high: float, reference: float = 1.0,
               point: float | None = None, n: int | None = None) -> str:
    """An interval [lo, hi] of our effect (a ratio, reference 1; a difference, reference 0) against
    the source's number, a range [low, high] on one side of ``reference`` (low == high for one
    number): "agrees" where the interval reaches the source's range; "agrees in direction, smaller"
    (or "larger") where it excludes the reference on the source's side but misses the range;
    "disagrees" where it lies on the other side, or where it spans the reference but excludes the
    source's number (smaller than claimed); else not resolved, saying how many times the
    repeats would resolve an effect of the measured size (from ``point`` and ``n``, when given)."""
    if _nan(lo, hi):
        return NOT_MEASURED
    up = low > reference
    if lo <= reference <= hi:
        if (up and hi < low) or (not up and lo > high):  # no effect resolved, but the source's excluded
            return "disagrees (smaller than claimed: no effect resolved, and the source's number excluded)"
        return f"not resolved ({resolve_hint(lo, hi, reference, point, n)})"
    if (lo > reference) != up:
        return "disagrees"
    if hi < low:
        return f"{IN_DIRECTION}, {'smaller' if up else 'larger'}"
    if lo > high:
        return f"{IN_DIRECTION}, {'larger' if up else 'smaller'}"
    return "agrees"


def resolve_hint(lo: float, hi: float, reference: float = 1.0, point: float | None = None,
                 n: int | None = None) -> str:
    """What would resolve an interval that spans ``reference``: the interval narrows as the square
    root of the repeats, so excluding the reference at the measured effect needs about
    (half-width / effect)^2 times the repeats."""
    half = (hi - lo) / 2
    mid = (lo + hi) / 2 if point is None or _nan(point) else point
    effect = abs(mid - reference)
    if effect == 0 or half == 0:
        return f"the interval spans {reference:g}"
    factor = (half / effect) ** 2
    if n:  # at least one more repeat: where the point sits off the interval's middle (a log scale), factor < 1
        needed = max(math.ceil(factor * n), n + 1)
        factor = needed / n
    times = f"{factor:.1f}" if factor < 10 else f"{factor:.0f}"
    more = (f"about {times}x the repeats ({needed} instead of {n})" if n
            else f"about {max(factor, 1):.1f}x the repeats" if factor < 10 else f"about {times}x the repeats")
    return f"the interval spans {reference:g}; {more} would resolve an effect of the measured size"


def not_testable(condition: str) -> str:
    """The verdict for a claim made under a condition this lab cannot meet (say which)."""
    return f"not testable here ({condition})"


def not_measured(why: str) -> str:
    """The verdict for a claim this lab could test but whose runs do not measure it at this scale (say
    why: the points, sizes or servers it would need)."""
    return f"{NOT_MEASURED} ({why})"


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


def events(count: int, n: int, high: float, expect: str) -> str:
    """A count of events in ``n`` independent trials (``high``: the upper end of its interval) against
    the source's word: expect "some" (it happens: agrees once it is seen), or "none" (it never happens:
    agrees while none is seen, disagrees at the first)."""
    if not n:
        return NOT_MEASURED
    if expect == "some":
        return "agrees" if count > 0 else f"not resolved (none in {n}: the rate is below {high:.1%} at 95%)"
    if expect == "none":
        return "agrees" if count == 0 else "disagrees"
    raise ValueError(f"bad expectation {expect!r}: valid are some or none")


@dataclass(frozen=True)
class Witness:
    """The observation, stored with the runs a verdict judges, that shows the claim's mechanism happened in
    them: ``what`` says what was observed (with its numbers: "3.0 buffers per lookup, an index probe, in 40
    of 40 runs"), ``ok`` whether it showed the mechanism (False: the runs did something else, and ``what``
    says what)."""

    what: str
    ok: bool


def witness(ok: bool, what: str) -> Witness:
    """A :class:`Witness` (``ok`` coerced to a plain bool: numpy's are not JSON)."""
    return Witness(str(what), bool(ok))


def witnesses(parts: dict[str, Witness] | list[Witness], sep: str = "; ") -> Witness | None:
    """Several servers' (or readings') witnesses as one row's: each one's words (named where given as a
    dict), held where any held. A row's verdict is judged per server with :func:`witnessed` first, so a
    server whose witness failed is "not measured here" in the row already; None where there are none."""
    items = list(parts.items()) if isinstance(parts, dict) else [(None, w) for w in parts]
    items = [(k, w) for k, w in items if w is not None]
    if not items:
        return None
    words = list(dict.fromkeys(f"{k}: {w.what}" if k else w.what for k, w in items))
    return Witness(sep.join(words), any(w.ok for _, w in items))


WITNESS_FAILED = "not measured here"  # the verdict where the witness did not show the mechanism


def judged(verdict: str) -> bool:
    """Whether ``verdict`` judges the claim (agrees, in any form, or disagrees), as only a witnessed one may."""
    return str(verdict).startswith((AGREES, DISAGREES))


def witnessed(verdict: str, w: Witness | None) -> str:
    """``verdict`` where the witness ``w`` held, or where it judges nothing (not resolved, not testable, not
    measured); else "not measured here (witness failed: WHAT)", or "(no witness: ...)" where none was
    stored: a verdict about a mechanism the runs did not show is not a verdict."""
    if not judged(verdict):
        return verdict
    if w is None:
        return (f"{WITNESS_FAILED} (no witness: no observation stored with these runs shows the claim's "
                f"mechanism happened in them)")
    if not w.ok:
        return f"{WITNESS_FAILED} (witness failed: {w.what})"
    return verdict


@dataclass(frozen=True)
class ClaimRow:
    """One row of a claims table: the claim, the source's number and conditions, this lab's, what was
    measured, the verdict, the ledger entries it tests (``ids``: claims.yaml ids) and its witness."""

    claim: str  # as the source states it, with its link (Source.cite)
    source: str  # the source's number and its conditions: version, clients, cores, run length, workload
    here: str  # this lab's conditions for the same claim
    measured: str  # what was measured here, with intervals
    verdict: str
    ids: tuple[str, ...] = ()  # the ledger entries (dbexp/chapters/<name>/claims.yaml ids) this row tests
    witness: Witness | None = None


# the columns a page shows, and those a claims table carries besides for claims.parquet and the golden files
COLUMNS = ("claim", "source: number, conditions", "here: conditions", "measured here", "witness", "verdict")
KEYS = ("id", "witness_ok")


def table(rows: list[ClaimRow]) -> pd.DataFrame:
    """A claims table in the book's shape (COLUMNS, then KEYS: the row's ledger ids joined by ", " and
    whether its witness held), one row per claim, each verdict passed through :func:`witnessed`."""
    out = []
    for r in rows:
        if isinstance(r.ids, str) or not all(isinstance(i, str) and i for i in r.ids):
            raise ValueError(f"a claims row's ids must be a tuple of ledger ids, not {r.ids!r}")
        w = r.witness
        out.append((r.claim, r.source, r.here, r.measured, w.what if w else "", witnessed(r.verdict, w),
                    ", ".join(r.ids), None if w is None else w.ok))
    return pd.DataFrame(out, columns=list(COLUMNS + KEYS))


def by_id(claims: pd.DataFrame) -> pd.DataFrame:
    """A claims table (:func:`table`) as one row per ledger id it tests (id, claim, measured, witness,
    witness_ok, verdict): what data/<chapter>/claims.parquet holds. A row that tests no ledger entry is
    kept with an empty id."""
    ids = claims["id"].fillna("").map(lambda s: [i.strip() for i in str(s).split(",") if i.strip()] or [""])
    df = claims.assign(id=ids).explode("id")
    df = df.rename(columns={"measured here": "measured"})
    return df[["id", "claim", "measured", "witness", "witness_ok", "verdict"]].reset_index(drop=True)


DIRECTION_ONLY = "agrees (direction only: the source gives no number)"
LINE_BAND = 0.5  # "linear": the bend's whole interval within +-50% of the whole slope


def above_zero(point: float, lo: float, hi: float, n: int | None = None) -> str:
    """A difference or slope that should be above 0 (no size claimed): agrees, disagrees, or not
    resolved, saying what would resolve it (one repeat: no interval)."""
    if _nan(point):
        return NOT_MEASURED
    if _nan(lo, hi):
        return "not resolved (one repeat: no interval)"
    if lo <= 0 <= hi:
        return f"not resolved ({resolve_hint(lo, hi, 0.0, point, n)})"
    return "agrees" if lo > 0 else "disagrees"


def direction(lo: float, hi: float, point: float | None = None, n: int | None = None) -> str:
    """An interval of an effect (a difference, reference 0) against a claimed positive direction with
    no claimed size: agrees (direction only, DIRECTION_ONLY), disagrees, or not resolved with what
    would resolve it."""
    if _nan(lo, hi):
        return NOT_MEASURED
    if lo > 0:
        return DIRECTION_ONLY
    if hi < 0:
        return "disagrees"
    return f"not resolved ({resolve_hint(lo, hi, 0.0, point, n)})"


def under_other_conditions(verdict: str, other: str, disagreement_too: bool = False) -> str:
    """The book's rule: where this lab's conditions differ from the source's, an agreement says so.
    "agrees" -> "agrees, under other conditions (OTHER)"; "agrees (why)" -> "agrees, under other
    conditions (OTHER): why"; any other agreement ("agrees in direction, smaller") gets
    ", under other conditions (OTHER)" appended; every other verdict is unchanged, but for a disagreement
    where ``disagreement_too`` (one that may be the conditions' doing), worded as an agreement is."""
    for word in (AGREES, DISAGREES) if disagreement_too else (AGREES,):
        if verdict == word:
            return f"{word}, under other conditions ({other})"
        if verdict.startswith(f"{word} (") and verdict.endswith(")"):
            return f"{word}, under other conditions ({other}): {verdict[len(word) + 2:-1]}"
        if verdict.startswith(word):
            return f"{verdict}, under other conditions ({other})"
    return verdict


def grows_linearly(slope: tuple[float, float, float], bend: tuple[float, float, float], n: int | None = None,
                   band: float = LINE_BAND) -> str:
    """"Grows linearly" as one claim of two parts, both to be shown for an agreement: ``slope`` (point, low,
    high) is the growth over every H, ``bend`` (point, low, high) the upper segment's slope minus the lower
    one's, paired within each repeat where the segments share a point. Growth is judged by
    :func:`above_zero` (its verdict stands where it does not agree); then the line: a bend resolved away
    from 0 disagrees (concave or convex); a bend whose interval lies within +-``band`` of the slope agrees
    (a line); a wider bend leaves the claim not resolved, whatever the growth: growth alone does not agree
    with "linearly"."""
    grows = above_zero(*slope, n)
    if grows != AGREES:
        return grows
    s, (b, blo, bhi) = slope[0], bend
    if _nan(blo, bhi):
        return not_resolved("it grows, resolved above 0; the line is not: one repeat, no interval on the bend")
    if bhi < 0:
        return disagrees("it grows, but concave: each holder past the middle H adds less")
    if blo > 0:
        return disagrees("it grows, but convex: each holder past the middle H adds more")
    room = band * s - abs(b)
    if -band * s <= blo and bhi <= band * s:
        return agrees(f"it grows, and the bend's interval lies within +-{band:.0%} of the slope: a line")
    if room > 0 and n:
        factor = ((bhi - blo) / 2 / room) ** 2
        times = f"{factor:.1f}" if factor < 10 else f"{factor:.0f}"
        more = (f"about {times}x the repeats ({math.ceil(factor * n)} instead of {n}) would narrow it within the "
                f"band, if the bend is the one measured")
    else:
        more = f"the bend measured is itself beyond +-{band:.0%} of the slope"
    return not_resolved(f"it grows, resolved above 0, but the line is not: the bend's interval reaches beyond "
                        f"+-{band:.0%} of the slope; {more}")


def counted_line(slope: tuple[float, float, float], bend: tuple[float, float, float], band: float = LINE_BAND) -> str:
    """"Grows linearly" judged on instruction counts that agree between separately started servers: ``slope``
    and ``bend`` (as in :func:`grows_linearly`) are each (mean, least, largest) over the starts. A count is exact
    up to the starts' difference, so nearly every bend is resolved; what decides the line is its size: within
    +-``band`` of the slope a line (the band :func:`grows_linearly` asks of a timed bend's whole interval), beyond
    it concave or convex. No growth beyond the starts' difference disagrees."""
    s, slo, _ = slope
    b, blo, bhi = bend
    if _nan(s, slo, b, blo, bhi):
        return NOT_MEASURED
    if slo <= 0:
        return disagrees("no growth beyond the separately started servers' difference")
    if -band * s <= blo and bhi <= band * s:
        return agrees(f"it grows, and its bend lies within +-{band:.0%} of the slope: a line")
    return disagrees(f"it grows, but {'concave' if b < 0 else 'convex'}: its bend reaches beyond +-{band:.0%} of "
                     f"the slope")


def reproduced(lo: float, hi: float, low: float, high: float | None = None) -> str:
    """A source's number (or range [low, high]) against the interval [lo, hi] of the same quantity
    measured here: agrees where the interval reaches it, disagrees where it excludes it (the
    number is not reproduced, whatever the direction)."""
    high = low if high is None else high
    if _nan(lo, hi):
        return NOT_MEASURED
    return "agrees" if lo <= high and hi >= low else "disagrees"


def inside(value: float, lo: float, hi: float) -> str:
    """A point against an interval: "inside" where lo <= value <= hi, else "below" or "above"."""
    if _nan(value, lo, hi):
        return NOT_MEASURED
    return "inside" if lo <= value <= hi else ("below" if value < lo else "above")


def more_than(a: tuple[float, float], b: tuple[float, float]) -> str:
    """"A is more than B", each given by its 95% interval (lo, hi): agrees where A's interval lies wholly
    above B's, disagrees where wholly below (B is more), else not resolved (the intervals overlap)."""
    if _nan(*a, *b):
        return NOT_MEASURED
    if a[0] > b[1]:
        return "agrees"
    if a[1] < b[0]:
        return "disagrees"
    return "not resolved (the two intervals overlap)"


# Constructors for rules whose decision is a chapter's own (a mechanism the source states without a number):
# chapter code builds a verdict only through these and the rules above, never by spelling the word.


def _worded(word: str, why: str | None) -> str:
    return f"{word} ({why})" if why else word


def agrees(why: str | None = None) -> str:
    """'agrees', or 'agrees (why)'."""
    return _worded(AGREES, why)


def disagrees(why: str | None = None) -> str:
    """'disagrees', or 'disagrees (why)'."""
    return _worded(DISAGREES, why)


def not_resolved(why: str) -> str:
    """'not resolved (why)': the data cannot decide, and why (what would decide it)."""
    return _worded(NOT_RESOLVED, why)


def in_direction(size: str, why: str | None = None) -> str:
    """'agrees in direction, SIZE': the effect the source names is there, its size not the source's (SIZE
    says how, e.g. 'smaller' or what the quantity's larger effect means)."""
    return _worded(f"{IN_DIRECTION}, {size}", why)


def qualified_here(verdict: str) -> str:
    """A bare agreement said to be under this lab's conditions, never the source's."""
    return f"{AGREES} under this lab's conditions, not the source's" if verdict == AGREES else verdict


def holds(ok: bool, why_not: str | None = None) -> str:
    """A claim checked as true or false on the data: agrees, else disagrees (why not)."""
    return agrees() if ok else disagrees(why_not)


def one_repeat(what: str = "run") -> str:
    """No interval to test: the results hold one ``what`` per point."""
    return not_measured(f"one {what} per point in these results: an interval needs repeats")


def below_limit(lo: float, hi: float, limit: float, what: str) -> str:
    """A quantity's 95% interval against a limit the claim keeps it under: agrees where the whole interval
    lies below the limit, disagrees where it lies above, else not resolved (it spans the limit)."""
    if _nan(lo, hi):
        return NOT_MEASURED
    if hi < limit:
        return agrees()
    if lo > limit:
        return disagrees(f"{what} above {limit:g}")
    return not_resolved(f"{what}: the interval spans {limit:g}")


def share_at_least(k: int, n: int, share: float) -> str:
    """"Most": ``k`` of ``n`` events against a share the claim says is reached, by the exact (Clopper-Pearson)
    95% interval of k/n: agrees where its low end reaches the share, disagrees where its high end stays
    under it, else not resolved."""
    from dbexp.experiments.stats import proportion_ci

    if not n:
        return NOT_MEASURED
    low, high = proportion_ci(k, n)
    if low >= share:
        return agrees()
    if high < share:
        return disagrees()
    return not_resolved(f"the interval spans {share:.0%}")


def number_reproduced(lo: float, hi: float, source: float, fmt: str = ".1%") -> str:
    """The source's number against this lab's 95% interval of it (reproduced()): agrees where the interval
    reaches it, else disagrees, naming the number that was not reproduced."""
    found = reproduced(lo, hi, source)
    return disagrees(f"the source's {source:{fmt}} not reproduced") if found == DISAGREES else found


def count_between(count: float, low: float, high: float, what: str) -> str:
    """A count the claim puts above ``high`` (agrees) against ``low`` (at or under it: disagrees); between,
    not resolved."""
    if _nan(count):
        return NOT_MEASURED
    if count > high:
        return agrees()
    if count <= low:
        return disagrees()
    return not_resolved(f"{what}: more than {low:g}, not past {high:g}")
