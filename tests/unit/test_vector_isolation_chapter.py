"""The vector_isolation chapter with no server: its data set, its design, the catalog's pgvector builds,
its rates and verdicts on constructed runs (its ledger against the source's text: test_ledgers.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dbexp.catalog import lookup, parse_spec
from dbexp.chapters import vector_isolation as vi
from dbexp.chapters.vector_isolation import dataset
from dbexp.chapters.vector_isolation.analysis import rate_ci
from dbexp.chapters.vector_isolation.claims import ledger
from dbexp.chapters.vector_isolation.engines.postgres import _plan_index
from dbexp.errors import DbexpError
from dbexp.experiments import verdicts
from dbexp.experiments.chapter import Cpus, Results


def test_the_data_set_is_the_same_every_time_and_differs_by_stream():
    a = dataset.base_rows(dataset.Shape(100, 8))
    assert a.shape == (100, 8) and a.dtype == np.float32
    assert np.array_equal(a, dataset.base_rows(dataset.Shape(100, 8)))
    assert not np.array_equal(dataset.draw(8, 10, 1), dataset.draw(8, 10, 2))
    text = dataset.literal(a[0])
    assert text.startswith("[") and text.endswith("]") and text.count(",") == 7
    assert dataset.checksum(a) == pytest.approx(float(a[:, 0].astype(np.float64).sum()), abs=0.006)


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
        if mine[0].m == sc.m[0]:  # the main graph degree has every point, the exact-scan control too
            assert any(p.exact for p in readers)
        else:  # another degree: the main insert point, its no-writer control and the query rate
            assert sorted((p.kind, p.writer) for p in mine) == [("query_rate", "none"), ("readers", "insert"),
                                                                ("readers", "none")]
        assert all(p.ef_search >= p.k for p in readers)
        assert all(p.gap_writes > 0 for p in readers if p.writer != "none")
    maria = [p.params for p in pts if p.server.spec.startswith("mariadb")]
    assert {p.iterative for p in maria} == {"off"}  # MariaDB has no iterative scan
    pg = [p.params for p in pts if "+pgvector" in p.server.spec]
    assert {"off", "relaxed_order"} <= {p.iterative for p in pg}
    assert len({p.key("vector_isolation") for p in pts}) == len(pts)  # instances are different points


def test_rate_interval_holds_its_point_and_starts_at_zero_for_none():
    r, lo, hi = rate_ci(3, 60)
    assert lo < r == 0.05 < hi
    r, lo, hi = rate_ci(0, 60)
    assert r == lo == 0 and 0.05 < hi < 0.07  # the rule of three: about 3 / n
    assert all(np.isnan(rate_ci(0, 0)))


def test_event_verdicts():
    assert verdicts.events(1, 50, 0.1, "some") == "agrees"
    assert verdicts.events(0, 50, 0.07, "some").startswith("not resolved (none in 50")
    assert verdicts.events(0, 50, 0.07, "none") == "agrees"
    assert verdicts.events(2, 50, 0.1, "none") == "disagrees"
    assert verdicts.events(0, 0, float("nan"), "none") == verdicts.NOT_MEASURED


def test_plan_index_is_read_from_a_nested_plan():
    plan = {"Node Type": "Limit", "Plans": [{"Node Type": "Index Scan", "Index Name": "items_hnsw"}]}
    assert _plan_index(plan) == "items_hnsw"
    assert _plan_index({"Node Type": "Limit", "Plans": [{"Node Type": "Sort", "Plans": [{"Node Type": "Seq Scan"}]}]}) is None


def _results(rows: list[dict]) -> Results:
    base = {"status": "ok", "kind": "readers", "writer": "insert", "gap_writes": 20, "k": 10, "ef_search": 10,
            "iterative": "off", "exact": False, "transactions": 30, "gap_s": 0.25, "seconds": 3.0, "rows": 10000,
            "dims": 32, "m": 16, "ef_construction": 64, "changed_shorter": 0, "changed_replaced": 0,
            "order_only": 0, "short_answers": 0, "plan_changed": 0, "leaked": 0, "lost": 0, "lost_visible": 0,
            "lost_in_exact": 0, "recall": 0.99, "rows_mean": 10.0, "writes_per_s": 100.0, "writes_between": 20.0,
            "index_pages_written": np.nan, "index_pages": np.nan, "artifact": "", "point_key": "p",
            "sweep_id": "s", "started_at": "2026-11-26T12:00:00", "ended_at": "2026-11-26T12:00:10"}
    wide = pd.DataFrame([base | r for r in rows])
    return Results("vector_isolation", wide, pd.DataFrame(), pd.DataFrame(), wide, "this run")


def test_changed_rates_pool_the_instances_and_say_if_each_lies_inside():
    pg = {"flavor": "postgres", "version": "17.10", "artifact": "npm:x + debian:postgresql-17-pgvector=0.8.0-1"}
    res = _results([pg | {"instance": 0, "reader_transactions": 30, "set_changed": 3, "changed_shorter": 2,
                          "changed_replaced": 1},
                    pg | {"instance": 1, "reader_transactions": 30, "set_changed": 27}])
    t = vi.changed_rates(res)
    assert len(t) == 1 and t["engine"].iloc[0] == "pgvector 0.8.0 on PostgreSQL 17.10"
    row = t.iloc[0]
    assert (row["transactions"], row["set_changed"], row["changed_rate"]) == (60, 30, 0.5)
    assert row["ci_low"] < 0.5 < row["ci_high"]
    assert row["instance_rates"] == "10.0% / 90.0%" and not row["instances_inside"]  # an instance effect shows


def test_claims_cover_every_ledger_entry_with_a_verdict_word():
    maria = {"flavor": "mariadb", "version": "11.8.9", "instance": 0, "reader_transactions": 30}
    pg = {"flavor": "postgres", "version": "17.10", "instance": 0, "reader_transactions": 30,
          "artifact": "npm:x + debian:postgresql-17-pgvector=0.8.0-1", "index_pages_written": 40.0,
          "index_pages": 300.0}
    res = _results([pg | {"set_changed": 4, "changed_shorter": 4, "lost": 4, "lost_visible": 4},
                    pg | {"writer": "none", "set_changed": 0, "index_pages_written": 0.0},
                    pg | {"exact": True, "set_changed": 0},
                    maria | {"set_changed": 0}, maria | {"writer": "none", "set_changed": 0}])
    c = vi.CHAPTER.claims(res)
    assert len(c) == len(ledger())
    words = ("agrees", "disagrees", "not resolved", "not testable here", verdicts.NOT_MEASURED)
    assert all(v.startswith(words) for v in c["verdict"])
    by = dict(zip([e["id"] for e in ledger()], c["verdict"]))
    assert by["pgvector-set-changes"] == "agrees" and by["mariadb-repeats"] == "agrees"
    assert by["lost-rows-visible"] == "agrees" and by["btree-repeats"] == "agrees"
    assert by["insert-rewrites-lists"] == "agrees" and by["new-rows-rejected"] == "agrees"
