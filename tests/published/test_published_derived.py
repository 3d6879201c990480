"""The tables a chapter derives from its runs (data/<chapter>/controls.parquet, ...) are what its code
computes from the published runs now: a change of analysis that moves them is seen here (rewrite them with
`dbexp chapters --write-derived`), and the A/A controls hold 1 in at least 90% of their intervals (issue 32)."""

from __future__ import annotations

import pandas as pd
import pytest

from dbexp import chapters as registry
from dbexp.experiments.chapter import is_published, published
from dbexp.results.export import data_dir

DERIVING = [name for name, ch in registry.every().items() if ch._own("analysis", "derived") is not None]


@pytest.mark.parametrize("name", DERIVING)
def test_derived_tables_are_what_the_code_computes_from_the_published_runs(name):
    chapter = registry.every()[name]
    if not is_published(name):
        pytest.skip(f"{name} is not published")
    for table, frame in chapter.derived(published(name)).items():
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
