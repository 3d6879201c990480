"""The group_commit chapter's arithmetic on fixed inputs: group size, waits per commit, the
efficiency bound, the exact efficiency from probe counts, and the design."""

from __future__ import annotations

import pandas as pd
import pytest

from dbexp.errors import DbexpError
from dbexp.experiments import group_commit as gc
from dbexp.experiments.chapter import Cpus, Results


def _res(rows):
    w = pd.DataFrame(rows)
    return Results("group_commit", w, pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "test")


BASE = {"series_name": "mysql 8.0.15", "flavor": "mysql", "config": "durable", "script": "oltp_update_non_index",
        "threads": 32, "repeat": 0, "probe": False, "tps": 1000.0, "qps": 1000.0, "lat_p95_ms": 5.0, "delay_us": 0}


def test_group_size_waits_and_efficiency_bound():
    # 1,000 commits in 100 syncs: 900 followers; 1,800 waits: each follower woken twice on average
    w = gc.tidy(_res([{**BASE, "transactions": 1000.0, "gc_syncs": 100.0, "gc_waits": 1800.0}]))
    r = w.iloc[0]
    assert r["group_size"] == pytest.approx(10.0)
    assert r["waits_per_commit"] == pytest.approx(1.8)
    assert r["efficiency_bound"] == pytest.approx(0.5)
    assert r["syncs_per_commit"] == pytest.approx(0.1)


def test_exact_efficiency_is_followers_over_their_waits():
    # the source's definition: a follower woken k times has efficiency 1 / k; 300 woken once, 100 twice,
    # 100 three times: 500 followers in 800 waits
    w = gc.tidy(_res([{**BASE, "probe": True, "transactions": 600.0, "gc_syncs": 100.0, "gc_waits": 900.0,
                       "probe_waiters": 500.0, "probe_waits": 300 + 200 + 300.0}]))
    assert w.iloc[0]["efficiency_exact"] == pytest.approx(500 / 800)


def test_no_syncs_or_waits_give_no_ratio_rather_than_infinity():
    w = gc.tidy(_res([{**BASE, "transactions": 10.0, "gc_syncs": 0.0, "gc_waits": 0.0}]))
    assert w["group_size"].isna().all() and w["efficiency_bound"].isna().all()


def test_ideal_waits_line_is_one_per_follower():
    res = _res([{**BASE, "transactions": 1000.0, "gc_syncs": 250.0, "gc_waits": 1500.0}])
    wl = gc.waits_long(res)
    ideal = wl[wl["line"] == gc.WAIT_LINES[1]]["value"].iloc[0]
    assert ideal == pytest.approx(0.75)  # 750 followers of 1,000 commits, one wakeup each


def test_design_gives_binlog_configs_to_flavors_with_a_binlog_only():
    sc = gc.CHAPTER.scale("default")
    points = [p for part in gc.CHAPTER.design(sc, Cpus("1", "0")) for p in part.points]
    pg = {p.params.config for p in points if p.server.spec.startswith("postgres")}
    my = {p.params.config for p in points if p.server.spec.startswith("mysql")}
    assert pg == {"durable", "sync delay"} and my == set(gc.CONFIG_NAMES)
    probes = [p for p in points if p.params.probe]
    # every flavor whose binary the probe knows (MySQL's binlog group commit, PostgreSQL's WAL flush)
    assert {p.server.spec.split(":")[0] for p in probes} == {"mysql", "postgres"}
    for p in probes:  # each right after its control: the same point without probes
        before = points[points.index(p) - 1]
        assert before.params.beside and before.server == p.server and before.workload == p.workload
    assert len({p.key("group_commit") for p in points}) == len(points)


def test_probe_cost_is_the_probe_run_over_the_run_beside_it_and_controls_stay_out_of_the_curves():
    rows = [{**BASE, "beside": True, "qps": 1000.0, "transactions": 1000.0, "gc_syncs": 100.0},
            {**BASE, "probe": True, "qps": 900.0, "transactions": 900.0, "gc_syncs": 90.0, "probe_commits": 900.0,
             "probe_syncs": 90.0, "probe_enrolls": 900.0, "probe_waiters": 400.0, "probe_waits": 500.0},
            {**BASE, "qps": 2000.0, "transactions": 2000.0, "gc_syncs": 100.0}]
    res = _res(rows)
    pr = gc.probes(res)
    assert pr.iloc[0]["cost"] == pytest.approx(0.9)
    assert pr.iloc[0]["efficiency_exact"] == pytest.approx(0.8)
    assert len(gc.throughput(res)) == 1 and gc.throughput(res).iloc[0]["qps"] == 2000.0


def test_unknown_configuration_is_refused_in_one_line():
    with pytest.raises(DbexpError, match="unknown configuration 'fast'; valid are"):
        gc.CHAPTER.adjust(gc.CHAPTER.scale("smoke", configs=["fast"]), "smoke", Cpus(), {})
