"""The tables a chapter derives from its runs (data/<chapter>/claims.parquet, controls.parquet, ...) are what its
code computes from the published runs now: a change of analysis that moves them is seen here (rewrite them with
`dbexp chapters --write-derived`); the A/A controls hold 1 in at least 90% of their intervals (issue 32); and
every claims row that judges (agrees, disagrees) has a witness that held, every tested ledger entry a row with
a witness (issue 43)."""

from __future__ import annotations

import pandas as pd
import pytest

from dbexp import chapters as registry
from dbexp.experiments import claims_ledger, verdicts
from dbexp.experiments.chapter import CLAIMS_FILE, SUMMARY_FILE, is_published, published
from dbexp.results.export import data_dir

DERIVING = list(registry.names())  # every chapter writes its claims.parquet; some derive more


@pytest.mark.parametrize("name", DERIVING)
def test_derived_tables_are_what_the_code_computes_from_the_published_runs(name):
    chapter = registry.every()[name]
    if not is_published(name):
        pytest.skip(f"{name} is not published")
    res = published(name)
    tables = {CLAIMS_FILE: verdicts.by_id(chapter.claims(res)), SUMMARY_FILE: chapter.summary(res),
              **chapter.derived(res)}
    for table, frame in tables.items():
        path = data_dir() / name / f"{table}.parquet"
        assert path.exists(), f"the data changed: {path} is missing (dbexp chapters --write-derived)"
        pd.testing.assert_frame_equal(pd.read_parquet(path), frame.reset_index(drop=True), check_dtype=False,
                                      obj=f"{path} (the data or the analysis changed: dbexp chapters --write-derived)")


@pytest.mark.parametrize("name", [n for n in DERIVING if (data_dir() / n / "controls.parquet").exists()])
def test_the_published_a_a_controls_hold_1_in_nine_of_ten_intervals(name):
    c = pd.read_parquet(data_dir() / name / "controls.parquet")
    assert len(c) and set(c.columns) >= {"flavor", "test", "ratio", "lo", "hi"}
    held = ((c["lo"] <= 1) & (c["hi"] >= 1)).mean()
    assert held >= 0.9, f"the data changed: the A/A intervals hold 1 in {held:.0%} of {name}'s tests"


def _claims_file(name: str) -> pd.DataFrame:
    path = data_dir() / name / f"{CLAIMS_FILE}.parquet"
    if not path.exists():
        pytest.skip(f"{name} has no {path.name} (not published)")
    return pd.read_parquet(path)


@pytest.mark.parametrize("name", DERIVING)
def test_no_claim_is_judged_without_a_witness_that_held(name):
    c = _claims_file(name)
    assert set(c.columns) >= {"id", "verdict", "measured", "witness", "witness_ok"}
    judged = c[c["verdict"].map(verdicts.judged)]
    bad = judged[judged["witness_ok"].ne(True)]
    assert bad.empty, f"the data changed: {name} judges {list(bad['id'])} without a witness that held"


@pytest.mark.parametrize("name", DERIVING)
def test_every_tested_ledger_entry_has_a_row_with_a_witness(name):
    c = _claims_file(name)
    tested = [e["id"] for e in claims_ledger.ledger(name) if e["status"] == claims_ledger.TESTED]
    rows = c.set_index("id")
    missing = [i for i in tested if i not in rows.index]
    assert not missing, f"{name}'s claims.parquet has no row for the tested ledger entries {missing}"
    blank = [i for i in tested if not str(rows.loc[[i], "witness"].iloc[0]).strip()]
    assert not blank, f"{name}'s tested ledger entries {blank} have no witness"
