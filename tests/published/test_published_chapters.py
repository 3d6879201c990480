"""Every chapter with published data/: its claims carry computed verdicts and its page a summary (run by
`make published`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbexp import chapters
from published_support import published, published_claims

REPO = Path(__file__).resolve().parents[2]
NAMES = chapters.names()


@pytest.mark.parametrize("name", NAMES)
def test_every_claim_has_a_verdict_and_the_page_a_summary(name: str):
    if not (REPO / "data" / name).is_dir():
        pytest.skip(f"no published {name} results")
    chapter = chapters.get(name)
    res = published(name)
    assert len(res.wide) > 0 and res.source == "published data/"
    table = published_claims(name)
    from dbexp.experiments import verdicts

    assert list(table.columns) == list(verdicts.COLUMNS + verdicts.KEYS)
    assert len(table) >= 3
    for _, row in table.iterrows():
        assert 'href="https://' in row["claim"] or row["claim"].startswith("Our extension"), row["claim"]
    summary = chapter.findings(res)
    assert summary.strip(), f"{name} has no summary of findings"
