"""Helpers for the unit tests: where the package and the fixtures are, and reading a fixture."""

from __future__ import annotations

from functools import cache
from pathlib import Path

UNIT_DIR = Path(__file__).resolve().parent
REPO = UNIT_DIR.parents[1]
PACKAGE = REPO / "dbexp"
FIXTURES = UNIT_DIR / "fixtures"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()


@cache
def published(name: str):
    """A chapter's published results (data/<name>/), read once per test session."""
    from dbexp import chapters

    return chapters.get(name).run("default", run=False, root=REPO)


@cache
def published_claims(name: str):
    """A chapter's claims table computed from its published results, once per test session (the
    chapters test and the golden test both read it; a table is never changed in place)."""
    from dbexp import chapters

    return chapters.get(name).claims(published(name))
