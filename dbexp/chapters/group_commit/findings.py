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


def headline(res: Results) -> str:
    """The page's answer in a sentence or two, from the data: on the runs' CPU, how many times MySQL's waiting
    followers were woken each at the most probe threads (the middle server, and the range over the others) with
    95% intervals, against MariaDB's one wakeup per follower, and the commits a durable sync carried on that
    server ('' without MySQL probe runs)."""
    from dbexp.experiments.chapter import cpu_models

    from .analysis import at_most_threads, last_threads, probes, served

    pr = probes(res)
    top = last_threads(pr) if len(pr) else pr
    mine = top[served(top, "wakeup", "broadcast")] if len(top) else top
    if mine.empty:
        return ""
    mine = mine.sort_values("waits_per_waiter").reset_index(drop=True)
    mid = mine.iloc[len(mine) // 2]
    cell = lambda r: (f"{prose.num(r['waits_per_waiter'], '.2f')} "
                      + (prose.ci(r["waits_per_waiter_lo"], r["waits_per_waiter_hi"], ".2f")
                         if r["waits_per_waiter_lo"] == r["waits_per_waiter_lo"] else "(one run)"))
    others = [f"{cell(r)} on {r['series_name'].split(' ', 1)[1]}" for _, r in mine.iterrows()
              if r["series_name"] != mid["series_name"]]
    text = (f"On an {cpu_models(res.runs)}, with {int(mid['threads'])} client threads MySQL's waiting followers were "
            f"each woken {cell(mid)} times ({mid['series_name']}" + (f"; {', '.join(others)}" if others else "") + ")")
    t = at_most_threads(res)
    own = t[served(t, "wakeup", "own")] if len(t) else t
    if len(own):
        text += ", where MariaDB wakes each follower once"
    g = t[t["series_name"] == mid["series_name"]] if len(t) else t
    if len(g) and g["group_size"].notna().all():
        r = g.iloc[0]
        size = prose.num(r["group_size"], ".1f") + (f" {prose.ci(r['group_size_lo'], r['group_size_hi'], '.1f')}"
                                                    if r["group_size_lo"] == r["group_size_lo"] else "")
        text += f"; a durable sync carried {size} commits there"
    return text + " (95% intervals over the runs)."
