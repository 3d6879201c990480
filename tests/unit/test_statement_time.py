"""The server-side statement clocks of the mvcc_chains chapter's engine parts (EXPLAIN ANALYZE's
document, the clock's count of statements) and PostgreSQL's VACUUM VERBOSE, on fixed inputs with
known answers."""

from __future__ import annotations

import json

import pytest

from dbexp.chapters.mvcc_chains.engines import StatementClockError
from dbexp.chapters.mvcc_chains.engines.postgres import ExplainClock, parse_explain, parse_vacuum_verbose
from dbexp.errors import DbexpError, RetryableError

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
