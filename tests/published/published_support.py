"""Helpers for the published checks: a chapter's published results and claims table (read once per
test session), and the charts a chapter's notebook draws from them."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from unittest import mock

import pandas as pd

from chart_panels import _facets
from dbexp.book import charts, downloads

REPO = Path(__file__).resolve().parents[2]
FACETING = re.compile(r"charts\.(shaded_series|stacked_shares|dashed_lines|per_measure|repeats_strip|lines)\(")


@cache
def published(name: str):
    """A chapter's published results (data/<name>/), read once per test session."""
    from dbexp import chapters

    return chapters.get(name).run("default", run=False, root=REPO)


@cache
def published_claims(name: str):
    """A chapter's claims table computed from its published results, once per test session (the
    chapters check and the golden check both read it; a table is never changed in place)."""
    from dbexp import chapters

    return chapters.get(name).claims(published(name))


def notebook_charts(chapter: str, namespace: dict) -> list:
    """The charts a chapter's notebook hands to downloads.chart, from its cells that call a faceting
    helper, run on ``namespace`` (the chapter's results and what those cells read)."""
    nb = json.loads((REPO / "notebooks" / f"{chapter}.ipynb").read_text())
    got = []
    ns = {"pd": pd, "charts": charts, "downloads": downloads, **namespace}
    with mock.patch.object(downloads, "chart", lambda c, *a, **k: got.append(c)):
        for cell in nb["cells"]:
            src = "".join(cell["source"])
            if cell["cell_type"] == "code" and "downloads.chart(" in src and FACETING.search(src):
                exec(compile(src, f"{chapter}.ipynb", "exec"), ns)
    return got


def has_facet(spec: dict) -> bool:
    return any(True for _ in _facets(spec, None))
