"""Helpers for the unit tests: where the package and the fixtures are, and reading a fixture."""

from __future__ import annotations

from pathlib import Path

UNIT_DIR = Path(__file__).resolve().parent
REPO = UNIT_DIR.parents[1]
PACKAGE = REPO / "dbexp"
FIXTURES = UNIT_DIR / "fixtures"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()
