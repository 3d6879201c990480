"""Verdicts pinned: every published chapter's claims table, computed from data/, against a golden file.

For each chapter of the book's table of contents that has published results in data/<chapter>/, the
test computes ``claims(run("default", run=False))`` and compares it, cell by cell, with
tests/unit/golden/<chapter>.claims.json (every column the table has, as text, rows in the order
``claims`` returns them). A changed verdict, a changed measured value or a reworded claim fails here
with the chapter, the claim and each changed cell before and after; so does a chapter with published
data but no golden file, or a golden file whose chapter has no published data any more.

When the change is meant (new data published, a claim reworded, a verdict rule changed), regenerate
the golden files and review their diff like any other change, in the same commit as its cause:

    DBEXP_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_claims_golden.py
    git diff tests/unit/golden/

Every verdict cell must also contain one of the verdict words the book allows (tests/test_notebooks.py
VERDICTS: agrees, disagrees, not resolved, not measured, not testable).
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from unit_support import published_claims
from dbexp.book.toc import executed_chapters
from dbexp.experiments import verdicts

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
SUFFIX = ".claims.json"
UPDATE = os.environ.get("DBEXP_UPDATE_GOLDEN", "") not in ("", "0")
UPDATE_COMMAND = "DBEXP_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_claims_golden.py"
# the chapters the book executes (from _toc.yml), those of them with published results
PUBLISHED = [name for name in executed_chapters(REPO) if (REPO / "data" / name).is_dir()]


def _book_verdicts() -> tuple[str, ...]:
    """The verdict words the book's notebook test accepts (VERDICTS in tests/test_notebooks.py),
    read without importing that module (it needs papermill and marks itself docker)."""
    tree = ast.parse((REPO / "tests" / "test_notebooks.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "VERDICTS" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError("tests/test_notebooks.py defines no VERDICTS")


VERDICT_WORDS = _book_verdicts()


def golden_path(chapter: str) -> Path:
    return GOLDEN / f"{chapter}{SUFFIX}"


def _cell(value) -> str | None:
    return None if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)


def as_record(chapter: str, table: pd.DataFrame) -> dict:
    columns = [str(c) for c in table.columns]
    rows = [dict(zip(columns, (_cell(v) for v in row), strict=True))
            for row in table.itertuples(index=False, name=None)]
    return {"chapter": chapter,
            "computed_by": f'claims(run("default", run=False)) on data/{chapter}/',
            "columns": columns, "rows": rows}


def dump(record: dict) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def label(claim: str | None, width: int = 100) -> str:
    """A claim as a reader would name it: its text without HTML tags, cut to ``width``."""
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", claim or "")).strip()
    return text if len(text) <= width else text[: width - 3] + "..."


def differences(chapter: str, before: dict, after: dict) -> list[str]:
    """Readable lines for every difference between a golden record and a computed one."""
    out = []
    if before["columns"] != after["columns"]:
        out.append(f"{chapter}: columns changed: {before['columns']} -> {after['columns']}")
    key = "claim" if "claim" in before["columns"] and "claim" in after["columns"] else None
    old, new = before["rows"], after["rows"]
    old_claims = [r.get(key) if key else i for i, r in enumerate(old)]
    new_claims = [r.get(key) if key else i for i, r in enumerate(new)]
    if key and (len(set(old_claims)) < len(old_claims) or len(set(new_claims)) < len(new_claims)):
        key = None  # repeated claim texts: match rows by position
        old_claims, new_claims = list(range(len(old))), list(range(len(new)))
    by_new = dict(zip(new_claims, new))
    for i, (claim, row) in enumerate(zip(old_claims, old)):
        name = f"claim {i + 1} '{label(row.get('claim'))}'"
        if claim not in by_new:
            out.append(f"{chapter}: {name}: no longer in the table" if key else
                       f"{chapter}: row {i + 1} removed: {row}")
            continue
        now = by_new[claim]
        for col in dict.fromkeys(list(row) + list(now)):
            if row.get(col) != now.get(col):
                out.append(f"{chapter}: {name}: {col!r} changed\n    before: {row.get(col)!r}\n"
                           f"    after:  {now.get(col)!r}")
    gone = set(old_claims)
    for i, (claim, row) in enumerate(zip(new_claims, new)):
        if claim not in gone:
            out.append(f"{chapter}: claim {i + 1} '{label(row.get('claim'))}' is new: {row}")
    common_old = [c for c in old_claims if c in by_new]
    common_new = [c for c in new_claims if c in set(old_claims)]
    if key and common_old != common_new:
        out.append(f"{chapter}: the claims' order changed: "
                   f"{[label(c, 40) for c in common_old]} -> {[label(c, 40) for c in common_new]}")
    return out


_computed: dict[str, dict] = {}


@pytest.fixture(scope="module")
def computed():
    """Each published chapter's claims table as a golden record, computed once for the module."""
    def get(chapter: str) -> dict:
        if chapter not in _computed:
            table = published_claims(chapter)
            _computed[chapter] = as_record(chapter, table)
        return _computed[chapter]
    return get


def test_the_chapters_with_published_data_are_found():
    assert {"calibration", "readview"} <= set(PUBLISHED), PUBLISHED


@pytest.mark.parametrize("chapter", PUBLISHED)
def test_claims_table_matches_its_golden_file(chapter, computed):
    record = computed(chapter)
    path = golden_path(chapter)
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        if not path.is_file() or path.read_text() != dump(record):
            path.write_text(dump(record))
        return
    if not path.is_file():
        pytest.fail(f"{chapter} has published data in data/{chapter}/ but no golden claims file "
                    f"{path.relative_to(REPO)}; create it with\n    {UPDATE_COMMAND}\n"
                    "and review it before committing", pytrace=False)
    golden = json.loads(path.read_text())
    diff = differences(chapter, golden, record)
    if diff:
        pytest.fail(f"{chapter}'s claims table differs from {path.relative_to(REPO)} "
                    f"({len(diff)} difference{'s' if len(diff) != 1 else ''}):\n" + "\n".join(diff) +
                    f"\nIf the change is meant, regenerate with\n    {UPDATE_COMMAND}\n"
                    "and review the golden files' diff.", pytrace=False)
    assert path.read_text() == dump(record), f"{path.relative_to(REPO)} is not in the form {UPDATE_COMMAND} writes"


def test_no_golden_file_without_published_data():
    stale = sorted(p.name for p in GOLDEN.glob(f"*{SUFFIX}") if p.name[: -len(SUFFIX)] not in PUBLISHED)
    assert not stale, (f"golden claims files for chapters with no published data in the book: {stale}; "
                       "delete them (or publish the chapter's data)")


@pytest.mark.parametrize("chapter", PUBLISHED)
def test_every_verdict_uses_a_book_verdict_word(chapter, computed):
    record = computed(chapter)
    assert "verdict" in record["columns"], record["columns"]
    bad = [(label(r.get("claim"), 60), r["verdict"]) for r in record["rows"]
           if not r["verdict"] or not any(w in r["verdict"] for w in VERDICT_WORDS)]
    assert not bad, f"{chapter}: verdicts without any of {VERDICT_WORDS}: {bad}"


def test_verdict_words_cover_the_verdict_helpers():
    assert {"agrees", "disagrees", "not resolved", "not measured"} <= set(VERDICT_WORDS)
    assert verdicts.NOT_MEASURED.startswith(VERDICT_WORDS)


def test_the_diff_names_chapter_claim_and_cells():
    cols = ["claim", "measured here", "verdict"]
    before = {"columns": cols, "rows": [{"claim": '<a href="https://x">A</a> is fast', "measured here": "1.0",
                                         "verdict": "agrees"},
                                        {"claim": "B", "measured here": "2", "verdict": "agrees"}]}
    after = {"columns": cols, "rows": [{"claim": '<a href="https://x">A</a> is fast', "measured here": "0.9",
                                        "verdict": "disagrees"},
                                       {"claim": "C", "measured here": "3", "verdict": "agrees"}]}
    lines = differences("ch", before, after)
    assert lines[0] == "ch: claim 1 'A is fast': 'measured here' changed\n    before: '1.0'\n    after:  '0.9'"
    assert lines[1] == "ch: claim 1 'A is fast': 'verdict' changed\n    before: 'agrees'\n    after:  'disagrees'"
    assert lines[2] == "ch: claim 2 'B': no longer in the table"
    assert lines[3].startswith("ch: claim 2 'C' is new")
    assert differences("ch", before, before) == []
