"""Step-by-step probes' results as a page shows them: facts of an engine's code observed one step at a time on
one server (mvcc_chains' page and undo probes, buffer_eviction's pool probes), each run a row of observations.

- :func:`is_step_run`: which runs of a chapter's results are a probe's.
- :func:`table`: one row per observation, one column per server; a cell is the value all its runs saw (with
  how many) or each run's value where they differ.
- :func:`claim_rows`: per claim, what each server's runs showed and a verdict from the runs where the claim
  failed (``verdicts.events``: it should fail in none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

from dbexp.experiments import verdicts


@dataclass(frozen=True)
class StepClaim:
    """A claim a probe's runs test: the ledger's ``id``, the observation a run needs to have tested it
    (``needs``), the claim as the source states it, what one run showed (``said``) and whether the run's
    observations hold it (``holds``); ``only`` picks the runs that can test it (default: all that have
    ``needs``)."""

    id: str
    needs: str
    claim: str
    said: Callable
    holds: Callable
    only: Callable | None = None


def is_step_run(w: pd.DataFrame) -> pd.Series:
    """Which runs of a results' wide table are a probe's (their point has ``mechanics`` true; stored results
    may hold it as text)."""
    return (w["mechanics"].map(lambda x: x is True or str(x).lower() == "true") if "mechanics" in w
            else pd.Series(False, index=w.index))


def _runs(n: int) -> str:
    return "both runs" if n == 2 else f"all {n} runs" if n > 2 else "one run"


def table(m: pd.DataFrame, labels: dict[str, str], yes_no=(), ranges=(), fmt: str = ",.0f",
          range_fmt: str = ".1f") -> pd.DataFrame:
    """The observations of ``labels`` (in its order) that the runs of ``m`` have, one row each, one column per
    server (``series_name``): yes/no for ``yes_no``, min to max for ``ranges`` (times, which differ run to run)."""
    steps = [c for c in labels if c in m and m[c].notna().any()]
    if m.empty or not steps:
        return m.iloc[0:0]
    out = {"observation": [labels[c] for c in steps]}
    for name, g in m.sort_values(["series_name", "repeat"]).groupby("series_name", sort=False):
        cells = []
        for c in steps:
            vals = g[c].dropna()
            if vals.empty:
                cells.append("—")
            elif c in ranges:
                lo, hi = f"{vals.min():{range_fmt}}", f"{vals.max():{range_fmt}}"
                cells.append(f"{lo} to {hi}" if lo != hi else f"{lo} ({_runs(len(vals))})" if len(vals) > 1 else lo)
            else:
                words = [("yes" if v else "no") if c in yes_no else f"{v:{fmt}}" for v in vals]
                cells.append(f"{words[0]} ({_runs(len(words))})" if len(set(words)) == 1 else " / ".join(words))
        out[name] = cells
    return pd.DataFrame(out)


def claim_rows(m: pd.DataFrame, claims, source: str, how: Callable[[pd.DataFrame], str],
               link: Callable[[str], str]) -> list[verdicts.ClaimRow]:
    """One claims-table row per StepClaim: per server what its runs showed (one run's words where all agree,
    servers that saw the same together), and the verdict from the runs where the claim failed. ``how`` says
    how the runs it is given were observed (the 'here' cell)."""
    rows = []
    # each run as a named tuple once (itertuples costs a column lookup per column, per call)
    m = m.reset_index(drop=True)
    tuples = dict(zip(m.index, m.itertuples()))
    for c in claims:
        g_all = m[m[c.needs].notna()] if c.needs in m else m.iloc[0:0]
        if c.only is not None and len(g_all):
            g_all = g_all[[bool(c.only(tuples[i])) for i in g_all.index]]
        if g_all.empty:
            rows.append(verdicts.ClaimRow(link(c.claim), source, verdicts.NOT_MEASURED, verdicts.NOT_MEASURED,
                                          verdicts.NOT_MEASURED))
            continue
        seen: dict[str, list] = {}  # what the runs showed -> [servers, runs that hold, runs]
        failing = 0
        for name, g in g_all.sort_values("series_name").groupby("series_name", sort=False):
            words = [c.said(tuples[i]) for i in g.index]
            ok = [bool(c.holds(tuples[i])) for i in g.index]
            failing += ok.count(False)
            got = seen.setdefault(words[0] if len(set(words)) == 1 else "; ".join(words), [[], 0, 0])
            got[0].append(name)
            got[1] += sum(ok)
            got[2] += len(ok)
        parts = [f"{', '.join(names)}: {words} ({held} of {n} runs)" for words, (names, held, n) in seen.items()]
        n = len(g_all)
        verdict = verdicts.events(failing, n, float("nan"), "none")
        runs = int(g_all.groupby("series_name").size().max())
        k = int(g_all["instance"].nunique()) if "instance" in g_all else 1
        here = (f"{', '.join(sorted(set(g_all['series_name'])))}; {how(g_all)}; "
                f"{runs} run{'s' if runs > 1 else ''} per server, on {k} instance{'s' if k > 1 else ''}")
        rows.append(verdicts.ClaimRow(link(c.claim), source, here, "; ".join(parts),
                                      verdict + (f" (in {n - failing} of {n} runs)" if verdict == "agrees"
                                                 else f" (the claim failed in {failing} of {n} runs)")))
    return rows
