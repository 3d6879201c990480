"""The vector_isolation chapter with no server: its data set and random streams, its design, the catalog's
pgvector builds, how a trial's two answers are classified, its rates and intervals, and its verdicts and
witnesses on constructed trials (its ledger against the source's text: test_ledgers.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dbexp.catalog import lookup, parse_spec
from dbexp.chapters import vector_isolation as vi
from dbexp.chapters.vector_isolation import dataset
from dbexp.chapters.vector_isolation.analysis import difference_ci, rate_ci
from dbexp.chapters.vector_isolation.claims import ledger
from dbexp.chapters.vector_isolation.engines.postgres import _plan_index
from dbexp.chapters.vector_isolation.measure import VectorPoint, classify, point_stream
from dbexp.errors import DbexpError
from dbexp.experiments import verdicts
from dbexp.experiments.chapter import Cpus, Results

pytestmark = pytest.mark.unit


def test_the_data_set_is_the_same_every_time_and_differs_by_stream():
    a = dataset.base_rows(dataset.Shape(100, 8))
    assert a.shape == (100, 8) and a.dtype == np.float32
    assert np.array_equal(a, dataset.base_rows(dataset.Shape(100, 8)))
    assert not np.array_equal(dataset.draw(8, 10, 1), dataset.draw(8, 10, 2))
    text = dataset.literal(a[0])
    assert text.startswith("[") and text.endswith("]") and text.count(",") == 7
    assert dataset.checksum(a) == pytest.approx(float(a[:, 0].astype(np.float64).sum()), abs=0.006)


def test_streams_are_stable_per_key_and_near_rows_lie_around_their_centre():
    assert dataset.stream("a", 1) == dataset.stream("a", 1) != dataset.stream("a", 2) >= 1
    centre = dataset.draw(16, 1, 3)[0]
    rows = dataset.near(centre, 400, 9)
    assert rows.shape == (400, 16)
    assert np.abs(rows.mean(axis=0) - centre).max() < 0.1  # centred on the query
    assert rows.std(axis=0).mean() == pytest.approx(dataset.SPREAD, rel=0.1)  # as the clusters spread


def _p(**over) -> VectorPoint:
    base = dict(kind="readers", writer="near", gap_writes=10, rate=50.0, k=10, ef_search=10, iterative="off",
                exact=False, reader_between=False, transactions=5, seconds=1.0, rows=100, dims=8, m=16,
                ef_construction=64, instance=0, client_cpus="0")
    return VectorPoint(**(base | over))


def test_every_measurement_of_every_point_draws_its_own_stream():
    p = _p()
    streams = {point_stream("postgres:17", p, 0), point_stream("postgres:17", p, 1),
               point_stream("postgres:18", p, 0), point_stream("postgres:17", _p(instance=1), 0),
               point_stream("postgres:17", _p(ef_search=40), 0)}
    assert len(streams) == 5  # repeats, servers, instances and settings never share queries
    q = lambda s, j: dataset.draw(8, 1, dataset.stream(s, j, "query"))[0]
    s = point_stream("postgres:17", p, 0)
    assert not np.array_equal(q(s, 0), q(s, 1))  # every trial its own query
    assert p.gap_s == pytest.approx(0.2)


def test_a_bad_writer_or_pace_is_refused_in_one_line():
    with pytest.raises(DbexpError, match="bad writer 'sideways'; valid are none, insert, near, update, delete"):
        _p(writer="sideways")
    with pytest.raises(DbexpError, match="bad writer rate 0"):
        _p(rate=0)


def test_pgvector_builds_are_a_catalog_variant():
    b = lookup(parse_spec("postgres:17+pgvector@offline"))[0]
    assert b.variant == "pgvector" and b.version == "17.10" and b.base == "sid"
    assert b.extension.package == "postgresql-17-pgvector" and len(b.extension.sha256) == 64
    assert b.image.endswith("-pgvector") and b.spec == "postgres:17.10+pgvector@offline"
    assert all(not x.variant for x in lookup(parse_spec("postgres:17@offline")))  # the plain one is untouched
    with pytest.raises(DbexpError, match="builds with an extension: postgres:17\\+pgvector"):
        lookup(parse_spec("postgres:16+pgvector@offline"))


def test_default_servers_are_the_builds_with_a_vector_index():
    specs = set(vi.DEFAULT_SERVERS)
    assert {"postgres:17.10+pgvector@offline", "postgres:18.4+pgvector@offline", "mariadb:11.8.9@offline"} <= specs
    assert not any(s.startswith(("mysql:", "mariadb:10.")) or (s.startswith("postgres:") and "+" not in s)
                   for s in specs)


def test_a_server_without_a_vector_index_is_refused_in_one_line():
    with pytest.raises(DbexpError) as err:
        vi.CHAPTER.run("smoke", servers=["postgres:16"])
    assert "postgres:16" in str(err.value) and "valid are" in str(err.value) and "\n" not in str(err.value)


def test_a_bad_knob_is_refused_in_one_line():
    with pytest.raises(DbexpError, match="bad writers 'sideways'"):
        vi.CHAPTER.run("smoke", writers=["sideways"])
    with pytest.raises(DbexpError, match="bad gap_writes 0"):
        vi.CHAPTER.run("smoke", gap_writes=0)


def _points(scale="default", **over):
    parts = vi.CHAPTER.design(vi.CHAPTER.scale(scale, **over), Cpus("1", "0"))
    return [p for part in parts for p in part.points]


def test_design_runs_each_instance_on_its_own_servers_with_the_controls_first():
    pts = _points()
    groups = {p.group for p in pts}
    sc = vi.CHAPTER.scale("default")
    assert len(groups) == len(sc.servers) * len(sc.m) * sc.instances
    for g in groups:
        mine = [p.params for p in pts if p.group == g]
        assert len({p.instance for p in mine}) == 1
        writers = [p.writer for p in mine]
        first_writer = writers.index(next(w for w in writers if w != "none"))
        assert all(w == "none" for w in writers[:first_writer])  # no-writer points need no rebuild: first
        assert all(w != "none" for w in writers[first_writer:])
        readers = [p for p in mine if p.kind == "readers"]
        assert any(p.writer == "none" for p in readers)
        assert any(p.exact and p.writer == "near" for p in readers)  # the exact scan under the same writer
        # the separating setting: the near writer at a candidate list as short as k, iterative scan off
        assert any(p.writer == "near" and p.ef_search == p.k and p.iterative == "off" and not p.reader_between
                   for p in readers)
        assert any(p.writer == "insert" for p in readers)  # the mixture writer beside it
        assert any(p.reader_between for p in readers) == sc.between
        assert all(p.ef_search >= p.k for p in readers)
        assert {p.gap_writes for p in readers} == {sc.gap_writes} and {p.rate for p in readers} == {sc.rate}
        assert len({p.transactions for p in readers}) == 1
    maria = [p.params for p in pts if p.server.spec.startswith("mariadb")]
    assert {p.iterative for p in maria} == {"off"}  # MariaDB has no iterative scan
    pg = [p.params for p in pts if "+pgvector" in p.server.spec]
    assert {"off", "relaxed_order"} <= {p.iterative for p in pg if p.writer == "near"}
    # the no-writer control at every iterative-scan setting: a search that repeats itself without writes
    assert {p.iterative for p in pg if p.writer == "none" and p.kind == "readers"} == set(sc.iteratives)
    assert len({p.key("vector_isolation") for p in pts}) == len(pts)  # instances are different points


def test_reader_trials_count_events_and_only_the_rates_are_timed():
    pts = _points("smoke")
    kinds = {p.params.kind: vi.CHAPTER.timed(p) for p in pts}
    assert kinds == {"readers": False, "query_rate": True, "insert_rate": True}


def test_rate_interval_is_exact_and_stays_within_0_and_1():
    r, lo, hi = rate_ci(3, 60)
    assert lo < r == 0.05 < hi
    r, lo, hi = rate_ci(0, 60)
    assert r == lo == 0 and 0.05 < hi < 0.07  # the rule of three: about 3 / n
    r, lo, hi = rate_ci(60, 60)
    assert r == hi == 1 and 0.93 < lo < 0.95
    assert all(np.isnan(rate_ci(0, 0)))
    for c1, n1, c2, n2 in ((60, 60, 0, 60), (0, 60, 60, 60), (1, 3, 0, 500)):
        d, lo, hi = difference_ci(c1, n1, c2, n2)
        assert -1 <= lo <= d <= hi <= 1


def test_a_trials_two_answers_are_classified_cut_short_or_replaced():
    same = classify([1, 2, 3], [1, 2, 3], 3)
    assert same["set_changed"] == same["order_changed"] == 0
    order = classify([1, 2, 3], [2, 1, 3], 3)
    assert order["order_only"] == 1 and order["set_changed"] == 0
    head = classify([1, 2, 3], [1], 3)
    assert (head["changed_shorter"], head["head_kept"], head["changed_replaced"], head["lost"]) == (1, 1, 0, 2)
    empty = classify([1, 2, 3], [], 3)
    assert empty["changed_shorter"] == empty["head_kept"] == 1  # nothing kept is the empty head
    dropped = classify([1, 2, 3], [1, 3], 3)
    assert dropped["changed_shorter"] == 1 and dropped["head_kept"] == 0
    other = classify([1, 2, 3], [1, 2, 4], 3)
    assert (other["changed_replaced"], other["changed_shorter"], other["lost"], other["gained"]) == (1, 0, 1, 1)


def test_verdict_words():
    assert verdicts.events(1, 50, 0.1, "some") == "agrees"
    assert verdicts.events(0, 50, 0.07, "some").startswith("not resolved (none in 50")
    assert verdicts.events(0, 50, 0.07, "none") == "agrees"
    assert verdicts.events(2, 50, 0.1, "none") == "disagrees"
    assert verdicts.events(0, 0, float("nan"), "none") == verdicts.NOT_MEASURED


def test_plan_index_is_read_from_a_nested_plan():
    plan = {"Node Type": "Limit", "Plans": [{"Node Type": "Index Scan", "Index Name": "items_hnsw"}]}
    assert _plan_index(plan) == "items_hnsw"
    assert _plan_index({"Node Type": "Limit", "Plans": [{"Node Type": "Sort", "Plans": [{"Node Type": "Seq Scan"}]}]}) is None


# --- constructed runs: one row per run, one series row per trial and field --------------------------------
PG = {"flavor": "postgres", "version": "17.10", "artifact": "npm:x + debian:postgresql-17-pgvector=0.8.0-1"}
MARIA = {"flavor": "mariadb", "version": "11.8.9", "artifact": "debian:mariadb"}
RUN = {"status": "ok", "kind": "readers", "writer": "near", "gap_writes": 10, "rate": 50.0, "k": 10,
       "ef_search": 10, "iterative": "off", "exact": False, "reader_between": False, "transactions": 4,
       "seconds": 3.0, "rows": 10000, "dims": 32, "m": 16, "ef_construction": 64, "instance": 0,
       "writes_per_s": 50.0, "point_key": "p", "sweep_id": "s", "started_at": "2026-11-26T12:00:00",
       "ended_at": "2026-11-26T12:00:10"}
SAME = {"rows1": 10, "rows2": 10, "set_changed": 0, "changed_shorter": 0, "changed_replaced": 0, "order_only": 0,
        "head_kept": 0, "lost": 0, "gained": 0, "lost_visible": 0, "lost_in_exact": 0, "leaked": 0,
        "plan_changed": 0, "plan_is_index": 1, "recall1": 0.9, "recall2": 0.9, "writes_between": 10, "gap_s": 0.2,
        "new_nearer": 0, "index_pages_written": 80, "index_pages": 300}
CUT = SAME | {"rows2": 6, "set_changed": 1, "changed_shorter": 1, "head_kept": 1, "lost": 4, "lost_visible": 4,
              "lost_in_exact": 3, "new_nearer": 5}
REPLACED = SAME | {"set_changed": 1, "changed_replaced": 1, "lost": 1, "gained": 1, "lost_visible": 1,
                   "lost_in_exact": 1, "new_nearer": 2}


def _results(runs: list[tuple[dict, list[dict]]]) -> Results:
    """Runs (their fields, their trials' records) as stored results."""
    wide, series = [], []
    for i, (fields, trials) in enumerate(runs):
        run_id = f"r{i}"
        wide.append(RUN | fields | {"run_id": run_id})
        for j, rec in enumerate(trials):
            series += [{"run_id": run_id, "t": float(j), "source": "txn", "name": k, "value": float(v)}
                       for k, v in rec.items()]
    w = pd.DataFrame(wide)
    return Results("vector_isolation", w, pd.DataFrame(series), pd.DataFrame(), w, "this run")


def _by_id(res: Results) -> dict:
    c = vi.CHAPTER.claims(res)
    assert len(c) == len(ledger())
    return {i: r for i, r in zip(c["id"], c.to_dict("records"))}


def _controls(engine: dict) -> list[tuple[dict, list[dict]]]:
    return [(engine | {"writer": "none"}, [SAME | {"writes_between": 0, "new_nearer": np.nan,
                                                   "index_pages_written": 0}] * 4),
            (engine | {"exact": True}, [SAME | {"new_nearer": 3}] * 4)]


def test_trials_are_read_back_one_per_transaction_and_pooled_with_exact_intervals():
    res = _results([(PG | {"instance": 0}, [CUT, SAME, SAME, SAME]), (PG | {"instance": 1}, [CUT, CUT, CUT, SAME])])
    t = vi.analysis.trials(res)
    assert len(t) == 8 and set(t["trial"]) == {0, 1, 2, 3}
    r = vi.changed_rates(res).iloc[0]
    assert r["engine"] == "pgvector 0.8.0 on PostgreSQL 17.10" and r["writer_label"] == "near x10"
    assert (r["transactions"], r["set_changed"], r["changed_shorter"], r["head_kept"]) == (8, 4, 4, 4)
    assert 0 <= r["ci_low"] < 0.5 < r["ci_high"] <= 1
    assert r["instance_rates"] == "25.0% / 75.0%"
    assert r["crowded"] == 4 and r["unseen_inside"] == 4  # each cut answer had as many unseen rows inside


def test_cut_short_answers_alone_leave_the_posts_mechanism_unwitnessed():
    res = _results([(PG, [CUT] * 3 + [SAME])] + _controls(PG) + [(MARIA, [SAME] * 4)] + _controls(MARIA))
    by = _by_id(res)
    for i in ("pgvector-set-changes", "set-not-order", "not-plan-change", "lost-rows-visible"):
        assert by[i]["verdict"].startswith("not measured here (witness failed"), (i, by[i]["verdict"])
        assert by[i]["witness_ok"] is False and "cut short" in by[i]["witness"]
    assert by["lost-by-another-path"]["verdict"].startswith("not resolved")
    # the candidates the cut answers lost were taken by rows the snapshot could not see: the heap check ran
    assert by["new-rows-rejected"]["verdict"] == "agrees" and by["new-rows-rejected"]["witness_ok"]
    assert by["btree-repeats"]["verdict"] == "agrees" and by["btree-repeats"]["witness_ok"]


def test_replaced_answers_with_visible_lost_rows_witness_the_posts_mechanism():
    res = _results([(PG, [REPLACED, CUT, SAME, SAME])] + _controls(PG))
    by = _by_id(res)
    for i in ("pgvector-set-changes", "lost-by-another-path", "lost-rows-visible", "set-not-order"):
        assert by[i]["verdict"] == "agrees" and by[i]["witness_ok"], (i, by[i]["verdict"])
    assert by["not-plan-change"]["verdict"] == "agrees"
    assert by["insert-rewrites-lists"]["verdict"] == "agrees"  # 80 pages for 10 rows, none with no writer


def test_mariadb_judged_against_pgvector_at_the_same_settings_and_with_a_reader_between():
    maria_one = [SAME | {"new_nearer": 3, "graph_rows_updated": 320, "index_pages_written": np.nan}] * 4
    pg_cut = (PG, [CUT] * 4)
    repeats = _results([pg_cut, (MARIA, maria_one)])
    row = _by_id(repeats)["mariadb-repeats"]
    assert row["witness_ok"] and "inside the first answer's radius in 4 of 4" in row["witness"]
    assert row["verdict"].startswith("agrees") and "difference +100.0%" in row["measured here"]
    assert "32.0 rows of the graph's own table per row inserted" in row["measured here"]
    between = [CUT | {"rows2": 0, "lost": 10, "lost_visible": 10, "graph_rows_updated": 320,
                      "index_pages_written": np.nan}] * 4
    changed = _results([pg_cut, (MARIA, maria_one), (MARIA | {"reader_between": True}, between)])
    row = _by_id(changed)["mariadb-repeats"]
    assert row["verdict"].startswith("disagrees") and "another reader" in row["verdict"]
    # no difference from pgvector at the same settings: not resolved, whatever MariaDB did
    alike = _results([(PG, [SAME] * 4), (MARIA, maria_one)])
    assert _by_id(alike)["mariadb-repeats"]["verdict"].startswith("not resolved")


def test_runs_that_recorded_no_radius_cannot_witness_mariadb():
    old = {k: v for k, v in SAME.items() if k not in ("new_nearer", "head_kept", "gap_s")}
    cut = old | {"rows2": 9, "set_changed": 1, "changed_shorter": 1, "lost": 1, "lost_visible": 1}
    res = _results([(PG | {"writer": "insert", "rate": np.nan}, [cut] * 20),
                    (MARIA | {"writer": "insert", "rate": np.nan}, [old] * 20)])
    row = _by_id(res)["mariadb-repeats"]
    assert row["verdict"].startswith("not measured here (witness failed: these runs did not record")
    assert vi.changed_rates(res)["writer_label"].tolist() == ["insert x10", "insert x10"]  # as they were run
