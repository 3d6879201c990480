"""The group_commit page's sentences that depend on its data: the analysis' numbers rendered by the
templates in notebooks/group_commit/."""

from __future__ import annotations

from dbexp.book import prose
from dbexp.experiments.chapter import Results

from .analysis import findings_numbers, redo_numbers


def findings(res: Results) -> str:
    """The page's summary, as Markdown bullets (one list: the template's paragraphs joined by a line)."""
    return "\n".join(prose.render("group_commit", "findings", **findings_numbers(res)).split("\n\n"))


def redo_note(res: Results) -> str:
    """5.7 against 8.0 with the binlog off, where the redo log is the only sync: syncs per commit and TPS."""
    return prose.render("group_commit", "redo_note", servers=redo_numbers(res))
