"""The server-side statement clocks' parsing, and the version-chain chapter's per-version estimates,
on fixed inputs with known answers."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dbexp.errors import DbexpError, RetryableError
from dbexp.experiments import mvcc_chains as mv
from dbexp.experiments import stats
from dbexp.metrics.statement_time import ExplainClock, StatementClockError, parse_explain
from dbexp.servers.postgres import parse_vacuum_verbose

EXPLAIN = [{"Plan": {"Node Type": "Index Scan", "Index Name": "chains_pkey", "Shared Hit Blocks": 3,
                     "Shared Read Blocks": 1, "Actual Rows": 1},
            "Planning": {"Shared Hit Blocks": 5}, "Planning Time": 0.051, "Triggers": [],
            "Execution Time": 0.012}]


def test_explain_gives_the_executor_time_and_the_pages():
    assert parse_explain(EXPLAIN) == (12.0, 4.0)
    assert parse_explain(json.dumps(EXPLAIN)) == (12.0, 4.0)  # as text, the way the server sends it


def test_explain_without_analyze_is_refused():
    doc = [{"Plan": {"Node Type": "Index Scan"}}]
    with pytest.raises(DbexpError, match="no Execution Time") as info:
        parse_explain(doc)
    assert not isinstance(info.value, RetryableError)  # measuring again would not help


def test_a_statement_the_clock_missed_may_be_measured_again():
    assert issubclass(StatementClockError, RetryableError)


def test_the_explain_clock_counts_every_statement():
    clock = ExplainClock()
    assert clock.wrap("SELECT 1").startswith("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) SELECT 1")
    clock.begin()
    clock.after([(json.dumps(EXPLAIN),)])
    got = clock.end(1)
    assert list(got["server_us"]) == [12.0] and list(got["buffers"]) == [4.0]
    clock.begin()
    with pytest.raises(StatementClockError, match="EXPLAIN timed 0 of 2 statements"):
        clock.end(2)


PG12_VACUUM = ('vacuuming "public.chains" index "chains_pkey" now contains 1100 row versions in 5 pages  '
               '"chains": found 0 removable, 1200 nonremovable row versions in 30 out of 30 pages '
               '100 dead row versions cannot be removed yet, oldest xmin: 741 There were 0 unused item '
               'identifiers.  "pg_toast_16390": found 0 removable, 0 nonremovable row versions in 0 out of 0 pages '
               '0 dead row versions cannot be removed yet, oldest xmin: 741')
PG16_VACUUM = ('vacuuming "sbtest.public.chains"  finished vacuuming "sbtest.public.chains": index scans: 0 '
               'pages: 0 removed, 30 remain, 30 scanned (100.00% of total) '
               'tuples: 2000 removed, 1000 remain, 0 are dead but not yet removable '
               'removable cutoff: 900, which was 0 XIDs old when operation ended  '
               'finished vacuuming "sbtest.pg_toast.pg_toast_16390": tuples: 0 removed, 0 remain, 0 are dead')


@pytest.mark.parametrize("text,removed,held", [(PG12_VACUUM, 0, 100), (PG16_VACUUM, 2000, 0)])
def test_vacuum_verbose_says_what_it_removed_and_what_it_could_not(text, removed, held):
    # the main table's line comes first; the toast table's later lines are not read
    assert parse_vacuum_verbose(text) == {"removed": removed, "not_removable": held}


def test_vacuum_verbose_in_another_wording_is_a_clear_error():
    with pytest.raises(DbexpError, match="VACUUM VERBOSE did not say how many tuples were removed"):
        parse_vacuum_verbose("vacuuming chains")


def test_trimmed_mean_leaves_the_extremes_out():
    x = np.array([1.0] * 8 + [100.0, 0.0])
    assert mv.trimmed_mean(x) == 1.0
    assert mv.trimmed_mean(np.array([2.0, 4.0])) == 3.0


def test_mean_ci_has_the_t_interval():
    m, lo, hi = stats.mean_ci([1.0, 2.0, 3.0, float("nan")])
    assert m == 2.0 and lo == pytest.approx(2 - 4.302653 / np.sqrt(3)) and hi == pytest.approx(2 + 4.302653 / np.sqrt(3))


def _results(rows: list[dict]):
    return SimpleNamespace(wide=pd.DataFrame(rows), series=pd.DataFrame())


def _chain_runs(flavor: str, name: str, per_version_old: float, per_version_fresh: float, column="v", ff=None):
    """Runs whose server times are exact lines in V: old = 10 + a V, fresh = 12 + b V (us), with a repeat's
    offset that moves both readers alike (drift), so the fitted slopes are a and b exactly."""
    rows = []
    for repeat in range(3):
        for v in (0, 10, 100):
            rows.append({"run_id": f"{name}-{v}-{repeat}", "flavor": flavor, "series_name": name, "versions": v,
                         "column": column, "fillfactor": ff, "repeat": repeat, "snapshot": True,
                         "hot_rows": 2, "samples": 40,
                         "old_server_us": 10 + repeat + per_version_old * v / 1000,
                         "fresh_server_us": 12 + repeat + per_version_fresh * v / 1000})
    return rows


def test_per_version_costs_and_the_excess_at_ten_have_known_answers():
    res = _results(_chain_runs("mysql", "MySQL 8.0.15", 700.0, 0.0)
                   + _chain_runs("postgres", "PostgreSQL 16.14", 0.0, 40.0, ff=70))
    pv = mv.per_version(res).set_index(["series_name", "reader"])
    assert pv.loc[("MySQL 8.0.15", "old"), "ns_per_version"] == pytest.approx(700.0)
    assert pv.loc[("MySQL 8.0.15", "old - fresh"), "ns_per_version"] == pytest.approx(700.0)
    assert pv.loc[("PostgreSQL 16.14", "fresh - old"), "ns_per_version"] == pytest.approx(40.0)
    ex = mv.excess_at(res, 10).set_index("series_name")
    assert ex.loc["MySQL 8.0.15", "payer"] == "old" and ex.loc["PostgreSQL 16.14", "payer"] == "fresh"
    assert ex.loc["MySQL 8.0.15", "ns_per_version"] == pytest.approx(700.0)
    assert ex.loc["PostgreSQL 16.14", "ns_per_version"] == pytest.approx(40.0)


def test_the_held_verdict_needs_the_control():
    t = pd.DataFrame({"held_snapshot": [2000.0], "held_control": [0.0], "reclaim_s": [1.5], "commits": [2000]})
    assert mv._held_verdict(t).startswith("agrees")
    assert mv._held_verdict(t.assign(held_control=1900.0)).startswith("not resolved: the control")
    assert mv._held_verdict(t.assign(held_snapshot=10.0)).startswith("disagrees")


def test_the_indexed_column_is_judged_against_the_hot_one():
    slopes = pd.DataFrame([
        {"series_name": "PostgreSQL 16.14", "variant": "col k, ff 100", "store": "heap", "reader": "fresh",
         "ns_per_version": 80.0, "ci_low": 70.0, "ci_high": 90.0},
        {"series_name": "PostgreSQL 16.14", "variant": "col v, ff 70", "store": "heap", "reader": "fresh",
         "ns_per_version": 30.0, "ci_low": 20.0, "ci_high": 40.0},
        {"series_name": "PostgreSQL 16.14", "variant": "col k, ff 100", "store": "heap", "reader": "old",
         "ns_per_version": 35.0, "ci_low": 25.0, "ci_high": 45.0},
        {"series_name": "PostgreSQL 16.14", "variant": "col v, ff 70", "store": "heap", "reader": "old",
         "ns_per_version": 30.0, "ci_low": 20.0, "ci_high": 40.0},
    ])
    got = mv._indexed_against_hot(slopes).set_index("reader")["verdict"]
    assert got["fresh"] == "agrees" and got["old"].startswith("not resolved")


def test_the_excess_at_ten_uses_the_cold_rows_of_the_same_run():
    rows = _chain_runs("mysql", "MySQL 8.0.15", 700.0, 0.0)
    for r in rows:  # cold neighbours: what the hot rows cost with no versions, plus a run's own offset
        r["old_cold_server_us"] = 10 + r["repeat"] + 0.5 * (r["run_id"].endswith("1"))
        r["fresh_cold_server_us"] = 12 + r["repeat"] + 0.5 * (r["run_id"].endswith("1"))
    ex = mv.excess_at(_results(rows), 10).set_index("series_name")
    assert ex.loc["MySQL 8.0.15", "ns_per_version"] == pytest.approx(700.0)
