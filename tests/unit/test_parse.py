"""dbexp/workloads/parse.py on real sysbench 1.0.20 output (tests/unit/fixtures/README.md).

The expected numbers are read off the fixture files by eye (and the histogram's by awk), not
produced by the parser.
"""

from __future__ import annotations

import pytest
from unit_support import fixture_text

from dbexp.errors import DbexpError

from dbexp.workloads import parse

RUN = "sysbench-1.0.20_pgsql_oltp_point_select_run.txt"
PREPARE = "sysbench-1.0.20_pgsql_oltp_point_select_prepare.txt"
FAILED = "sysbench-1.0.20_pgsql_oltp_point_select_run_no_database.txt"

FIRST_INTERVAL = ("[ 1s ] thds: 2 tps: 31350.26 qps: 31350.26 (r/w/o: 31350.26/0.00/0.00) "
                  "lat (ms,95%): 0.10 err/s: 0.00 reconn/s: 0.00")


def edit(text: str, old: str, new: str) -> str:
    """Replace a piece of the fixture that must occur exactly once."""
    assert text.count(old) == 1, f"fixture should contain {old!r} exactly once"
    return text.replace(old, new)


@pytest.fixture(scope="module")
def run_text() -> str:
    return fixture_text(RUN)


@pytest.fixture(scope="module")
def result(run_text):
    return parse.parse_run(run_text)


def test_totals(result):
    assert result.transactions == 98670
    assert result.tps == 32862.25
    assert result.queries == 98670
    assert result.qps == 32862.25
    assert (result.reads, result.writes, result.others) == (98670, 0, 0)
    assert result.errors == 0
    assert result.reconnects == 0
    assert result.total_time_s == 3.0018
    assert result.events == 98670


def test_latency(result):
    assert (result.lat_min_ms, result.lat_avg_ms, result.lat_max_ms) == (0.02, 0.06, 2.80)
    assert result.lat_pct_ms == 0.10  # "95th percentile:" (--percentile=95)


def test_series(result):
    # --time=3 --report-interval=1 prints two interval lines; the third second only reaches the totals.
    assert len(result.series) == 2
    assert result.series[0] == {"t": 1.0, "threads": 2.0, "tps": 31350.26, "qps": 31350.26,
                                "r": 31350.26, "w": 0.0, "o": 0.0, "pct": 95.0, "lat": 0.10,
                                "err": 0.0, "reconn": 0.0}
    assert result.series[1]["t"] == 2.0
    assert result.series[1]["tps"] == 33600.50
    assert [s["err"] for s in result.series] == [0.0, 0.0]
    assert [s["reconn"] for s in result.series] == [0.0, 0.0]


def test_histogram(result):
    hist = result.histogram
    assert len(hist) == 193  # bucket lines between "Latency histogram" and "SQL statistics:"
    assert hist[:3] == [(0.021, 2), (0.021, 3), (0.021, 33)]  # sysbench prints 3 decimals
    assert hist[-2:] == [(2.760, 1), (2.810, 1)]
    assert max(hist, key=lambda vc: vc[1]) == (0.065, 6575)
    assert sum(c for _, c in hist) == 98670  # every event is in a bucket
    assert all(isinstance(v, float) and isinstance(c, int) for v, c in hist)


def test_percentiles_from_histogram(result):
    # Cumulative counts first reach 50%, 95%, 99% of 98670 at these buckets (awk over the file).
    assert result.percentile(50) == 0.057
    assert result.percentile(95) == 0.099  # sysbench's own, rounded to 2 decimals: 0.10
    assert result.percentile(99) == 0.118
    assert result.percentile(100) == 2.810
    assert result.percentile(0) == 0.021


def test_summary(result):
    assert result.summary() == {
        "tps": 32862.25, "qps": 32862.25, "lat_avg_ms": 0.06, "lat_p95_ms": 0.099,
        "lat_p99_ms": 0.118, "lat_max_ms": 2.80, "errors": 0.0, "reconnects": 0.0,
        "transactions": 98670.0, "queries": 98670.0, "reads": 98670.0, "writes": 0.0,
        "total_time_s": 3.0018}


def test_without_histogram_falls_back_to_sysbench_percentile(run_text):
    start = run_text.index("Latency histogram")
    end = run_text.index("SQL statistics:")
    r = parse.parse_run(run_text[:start] + run_text[end:])  # as with --histogram=off
    assert r.histogram == []
    assert r.percentile(95) is None
    assert r.summary()["lat_p95_ms"] == 0.10
    assert r.summary()["lat_p99_ms"] is None
    assert r.transactions == 98670 and len(r.series) == 2


def test_errors_and_reconnects(run_text):
    text = edit(run_text, "    ignored errors:                      0      (0.00 per sec.)",
                "    ignored errors:                      12     (4.00 per sec.)")
    text = edit(text, "    reconnects:                          0      (0.00 per sec.)",
                "    reconnects:                          3      (1.00 per sec.)")
    text = edit(text, FIRST_INTERVAL,
                FIRST_INTERVAL.replace("err/s: 0.00 reconn/s: 0.00", "err/s: 5.00 reconn/s: 1.00"))
    r = parse.parse_run(text)
    assert r.errors == 12
    assert r.reconnects == 3
    assert (r.series[0]["err"], r.series[0]["reconn"]) == (5.0, 1.0)
    assert (r.series[1]["err"], r.series[1]["reconn"]) == (0.0, 0.0)
    assert r.summary()["errors"] == 12 and r.summary()["reconnects"] == 3
    assert r.transactions == 98670  # the rest is untouched


def test_every_truncation_before_the_latency_block_raises(run_text):
    lines = run_text.splitlines(keepends=True)
    last_needed = next(i for i, ln in enumerate(lines) if "95th percentile:" in ln)
    for k in range(last_needed + 1):
        with pytest.raises(DbexpError, match="did not finish"):
            parse.parse_run("".join(lines[:k]))
    # Cut mid-way through the line that is needed last:
    cut = "".join(lines[:last_needed]) + lines[last_needed][:20]
    with pytest.raises(DbexpError, match="percentile"):
        parse.parse_run(cut)


def test_truncated_error_names_the_missing_field_and_the_last_line(run_text):
    text = run_text[:run_text.index("Latency (ms):")]
    with pytest.raises(DbexpError) as info:
        parse.parse_run(text)
    message = str(info.value)
    assert "min:" in message  # the first field that is missing
    assert "total number of events:" in message  # last line of what there was


def test_failed_run_raises_with_its_last_line():
    with pytest.raises(DbexpError, match="FATAL: Thread initialization failed!"):
        parse.parse_run(fixture_text(FAILED))


@pytest.mark.parametrize("text", ["", "   \n", "hello\nworld\n", "\x00\xff garbage \x1b[0m"],
                         ids=["empty", "blank", "words", "binary"])
def test_garbage_raises(text):
    with pytest.raises(DbexpError, match="did not finish"):
        parse.parse_run(text)


def test_empty_output_says_so():
    with pytest.raises(DbexpError, match=r"\(empty\)"):
        parse.parse_run("")


def test_prepare():
    assert parse.parse_prepare(fixture_text(PREPARE)) == {"rows": 1000.0, "tables": 1.0}


def test_prepare_two_tables():
    text = fixture_text(PREPARE)
    second = ("Creating table 'sbtest2'...\nInserting 1000 records into 'sbtest2'\n"
              "Creating a secondary index on 'sbtest2'...\n")
    assert parse.parse_prepare(text + second) == {"rows": 2000.0, "tables": 2.0}
