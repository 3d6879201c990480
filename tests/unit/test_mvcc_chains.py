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
    # the heap's points say their plans are checked: a key of their own, never a run stored before the check
    assert all(p.params.plan_check for p in heap) and not any(p.params.plan_check for p in undo)
    assert all(p.params.loop == 25 for p in heap) and all(p.params.loop == 1 for p in undo)


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


def _probed(rows: list[dict], buffers: float = 3.0, cold_buffers: float = 3.0, checked: bool = True,
            hot_updates=None) -> list[dict]:
    """Heap runs as the redesigned clock stores them: 25 lookups per statement, every statement's plan checked
    (index probes per lookup 1 for both readers, hot rows and cold neighbours; NaN: runs from before the check),
    ``buffers`` per lookup on the hot rows and ``cold_buffers`` on their cold neighbours, a 30-page table, and the
    server's count of updates and HOT updates (``hot_updates(column, commits)``; None: not counted)."""
    out = []
    for r in rows:
        r = dict(r, lookups_per_statement=25.0, relation_bytes=30 * 8192.0, commits=2.0 * r["versions"])
        for reader in mv.READERS:
            r[f"{reader}_buffers"], r[f"{reader}_cold_buffers"] = buffers, cold_buffers
            for cold in ("", "_cold"):
                r[f"{reader}{cold}_index_probes"] = 1.0 if checked else float("nan")
        if hot_updates is not None:
            r["updates"], r["hot_updates"] = r["commits"], float(hot_updates(r["column"], r["commits"]))
        out.append(r)
    return out


def _hot_if_v(column: str, commits: float) -> float:
    return commits if column == "v" else 0.0


def test_a_hot_against_a_non_hot_update_changes_the_column_alone():
    # k and v at fillfactor 70: only the column differs, 80 against 30 ns per version
    res = _results(_probed(_heap_runs("PostgreSQL 16.14", {("k", 70): 80.0, ("v", 70): 30.0, ("k", 100): 90.0}),
                           hot_updates=_hot_if_v))
    cmp = mv.column_against_column(res).set_index(["reader", "ff_k"])
    assert set(cmp["same_fillfactor"]) == {True, False}
    clean = cmp.loc[("fresh", 70)]
    assert clean["same_fillfactor"] and clean["ns_per_version"] == pytest.approx(50.0)
    assert clean["ci_low"] < 50 < clean["ci_high"] and clean["ci_low"] > 0
    row = claims._indexed_column(mv.tidy(res), mv.column_against_column(res), lambda text: text, mv.lookups(res))
    assert row.verdict == claims.DIRECTION_ONLY and row.ids == ("indexed-column-not-hot",)
    assert row.witness.ok and "HOT updates by the server's count (n_tup_hot_upd): k 0 of 660, v 660 of 660" in \
        row.witness.what  # 3 repeats of V = 10 and 100, two hot rows
    assert "k at fillfactor 70 less v at 70 +50 ns" in row.measured and "fillfactor 100" not in row.measured


def test_a_non_hot_verdict_needs_its_witness():
    runs = _heap_runs("PostgreSQL 16.14", {("k", 70): 80.0, ("v", 70): 30.0})
    cmp = lambda res: mv.column_against_column(res)  # noqa: E731
    # k's updates HOT too (the column not what the runs changed): the witness fails, and so does the verdict
    res = _results(_probed(runs, hot_updates=lambda column, commits: commits))
    row = claims._indexed_column(mv.tidy(res), cmp(res), lambda text: text, mv.lookups(res))
    assert not row.witness.ok
    assert verdicts.table([row])["verdict"].iloc[0].startswith("not measured here (witness failed: every lookup")
    # runs from before the plan check and the HOT count: not measured here, however the interval reads
    res = _results(_probed(runs, buffers=1.36, cold_buffers=1.36, checked=False))
    row = claims._indexed_column(mv.tidy(res), cmp(res), lambda text: text, mv.lookups(res))
    assert row.verdict == ("not measured here (witness failed: no plan or HOT count stored with these runs (they "
                           "predate both); see the witness)")
    assert "18 of 18 runs touched at least the table's heap pages in a statement" in row.witness.what  # 34 >= 30
    assert "k's lookups touched 1.36 buffers each, v's 1.36" in row.witness.what


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


def _explain(plan: dict, ms: float = 0.050) -> list[tuple]:
    """A result row of EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON), as the server sends it."""
    import json

    return [(json.dumps([{"Plan": plan, "Planning Time": 0.03, "Execution Time": ms}]),)]


def _probe(loops: int, hit: int, **more) -> dict:
    return {"Node Type": "Index Scan", "Relation Name": "chains", "Index Name": "chains_pkey",
            "Index Cond": "(id = (42 + (0 * g.i)))", "Actual Loops": loops, "Actual Rows": 1.0,
            "Shared Hit Blocks": hit, "Shared Read Blocks": 0, **more}


def _nested_loop(inner: dict, hit: int) -> dict:
    """The looped statement's plan as PostgreSQL 12 to 18 ran it: an Aggregate over a Nested Loop of the
    Function Scan and the ``inner`` node."""
    return {"Node Type": "Aggregate", "Actual Loops": 1, "Shared Hit Blocks": hit, "Plans": [
        {"Node Type": "Nested Loop", "Actual Loops": 1, "Shared Hit Blocks": hit, "Plans": [
            {"Node Type": "Function Scan", "Actual Loops": 1, "Shared Hit Blocks": 0}, inner]}]}


def test_the_heap_clock_loops_index_probes_at_the_server_and_reports_per_lookup():
    from dbexp.chapters.mvcc_chains.engines.postgres import ExplainClock
    from dbexp.chapters.mvcc_chains.workload import SELECT

    one = ExplainClock()
    assert one.wrap(f"{SELECT}42") == ExplainClock.PREFIX + f"{SELECT}42"
    one.begin()
    one.after(_explain(_probe(1, 3), ms=0.012))
    assert {k: list(v) for k, v in one.end(1).items()} == {"server_us": [12.0], "buffers": [3.0], "probes": [1.0]}
    looped = ExplainClock(loop=25)
    sql = looped.wrap(f"{SELECT}42")
    # a subquery of its own (OFFSET 0): no hash of it, no stop at a key's first entry
    assert "generate_series(1, 25) AS g(i)" in sql and "WHERE id = 42 + 0 * g.i OFFSET 0) AS x" in sql
    assert sql.startswith(ExplainClock.PREFIX + "SELECT count(x.v) FROM")
    looped.begin()
    looped.after(_explain(_nested_loop(_probe(25, 75), 75), ms=0.050))
    got = looped.end(1)
    assert got["server_us"][0] == pytest.approx(2.0) and got["buffers"][0] == pytest.approx(3.0)
    assert list(got["probes"]) == [1.0]


def test_a_timed_lookup_that_is_not_an_index_probe_fails_the_run():
    from dbexp.chapters.mvcc_chains.engines.postgres import ExplainClock, PlanError
    from dbexp.chapters.mvcc_chains.workload import SELECT
    from dbexp.errors import RetryableError

    # the published runs' plan at V <= 100: one index scan with no condition, the whole table, under a hash join
    whole = _nested_loop(_probe(1, 34, **{"Index Cond": None, "Actual Rows": 1000.0}), 34)
    whole["Plans"][0]["Node Type"] = "Hash Join"
    clock = ExplainClock(loop=25)
    clock.wrap(f"{SELECT}42")
    clock.begin()
    with pytest.raises(PlanError, match=r"a timed lookup read chains by Index Scan using chains_pkey without a "
                                        r"condition, not by probes of its primary key chains_pkey: Aggregate "
                                        r"\[Hash Join \[Function Scan, Index Scan using chains_pkey on chains\]\]"):
        clock.after(_explain(whole))
    # a cached probe (Memoize, 14+): one index scan for 25 lookups
    with pytest.raises(PlanError, match="ran 1 probes of chains_pkey returning 1 rows, not 25 of one row each"):
        clock.after(_explain(_nested_loop({"Node Type": "Memoize", "Actual Loops": 25, "Plans": [_probe(1, 3)]}, 3)))
    seq = {"Node Type": "Seq Scan", "Relation Name": "chains", "Actual Loops": 1, "Actual Rows": 1.0}
    with pytest.raises(PlanError, match="read chains by Seq Scan without a condition"):
        single = ExplainClock()
        single.wrap(f"{SELECT}42")
        single.after(_explain(seq))
    assert not issubclass(PlanError, RetryableError)  # measuring again would plan it the same way


def test_a_loop_below_one_is_refused_in_one_line():
    from dbexp.chapters.mvcc_chains.engines.postgres import ExplainClock
    from dbexp.experiments.chapter import Cpus

    with pytest.raises(DbexpError, match="bad loop 0"):
        ExplainClock(loop=0)
    with pytest.raises(DbexpError, match="bad heap_loop 0"):
        mv.CHAPTER.adjust(mv.CHAPTER.scale("default", heap_loop=0), "default", Cpus(), {})


def _chain_series(run_ids, versions: int = 10, pages: int = 1) -> pd.DataFrame:
    """pageinspect's reading of each run's hot row: ``versions + 1`` tuples from the oldest, all but the first
    heap-only, on ``pages`` pages."""
    rows = []
    for run_id in run_ids:
        for pos in range(versions + 1):
            for name, value in (("lp", pos + 1), ("heap_only", float(pos > 0)), ("block", float(pos % pages))):
                rows.append({"run_id": run_id, "source": "pageinspect", "t": float(pos), "name": name, "value": value})
    return pd.DataFrame(rows)


def _hot_results(checked: bool = True, buffers: float = 3.0, pages: int = 1):
    """PostgreSQL runs of the HOT variant and the indexed column at fillfactor 70 whose fresh reader pays 40 ns
    per version on the hot rows (0 on their cold neighbours), each repeat moved by a few ns, with their lookups as
    the redesigned clock stores them and the hot row's chain read with pageinspect at V = 10."""
    rows = _probed(_heap_runs("postgres 18.4", {("v", 70): 40.0, ("k", 70): 40.0}), buffers=buffers, checked=checked)
    for r in rows:
        r.update(reclaim_s=1.0, held_dead_tuples=2.0 * r["versions"], instance=0)
        for reader in mv.READERS:
            r[f"{reader}_cold_server_us"] = 12 + r["repeat"]
        r["old_server_us"] = 12 + r["repeat"]
        r["fresh_server_us"] = 12 + r["repeat"] + (0.040 + 0.002 * r["repeat"]) * r["versions"] * (r["column"] == "v")
    series = _chain_series([r["run_id"] for r in rows if r["column"] == "v" and r["versions"] == 10], pages=pages)
    return SimpleNamespace(wide=pd.DataFrame(rows), series=series)


def test_the_hot_claim_is_judged_only_where_its_lookups_walked_the_chain_as_index_probes():
    res = _hot_results()
    hw = claims.hot_witnesses(res)
    assert set(hw) == {"postgres 18.4"} and hw["postgres 18.4"].ok
    assert hw["postgres 18.4"].what == (
        "every statement's plan 25 index probes of the primary key, one row each (checked in 6 of 6 runs); the fresh "
        "reader's lookups touched 3.00 buffers each on the hot rows of column v, 3.00 on their cold neighbours; "
        "pageinspect: the chain of 11 versions on one page, 10 of them heap-only, in 3 of 3 runs")
    row = claims.claims(res).set_index("id").loc["heap-fresh-reader-pays"]
    assert row["witness_ok"] and row["verdict"] == (f"{claims.DIRECTION_ONLY}; at V = 10 (one page) and at V = 10 "
                                                    "beyond col k, ff 70 (no HOT chain) alike")

    # the published runs: no plan stored, 1.36 buffers per lookup (34 per statement, the table's 30 pages)
    old = _hot_results(checked=False, buffers=1.36)
    w = claims.hot_witnesses(old)["postgres 18.4"]
    assert not w.ok and w.what == (
        "no plan stored with these runs (they predate the plan check): their lookups touched 1.36 buffers each on the "
        "hot rows and 3.00 on their cold neighbours, 34 per statement of 25 lookups, at least the table's 30 heap "
        "pages: one read of the whole table per statement, not 25 index probes")
    row = claims.claims(old).set_index("id").loc["heap-fresh-reader-pays"]
    assert not row["witness_ok"]
    assert row["verdict"] == ("not measured here (witness failed: no plan stored with these runs (they predate the "
                              "plan check); see the witness); at V = 10 (one page) and at V = 10 beyond col k, ff 70 "
                              "(no HOT chain) alike")
    # a chain that left its page is no HOT chain on one page; nor are more buffers than one probe's
    assert not claims.hot_witnesses(_hot_results(pages=2))["postgres 18.4"].ok
    assert not claims.hot_witnesses(_hot_results(buffers=7.0))["postgres 18.4"].ok


def test_a_failed_witness_leaves_no_verdict_standing_not_even_not_resolved():
    failed, held = verdicts.witness(False, "no plan stored: 1.36 buffers"), verdicts.witness(True, "probes")
    unresolved = verdicts.not_resolved("the interval spans 0")
    assert claims.gate(unresolved, failed) == "not measured here (witness failed: no plan stored; see the witness)"
    assert claims.gate(unresolved, held) == unresolved and claims.gate("agrees", held) == "agrees"
    assert claims.gate("agrees", None).startswith("not measured here (no witness")


def test_the_old_reader_s_witness_is_the_undo_kept_while_it_read():
    runs = pd.DataFrame({"versions": [0, 10, 100], "commits": [0.0, 20.0, 200.0],
                         "garbage_purge_lag_trx": [1.0, 39.0, 399.0]})
    w = claims.undo_witness(runs)
    assert w.ok and w.what.startswith("purge's lag after the reads at least the point's commits in 2 of 2 runs")
    assert not claims.undo_witness(runs.assign(garbage_purge_lag_trx=[1.0, 39.0, 3.0])).ok  # purge passed some
    assert not claims.undo_witness(runs.drop(columns="garbage_purge_lag_trx")).ok


def test_a_step_claim_s_witness_is_each_run_s_own_observation():
    m = pd.DataFrame({"version_store": ["heap", "heap", "undo"], "series_name": ["postgres 18.4"] * 2 + ["mysql 8.0.15"],
                      "key_index_pointers": [2.0, 2.0, float("nan")], "lag_older_writer": [float("nan")] * 2 + [0.0]})
    w = claims.steps_witness(m, "key_index_pointers", "the key's heap pointers")
    assert w.ok and w.what == "the key's heap pointers, stored with each run: 2 of 2 runs on 1 servers"
    assert not claims.steps_witness(m.assign(key_index_pointers=[2.0, float("nan"), float("nan")]),
                                    "key_index_pointers", "x").ok
    # no run observed it (a step the probe gained after these runs): a failed witness that says so, never a blank
    gone = claims.steps_witness(m, "vm_scanned_pages", "x")
    assert not gone.ok and gone.what == "x: not stored with these runs (they predate this step of the probe)"
    assert claims.steps_witness(m.iloc[0:0], "vm_scanned_pages", "x") is None  # no step-by-step runs at all
    assert set(claims.STEP_OBSERVATIONS) == {c[0] for c in claims.PAGE_CLAIMS + claims.BLOB_CLAIMS}


def test_every_claims_row_names_ledger_entries_and_every_tested_entry_has_a_row():
    from dbexp.experiments import claims_ledger

    ledger = {e["id"]: e["status"] for e in claims_ledger.ledger("mvcc_chains")}
    named = {"undo-old-reader-pays", "heap-fresh-reader-pays", "indexed-column-not-hot", "versions-held-for-snapshots",
             "vacuum-scans-cost", "purge-list-commit-order", "hot-chain-same-page-cheap"} | {
        c[0] for c in claims.PAGE_CLAIMS + claims.BLOB_CLAIMS}
    ids = set(claims.claims(_hot_results())["id"].str.split(", ").explode())
    assert ids <= set(ledger) and ids <= named
    assert {i for i, status in ledger.items() if status == claims_ledger.TESTED} <= named


def test_the_page_s_lookup_table_says_whether_the_plan_was_checked():
    t = mv.lookup_rows(_hot_results()).set_index(["variant", "versions"])
    row = t.loc[("col v, ff 70", 10)]
    assert row["plan"] == "25 index probes, checked" and row["fresh_buffers"] == 3.0
    assert row["statement_buffers"] == 75.0 and row["heap_pages"] == 30.0 and row["hot_updates"] == "not counted"
    assert list(t.reset_index()["short"].unique()) == ["v, ff 70", "k, ff 70"]  # the HOT variant first
    assert (mv.lookup_rows(_hot_results(checked=False))["plan"] == "not stored").all()


def test_the_held_witness_is_the_collector_asked_and_the_garbage_polled_after():
    t = pd.DataFrame({"series_name": ["mysql 8.0.15", "postgres 16.14"], "held_snapshot": [3999.0, 200.0],
                      "held_control": [0.0, 0.0]})
    gs = pd.DataFrame({"series_name": ["mysql 8.0.15", "postgres 16.14", "postgres 16.14"], "run_id": ["a", "b", "b"],
                       "snapshot": [True, True, True]})
    w = claims.held_witness(t, gs)
    assert w.ok and w.what.endswith("in 2 of 2 variants (InnoDB's purge lag, VACUUM VERBOSE's count), the garbage "
                                    "polled after the snapshot ended in 2 runs")
    # polled, though not yet reclaimed (a smoke run's 200 dead tuples stay under autovacuum's threshold): still held
    assert claims.held_witness(t, gs[gs["series_name"] == "mysql 8.0.15"]).what.endswith("(none on postgres 16.14)")
    assert not claims.held_witness(t.assign(held_control=[0.0, float("nan")]), gs).ok


def test_a_chain_on_its_page_costs_no_buffer_more_than_a_cold_row_where_its_lookups_were_probes():
    row = claims.claims(_hot_results()).set_index("id").loc["hot-chain-same-page-cheap"]
    assert row["witness_ok"] and row["verdict"] == "agrees"
    assert row["measured here"] == ("postgres 18.4: buffers per lookup on the hot rows 3.00 (fresh reader), 3.00 (old), "
                                    "on their cold neighbours 3.00; more on the hot rows in 0 of 3 runs")
    assert "the chain of 11 versions on one page, 10 of them heap-only, in 3 of 3 runs" in row["witness"]
    # a lookup that touched a page more than its cold neighbour: the claim fails, where the chain was on its page
    more = claims.claims(_hot_results(buffers=4.0)).set_index("id").loc["hot-chain-same-page-cheap"]
    assert more["witness_ok"] and more["verdict"] == "disagrees"
    # the runs published before the plan check: not judged, whatever their buffers
    old = claims.claims(_hot_results(checked=False, buffers=1.36)).set_index("id").loc["hot-chain-same-page-cheap"]
    assert not old["witness_ok"] and old["verdict"].startswith("not measured here (witness failed: no plan stored")
    # a chain that left its page is not the claim's
    assert not claims.claims(_hot_results(pages=2)).set_index("id").loc["hot-chain-same-page-cheap", "witness_ok"]


def _step_run(name: str, store: str, **obs) -> dict:
    return {"series_name": name, "version_store": store, "repeat": 0, "instance": 0, **obs}


UNDO_STEP = dict(undo_string_bytes_per_row=451.0, index_pages_before=60.0, index_pages_after=60.0, updates_in_place=4000.0, undo_int_bytes_per_row=41.0,
                 id_gap_after_commit=2.0, id_gap_after_rollback=2.0, id_gap_after_locking=1.0, id_gaps_commit_min=2.0,
                 id_gaps_commit_max=2.0,
                 id_gaps_rollback_min=1.0, id_gaps_rollback_max=1.0, id_transactions=20.0, own_change_seen=1.0,
                 other_change_hidden=1.0, lob_rows=100.0, lob_doc_bytes=66070.0, lob_pages_per_row=5.0,
                 lob_small_changed_bytes=50.0, lob_large_changed_bytes=2000.0, lob_snapshot_sees_old=1.0,
                 lob_fresh_sees_new=1.0)


def _rows_of(m: pd.DataFrame, table) -> dict:
    return {r.ids[0]: r for r in claims._page_rows(m, lambda text: text, table)}


def test_the_undo_probe_s_new_steps_are_claims_that_can_fail():
    partial = _step_run("mysql 8.0.15", "undo", **UNDO_STEP, lob_partial_update=1.0, lob_small_new_pages_per_row=0.0,
                        lob_small_undo_bytes_per_row=164.0, lob_large_new_pages_per_row=1.0,
                        lob_large_undo_bytes_per_row=0.0)
    whole = _step_run("mysql 5.7.22", "undo", **UNDO_STEP, lob_partial_update=0.0, lob_small_new_pages_per_row=5.0,
                      lob_small_undo_bytes_per_row=164.0, lob_large_new_pages_per_row=5.0,
                      lob_large_undo_bytes_per_row=164.0)
    m = pd.DataFrame([partial, whole])
    page, blob = _rows_of(m, claims.PAGE_CLAIMS), _rows_of(m, claims.BLOB_CLAIMS)
    for cid in ("undo-update-in-place", "trx-id-no-one-counter", "own-changes-visible"):
        assert page[cid].verdict == "agrees (in 2 of 2 runs)" and page[cid].witness.ok, cid
    assert "a committed write moved the id counter by 2 (from 2 to 2), a committed locking read by 1 (no undo" in \
        page["trx-id-no-one-counter"].measured
    # the partial-update claims judged on the version that has it, the old design's on the one without
    for cid, server in (("blob-small-change-in-place", "mysql 8.0.15"), ("blob-partial-update-pages", "mysql 8.0.15"),
                        ("blob-whole-rewrite", "mysql 5.7.22"), ("blob-undo-reference-only", "mysql 5.7.22")):
        assert blob[cid].verdict == "agrees (in 1 of 1 runs)" and blob[cid].measured.startswith(server), cid
    assert blob["blob-small-change-in-place"].measured == (
        "mysql 8.0.15: a 50-byte change of a 66 KB document (5.0 LOB pages): 0.00 new LOB pages and 164 bytes of undo "
        "per row (1 undo page = 164); the snapshot still read the old documents: yes (1 of 1 runs)")
    # each can fail: a commit that draws no number, a row moved out of place, a small change written anew
    bad = pd.DataFrame([{**partial, "id_gap_after_commit": 1.0, "index_pages_after": 75.0,
                         "lob_small_new_pages_per_row": 5.0, "own_change_seen": 0.0}])
    page, blob = _rows_of(bad, claims.PAGE_CLAIMS), _rows_of(bad, claims.BLOB_CLAIMS)
    for cid in ("undo-update-in-place", "trx-id-no-one-counter", "own-changes-visible"):
        assert page[cid].verdict.startswith("disagrees"), cid
    assert blob["blob-small-change-in-place"].verdict.startswith("disagrees")
    # no run of a version without partial update: said in the verdict, once
    assert blob["blob-whole-rewrite"].verdict == verdicts.not_measured("no run here of a server the claim is about")
    assert blob["blob-whole-rewrite"].here == blob["blob-whole-rewrite"].measured == "\u2014"


HEAP_STEP = dict(cross_ctid_other_page=1.0, cross_hot_updated=0.0, cross_next_heap_only=0.0, key_index_pointers=2.0,
                 cross_lookup_rows_fresh=1.0, cross_lookup_rows_old=1.0, tag_insert_xmin=1.0, tag_update_xmax=1.0,
                 tag_new_xmin=1.0, tag_ctid_to_new=1.0, tag_new_ctid_self=1.0, tag_delete_xmax=1.0,
                 tag_delete_ctid_self=1.0, rule_old_snapshot=1.0, rule_new_snapshot=1.0)


def test_the_heap_probe_s_new_steps_are_claims_that_can_fail():
    m = pd.DataFrame([_step_run("postgres 18.4", "heap", **HEAP_STEP)])
    rows = _rows_of(m, claims.PAGE_CLAIMS)
    for cid in ("no-ctid-hop-across-pages", "xmin-xmax-stamps", "visible-xmin-not-xmax", "xmax-marks-delete"):
        assert rows[cid].verdict == "agrees (in 1 of 1 runs)" and rows[cid].witness.ok, cid
    assert rows["no-ctid-hop-across-pages"].measured == (
        "postgres 18.4: the last version on the first page points to another page (yes), marked HOT-updated: no, the "
        "next heap-only: no; a lookup through the key's 2 index entries returned 1 row to a new snapshot and 1 to the "
        "old one (1 of 1 runs)")
    # a reader that hopped across the page would find the newest version from both entries
    bad = pd.DataFrame([_step_run("postgres 18.4", "heap", **{**HEAP_STEP, "cross_lookup_rows_fresh": 2.0,
                                                               "tag_update_xmax": 0.0, "rule_new_snapshot": 0.0,
                                                               "tag_delete_ctid_self": 0.0})])
    rows = _rows_of(bad, claims.PAGE_CLAIMS)
    for cid in ("no-ctid-hop-across-pages", "xmin-xmax-stamps", "visible-xmin-not-xmax", "xmax-marks-delete"):
        assert rows[cid].verdict.startswith("disagrees"), cid


def test_only_mysql_from_8_0_3_updates_a_lob_partially():
    assert mv.PARTS.of(flavor_of_spec("mysql:8.0.15@offline")).step_facts() == {"lob_partial_update": (1.0, "bool")}
    for spec in ("mysql:5.7.22@offline", "mariadb:11.8.9@offline"):
        assert mv.PARTS.of(flavor_of_spec(spec)).step_facts() == {"lob_partial_update": (0.0, "bool")}, spec
    assert mv.PARTS.of(flavor_of_spec("postgres:18.4@offline")).step_facts() == {}


def test_the_chart_draws_what_the_findings_quote_with_intervals():
    from dbexp.chapters.mvcc_chains import charts as mvc

    res = _hot_results()
    t = mvc.costs(res)
    assert list(t["panel"].unique()) == [mvc.PANELS[1], mvc.PANELS[2]]  # no InnoDB runs here
    hot = t[t["panel"] == mvc.PANELS[1]].iloc[0]
    ex = mv.excess_at(res, 10)
    ex = ex[ex["variant"] == "col v, ff 70"].iloc[0]
    assert (hot["ns"], hot["low"], hot["high"]) == (ex["ns_per_version"], ex["ci_low"], ex["ci_high"])
    assert hot["witness"] == mvc.HELD
    assert (mvc.costs(_hot_results(checked=False, buffers=1.36))["witness"] == mvc.FAILED).all()
    res = SimpleNamespace(wide=res.wide, series=res.series, host={"cpus": 2, "cpu_model": "a CPU", "memory_gib": 2.0, "kernel": "6.1"},
                          source="these tests")
    spec = mvc.costs_per_version(res).to_dict()
    assert len(spec["vconcat"]) == 2 and spec["title"]["text"].startswith("What one version costs the reader")
