"""The mvcc_chains page from its published data/: at most six series per panel (run by `make published`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from published_support import published

REPO = Path(__file__).resolve().parents[2]


def test_published_mvcc_panels_hold_at_most_six_series():
    from dbexp.chapters import mvcc_chains as mv

    if not (REPO / "data" / "mvcc_chains").is_dir():
        pytest.skip("no published mvcc_chains results")
    lat = mv.reader_latency(published("mvcc_chains"))
    per_panel = lat.groupby(["store", "server", "panel"])["reader"].nunique()
    assert per_panel.max() <= 6
    assert list(lat["store"].unique())[0] == "undo"  # InnoDB first, as the text
