"""The readview chapter's counted part (issue 48) with no server: its points beside the timed ones, the view
function's counts read from two passes' profiles, and the analysis of counts against H."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dbexp.chapters import readview
from dbexp.chapters.readview import counting, counts
from dbexp.chapters.readview.chapter import CHAPTER, COUNTED, COUNTED_STARTS
from dbexp.errors import DbexpError
from dbexp.experiments.chapter import Cpus, Results
from dbexp.metrics.callgrind_format import Profile

pytestmark = pytest.mark.unit


def test_the_counted_part_counts_every_h_of_a_server_on_one_start_of_two_and_leaves_the_timed_keys_alone():
    sc = CHAPTER.scale("default")
    parts = CHAPTER.design(sc, Cpus())
    part = parts[1]
    assert part.repeats == 1 and part.instances == 1
    assert {p.server.spec for p in part.points} == set(sc.counted_servers)
    assert {s.split(":")[0] for s in sc.counted_servers} == {"mysql", "postgres"}  # MariaDB: COUNTED_LEFT_OUT
    assert len([h for h in sc.counted_holders if h > 0]) >= 3  # a line and its residual
    from dbexp.experiments.sweep import shuffled
    walk = shuffled(part.points, CHAPTER.name, 0)
    for spec in sc.counted_servers:
        for start in range(COUNTED_STARTS):
            ps = [p for p in part.points if p.server.spec == spec and p.params.start == start]
            assert {p.group for p in ps} == {f"readview counted {spec} #{start}"} and len({p.block for p in ps}) == 1
            # one server start counts every H, the largest first (prepared natively, then rolled back H by H)
            assert [p.params.holders for p in walk if p in ps] == sorted(sc.counted_holders, reverse=True)
    # a registry that keeps its peak size (MariaDB): a start per H, two per H
    full = CHAPTER.design(CHAPTER.scale("full"), Cpus())[1].points
    maria = [p for p in full if p.server.spec == "mariadb:11.8@offline"]
    assert len({p.group for p in maria}) == len(maria) == COUNTED_STARTS * len(set(CHAPTER.scale("full").counted_holders))
    p = part.points[-1]
    assert p.server.under == "callgrind" and p.params.mode == COUNTED and p.params.ops == sc.counted_ops
    assert p.workload.threads == 1 and dict(p.workload.options)["writer"] == "off"
    assert not CHAPTER.timed(p) and CHAPTER.timed(parts[0].points[0])
    # InnoDB's counted servers without the adaptive hash index (a read's path the same whatever reads came before)
    assert {p.server.settings.get("innodb_adaptive_hash_index") for p in part.points
            if p.server.spec.startswith("mysql")} == {"OFF"}
    assert not any("innodb_adaptive_hash_index" in p.server.settings for p in parts[0].points)
    # every counted point a key of its own; the timed points' keys as without the counted part
    keys = [p.key(CHAPTER.name) for p in part.points]
    assert len(set(keys)) == len(keys)
    bare = CHAPTER.design(CHAPTER.scale("default", counted_servers=[]), Cpus())
    assert [p.key(CHAPTER.name) for p in bare[0].points] == [p.key(CHAPTER.name) for p in parts[0].points]
    assert bare[1].points == []
    # the counted servers hold enough prepared transactions for the counted H
    big = CHAPTER.design(CHAPTER.scale("smoke", counted_holders=[0, 5000]), Cpus())[1].points
    assert {p.server.settings.get("max_prepared_transactions") for p in big if "postgres" in p.server.spec} == {"5010"}
    smoke = CHAPTER.scale("smoke")
    assert {s.split(":")[0] for s in smoke.counted_servers} == {"mysql", "postgres"}
    with pytest.raises(DbexpError, match="counted_ops"):
        CHAPTER.design(CHAPTER.scale("smoke", counted_ops=0), Cpus())
    with pytest.raises(DbexpError, match="counted_holders"):
        CHAPTER.design(CHAPTER.scale("smoke", counted_holders=[-1, 2]), Cpus())


def test_the_keys_walk_the_table_and_the_statement_is_a_literal_point_select():
    keys = [counting.key(i, 10_000) for i in range(10_000)]
    assert sorted(keys) == list(range(1, 10_001))  # every row once before any twice
    assert counting.statement(0, 10_000) == "SELECT c FROM sbtest1 WHERE id = 1"


def _profile(inclusive: dict[str, int], calls: dict[str, int], total: int) -> Profile:
    fns = {("/usr/sbin/mysqld", name): [v] for name, v in inclusive.items()}
    return Profile(("Ir",), [total], {}, own={}, called=dict(fns),
                   calls={("/usr/sbin/mysqld", n): c for n, c in calls.items()})


def test_the_view_function_s_inclusive_count_is_the_long_pass_less_the_short_one():
    short = _profile({"MVCC::view_open(ReadView*&, trx_t*)": 1_000, "ReadView::prepare(unsigned long)": 800,
                      "do_command(THD*)": 500_000}, {"MVCC::view_open(ReadView*&, trx_t*)": 10}, 500_000)
    long = _profile({"MVCC::view_open(ReadView*&, trx_t*)": 21_000, "ReadView::prepare(unsigned long)": 16_800,
                     "do_command(THD*)": 10_500_000}, {"MVCC::view_open(ReadView*&, trx_t*)": 210}, 10_500_000)
    m, rows = counting.view_figures(short, long, 200, ("MVCC::view_open(*",))
    assert m[counting.VIEW] == (100.0, "count") and m[counting.VIEW_CALLS] == (1.0, "count")
    views = [r for r in rows if r["source"] == "callgrind_view"]
    assert [r["name"] for r in views] == ["MVCC::view_open(ReadView*&, trx_t*) (mysqld)"] and views[0]["delta"] == 20_000
    # every function named for views or snapshots is stored, the names a binary really has
    named = {r["name"] for r in rows if r["source"] == "callgrind_snapshot"}
    assert named == {"MVCC::view_open(ReadView*&, trx_t*) (mysqld)", "ReadView::prepare(unsigned long) (mysqld)"}
    # several functions that build and copy a view (none calls another): their counts add up
    m, _ = counting.view_figures(short, long, 200, ("MVCC::view_open(*", "ReadView::prepare(*"))
    assert m[counting.VIEW] == (100.0 + 80.0, "count")
    # no function matched: no witness, None stored
    m, rows = counting.view_figures(short, long, 200, ("GetSnapshotData",))
    assert m[counting.VIEW] == (None, "count") and m["view_functions_found"] == (0.0, "count")


def _counted_results(per_server: dict[str, tuple[float, float, float]], hs=(0, 1, 100, 1000),
                     noise: float = 3.0) -> Results:
    """Counted runs, two starts per H: {server: (instructions at H = 0, per holder, the view function per holder)};
    a timed run beside them."""
    rows, counters = [], []
    for server, (base, slope, vslope) in per_server.items():
        flavor, version = server.split()
        for start in (0, 1):
            for h in hs:
                rid = f"{server}-{h}-{start}"
                extra = 0.0 if h == 0 else 300.0  # a view rebuilt from H = 1 (InnoDB reuses an empty one)
                rows.append({"run_id": rid, "series_name": server, "flavor": flavor, "version": version,
                             "mode": COUNTED, "holders": h, "readers": 1, "trx_stmts": 0, "probe": False, "ops": 300,
                             "start": start, "instructions_per_op": base + extra + slope * h + noise * start,
                             counting.VIEW: 100 + (0 if h == 0 else 250) + vslope * h, counting.VIEW_CALLS: 1.0,
                             "valgrind_start_s": 25.0 if h == 0 else np.nan, "hold_s": h * 0.01,
                             "count_s": 2.0, "count_ops_per_s": 500.0})
                counters.append({"run_id": rid, "source": "callgrind_view",
                                 "name": "MVCC::view_open(ReadView*&, trx_t*) (mysqld)", "before": 0.0,
                                 "after": 1.0, "delta": 1.0})
    timed = {"run_id": "t", "series_name": "mysql 8.0.15", "flavor": "mysql", "version": "8.0.15", "mode": "prepared",
             "holders": 100, "readers": 2, "trx_stmts": 0, "probe": False, "server_cpu_s": 1.0, "reads": 1000.0,
             "total_time_s": 2.0}
    return Results("readview", pd.DataFrame(rows + [timed]), pd.DataFrame(), pd.DataFrame(counters), pd.DataFrame(),
                   "this run")


def test_a_count_that_grows_in_a_straight_line_is_judged_by_its_residual_with_the_view_function_as_witness():
    res = _counted_results({"mysql 8.0.15": (50_000.0, 0.75, 0.75), "postgres 16.14": (90_000.0, 0.0, 0.0)})
    p = counts.points(res).set_index(["server", "holders"])
    assert p.loc[("mysql 8.0.15", 1000), "agree"] and p.loc[("mysql 8.0.15", 1000), "count_1"] == pytest.approx(
        50_000 + 300 + 750 + 3)
    assert p.loc[("mysql 8.0.15", 0), "function"] == "`MVCC::view_open`"
    ln = counts.lines(res).set_index("server")
    my = ln.loc["mysql 8.0.15"]
    assert my["H"] == "1, 100, 1,000" and my["slope"] == pytest.approx(0.75) and my["residual"] < 1e-6
    assert my["straight"] and my["grows"] and my["share"] == pytest.approx(1.0)
    assert my["at_0"] == pytest.approx(50_001.5) and my["slope_0"] == pytest.approx(0.75)
    assert my["per_call"] == pytest.approx(0.75) and my["bytes_per_holder"] == 8
    pg = ln.loc["postgres 16.14"]
    assert not pg["grows"]
    v = counts.verdicts_of(counts.lines(res))
    assert v["linear"] == ["mysql 8.0.15"] and v["flat"] == ["postgres 16.14"] and v["reused"] == ["postgres 16.14"]
    text = readview.counted_sentence(res)
    assert "8 points" in text and "8 of 8 agree within 0.5%" in text and "+0.750 instructions per read" in text
    assert "a straight line" in text and "`MVCC::view_open`" in text and "reused" in text
    # the timed analysis does not see the counted runs
    assert list(readview.tidy(res)["run_id"]) == ["t"]
    assert counts.default_minutes(res) > 0


def test_a_bent_count_is_not_a_straight_line_and_two_h_leave_no_residual_to_judge():
    res = _counted_results({"mysql 8.0.15": (50_000.0, 0.75, 0.75)})
    w = res.wide
    w.loc[(w["holders"] == 100) & (w["mode"] == COUNTED), "instructions_per_op"] += 200  # a bend at the middle H
    ln = counts.lines(res).iloc[0]
    assert not ln["straight"] and ln["residual"] > 50
    assert counts.verdicts_of(counts.lines(res))["bent"] == ["mysql 8.0.15"]
    two = _counted_results({"mysql 8.0.15": (50_000.0, 0.75, 0.75)}, hs=(0, 100))
    ln = counts.lines(two).iloc[0]
    assert ln["H"] == "0, 100" and ln["points"] == 2 and not ln["straight"]
    assert "no residual to judge" in readview.counted_sentence(two)


def test_the_counted_section_says_so_where_nothing_was_counted():
    res = _counted_results({})
    assert counts.points(res).empty and counts.lines(res).empty
    assert "Not counted in these results" in readview.counted_sentence(res)


def test_a_timed_server_not_counted_is_named_with_why():
    res = _counted_results({"mysql 8.0.15": (50_000.0, 0.75, 0.75)})
    maria = {"run_id": "m", "series_name": "mariadb 11.8.9", "flavor": "mariadb", "version": "11.8.9", "mode": "prepared",
             "holders": 100, "readers": 2, "trx_stmts": 0, "probe": False, "server_cpu_s": 1.0, "reads": 1000.0,
             "total_time_s": 2.0}
    res.wide = pd.concat([res.wide, pd.DataFrame([maria])], ignore_index=True)
    assert [x["server"] for x in counts.not_counted(res)] == ["mariadb 11.8.9"]
    assert "Not counted: mariadb 11.8.9 (its registry of transactions keeps its peak size" in readview.counted_sentence(res)


def test_a_count_is_callgrinds_loop_and_a_window_with_other_statements_is_retryable(monkeypatch):
    """Both kinds of server count through callgrind.count_loop, which waits for a pass's quit before its mark and
    counts again where a window held other statements (tests/unit/test_callgrind_format.py); a miss that persists
    reaches the sweep as retryable."""
    from types import SimpleNamespace

    from dbexp.errors import RetryableError
    from dbexp.metrics import callgrind

    def racing(server, run, ops, **k):
        raise callgrind.StatementsMissed("the server entered its statement function 199 times for the 200 "
                                         "statements the client sent: the window did not hold the client's "
                                         "statements alone")

    monkeypatch.setattr(callgrind, "count_loop", racing)
    for per_connection in (False, True):
        cap = SimpleNamespace(per_connection=per_connection)
        server = SimpleNamespace(flavor=SimpleNamespace(capability=lambda name: cap))
        with pytest.raises(RetryableError, match="199 times"):
            counting.count(server, None, "sbtest", 100, 10)


def test_servers_named_without_counted_servers_count_only_those_of_them_the_scale_counts():
    """The README's run on PostgreSQL 17 alone starts no MySQL under valgrind; counted servers named are counted."""
    def adjusted(**overrides):
        return CHAPTER.adjust(CHAPTER.scale("smoke", **overrides), "smoke", Cpus(), overrides)

    assert adjusted().counted_servers == CHAPTER.scale("smoke").counted_servers
    assert adjusted(servers=["postgres:17"]).counted_servers == ()
    assert adjusted(servers=["postgres:16@offline"]).counted_servers == ("postgres:16@offline",)
    assert adjusted(servers=["postgres:17"], counted_servers=["postgres:12"]).counted_servers == ("postgres:12",)
