"""The versions chapter's microbenchmarks: the source's names, its four groups, and what each runs, as Mark
Callaghan's sysbench harness defines them (mdcallag/mytools, bench/sysbench.lua/: all_small.sh lists the tests and
the range or IN-list size each is given, run.sh maps a test to its Lua script and options, lua/ holds the scripts).

Each test is one sysbench script with its options: sysbench 1.0.20's own where his harness runs the stock script
(the same statements), else the project's versions_tests.lua (one statement per event, chosen by --test, written
from his scripts' statements). ``TESTS`` keeps his order within each group. Every test says what it must run per
sysbench event (``statements``: statements per type; ``rows``: rows read, a floor and a ceiling), which the runs'
own counters are checked against (the claims' witness); ``follows`` names his script and options, for the page.
``HEADLINE`` is the default scale's grid: the tests the sources' posts name (every group's, and the regression
source's update-nonindex); the full scale runs every test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GROUPS = ("point", "range without aggregation", "range with aggregation", "writes")
SOURCE = "mdcallag/mytools bench/sysbench.lua"  # the harness whose tests these are
SOURCE_URL = "https://github.com/mdcallag/mytools/tree/master/bench/sysbench.lua"
TYPES = ("select", "update", "insert", "delete", "begin", "commit")  # statement types counted per event
ONE_OF = ("point_selects", "simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges")


@dataclass(frozen=True)
class Test:
    group: str
    script: str
    options: tuple[tuple[str, str], ...] = ()
    runs: str = ""  # what it runs, in words, for the page
    follows: str = ""  # his script and options (run.sh), for the page
    statements: dict[str, float] = field(default_factory=dict)  # per sysbench event, by type (TYPES)
    rows: float = 0.0  # rows read per event (a whole table: SCAN_ROWS, read as the table's size)

    def with_options(self, **given: str) -> tuple[tuple[str, str], ...]:
        return tuple({**dict(self.options), **given}.items())

    def command_options(self) -> dict[str, str]:
        """The options as sysbench's command line spells them (``--range-size``; ours are stored with '_')."""
        return {k.replace("_", "-"): v for k, v in self.options}


SCAN_ROWS = -1.0  # rows: every row of the table


def _ours(group: str, test: str, runs: str, follows: str, statements: dict, rows: float, points: int | None = None,
          **extra: str) -> Test:
    opts = (("statement", test),) + ((("points", str(points)),) if points is not None else ()) + tuple(extra.items())
    return Test(group, "versions_tests", opts, runs, follows, statements, rows)


def _read_only(kind: str, runs: str, rows: float) -> Test:
    """His read-only-simple/sum/order/distinct: the stock oltp_read_only transaction (BEGIN, its 10 point
    selects, one range query of the one type left on, COMMIT), ranges of 1,000."""
    opts = {k: "0" for k in ONE_OF[1:]}
    opts[kind] = "1"
    return Test("range with aggregation", "oltp_read_only", (*opts.items(), ("range_size", "1000")), runs,
                f"oltp_read_only.lua --{kind.replace('_', '-')}=1 (the other range types 0) --range-size=1000",
                {"select": 11, "begin": 1, "commit": 1}, 10 + 1000)


def _range(r: int) -> tuple[tuple[str, str], ...]:
    """--range-size, left out where it is sysbench's default (100)."""
    return () if r == 100 else (("range_size", str(r)),)


ONE = {"select": 1}
TESTS: dict[str, Test] = {
    # point queries
    "point-query": Test("point", "oltp_point_select", (), "one row by primary key, column c",
                        "oltp_point_select.lua --skip-trx (the stock script opens no transaction either way)", ONE, 1),
    **{f"random-points.range={n}": _ours("point", "random-points", f"{n:,} ids by primary key, column c",
                                         f"oltp_inlist_select.lua --random-points={n} --skip-trx", ONE, n, points=n)
       for n in (10, 100, 1000)},
    "hot-points": _ours("point", "hot-points", "the same 100 ids from mid-table every time, column c",
                        "oltp_inlist_select.lua --random-points=100 --hot-points --skip-trx", ONE, 100, points=100),
    "points-covered-pk": _ours("point", "points-covered-pk", "100 ids by primary key, the id only",
                               "oltp_points_covered.lua --random-points=100 --skip-trx", ONE, 100, points=100),
    "points-covered-si": _ours("point", "points-covered-si", "100 k values by the secondary index, k only",
                               "oltp_points_covered.lua --random-points=100 --skip-trx --on-id=false", ONE, 100,
                               points=100),
    "points-notcovered-pk": _ours("point", "points-notcovered-pk", "100 ids by primary key, id and c",
                                  "oltp_points_covered.lua --random-points=100 --skip-trx --covered=false", ONE, 100,
                                  points=100),
    "points-notcovered-si": _ours("point", "points-notcovered-si", "100 k values by the secondary index, k and c",
                                  "oltp_points_covered.lua --random-points=100 --skip-trx --on-id=false "
                                  "--covered=false", ONE, 100, points=100),
    # range queries without aggregation
    "range-covered-pk": _ours("range without aggregation", "range-covered-pk", "ids x to x + 100, the id only",
                              "oltp_range_covered.lua --random-points=100 --skip-trx", ONE, 101, points=100),
    "range-covered-si": _ours("range without aggregation", "range-covered-si", "k from x to x + 100, k only",
                              "oltp_range_covered.lua --random-points=100 --skip-trx --on-id=false", ONE, 101,
                              points=100),
    "range-notcovered-pk": _ours("range without aggregation", "range-notcovered-pk", "ids x to x + 100, id and c",
                                 "oltp_range_covered.lua --random-points=100 --skip-trx --covered=false", ONE, 101,
                                 points=100),
    "range-notcovered-si": _ours("range without aggregation", "range-notcovered-si", "k from x to x + 100, k and c",
                                 "oltp_range_covered.lua --random-points=100 --skip-trx --on-id=false "
                                 "--covered=false", ONE, 101, points=100),
    "scan": _ours("range without aggregation", "scan", "every row read (WHERE LENGTH(c) < 0), none returned",
                  "oltp_scan.lua", ONE, SCAN_ROWS),
    # range queries with aggregation
    "read-only-count": _ours("range with aggregation", "read-only-count", "count(c) over 1,000 ids, no transaction",
                             "oltp_read_only_count.lua --skip-trx --range-size=1000", ONE, 1000,
                             range_size="1000"),
    "read-only-distinct": _read_only("distinct_ranges", "the stock transaction: 10 point selects and DISTINCT c "
                                     "over 1,000 ids, ordered", 10 + 1000),
    "read-only-order": _read_only("order_ranges", "the stock transaction: 10 point selects and c over 1,000 ids, "
                                  "ORDER BY c", 10 + 1000),
    "read-only-simple": _read_only("simple_ranges", "the stock transaction: 10 point selects and c over 1,000 ids",
                                   10 + 1000),
    "read-only-sum": _read_only("sum_ranges", "the stock transaction: 10 point selects and SUM(k) over 1,000 ids",
                                10 + 1000),
    **{f"read-only.range={r}": Test("range with aggregation", "oltp_read_only", _range(r),
                                    f"the stock oltp_read_only transaction (10 point and 4 range queries), ranges "
                                    f"of {r:,}", f"oltp_read_only.lua --range-size={r}",
                                    {"select": 14, "begin": 1, "commit": 1}, 10 + 4 * r)
       for r in (10, 100, 10000)},
    # writes
    "delete": Test("writes", "oltp_delete", (), "one row deleted by id", "oltp_delete.lua", {"delete": 1}, 1),
    "insert": Test("writes", "oltp_insert", (), "one row inserted", "oltp_insert.lua", {"insert": 1}, 0),
    **{f"read-write.range={r}": Test("writes", "oltp_read_write", _range(r),
                                     f"the stock oltp_read_write transaction, ranges of {r}",
                                     f"oltp_read_write.lua --range-size={r}",
                                     {"select": 14, "update": 2, "delete": 1, "insert": 1, "begin": 1, "commit": 1},
                                     10 + 4 * r + 3) for r in (10, 100)},
    "update-index": Test("writes", "oltp_update_index", (), "k = k + 1 of one row (k is indexed)",
                         "oltp_update_index.lua", {"update": 1}, 1),
    "update-inlist": _ours("writes", "update-inlist", "c of 10 rows by id in an IN list",
                           "oltp_inlist_update.lua (its default of 10 points: run.sh gives no --random-points)",
                           {"update": 1}, 10, points=10),
    "update-nonindex": Test("writes", "oltp_update_non_index", (), "c of one row by id (not indexed)",
                            "oltp_update_non_index.lua", {"update": 1}, 1),
    "update-one": _ours("writes", "update-one", "c of the same row (id 1) every time",
                        "oltp_update_non_index.lua on a table size of 1", {"update": 1}, 1),
    "update-zipf": _ours("writes", "update-zipf", "c of one row, ids zipfian (exponent 0.8)",
                         "oltp_update_non_index.lua --rand-type=zipfian", {"update": 1}, 1),
    "write-only": Test("writes", "oltp_write_only", (), "the stock oltp_write_only transaction",
                       "oltp_write_only.lua", {"update": 2, "delete": 1, "insert": 1, "begin": 1, "commit": 1}, 3),
}
READS = tuple(name for name, t in TESTS.items() if t.group != "writes")
WRITES = tuple(name for name, t in TESTS.items() if t.group == "writes")
# the default scale's tests: those the sources' posts name, in every group (cpu/o of hot-points, scan,
# read-only-count and insert; the groups' directions; the regression source's update-nonindex)
HEADLINE = ("point-query", "random-points.range=100", "hot-points",
            "range-covered-pk", "range-notcovered-si", "scan",
            "read-only-count", "read-only-simple", "read-only.range=10",
            "insert", "update-index", "update-nonindex", "write-only")


def expected_rows(test: str, table_size: int) -> float:
    """The rows ``test`` reads per event on a table of ``table_size`` rows."""
    rows = TESTS[test].rows
    return float(table_size) if rows == SCAN_ROWS else float(rows)
