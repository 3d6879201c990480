"""The readview chapter's design and its analysis of the published data/ (no server)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from dbexp.chapters import readview

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def published():
    return readview.CHAPTER.run("default", run=False, root=REPO)


def test_readview_design_blocks_by_h_and_probes_where_a_symbol_is_exported():
    from dbexp.experiments.chapter import Cpus

    sc = readview.CHAPTER.scale("default")
    points = [p for part in readview.CHAPTER.design(sc, Cpus("1", "0")) for p in part.points]
    assert readview.CHAPTER.order == "shuffled"
    assert {p.block for p in points} == {f"H={h}" for h in sc.holders}
    maria = [p for p in points if p.server.spec.startswith("mariadb")]
    # MariaDB exports no view function: its probe runs are the server-side loop, on a server per H
    assert maria and any(p.params.probe for p in maria)
    assert {p.group for p in maria} == {f"readview {spec} H={h}" for h in sc.holders
                                        for spec in ("mariadb:10.11@offline", "mariadb:11.8@offline")}
    # MySQL 9.7 and MariaDB 11.8 beside the older ones; PostgreSQL 18 left out at default scale (the budget)
    specs = {p.server.spec for p in points}
    assert {"mysql:9.7@offline", "mariadb:11.8@offline"} <= specs and "postgres:18@offline" not in specs
    assert "postgres:18@offline" in readview.CHAPTER.scale("full").servers
    assert len({p.group for p in points if p.server.spec.startswith("mysql:8.0")}) == 1
    pg = [p for p in points if p.server.spec.startswith("postgres")]
    assert {p.params.mode for p in pg} == {"none", "prepared", "idle"}
    assert pg[0].server.settings["max_prepared_transactions"] == str(max(sc.holders) + 10)
    # idle sessions are timed at the snapshot only, at 1,000
    idle = [p for p in pg if p.params.mode == "idle"]
    assert idle and all(p.params.probe for p in idle) and {p.params.holders for p in idle} == {1000}
    # the double latch at the largest H only, on the engines that have a trx-sys mutex
    latch = [p for p in points if p.params.trx_stmts]
    assert latch and all(p.server.spec.startswith(("mysql", "mariadb")) for p in latch)
    assert {p.params.holders for p in latch} == {max(sc.holders)}
    # three H above 0: two segments to test a straight line
    assert len([h for h in sc.holders if h]) >= 3
    assert len({p.key("readview") for p in points}) == len(points)


def test_published_readview_slopes_have_numbers(published):
    for sl in (readview.view_slopes(published), readview.cpu_slopes(published)):
        assert len(sl) >= 2 and sl["slope"].notna().all()
        assert (sl["low"] <= sl["slope"]).all() and (sl["slope"] <= sl["high"]).all()


def test_each_engine_part_knows_what_its_views_copy_and_how_it_holds_transactions():
    from dbexp.chapters.readview import innodb, mariadb, parts, postgres

    my, maria = parts.of_spec("mysql:8.0@offline"), parts.of_spec("mariadb:10.11@offline")
    pg12, pg14 = parts.of_spec("postgres:12@offline"), parts.of_spec("postgres:14@offline")
    assert type(my) is innodb.Views and type(maria) is mariadb.Views and type(pg12) is postgres.Snapshots
    assert my.symbol == "_ZN4MVCC9view_openERP8ReadViewP5trx_t" and maria.symbol is None
    assert my.registry_shrinks and not maria.registry_shrinks and pg12.registry_shrinks
    assert (my.bytes_per_holder, maria.bytes_per_holder, pg12.bytes_per_holder, pg14.bytes_per_holder) == (8, 8, 12, 4)
    assert (pg12.family, pg14.family) == postgres.Snapshots.FAMILIES
    assert parts.of_run("postgres", "18.4").family == postgres.Snapshots.FROM_14
    assert my.settings(100) == {"performance-schema-instrument": "wait/synch/mutex/innodb/trx_sys%=ON"}
    assert maria.settings(100) == {**my.settings(100), "performance_schema": "ON"}
    assert pg12.settings(100) == {"max_prepared_transactions": "110"}
    assert my.double_latch and not pg12.double_latch and pg12.idle_sessions and not my.idle_sessions
    assert my.latch_counters is not None and pg12.latch_counters is None
    # the double latch is counted on the global trx-sys mutex in every version (9.7's others apart)
    assert my.view_latch == maria.view_latch == innodb.VIEW_LATCH == "trx_sys_mutex" and pg12.view_latch is None
    assert parts.of_spec("mysql:9.7@offline").symbol == my.symbol
    # where a snapshot records the completion count it was built at (checked on the lab's builds)
    offsets = {v: parts.of_run("postgres", v).completion_count_offset
               for v in ("12.22", "13.23", "14.23", "15.18", "16.14", "17.10", "18.4")}
    assert offsets == {"12.22": None, "13.23": None, "14.23": 112, "15.18": 112, "16.14": 112, "17.10": 112,
                       "18.4": 96}
    assert my.completion_count_offset is None and maria.completion_count_offset is None


def test_the_copy_cost_leaves_the_call_out():
    """A slope over sizes: the call around each copy (hundreds of ns) goes to the intercept."""
    from dbexp.chapters.readview.design import copy_cost

    per_byte, call = copy_cost(repeats=50)
    assert 0 < per_byte < 0.1 and call > 0


def test_the_published_copy_times_are_refitted_without_the_call(published):
    """The published runs stored one copy's time per byte, call included (0.078 ns): the slope over the
    runs' sizes is about eight times smaller, its intercept the call."""
    copy = readview.copy_cost(published)
    assert copy["how"] == "refitted"
    assert copy["low"] < 0.00925 < copy["high"] and copy["high"] - copy["low"] < 0.001
    assert round(copy["stored"], 3) == 0.078 and 300 < copy["call_ns"] < 380
    vs = readview.view_slopes(published)
    my = vs[vs["server"] == "mysql 8.0.15"].iloc[0]
    assert round(my["predicted"], 3) == 0.074 and my["excess low"] > 0  # above the copy: it does more


def test_innodb_views_are_concave_in_the_published_runs(published):
    """1 to 1,000 open transactions add 0.27 to 1.12 ns each (by repeat), 1,000 to 10,000 0.12 to 0.21:
    the upper segment's slope is resolved below the lower one's."""
    seg = readview.segments(published).set_index("server")
    for name in ("mysql 5.7.22", "mysql 8.0.15"):
        r = seg.loc[name]
        assert r["shape"] == "concave" and r["diff_high"] < 0
    assert round(seg.loc["mysql 8.0.15", "low_min"], 2) == 0.27 and round(seg.loc["mysql 5.7.22", "low_max"], 2) == 1.12
    assert round(seg.loc["mysql 8.0.15", "high_min"], 2) == 0.12 and round(seg.loc["mysql 8.0.15", "high_max"], 2) == 0.21
    r = seg.loc["mysql 5.7.22"]
    assert (round(r["difference"], 2), round(r["diff_low"], 2), round(r["diff_high"], 2)) == (-0.60, -1.06, -0.13)
    assert seg.loc["postgres 12.22", "shape"] == "straight within the interval"


def test_idle_sessions_are_compared_by_the_interval_of_their_difference(published):
    from dbexp.chapters.readview import analysis

    pairs = {(p["old"], p["new"]): p["difference"] for p in analysis.idle_sessions(published)["pairs"]}
    d = pairs[("postgres 12.22", "postgres 14.23")]
    assert tuple(round(x, 2) for x in d) == (0.68, 0.26, 1.10)
    assert pairs[("postgres 12.22", "postgres 18.4")][1] > 0


def test_published_postgres_14_rebuilds_are_bounded_from_the_stored_quantiles(published):
    """At 10,000 the median call equals H = 0's (at most half rebuilt) and the 90th percentile is
    11.6 µs (at least a tenth did): a rebuild adds 2 to 10 times the mean's rise per holder."""
    b = readview.rebuild_bounds(published).set_index("server")
    r = b.loc["postgres 14.23"]
    assert r["p50"] == r["p50 at 0"] and round(r["p90"] / 1000, 1) == 11.6
    assert (r["share at most"], r["share at least"]) == (0.5, 0.1)
    assert round(r["rebuild at least"], 2) == 0.66 and round(r["rebuild at most"], 1) == 3.4
    vs = readview.view_slopes(published)
    assert set(vs.loc[vs["family"] == "postgres>=14", "calls"]) == {"every call, reuses included"}
    assert readview.reuse(published)["rebuilt share"].isna().all()


def test_the_mariadb_loop_shows_its_repeats_in_run_order(published):
    lr = readview.loop_runs(published).set_index("holders")
    top = lr.loc[10000]
    assert [round(x) for x in top["us_per_read"]] == [1370, 1501, 3347, 2617]
    assert round(top["reads_ratio"], 2) == 0.02 and top["reads_high"] < 1
    assert top["loop_low"] > 100  # the growth is resolved whatever the drift


def test_published_claims_have_the_books_columns_and_the_corrected_verdicts(published):
    from dbexp.experiments import verdicts

    t = readview.claims(published)
    assert list(t.columns) == list(verdicts.COLUMNS)
    v = list(t["verdict"])
    assert v[0].startswith("disagrees (it grows, but concave")
    assert v[1].startswith("agrees (above the copy")
    assert v[2].startswith("agrees (it grows; no cost per transaction")
    assert "no cost per open transaction is given" in t["measured here"][2]
    assert v[3] == "agrees"
    assert v[4] == "agrees; many CPUs: not testable here (one server CPU)"
    assert "+0.68 ns [+0.26, +1.10]" in t["measured here"][4]


def test_published_page_sentences(published):
    assert readview.loop_sentence(published).startswith(
        "**mariadb 10.11.19: with 10,000 transactions held open, its readers keep 0.02 [0.002, 0.175]")
    assert "1,370, 1,501, 3,347, 2,617 µs per read" in readview.loop_sentence(published)
    assert readview.sessions_sentence(published).startswith("Per snapshot, postgres 12.22: +0.73 ns [+0.33, +1.12] per idle "
                                                            "session, +1.70 ns [+1.66, +1.74] per prepared transaction;")
    assert "postgres 12.22 minus postgres 14.23 +0.68 ns [+0.26, +1.10]" in readview.sessions_sentence(published)
    assert readview.statement_sentence(published) == "No server's CPU per statement is resolved above twice the others' here."
    assert "0.078 ns per byte, 8 times the copy" in readview.copy_sentence(published)
    findings = readview.findings(published).split("\n\n")
    assert 3 <= len(findings) <= 6 and findings[0].startswith("With 10,000 transactions held open, mariadb 10.11.19's")


def test_a_run_of_one_repeat_says_it_has_no_interval(published):
    """Smoke-like results (one repeat, H = 0 and 1,000, MySQL 8.0 and PostgreSQL 14): every sentence and
    claim renders, a value without an interval says so, and nothing prints nan."""
    w = published.wide
    keep = ((w["repeat"] == 0) & w["spec"].isin(["mysql:8.0@offline", "postgres:14@offline"])
            & w["holders"].isin([0, 1000]))
    res = replace(published, wide=w[keep], runs=published.runs[published.runs["run_id"].isin(w.loc[keep, "run_id"])])
    text = " ".join([readview.findings(res), readview.copy_sentence(res), readview.segments_sentence(res),
                     readview.reuse_sentence(res), readview.sessions_sentence(res), readview.loop_sentence(res)])
    assert "nan" not in text.lower() and "one repeat: no interval" in text
    t = readview.claims(res)
    assert "nan" not in " ".join(t["measured here"]).lower()
    assert t["verdict"][0] == "not measured at this scale" and t["verdict"][2] == "not measured at this scale"


def test_split_probe_output_is_parsed_into_rebuilds_and_reuses():
    from dbexp.chapters.readview import design, snapshot_probe

    lines = ['{"type": "attached_probes", "data": {"probes": 5}}',
             '{"type": "map", "data": {"@calls": 200}}', '{"type": "map", "data": {"@ns": 2000000}}',
             '{"type": "map", "data": {"@reused_calls": 800}}', '{"type": "map", "data": {"@reused_ns": 1200000}}',
             '{"type": "map", "data": {"@out_calls": 10}}', '{"type": "map", "data": {"@out_ns": 5000000}}',
             '{"type": "map", "data": {"@count_min": 1000}}', '{"type": "map", "data": {"@count_max": 1190}}',
             '{"type": "hist", "data": {"@hist": [{"min": 8192, "max": 16383, "count": 200}]}}',
             '{"type": "hist", "data": {"@reused_hist": [{"min": 1024, "max": 2047, "count": 800}]}}']
    s = snapshot_probe.parse(lines)
    assert (s.rebuilt.calls, s.reused.calls, s.calls, s.counter_span) == (200, 800, 1010, 190)
    assert s.rebuilt_share == 0.2 and s.rebuilt.mean_ns == 10000 and s.reused.mean_ns == 1500
    m = design.view_measurements(s)
    assert m["view_calls"][0] == 1010 and m["view_rebuilt_share"][0] == 0.2
    assert m["view_ns_mean"][0] == 3200 and m["view_rebuilt_ns_mean"][0] == 10000
    assert m["view_ns_p50"][0] < 2048 < m["view_ns_p90"][0]  # the two histograms added
    assert m["view_counter_span"][0] == 190
    assert "uptr(arg0 + 112)" in snapshot_probe.script("/bin/postgres", "GetSnapshotData", 112)


def test_readview_chart_panels_hold_the_rows_of_their_labels(published):
    from chart_panels import check
    from test_chart_facets import _has_facet, notebook_charts

    quiet = type("Tables", (), {"show": staticmethod(lambda *a, **k: None)})
    specs = [c.to_dict() for c in notebook_charts("readview", {"rv": readview, "res": published, "tables": quiet})]
    faceted = [s for s in specs if _has_facet(s)]
    assert len(faceted) == 2, [s.get("title") for s in specs]  # time per call and CPU per read, by engine
    for spec in faceted:
        for facet in check(spec):
            for p in facet.panels:
                assert p.rows, (spec["title"], p.labels)
                assert set(facet.data.loc[sorted(p.rows), facet.fields[0]]) == {p.labels[0]}


def test_the_double_latch_counts_the_global_mutex_and_shows_the_others_apart(published):
    """MySQL 9.7 has trx_sys_shard_mutex and trx_sys_serialisation_mutex beside trx_sys_mutex: the ratio
    is the global one's alone (as in every version), the others are shown beside it, and the claim's
    verdict names the servers with the split trx-sys apart from those with one mutex."""
    import pandas as pd

    from dbexp.chapters.readview.claims import latch_row

    before = readview.latch(published)
    w = published.wide
    runs = set(w.loc[w["series_name"] == "mysql 8.0.15", "run_id"])
    c = published.counters
    extra = c[c["run_id"].isin(runs) & (c["name"] == "trx_sys_mutex.count")].assign(
        name="trx_sys_shard_mutex.count", delta=lambda d: d["delta"] * 0.1)
    split = replace(published, counters=pd.concat([c, extra], ignore_index=True))
    after = readview.latch(split)
    key = ["server", "holders"]
    pd.testing.assert_series_equal(before.set_index(key)["ratio"], after.set_index(key)["ratio"])
    row = after[(after["server"] == "mysql 8.0.15")].iloc[-1]
    assert row["other names"] == "trx_sys_shard_mutex" and row["other autocommit"] > 0
    assert after.loc[after["server"] == "mysql 5.7.22", "other names"].eq("").all()
    verdict = latch_row(split, readview.tidy(split)).verdict
    assert "on mysql 8.0.15 (its trx-sys split" in verdict and "on mysql 5.7.22 (one trx-sys mutex" in verdict
