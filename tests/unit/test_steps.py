"""dbexp.experiments.steps: a probe's runs as a table and as claims rows, on runs made up here."""

import pandas as pd

from dbexp.experiments import steps, verdicts


def _runs():
    return pd.DataFrame({"series_name": ["a 1", "a 1", "b 2"], "repeat": [0, 1, 0], "instance": [0, 1, 0],
                         "pages": [10.0, 10.0, 12.0], "took_s": [0.5, 0.7, 0.6], "ok": [1.0, 1.0, 0.0]})


def test_table_names_one_value_for_agreeing_runs_and_each_where_they_differ():
    t = steps.table(_runs(), {"pages": "pages read", "took_s": "took (s)", "ok": "held", "missing": "absent"},
                    yes_no=("ok",), ranges=("took_s",))
    assert list(t["observation"]) == ["pages read", "took (s)", "held"]  # an observation no run has is left out
    assert list(t["a 1"]) == ["10 (both runs)", "0.5 to 0.7", "yes (both runs)"]
    assert list(t["b 2"]) == ["12 (one run)", "0.6", "no (one run)"]


def test_claim_rows_count_failing_runs_and_group_servers_that_saw_the_same():
    claim = steps.StepClaim("x", "pages", "pages are read", lambda r: f"{r.pages:.0f} pages",
                            lambda r: bool(r.ok))
    row, = steps.claim_rows(_runs(), [claim], "the source", lambda g: "watched", lambda c: c)
    assert row.verdict == "disagrees (the claim failed in 1 of 3 runs)"
    assert row.measured == "a 1: 10 pages (2 of 2 runs); b 2: 12 pages (0 of 1 runs)"
    assert row.here.startswith("a 1, b 2; watched; 2 runs per server, on 2 instances")


def test_claim_rows_say_not_measured_where_no_run_applies():
    claim = steps.StepClaim("x", "pages", "c", str, bool, only=lambda r: False)
    row, = steps.claim_rows(_runs(), [claim], "s", lambda g: "", lambda c: c)
    assert row.verdict == verdicts.NOT_MEASURED
