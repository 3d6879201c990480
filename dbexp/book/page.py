"""What every chapter's page opens with, in one call: where and how its results were measured.

:func:`opening` glues, for the page's Markdown: ``hardware``, ``results_source``, ``n_runs``,
``versions_list``, ``repeats``, ``span_min``, ``n_sweeps`` (and ``sweeps``: "1 sweep", "3 sweeps"),
``missing_official``, ``baseline_note``, ``answer`` (the page's first lines: headline, verdict counts, machine),
``run_notes`` (the lab's notes on steal, retries and edge effects, then the chapter's own, then the
servers it leaves out and why) and ``findings`` (the chapter's summary, from its analysis).
"""

from __future__ import annotations

import pandas as pd

from dbexp.book import charts, tables, vega
from dbexp.book.glued import glue
from dbexp.book.prose import plural
from dbexp.experiments.chapter import measuring_time, missing_official, run_notes


def answer(res, chapter) -> str:
    """The page's first lines, under its title (Markdown): the chapter's headline with its intervals, its verdicts
    counted by category, and the machine and date of the runs (Chapter.summary, as the front page shows it)."""
    row = chapter.summary(res).iloc[0]
    where = (f"Measured on {row['hardware']}, until {row['measured_until']} UTC ({row['runs']:,} runs, "
             f"{row['minutes']:.1f} minutes)" if row["runs"] else "No results yet")
    lines = [row["headline"]] if row["headline"] else []
    lines.append(f"**Verdicts:** {row['verdicts']} (the claims section below). {where}; results: {res.source}.")
    return "\n\n".join(lines)


def opening(res, chapter, wide: pd.DataFrame | None = None) -> pd.DataFrame:
    """Glue the shared opening of ``chapter``'s page from ``res``; return the tidy runs it used
    (``wide``, or the results' own)."""
    vega.enable_offline()
    w = res.wide if wide is None else wide
    # every run of the results, whatever part of them the chapter's tables read: the page, the front page and the
    # README count the same runs and minutes (Chapter.summary)
    minutes, sweeps = measuring_time(res.wide)
    glue("hardware", charts.measured_on(res))
    glue("results_source", res.source)
    glue("n_runs", len(res.wide))
    glue("answer", answer(res, chapter))
    glue("versions_list", ", ".join(charts.server_order(w["series_name"].unique())) if len(w) else "")
    glue("repeats", int(w.groupby("point_key").size().max()) if len(w) else 0)
    glue("span_min", minutes)
    glue("n_sweeps", sweeps)
    glue("sweeps", plural(sweeps, "sweep"))
    glue("missing_official", missing_official(res))
    glue("baseline_note", tables.baseline_note(w) if len(w) else "")
    engines = getattr(chapter, "engines", None)
    notes = [run_notes(res), *chapter.notes(res), engines.skipped_note() if engines else ""]
    glue("run_notes", " ".join(n for n in notes if n))
    glue("findings", chapter.findings(res))
    return w
