"""The group_commit page's sentences that depend on its data: the analysis' numbers rendered by the
templates in notebooks/group_commit/."""

from __future__ import annotations

import pandas as pd

from dbexp.book import prose
from dbexp.experiments.chapter import Results

from .analysis import findings_numbers, redo_numbers, repeats
from .claims import waiters_beyond_followers


def findings(res: Results) -> str:
    """The page's summary, as Markdown bullets (one list: the template's paragraphs joined by a line)."""
    over, runs = waiters_beyond_followers(res)
    return "\n".join(prose.render("group_commit", "findings", **findings_numbers(res), over=over, runs=runs)
                     .split("\n\n"))


def redo_note(res: Results) -> str:
    """5.7 against 8.0 with the binlog off, where the redo log is the only sync: syncs per commit and TPS."""
    return prose.render("group_commit", "redo_note", servers=redo_numbers(res))


def repeats_note(res: Results) -> str:
    """How many runs each kind of point has (the page states no repeats the runs lack)."""
    kinds = repeats(res)
    return prose.render("group_commit", "repeats", **{k: kinds.get(k) for k in ("main", "probe", "other", "check")})


def interval_labels(df: pd.DataFrame, cols, fmt: str = ".1%") -> pd.DataFrame:
    """``df`` with ``<col>_ci`` beside each of ``cols``: its 95% interval as text, "one run" where a
    point has a value but no interval, None where it has no value (analysis.over_repeats' ``<col>_lo``
    and ``<col>_hi``)."""
    out = df.copy()
    for c in cols:
        if f"{c}_lo" in out:
            out[f"{c}_ci"] = [None if v != v else ("one run" if lo != lo else prose.ci(lo, hi, fmt))
                              for v, lo, hi in zip(out[c], out[f"{c}_lo"], out[f"{c}_hi"])]
    return out
