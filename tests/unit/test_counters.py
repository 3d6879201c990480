"""deltas() of dbexp/metrics/counters.py (only that function: the rest is being rewritten)."""

from __future__ import annotations


from dbexp.metrics import counters

BEFORE = {
    ("status", "Questions"): 1000.0,
    ("status", "Threads_running"): 4.0,  # a gauge: it may go down
    ("innodb_metrics", "buffer_pool_reads"): 50.0,
    ("pg_stat_database", "xact_commit"): 7.0,
    ("status", "Gone_at_the_end"): 3.0,  # only before: dropped
}
AFTER = {
    ("status", "Questions"): 1250.0,
    ("status", "Threads_running"): 1.0,
    ("innodb_metrics", "buffer_pool_reads"): 50.0,
    ("pg_stat_database", "xact_commit"): 7.5,
    ("status", "New_at_the_end"): 9.0,  # only after: dropped
}


def test_deltas_rows():
    rows = sorted(counters.deltas(BEFORE, AFTER), key=lambda r: (r["source"], r["name"]))
    assert rows == [
        {"source": "innodb_metrics", "name": "buffer_pool_reads", "before": 50.0, "after": 50.0,
         "delta": 0.0},
        {"source": "pg_stat_database", "name": "xact_commit", "before": 7.0, "after": 7.5, "delta": 0.5},
        {"source": "status", "name": "Questions", "before": 1000.0, "after": 1250.0, "delta": 250.0},
        {"source": "status", "name": "Threads_running", "before": 4.0, "after": 1.0, "delta": -3.0},
    ]


def test_deltas_same_name_in_two_sources_are_two_rows():
    before = {("status", "x"): 1.0, ("innodb_metrics", "x"): 10.0}
    after = {("status", "x"): 2.0, ("innodb_metrics", "x"): 30.0}
    rows = counters.deltas(before, after)
    assert sorted((r["source"], r["name"], r["delta"]) for r in rows) == [
        ("innodb_metrics", "x", 20.0), ("status", "x", 1.0)]


def test_deltas_keys_on_one_side_only_are_dropped():
    assert counters.deltas({("s", "a"): 1.0}, {("s", "b"): 2.0}) == []
    assert counters.deltas({}, AFTER) == []
    assert counters.deltas(BEFORE, {}) == []


def test_deltas_leave_inputs_alone():
    before, after = dict(BEFORE), dict(AFTER)
    counters.deltas(before, after)
    assert before == BEFORE and after == AFTER
