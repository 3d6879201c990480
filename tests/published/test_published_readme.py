"""README.md's minutes table says what the committed data/ say (run by `make published`)."""

from __future__ import annotations

from pathlib import Path

from dbexp.cli import minutes_block
from dbexp.results import readme

REPO = Path(__file__).resolve().parents[2]


def test_the_readmes_minutes_table_is_the_one_data_gives():
    """README.md's minutes table is written from every chapter's data/<chapter>/summary.parquet"""
    body = minutes_block(REPO)
    assert not readme.stale_block(readme.MINUTES_BLOCK, body, REPO / "README.md"), (
        "README.md's minutes table differs from data/*/summary.parquet: run .venv/bin/dbexp readme")
