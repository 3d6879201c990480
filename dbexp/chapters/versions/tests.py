"""The versions chapter's microbenchmarks: the source's names, its four groups, and what each runs.

Each test is one sysbench script with its options: sysbench 1.0.20's own where one fits (with options
that leave one statement type), else the project's versions_query.lua (one statement type per test,
chosen by --query) or update_inlist.lua. ``TESTS`` keeps the source's order within each group.
"""

from __future__ import annotations

from dataclasses import dataclass

GROUPS = ("point", "range without aggregation", "range with aggregation", "writes")
RO_OFF = (("point_selects", "0"), ("simple_ranges", "0"), ("sum_ranges", "0"), ("order_ranges", "0"),
          ("distinct_ranges", "0"))


@dataclass(frozen=True)
class Test:
    group: str
    script: str
    options: tuple[tuple[str, str], ...] = ()
    runs: str = ""  # what it runs, in words, for the page

    def with_options(self, **given: str) -> tuple[tuple[str, str], ...]:
        return tuple({**dict(self.options), **given}.items())


def _query(group: str, query: str, runs: str, **extra: str) -> Test:
    return Test(group, "versions_query", (("query", query), *extra.items()), runs)


def _ro_only(kind: str, runs: str) -> Test:
    """oltp_read_only with one range query type left on, no transaction around it."""
    opts = dict(RO_OFF)
    opts[kind] = "1"
    return Test("range with aggregation", "oltp_read_only", (*opts.items(), ("skip_trx", "on")), runs)


TESTS: dict[str, Test] = {
    # point queries
    "point-query": Test("point", "oltp_point_select", (), "one row by primary key"),
    "points-covered-pk": _query("point", "points-covered-pk", "10 ids by primary key, the id only"),
    "points-covered-si": _query("point", "points-covered-si", "10 k values by the secondary index, k only"),
    "points-notcovered-pk": _query("point", "points-notcovered-pk", "10 ids by primary key, column c"),
    "points-notcovered-si": _query("point", "points-notcovered-si", "10 k values by the secondary index, column c"),
    "random-points": Test("point", "select_random_points", (("random_points", "10"),),
                          "sysbench's select_random_points: 10 k values, every column"),
    "hot-points": _query("point", "hot-points", "the same 10 rows by primary key every time"),
    # range queries without aggregation
    "range-covered-pk": _query("range without aggregation", "range-covered-pk", "100 ids by primary key, the id only"),
    "range-covered-si": _query("range without aggregation", "range-covered-si", "a k range of 100, k only"),
    "range-notcovered-pk": _query("range without aggregation", "range-notcovered-pk", "100 ids, column c"),
    "range-notcovered-si": _query("range without aggregation", "range-notcovered-si", "a k range of 100, column c"),
    "scan": _query("range without aggregation", "scan", "every row read, none returned"),
    # range queries with aggregation
    "read-only-count": _query("range with aggregation", "read-only-count", "COUNT(*) over 100 ids"),
    "read-only-distinct": _ro_only("distinct_ranges", "DISTINCT c over 100 ids, ordered"),
    "read-only-order": _ro_only("order_ranges", "c over 100 ids, ORDER BY c"),
    "read-only-simple": _ro_only("simple_ranges", "c over 100 ids"),
    "read-only-sum": _ro_only("sum_ranges", "SUM(k) over 100 ids"),
    "read-only.range=10": Test("range with aggregation", "oltp_read_only", (("range_size", "10"),),
                               "sysbench's oltp_read_only transaction (10 point and 4 range queries), ranges of 10"),
    "read-only.range=100": Test("range with aggregation", "oltp_read_only", (),
                                "the same, ranges of 100"),
    "read-only.range=10000": Test("range with aggregation", "oltp_read_only", (("range_size", "10000"),),
                                  "the same, ranges of 10,000"),
    # writes
    "delete": Test("writes", "oltp_delete", (), "sysbench's oltp_delete: one row deleted by id"),
    "insert": Test("writes", "oltp_insert", (), "one row inserted"),
    "read-write.range=10": Test("writes", "oltp_read_write", (("range_size", "10"),),
                                "sysbench's oltp_read_write transaction, ranges of 10"),
    "read-write.range=100": Test("writes", "oltp_read_write", (), "the same, ranges of 100"),
    "update-index": Test("writes", "oltp_update_index", (), "k = k + 1 of one row (k is indexed)"),
    "update-inlist": Test("writes", "update_inlist", (("inlist_size", "100"),),
                          "the project's update_inlist.lua: k = k + 1 of 100 rows by id in an IN list"),
    "update-nonindex": Test("writes", "oltp_update_non_index", (), "c of one row (not indexed)"),
    "update-one": _query("writes", "update-one", "k = k + 1 of the same row every time"),
    "update-zipf": _query("writes", "update-zipf", "c of one row, ids zipfian"),
    "write-only": Test("writes", "oltp_write_only", (), "sysbench's oltp_write_only transaction"),
}
READS = tuple(name for name, t in TESTS.items() if t.group != "writes")
WRITES = tuple(name for name, t in TESTS.items() if t.group == "writes")
