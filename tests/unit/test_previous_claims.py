"""The last publication's claims, kept when a chapter is published again, and what moved (by verdict category,
matched by ledger id, and with the machine)."""

from __future__ import annotations

import pandas as pd
import pytest

from dbexp.experiments import moved
from dbexp.results import previous

pytestmark = pytest.mark.unit


def table(*rows, ids=None):
    df = pd.DataFrame(rows, columns=["claim", "source: number, conditions", "here: conditions", "measured here",
                                     "verdict"])
    return df if ids is None else df.assign(id=ids)


def test_moved_compares_claim_by_claim_by_category_and_names_new_and_gone(tmp_path):
    old = table(("grows", "s", "h", "+1.0 [0.5, 1.5]", "agrees"), ("latch", "s", "h", "2.0", "not resolved"),
                ("gone", "s", "h", "x", "agrees"))
    previous.keep("t", old, "2026-11-24 13:00", "AMD EPYC", root=tmp_path)
    now = table(("grows", "s", "h", "+1.1 [0.7, 1.4]", "agrees (direction only)"), ("latch", "s", "h", "1.76", "agrees"),
                ("new", "s", "h", "y", "disagrees"))
    m = moved.moved("t", now, tmp_path).set_index("claim")
    assert m.loc["grows", "moved"] == "no"  # the category outside parentheses is the verdict's
    assert m.loc["latch", "moved"] == "yes" and m.loc["latch", "measured here then"] == "2.0"
    assert m.loc["gone", "moved"] == "claim gone" and m.loc["new", "moved"] == "new claim"
    assert moved.moved("never", now, tmp_path) is None
    c = moved.counts(moved.moved("t", now, tmp_path))
    assert dict(c) == {"not resolved → agrees": 1, "agrees → (none)": 1, "(none) → disagrees": 1}


def test_a_verdict_that_keeps_its_word_but_moves_its_category_moved(tmp_path):
    # "agrees in direction, smaller" is not "agrees": the text before " (" would call them the same
    previous.keep("t", table(("a", "s", "h", "m", "agrees in direction, smaller"), ids=["x"]), "2026-11-24", "Intel",
                  root=tmp_path)
    m = moved.moved("t", table(("a (reworded)", "s", "h", "m", "agrees (it grows)"), ids=["x"]), tmp_path)
    assert list(m["moved"]) == ["yes"] and list(m["claim"]) == ["a (reworded)"]  # matched by id, not by text


def test_the_page_shows_only_what_moved_and_the_claims_words(tmp_path):
    from dbexp.book.tables import as_moved

    old = table(('grows (<a href="https://x">source</a>)', "s", "h", "1", "agrees"), ("latch", "s", "h", "2", "agrees"))
    previous.keep("t", old, "2026-11-24 13:00", "AMD EPYC", root=tmp_path)
    now = table(('grows (<a href="https://x">source</a>)', "s", "h", "1", "agrees"), ("latch", "s", "h", "3", "disagrees"))
    shown = as_moved(moved.moved("t", now, tmp_path))
    assert list(shown["claim"]) == ["latch"] and list(shown["moved"]) == ["yes"]


def test_a_finding_that_moved_beyond_both_intervals_between_two_machines_is_named(tmp_path):
    old = table(("w", "s", "h", "9.7.4 / 8.0.15: 1.075 [1.01, 1.14]", "agrees"),
                ("p", "s", "h", "0.93 [0.82, 1.07]", "not resolved"), ids=["w", "p"])
    previous.keep("t", old, "2026-11-20", "Intel Xeon", root=tmp_path)
    now = table(("w", "s", "h", "9.7.4 / 8.0.15: 1.225 [1.04, 1.44]", "agrees"),
                ("p", "s", "h", "0.95 [0.85, 1.06]", "not resolved"), ids=["w", "p"])
    m = moved.moved("t", now, tmp_path)
    # 1.075 lies inside [1.04, 1.44]: not beyond both intervals
    assert moved.machine_moves(m, "Intel Xeon", "AMD EPYC").empty
    now2 = now.assign(**{"measured here": ["9.7.4 / 8.0.15: 1.30 [1.20, 1.44]", "0.95 [0.85, 1.06]"]})
    mm = moved.machine_moves(moved.moved("t", now2, tmp_path), "Intel Xeon", "AMD EPYC")
    assert list(mm["claim"]) == ["w"] and list(mm.columns) == ["claim", "then (Intel Xeon)", "now (AMD EPYC)"]
    assert moved.machine_moves(moved.moved("t", now2, tmp_path), "AMD EPYC", "AMD EPYC").empty
    assert moved.first_interval("ratio 0.715 [0.617, 0.837] on writes") == (0.715, 0.617, 0.837)


def test_the_previous_publication_is_recomputed_from_git_with_the_rules_of_now(tmp_path):
    """dbexp chapters --previous-from-history: the data before the last commit that replaced a chapter's runs, read
    from git, its claims computed by this code (in a clone: the checkout's data/ stay as they are)."""
    from dbexp import chapters, process
    from dbexp.paths import project_root

    repo = project_root()
    if not (repo / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    process.run(["git", "clone", "-q", "--no-hardlinks", str(repo), str(clone)], check=True)
    chapter = chapters.get("calibration")
    path = chapter.recompute_previous(clone)
    shallow = process.run(["git", "-C", str(repo), "rev-parse", "--is-shallow-repository"], capture_output=True,
                          text=True).stdout.strip() == "true"
    if path is None and shallow:
        pytest.skip("a shallow clone keeps no earlier publication")
    assert path == clone / "data" / "calibration" / "previous_claims.parquet"
    kept = pd.read_parquet(path)
    assert {"id", "claim", "verdict", "published_until", "host"} <= set(kept.columns) and len(kept)
    last = process.run(["git", "-C", str(clone), "log", "-1", "--format=%cI", "--", "data/calibration/runs.parquet"],
                       capture_output=True, text=True, check=True).stdout.strip()
    assert pd.Timestamp(kept["published_until"].iloc[0]) < pd.Timestamp(last)  # the publication before the current
