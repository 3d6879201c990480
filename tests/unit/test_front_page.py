"""The front page's table of every chapter's answer, read from each chapter's summary.parquet, and the versions
it and the chapters' series names show."""

from __future__ import annotations

import pandas as pd
import pytest

from dbexp.book import front
from dbexp.catalog.versions import short

pytestmark = pytest.mark.unit


def test_a_version_is_shown_up_to_its_packaging_suffix_or_parenthesis():
    assert short("8.0.15-log") == "8.0.15" and short("10.11.19-MariaDB-0+deb12u1") == "10.11.19"
    assert short("19rc1 (Debian 19~rc1-1)") == "19rc1" and short("16.14") == "16.14"


def test_the_front_page_has_one_row_per_published_chapter_linked_to_its_page(tmp_path, monkeypatch):
    monkeypatch.setattr(front, "chapters", lambda root: [("book/readview", "What a snapshot costs"),
                                                         ("book/gtid", "What GTIDs cost")])
    folder = tmp_path / "data" / "readview"
    folder.mkdir(parents=True)
    pd.DataFrame([{"chapter": "readview", "headline": "A view costs 1.2 ns [1.0, 1.4] per open transaction.",
                   "verdicts": "7 claims: 5 agree, 2 not resolved", "hardware": "2 CPUs (AMD EPYC, VM)",
                   "cpu": "AMD EPYC", "measured_until": "2026-11-27 13:00", "runs": 204, "minutes": 19.4,
                   "sweeps": 1}]).to_parquet(folder / front.SUMMARY)
    text = front.headlines_markdown(tmp_path)
    assert text.startswith("```{list-table}") and text.endswith("```") and ":class: dataframe dbexp-table" in text
    rows = text.split("\n* - ")[1:]
    assert len(rows) == 2  # the header and readview's row: gtid is not published here
    row = rows[1]
    assert row.startswith("{doc}`What a snapshot costs <readview>`")
    assert "**Verdicts:** 7 claims: 5 agree, 2 not resolved" in row and "AMD EPYC, 2026-11-27: 204 runs, 19.4 min" in row
    assert row.rstrip("`").rstrip().endswith("- A view costs 1.2 ns [1.0, 1.4] per open transaction.")
