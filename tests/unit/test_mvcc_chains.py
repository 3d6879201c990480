"""The mvcc_chains chapter with no server: its design, its engine parts, its per-version estimates and
verdicts on fixed inputs with known answers (what its published data/ show is checked in
tests/published/test_published_mvcc_chains.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dbexp.chapters import mvcc_chains as mv
from dbexp.book import prose
from dbexp.chapters.mvcc_chains import claims
from dbexp.errors import DbexpError
from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Cpus
from dbexp.servers.registry import flavor_of_spec


def _store(spec: str) -> str:
    return mv.PARTS.of(flavor_of_spec(spec)).version_store


def test_mvcc_design_gives_typed_points():
    parts = mv.CHAPTER.design(mv.CHAPTER.scale("smoke"), Cpus("1", "0"))
    # the chain points; then every server's versions step by step, a part of their own
    assert [type(p.params).__name__ for p in parts[-1].points] == ["MechanicsPoint"] * 2
    assert {p.server.spec for p in parts[-1].points} == {"mysql:8.0@offline", "postgres:16@offline"}
    points = [p for part in parts[:-1] for p in part.points]
    heap = [p for p in points if _store(p.server.spec) == "heap"]
    undo = [p for p in points if _store(p.server.spec) == "undo"]
    assert heap and undo
    assert {p.params.fillfactor for p in heap} == {100, 70} and {p.params.fillfactor for p in undo} == {None}
    # k and v at one fillfactor (a HOT against a non-HOT update, the column alone changed), k at two
    assert {(p.params.column, p.params.fillfactor) for p in heap} == {("v", 70), ("k", 70), ("k", 100)}
    assert all(isinstance(p.params.versions, int) for p in points)
    # the comparable baseline, then the chapter's own settings, which win where they overlap
    assert heap[0].server.settings["synchronous_commit"] == "off"
    assert heap[0].server.settings["autovacuum_naptime"] == "1"
    assert heap[0].server.settings["full_page_writes"] == "on"
    assert undo[0].server.settings["skip_log_bin"] == "ON"
    assert len({p.key("mvcc_chains") for p in points}) == len(points)
    # a control without the old snapshot at the largest V of every variant, and the server's statement clock
    controls = [p for p in points if not p.params.snapshot]
    assert {(p.server.spec, p.params.column, p.params.fillfactor) for p in controls} == \
        {(p.server.spec, p.params.column, p.params.fillfactor) for p in points}
    assert all(p.params.versions == 100 and p.params.gc_timeout_s > 0 for p in controls)
    assert undo[0].server.settings["performance-schema-consumer-events-statements-history-long"] == "ON"
    assert mv.CHAPTER.order == "shuffled"


def test_each_engine_has_its_part_and_mariadb_its_statement_consumer():
    mysql, mariadb, pg = (mv.PARTS.of(flavor_of_spec(s)) for s in ("mysql:8.0", "mariadb:10.11", "postgres:16"))
    assert (mysql.version_store, mariadb.version_store, pg.version_store) == ("undo", "undo", "heap")
    # MariaDB's history consumers record only what the "current" one does, off by default there
    assert "performance-schema-consumer-events-statements-current" not in mysql.statement_timing_settings()
    assert mariadb.statement_timing_settings()["performance-schema-consumer-events-statements-current"] == "ON"
    assert mysql.prompt_gc_settings() == {} and pg.prompt_gc_settings() == {"autovacuum_naptime": "1"}
    assert (mysql.table_options(70), pg.table_options(70), pg.table_options(None)) == \
        ("", " WITH (fillfactor = 70)", "")
    assert pg.clock(None, None, "SELECT").kind == "explain_analyze"  # (performance_schema's needs a server)
    with pytest.raises(NotImplementedError, match="keeps old versions in undo"):
        mysql.version_chain(None, None, "chains", 1)


def test_innodb_status_gives_the_purge_lag():
    from dbexp.chapters.mvcc_chains.engines.innodb import innodb_purge_state

    status = ("Trx id counter 5210\nPurge done for trx's n:o < 5107 undo n:o < 0 state: running\n"
              "History list length 96\n")
    assert innodb_purge_state(status) == {"history_list_length": 96.0, "trx_id_counter": 5210.0,
                                          "purge_done_no": 5107.0, "purge_lag_trx": 103.0}
    from dbexp.errors import DbexpError

    # a line missing is an error, never a lag of 0 (purge done) or a NaN
    with pytest.raises(DbexpError, match='no "Purge done for trx\'s n:o <" line'):
        innodb_purge_state(status.replace("Purge done", "Purge finished"))
    with pytest.raises(DbexpError, match='no "Trx id counter" line'):
        innodb_purge_state("nothing here")


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
    assert claims._held_verdict(t).startswith("agrees")
    assert claims._held_verdict(t.assign(held_control=1900.0)).startswith("not resolved (the control")
    assert claims._held_verdict(t.assign(held_snapshot=10.0)).startswith("disagrees")


def _heap_runs(name: str, per_version: dict, jitter: float = 2.0) -> list[dict]:
    """PostgreSQL runs whose both readers cost per_version[(column, fillfactor)] ns per version, each
    repeat's slope moved by +-jitter (so the repeats spread and an interval has a width)."""
    rows = []
    for (column, ff), b in per_version.items():
        for r in _chain_runs("postgres", name, b, b, column=column, ff=ff):
            wiggle = jitter * (r["repeat"] - 1) * r["versions"] / 1000  # repeat 0: -jitter, 2: +jitter per version
            r["run_id"] = f"{r['run_id']}-{column}{ff}"
            r["old_server_us"] += wiggle
            r["fresh_server_us"] += wiggle
            rows.append(r)
    return rows


def test_a_hot_against_a_non_hot_update_changes_the_column_alone():
    # k and v at fillfactor 70: only the column differs, 80 against 30 ns per version
    res = _results(_heap_runs("PostgreSQL 16.14", {("k", 70): 80.0, ("v", 70): 30.0, ("k", 100): 90.0}))
    cmp = mv.column_against_column(res).set_index(["reader", "ff_k"])
    assert set(cmp["same_fillfactor"]) == {True, False}
    clean = cmp.loc[("fresh", 70)]
    assert clean["same_fillfactor"] and clean["ns_per_version"] == pytest.approx(50.0)
    assert clean["ci_low"] < 50 < clean["ci_high"] and clean["ci_low"] > 0
    row = claims._indexed_column(mv.tidy(res), mv.column_against_column(res), lambda text: text)
    assert row.verdict == claims.DIRECTION_ONLY
    assert "k at fillfactor 70 less v at 70 +50 ns" in row.measured and "fillfactor 100" not in row.measured


def test_a_pair_that_changes_the_fillfactor_too_is_not_measured():
    # the published design: k at 100 against v at 70, two changes at once
    res = _results(_heap_runs("PostgreSQL 16.14", {("k", 100): 80.0, ("v", 70): 30.0}))
    row = claims._indexed_column(mv.tidy(res), mv.column_against_column(res), lambda text: text)
    assert row.verdict == verdicts.NOT_MEASURED
    assert row.measured.startswith(f"{verdicts.NOT_MEASURED}: no fillfactor has both columns")
    assert "k at fillfactor 100 less v at 70 +50 ns" in row.measured


def test_direction_verdicts_say_the_source_gives_no_number():
    assert claims.direction(1.0, 3.0) == claims.DIRECTION_ONLY
    assert claims.direction(-3.0, -1.0) == "disagrees"
    assert claims.direction(-1.0, 3.0, 1.0, 5).startswith("not resolved (the interval spans 0; about 4.0x the repeats")
    assert claims.direction(float("nan"), 1.0) == verdicts.NOT_MEASURED


def _garbage(run_id: str, name: str, ts, values) -> list[dict]:
    return [{"run_id": run_id, "source": "garbage", "name": name, "t": t, "value": v} for t, v in zip(ts, values)]


def test_a_collector_s_cadence_is_told_apart_from_its_pass():
    """MySQL's purge: nothing for 5.5 s, then all 3,999 gone by the next poll; PostgreSQL: autovacuum
    halfway at one poll, done at the next; and a run reclaimed by the first poll."""
    wide = pd.DataFrame([
        {"run_id": "my", "flavor": "mysql", "series_name": "mysql 8.0.15", "column": "v", "fillfactor": None,
         "versions": 1000, "repeat": 0, "snapshot": True, "reclaim_s": 6.0},
        {"run_id": "pg", "flavor": "postgres", "series_name": "postgres 16.14", "column": "v", "fillfactor": 70,
         "versions": 1000, "repeat": 0, "snapshot": True, "reclaim_s": 1.5},
        {"run_id": "pg0", "flavor": "postgres", "series_name": "postgres 16.14", "column": "v", "fillfactor": 70,
         "versions": 1000, "repeat": 1, "snapshot": True, "reclaim_s": 0.01},
    ])
    polls = [round(0.5 * i, 2) for i in range(13)]
    series = pd.DataFrame(_garbage("my", "purge_lag_trx", polls, [3999.0] * 12 + [0.0])
                          + _garbage("pg", "n_dead_tup", [0.0, 0.5, 1.0, 1.5], [2000.0, 2000.0, 900.0, 0.0])
                          + _garbage("pg0", "n_dead_tup", [0.01], [0.0]))
    cp = mv.collector_passes(SimpleNamespace(wide=wide, series=series)).set_index("run_id")
    assert cp.loc["my", "waited_s"] == 5.5 and cp.loc["my", "pass_s"] == 0.5 and cp.loc["my", "one_poll"]
    assert cp.loc["my", "removed_per_s"] == pytest.approx(3999 / 0.5)
    assert cp.loc["pg", "waited_s"] == 0.5 and cp.loc["pg", "pass_s"] == 1.0 and not cp.loc["pg", "one_poll"]
    assert cp.loc["pg0", "waited_s"] == 0.0 and cp.loc["pg0", "pass_s"] == pytest.approx(0.01)
    assert np.isnan(cp.loc["pg0", "removed_per_s"])  # nothing was seen before it was gone


def test_the_excess_at_ten_uses_the_cold_rows_of_the_same_run():
    rows = _chain_runs("mysql", "MySQL 8.0.15", 700.0, 0.0)
    for r in rows:  # cold neighbours: what the hot rows cost with no versions, plus a run's own offset
        r["old_cold_server_us"] = 10 + r["repeat"] + 0.5 * (r["run_id"].endswith("1"))
        r["fresh_cold_server_us"] = 12 + r["repeat"] + 0.5 * (r["run_id"].endswith("1"))
    ex = mv.excess_at(_results(rows), 10).set_index("series_name")
    assert ex.loc["MySQL 8.0.15", "ns_per_version"] == pytest.approx(700.0)


def test_findings_say_when_there_is_too_little():
    assert prose.render("mvcc_chains", "findings", enough=False) == \
        "Too few points in these results for findings (a smoke run has one repeat)."


def test_the_heap_clock_loops_a_point_select_at_the_server_and_reports_per_lookup():
    from dbexp.chapters.mvcc_chains.engines.postgres import ExplainClock
    from dbexp.chapters.mvcc_chains.workload import SELECT

    one = ExplainClock()
    assert one.wrap(f"{SELECT}42") == ExplainClock.PREFIX + f"{SELECT}42"
    looped = ExplainClock(loop=25)
    sql = looped.wrap(f"{SELECT}42")
    assert "generate_series(1, 25) AS g(i)" in sql and "WHERE id = 42 + 0 * g.i" in sql
    assert sql.startswith(ExplainClock.PREFIX + "SELECT count(x.v) FROM")
    looped.begin()
    looped.after([('[{"Plan": {"Shared Hit Blocks": 50}, "Execution Time": 0.050}]',)])
    got = looped.end(1)
    assert got["server_us"][0] == pytest.approx(2.0) and got["buffers"][0] == pytest.approx(2.0)


def test_a_loop_below_one_is_refused_in_one_line():
    from dbexp.chapters.mvcc_chains.engines.postgres import ExplainClock
    from dbexp.experiments.chapter import Cpus

    with pytest.raises(DbexpError, match="bad loop 0"):
        ExplainClock(loop=0)
    with pytest.raises(DbexpError, match="bad heap_loop 0"):
        mv.CHAPTER.adjust(mv.CHAPTER.scale("default", heap_loop=0), "default", Cpus(), {})
