"""Verdicts pinned: every published chapter's claims table, computed from data/, against a golden file
of outcomes, not of prose.

For each chapter of the book's table of contents that has published results in data/<chapter>/, the
check computes ``claims(run("default", run=False))`` and compares, per claim id, its verdict words and
the intervals of what was measured with tests/published/golden/<chapter>.claims.json (what is read from
a claims table, and the tolerance numbers are compared within, are told in golden_claims.py: relative
1e-6, or half a unit in the last printed digit of the less precise number). A reworded reason, a
renamed server or a sentence said otherwise changes nothing here; a flipped verdict word, a moved
interval, a claim gone or new fails with the chapter, the claim id and what changed, before and after.

When the change is meant (new data published, a claim added or reworded, a verdict rule changed),
regenerate the golden files and review their diff in the same commit as its cause:

    DBEXP_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/published/test_published_claims.py
    git diff tests/published/golden/

A commit that changes code but not data/ should not need to: if it does, the code changed a verdict.
Every verdict cell must also contain one of the verdict words the book allows (tests/test_notebooks.py
VERDICTS: agrees, disagrees, not resolved, not measured, not testable).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from dbexp.book.toc import executed_chapters
from golden_claims import book_verdicts, differences, plain, record
from published_support import published_claims

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
SUFFIX = ".claims.json"
UPDATE = os.environ.get("DBEXP_UPDATE_GOLDEN", "") not in ("", "0")
UPDATE_COMMAND = "DBEXP_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/published/test_published_claims.py"
# the chapters the book executes (from _toc.yml), those of them with published results
PUBLISHED = [name for name in executed_chapters(REPO) if (REPO / "data" / name).is_dir()]


def golden_path(chapter: str) -> Path:
    return GOLDEN / f"{chapter}{SUFFIX}"


def dump(rec: dict) -> str:
    """A record as JSON, each innermost list (verdict words, one interval) on one line."""
    text = json.dumps(rec, indent=2, ensure_ascii=False)
    return re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + re.sub(r",\s+", ", ", m[1]) + "]", text) + "\n"


def test_the_chapters_with_published_data_are_found():
    assert {"calibration", "readview"} <= set(PUBLISHED), PUBLISHED


@pytest.mark.parametrize("chapter", PUBLISHED)
def test_claims_match_their_golden_verdicts_and_intervals(chapter):
    """A claim's verdict words or measured intervals are those its golden file pins."""
    rec = record(chapter, published_claims(chapter))
    path = golden_path(chapter)
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        if not path.is_file() or path.read_text() != dump(rec):
            path.write_text(dump(rec))
        return
    if not path.is_file():
        pytest.fail(f"{chapter} has published data in data/{chapter}/ but no golden claims file "
                    f"{path.relative_to(REPO)}; create it with\n    {UPDATE_COMMAND}\n"
                    "and review it before committing", pytrace=False)
    diff = differences(chapter, json.loads(path.read_text()), rec)
    if diff:
        pytest.fail(f"the published data changed: {chapter}'s claims differ from {path.relative_to(REPO)} "
                    f"({len(diff)} difference{'s' if len(diff) != 1 else ''}):\n" + "\n".join(diff) +
                    f"\nIf the change is meant, regenerate with\n    {UPDATE_COMMAND}\n"
                    "and review the golden files' diff.", pytrace=False)


def test_no_golden_file_without_published_data():
    """Every golden claims file has its chapter's published data."""
    stale = sorted(p.name for p in GOLDEN.glob(f"*{SUFFIX}") if p.name[: -len(SUFFIX)] not in PUBLISHED)
    assert not stale, (f"golden claims files for chapters with no published data in the book: {stale}; "
                       "delete them (or publish the chapter's data)")


@pytest.mark.parametrize("chapter", PUBLISHED)
def test_every_verdict_uses_a_book_verdict_word(chapter):
    """Every verdict cell holds one of the verdict words the book allows."""
    words = book_verdicts(REPO)
    table = published_claims(chapter)
    bad = [(plain(r["claim"])[:60], r["verdict"]) for r in table.to_dict("records")
           if not r["verdict"] or not any(w in r["verdict"] for w in words)]
    assert not bad, f"{chapter}: verdicts without any of {words}: {bad}"
