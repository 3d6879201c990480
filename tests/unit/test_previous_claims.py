"""The last publication's claims, kept when a chapter is published again, and what moved."""

from __future__ import annotations

import pandas as pd
import pytest

from dbexp.results import previous

pytestmark = pytest.mark.unit


def table(*rows):
    return pd.DataFrame(rows, columns=["claim", "source: number, conditions", "here: conditions", "measured here",
                                       "verdict"])


def test_moved_compares_claim_by_claim_and_names_new_and_gone(tmp_path):
    old = table(("grows", "s", "h", "+1.0 [0.5, 1.5]", "agrees"), ("latch", "s", "h", "2.0", "not resolved"),
                ("gone", "s", "h", "x", "agrees"))
    previous.keep("t", old, "2026-11-24 13:00", "AMD EPYC", root=tmp_path)
    now = table(("grows", "s", "h", "+1.1 [0.7, 1.4]", "agrees (direction only)"), ("latch", "s", "h", "1.76", "agrees"),
                ("new", "s", "h", "y", "disagrees"))
    m = previous.moved("t", now, tmp_path).set_index("claim")
    assert m.loc["grows", "moved"] == "no"  # the word before the parenthesis is the verdict
    assert m.loc["latch", "moved"] == "yes" and m.loc["latch", "measured here then"] == "2.0"
    assert m.loc["gone", "moved"] == "claim gone" and m.loc["new", "moved"] == "new claim"
    assert previous.moved("never", now, tmp_path) is None


def test_the_page_shows_the_claims_words_and_what_moved_first(tmp_path):
    from dbexp.book.tables import as_moved

    old = table(('grows (<a href="https://x">source</a>)', "s", "h", "1", "agrees"), ("latch", "s", "h", "2", "agrees"))
    previous.keep("t", old, "2026-11-24 13:00", "AMD EPYC", root=tmp_path)
    now = table(('grows (<a href="https://x">source</a>)', "s", "h", "1", "agrees"), ("latch", "s", "h", "3", "disagrees"))
    shown = as_moved(previous.moved("t", now, tmp_path))
    assert list(shown["claim"]) == ["latch", "grows (source)"] and list(shown["moved"]) == ["yes", "no"]
