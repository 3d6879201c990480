"""The buffer_pins chapter's counted part with no server: its points (two starts, each a group of its own, keyed
apart from the timed points), what one count divides (the long call less the short one, the function's own
operations), and the analysis on constructed runs: each N's two counts and their agreement, the step where the
array overflows count by count, the functions that carry it, and the page's section."""

from __future__ import annotations

import pandas as pd
import pytest

from dbexp.chapters import buffer_pins as bp
from dbexp.chapters.buffer_pins import counted, counting
from dbexp.chapters.buffer_pins import findings as bp_findings
from dbexp.chapters.buffer_pins.counted import CountedPoint, CountedQuery
from dbexp.errors import DbexpError
from dbexp.experiments.chapter import Cpus, Results
from dbexp.metrics import callgrind

pytestmark = pytest.mark.unit

STOCK, WIDE = "postgres:18.6+pinbench-src8@offline", "postgres:18.6+pinbench-src32@offline"


def test_each_counted_build_is_counted_on_two_starts_each_a_group_of_its_own():
    for scale in ("smoke", "default"):
        sc = bp.CHAPTER.scale(scale)
        everything = bp.CHAPTER.design(sc, Cpus())[-1].points
        count = [p for p in everything if isinstance(p.params, CountedPoint)]
        asked = [p for p in everything if isinstance(p.params, CountedQuery)]
        assert count and len(count) + len(asked) == len(everything)
        # the queries: on the stock build only, each start's last points, on the start's own server
        assert {p.server.spec for p in asked} == {STOCK} and {p.params.count_query for p in asked} == set(
            sc.counted_queries)
        for start in range(counted.STARTS):
            group = [p for p in everything if p.group == f"buffer_pins counted {STOCK} #{start}"]
            tail = group[-len(sc.counted_queries):]
            assert all(isinstance(p.params, CountedQuery) and p.params.count_start == start for p in tail)
            assert all(p.server == group[0].server for p in group)
        assert len({p.key("buffer_pins") for p in everything}) == len(everything)
        assert {p.server.under for p in count} == {"callgrind-sim"}
        groups = {p.group for p in count}
        assert groups == {f"buffer_pins counted {s} #{i}" for s in sc.counted_servers for i in range(counted.STARTS)}
        # every build's first start, then the second; each start a server of its own (its cluster's name)
        assert [p.params.count_start for p in count] == sorted(p.params.count_start for p in count)
        for p in count:
            assert p.server.settings["cluster_name"] == f"counted_{p.params.count_start}"
        assert len({p.key("buffer_pins") for p in count}) == len(count)
    smoke = bp.CHAPTER.scale("smoke")
    assert smoke.counted_servers == (STOCK,) and {7, 8} <= set(smoke.counted_ns)
    default = bp.CHAPTER.scale("default")
    assert set(default.counted_servers) == {STOCK, WIDE} and {"fifo", "cycle", "hold"} <= set(default.counted_kinds)
    assert {7, 8, 9, 31, 32, 33} <= set(default.counted_ns)


def test_a_counted_point_refuses_what_it_cannot_count_in_one_line():
    with pytest.raises(DbexpError, match="bad counted kind 'hold_cold'"):
        CountedPoint("hold_cold", "random", (1,), 100, 64, 0)
    with pytest.raises(DbexpError, match="every N >= 1"):
        CountedPoint("fifo", "random", (0, 8), 100, 64, 0)
    with pytest.raises(DbexpError, match="counted kind"):
        bp.CHAPTER.adjust(bp.CHAPTER.scale("smoke", counted_kinds=["nope"]), "smoke", Cpus(), {})
    with pytest.raises(DbexpError, match="pinbench extension"):
        bp.CHAPTER.adjust(bp.CHAPTER.scale("smoke", counted_servers=["postgres:17"]), "smoke", Cpus(), {})


def test_the_short_call_walks_the_whole_table_so_that_only_the_loop_differs():
    p = CountedPoint("cycle", "random", (1, 9, 10000), 10_000, 64, 0)
    assert p.blocks == 10064 and p.head(10000) == 20000 and p.head(1) == 10064 and p.head(9) == 10071
    assert all(n * (p.head(n) // n) >= p.blocks for n in p.count_ns)
    assert CountedPoint("fifo", "random", (1, 8, 10000), 5000, 64, 0).head(10000) == 5000


class _Cursor:
    def __init__(self, log):
        self.log, self.row = log, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, args=()):
        self.log.append((sql, args))
        if "pg_backend_pid" in sql:
            self.row = (4242,)
        elif "pinbench_prewarm" in sql:
            self.row = (100,)
        else:  # a timing call: ns, then held_buffers (the N held) and the rest of the witness
            self.row = (1.0, args[1], 1, 1, 0, 0, 1, 0)

    def fetchone(self):
        return self.row


class _Server:
    """A server whose connections' cursors (``cursor``: a class taking the shared log) log what they run."""

    cursor = _Cursor

    def __init__(self):
        self.log = []

    def connect(self, database=None):
        log, make = self.log, type(self).cursor

        class Conn:
            def cursor(self):
                return make(log)

            def close(self):
                pass
        return Conn()


def test_a_count_divides_the_long_call_less_the_short_by_the_functions_own_operations(monkeypatch):
    server, seen = _Server(), []

    def count_passes(srv, run_pass, n, *, warmup, head):
        assert warmup == 0 and head == 5000 and n == 5000
        short, long = run_pass("short", head, 1), run_pass("long", head + n, 2)
        seen.append((short.ops, long.ops, short.statements, long.statements, long.pid))
        k = len(seen)
        return callgrind.Count({"instructions_per_op": (100.0 * k, "count"), "d1_misses_per_op": (0.5, "count"),
                                "ops_counted": (float(long.ops - short.ops), "count"),
                                "simulated_caches": (1.0, "bool"), "statements_sent": (0.0, "count")},
                               [{"source": "callgrind_exclusive", "name": "f (postgres)", "before": 1.0, "after": 2.0,
                                 "delta": 1.0}], "valgrind ...")

    monkeypatch.setattr(callgrind, "instrument", lambda srv: 2.5)
    monkeypatch.setattr(callgrind, "count_passes", count_passes)
    m = counted.measure_counted(server, CountedPoint("fifo", "random", (1, 8), 5000, 64, 0))
    # one pass: the pid asked, one call; the same statements in both, so that their difference is 0
    assert seen == [(5000, 10000, 3, 3, 4242)] * 2
    assert m.measurements["instructions_per_op_1"][0] == 100.0 and m.measurements["instructions_per_op_8"][0] == 200.0
    assert m.measurements["ops_counted_8"][0] == 5000 and m.measurements["valgrind_start_s"][0] == 2.5
    assert "statements_sent_8" not in m.measurements and m.measurements["simulated_caches"][0] == 1.0
    assert {c["source"] for c in m.counters} == {"callgrind_exclusive_1", "callgrind_exclusive_8"}
    calls = [a for s, a in server.log if "pinbench_fifo" in s]
    # the warm-up calls every N once, after reading the table in; then each pass a warm call before the counted one
    assert "pinbench_prewarm" in server.log[0][0] and calls[0][1:3] == (1, counted.WARM_OPS)
    assert calls[1][1:3] == (8, counted.WARM_OPS)
    assert [c[1:3] for c in calls[2:4]] == [(1, counted.WARM_OPS), (8, counted.WARM_OPS)]  # a second connection's
    assert [c[1:3] for c in calls[4:8]] == [(1, counted.WARM_OPS), (1, 5000), (1, counted.WARM_OPS), (1, 10000)]
    # cycle's operations are whole rounds of N: what a pass says it ran
    p = CountedPoint("cycle", "random", (9,), 100, 64, 0)
    assert counted._pass(_Server(), p, 9, 100).ops == 99


def _results(starts: dict[str, list[dict[int, float]]], apart: float = 0.0) -> Results:
    """Counted runs: per build spec, per start, instructions per operation at each N (fifo, random), the second start
    ``apart`` higher; the function table puts the step in GetPrivateRefCountEntry and hash_search_with_hash_value."""
    rows, counters = [], []
    for spec, per_start in starts.items():
        for start, ins in enumerate(per_start):
            run = f"{spec}-{start}"
            r = {"run_id": run, "spec": spec, "status": "ok", "count_kind": "fifo", "count_pattern": "random",
                 "count_ns": tuple(ins), "count_start": start, "instance": 0}
            for n, v in ins.items():
                v = v * (1 + apart * start)
                r |= {f"instructions_per_op_{n}": v, f"d1_misses_per_op_{n}": 0.01 * n,
                      f"ll_misses_per_op_{n}": 0.0, f"branch_mispredicts_per_op_{n}": 0.5, f"ops_counted_{n}": 1000.0}
                extra = max(0.0, v - 100.0)
                for fn, share in (("GetPrivateRefCountEntry", 0.4), ("hash_search_with_hash_value", 0.6)):
                    counters.append({"run_id": run, "source": f"callgrind_exclusive_{n}", "name": f"{fn} (postgres)",
                                     "before": 0.0, "after": extra * share * 1000, "delta": extra * share * 1000})
                counters.append({"run_id": run, "source": f"callgrind_exclusive_{n}", "name": "PinBuffer (postgres)",
                                 "before": 0.0, "after": 60_000.0, "delta": 60_000.0})
            rows.append(r)
    wide = pd.DataFrame(rows)
    return Results("buffer_pins", wide, pd.DataFrame(), pd.DataFrame(counters), wide, "constructed")


def test_the_counted_step_is_read_count_by_count_with_the_functions_that_carry_it():
    curve8 = {1: 100.0, 7: 110.0, 8: 250.0, 32: 260.0}
    curve32 = {1: 101.0, 7: 111.0, 8: 112.0, 31: 130.0, 32: 280.0}
    res = _results({STOCK: [curve8, curve8], WIDE: [curve32, curve32]}, apart=0.001)
    p = counting.points(res)
    assert len(p) == 9 and p["agree"].all() and (p["servers"] == 2).all()
    assert p["spread"].max() == pytest.approx(0.001, rel=1e-3)
    s = counting.steps(res).set_index("build")
    assert (s.loc["18.6, 8 entries", "lo"], s.loc["18.6, 8 entries", "hi"]) == (7, 8)
    assert (s.loc["18.6, 32 entries", "lo"], s.loc["18.6, 32 entries", "hi"]) == (31, 32)
    assert s.loc["18.6, 8 entries", "instructions_per_op_step"] == pytest.approx(140.14, rel=1e-3)
    f = counting.carriers(res)
    top = f[f["build"] == "18.6, 8 entries"].iloc[0]
    assert top["function"] == "hash_search_with_hash_value" and top["share"] == pytest.approx(0.6, rel=1e-2)
    assert "PinBuffer" not in set(f.loc[f["moved"].abs() > 0, "function"])
    n = counting.numbers(res)
    assert n["points"] == 9 and n["agree"] == 9 and n["wider"][0]["n"] == 8
    assert n["wider"][0]["ratio"] == pytest.approx(112.056 / 250.125, rel=1e-3)
    text = counting.section(res)
    assert "9 points" in text and "9 of 9 agree within 0.5%" in text
    assert "8 over 7 held" in text and "`hash_search_with_hash_value` (+84)" in text and "+140 instructions" in text
    assert "at 8, where the 8-entry array overflows" in text
    c = bp_findings._counted(res)
    assert (c["lo"], c["hi"], c["agree"]) == (7, 8, True) and c["functions"][0] == "hash_search_with_hash_value"
    assert c["lo_value"] == pytest.approx(110.055) and c["build"] == "18.6, 8 entries"
    # two starts that differ by more than 0.5% do not agree, and the page says so
    apart = _results({STOCK: [curve8, curve8]}, apart=0.01)
    assert not counting.points(apart)["agree"].any()
    assert "0 of 4 agree" in counting.section(apart) and "the counts do not agree" in counting.section(apart)


def test_without_counted_runs_the_section_says_so_and_the_timed_tables_ignore_them():
    none = Results("buffer_pins", pd.DataFrame([{"run_id": "a", "status": "ok", "spec": STOCK}]), pd.DataFrame(),
                   pd.DataFrame(), pd.DataFrame(), "constructed")
    assert counting.points(none).empty and counting.section(none).startswith("*Not counted in these results*")
    res = _results({STOCK: [{1: 100.0, 8: 200.0}]})
    assert bp.analysis.curve_runs(res, array=True).empty and bp.analysis.array_runs(res).empty


class _QueryCursor(_Cursor):
    def execute(self, sql, args=()):
        self.log.append((sql, args))
        if sql.startswith("EXPLAIN"):
            self.row = ([{"Plan": {"Node Type": "Aggregate", "Shared Hit Blocks": 2703, "Shared Read Blocks": 0,
                                   "Actual Rows": 1, "Plans": [{"Node Type": "Seq Scan", "Actual Rows": 100000}]}}],)
        else:
            self.row = (1,)

    def fetchall(self):
        return [self.row]


class _QueryServer(_Server):
    cursor = _QueryCursor


def test_a_counted_query_sets_its_plan_in_every_pass_and_stores_its_witness_and_its_accesses(monkeypatch):
    server, passes = _QueryServer(), []

    def count_loop(srv, run, ops, *, warmup, head):
        assert (ops, warmup, head) == counted.QUERY_OPS["seq_scan"][:1] + (0,) + counted.QUERY_OPS["seq_scan"][1:]
        for n in (head, head + ops):
            conn = srv.connect()
            before = len(srv.log)
            for i in range(n):
                run(conn, i)
            passes.append(srv.log[before:])
        return callgrind.Count({"instructions_per_op": (27_030.0, "count"), "data_reads_per_op": (9000.0, "count"),
                                "data_writes_per_op": (1000.0, "count"), "d1_misses_per_op": (500.0, "count"),
                                "ll_misses_per_op": (100.0, "count"), "ops_counted": (float(ops), "count"),
                                "statements_sent": (float(ops), "count"), "statements_seen": (float(ops), "count"),
                                "simulated_caches": (1.0, "bool")}, [], "valgrind ...")

    monkeypatch.setattr(callgrind, "instrument", lambda srv: 3.0)
    monkeypatch.setattr(callgrind, "count_loop", count_loop)
    m = counted.measure_query(server, counted.query_point("seq_scan", 100_000, 1)).measurements
    assert [a for s, a in server.log[:2]] == [("sbtest1",), ("sbtest1_pkey",)]
    assert m["buffers_per_statement"][0] == 2703 and m["buffers_read_per_statement"][0] == 0
    assert m["rows_per_statement"][0] == 100_000
    assert m["instructions_per_buffer"][0] == pytest.approx(10.0) and m["d1_misses_per_op"][0] == 500.0
    # each pass: its plan's settings once, first, then the statements; the same in the short and the long pass
    for got in passes:
        sets = [s for s, _ in got if s.startswith("SET")]
        assert sets == ["SET enable_indexscan = off", "SET enable_bitmapscan = off"]
        assert got[0][0].startswith("SET") and sum("sbtest1" in s for s, _ in got) == len(got) - 2
    # the point selects walk the table, never past it
    p = counted.query_point("point_select", 1000, 0)
    assert p.start(0) == 1 and {p.start(i) for i in range(5000)} <= set(range(1, 1001))
    with pytest.raises(DbexpError, match="bad counted query"):
        counted.CountedQuery("flush", 1000, 1, 1, 0)
    with pytest.raises(DbexpError, match="counted query"):
        bp.CHAPTER.adjust(bp.CHAPTER.scale("smoke", counted_queries=["nope"]), "smoke", Cpus(), {})


def _hit_results(query_d1: float, *, second_apart: float = 0.0) -> Results:
    """The stock build's fifo curve at 1 and 10,000 (D1 misses 0.1 and 2 of 100 accesses) and a sequential scan
    whose D1 misses are ``query_d1`` of 100 accesses per statement, on two starts."""
    rows = []
    for start in (0, 1):
        r = {"run_id": f"f{start}", "spec": STOCK, "status": "ok", "count_kind": "fifo", "count_pattern": "random",
             "count_ns": (1, 10000), "count_start": start, "count_query": None}
        for n, d1 in ((1, 0.1), (10000, 2.0)):
            r |= {f"instructions_per_op_{n}": 200.0, f"data_reads_per_op_{n}": 80.0, f"data_writes_per_op_{n}": 20.0,
                  f"d1_misses_per_op_{n}": d1, f"ll_misses_per_op_{n}": d1 / 100, f"ops_counted_{n}": 1000.0}
        rows.append(r)
        rows.append({"run_id": f"q{start}", "spec": STOCK, "status": "ok", "count_kind": None,
                     "count_query": "seq_scan", "count_start": start,
                     "instructions_per_op": 30_000.0 * (1 + second_apart * start), "data_reads_per_op": 90.0,
                     "data_writes_per_op": 10.0, "d1_misses_per_op": query_d1, "ll_misses_per_op": query_d1 / 10,
                     "ops_counted": 6.0, "buffers_per_statement": 2703.0, "buffers_read_per_statement": 0.0,
                     "rows_per_statement": 1.0, "statements_seen": 6.0, "statements_sent": 6.0})
    wide = pd.DataFrame(rows)
    return Results("buffer_pins", wide, pd.DataFrame(), pd.DataFrame(), wide, "constructed")


def test_the_hit_ratios_of_the_curve_and_the_query_are_one_less_misses_over_accesses_and_judge_the_claim():
    res = _hit_results(5.0)
    t = counting.hit_table(res)
    q = t[t["source"] == "query"].iloc[0]
    assert q["d1_hit_0"] == pytest.approx(0.95) and q["ll_hit_1"] == pytest.approx(0.995) and q["agree"]
    f = t[(t["source"] == "pinbench") & (t["n"] == 10000)].iloc[0]
    assert f["d1_hit_0"] == pytest.approx(0.98) and f["ll_hit_0"] == pytest.approx(0.9998)
    assert bp.counting.timed_only(res.wide).empty
    text, verdict, wit = bp.claims._hit_ratios(res)
    assert verdict == bp.claims.verdicts.DIRECTION_ONLY and wit.ok
    assert "sequential scan (whole table) start 1: D1 95.00%" in text and "D1 98.00% to 99.90%" in text
    assert "2,703.0 shared buffers hit" in wit.what
    section = counting.section(res)
    assert "D1 95.00% and 95.00% on the two starts" in section and "D1 98.00% at the lowest (N = 10,000)" in section
    # a query that hits more often than the curve at 10,000 disagrees; counts apart by more than 0.5% decide nothing
    assert bp.claims._hit_ratios(_hit_results(1.0))[1].startswith("disagrees")
    assert bp.claims._hit_ratios(_hit_results(5.0, second_apart=0.01))[1].startswith("not resolved")
    row = bp.claims.claims(res).set_index("id").loc["cache-hit-ratios"]
    assert row["verdict"] == bp.claims.verdicts.DIRECTION_ONLY


def test_a_count_whose_misses_fall_below_zero_reads_as_none_missed():
    row = counting._hit({}, 80.0, 20.0, -0.5, -0.1)
    assert row["d1_hit"] == 1.0 and row["ll_hit"] == 1.0 and row["d1_misses_per_op"] == -0.5
    assert counting._hit({}, 0.0, 0.0, 1.0, 1.0)["d1_hit"] != counting._hit({}, 0.0, 0.0, 1.0, 1.0)["d1_hit"]
