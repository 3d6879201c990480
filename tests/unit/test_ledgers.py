"""Every chapter's ledger of its sources' claims (dbexp/chapters/<name>/claims.yaml, read by
dbexp.experiments.claims_ledger): it exists and loads, its ids are unique, each anchor stands at its
line of the source (../shared/seeds/), and how much of what could be tested here is; the page's table
of the claims not tested (dbexp.book.tables.untested)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dbexp import chapters
from dbexp.book import tables
from dbexp.errors import DbexpError
from dbexp.experiments import claims_ledger

pytestmark = pytest.mark.unit

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"  # beside the clone, as CI checks it out
MIN_COVERAGE = {"vector_isolation": 0.8, "buffer_pins": 0.8}  # tested over testable, where the chapter is held to a share


def _coverage_id(name: str) -> str:
    """The test id of ``name``'s coverage: its counts, so the test list shows every chapter's."""
    try:
        tested, testable = claims_ledger.coverage(claims_ledger.ledger(name))
    except (DbexpError, OSError, ValueError) as e:  # the ledger test says what is wrong
        return f"{name}: no ledger ({type(e).__name__})"
    return f"{name}: {tested} of {testable} testable claims tested"


def _seeds() -> Path:
    """The sources' folder: a skip where it is missing on a developer's machine, a failure in CI."""
    if not SEEDS.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the sources are missing: {SEEDS} (CI has ../shared/seeds beside the clone)")
        pytest.skip(f"the sources are not on this machine ({SEEDS})")
    return SEEDS


@pytest.mark.parametrize("name", chapters.names())
def test_every_chapter_has_a_ledger_with_unique_ids(name: str):
    assert claims_ledger.path(name).is_file(), f"chapter {name} has no {claims_ledger.path(name)}"
    entries = claims_ledger.ledger(name)
    assert entries, f"{name}'s ledger is empty"
    ids = [e["id"] for e in entries]
    assert len(set(ids)) == len(ids), f"{name}: ids used twice: {sorted({i for i in ids if ids.count(i) > 1})}"


@pytest.mark.parametrize("name", chapters.names())
def test_each_anchor_stands_at_its_line_of_the_source(name: str):
    seeds = _seeds()
    misplaced = []
    for e in claims_ledger.ledger(name):
        lines = (seeds / e["source"]).read_text().splitlines()
        if not (isinstance(e["line"], int) and 1 <= e["line"] <= len(lines) and e["anchor"] in lines[e["line"] - 1]):
            misplaced.append(f"  {e['id']}: {e['anchor']!r} not at line {e['line']} of {e['source']}")
    assert not misplaced, f"\n{name}'s ledger places {len(misplaced)} claim(s) wrongly:\n" + "\n".join(misplaced)


@pytest.mark.parametrize("name", [pytest.param(n, id=_coverage_id(n)) for n in chapters.names()])
def test_coverage_is_reported_and_held_where_required(name: str):
    tested, testable = claims_ledger.coverage(claims_ledger.ledger(name))
    share = tested / testable if testable else 1.0
    print(f"{name}: {tested} of {testable} claims testable here are tested ({share:.0%})")
    assert 0 <= tested <= testable
    floor = MIN_COVERAGE.get(name)
    if floor is not None:
        assert share >= floor, f"{name}: {tested} of {testable} testable claims tested ({share:.0%}), under {floor:.0%}"


def _write(tmp_path: Path, monkeypatch, name: str, text: str) -> None:
    (tmp_path / name).mkdir()
    (tmp_path / name / "claims.yaml").write_text(text)
    monkeypatch.setattr(claims_ledger, "CHAPTERS", tmp_path)


ENTRY = "- {{id: {id}, source: s.txt, line: 1, anchor: a, claim: c, conditions: x, status: {status}, {extra}}}\n"


def test_a_ledger_is_checked_and_counted(tmp_path, monkeypatch):
    _write(tmp_path, monkeypatch, "made_up_ledger",
           ENTRY.format(id="a", status="tested", extra="measured: row a")
           + ENTRY.format(id="b", status="not measured", extra="why: no point")
           + ENTRY.format(id="c", status="not testable here", extra="why: 48 cores"))
    entries = claims_ledger.ledger("made_up_ledger")
    assert claims_ledger.coverage(entries) == (1, 2)
    rows, sentence = tables.untested("made_up_ledger")
    assert list(rows.columns) == list(tables.LEDGER_COLUMNS)
    assert list(rows["id"]) == ["b", "c"] and rows["status and why"].iloc[1] == "not testable here: 48 cores"
    assert rows["source line"].iloc[0] == "s.txt, line 1"
    assert sentence == "1 of 2 claims testable on this machine are tested."


@pytest.mark.parametrize("status, extra", [("tested", "why: x"), ("not measured", "measured: y"),
                                           ("maybe", "why: x")])
def test_an_entry_without_its_reason_or_with_a_bad_status_is_refused(tmp_path, monkeypatch, status, extra):
    name = f"bad_ledger_{status.replace(' ', '_')}"
    _write(tmp_path, monkeypatch, name, ENTRY.format(id="a", status=status, extra=extra))
    with pytest.raises(DbexpError, match="entry 'a'"):
        claims_ledger.ledger(name)


def test_a_chapter_without_a_ledger_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(claims_ledger, "CHAPTERS", tmp_path)
    with pytest.raises(DbexpError, match="no ledger"):
        claims_ledger.ledger("no_such_chapter")
    tables.untested_claims("no_such_chapter")  # shows nothing
