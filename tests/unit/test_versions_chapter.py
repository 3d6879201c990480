"""The versions chapter without servers: its design (a flavor's versions in one window, the twin and
own defaults beside them), its bad input refused in one line, its analysis on synthetic windows, its
tests' scripts, and a page that renders before anything is published."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from dbexp.chapters import versions
from dbexp.chapters.versions import CHAPTER
from dbexp.errors import DbexpError
from dbexp.experiments.chapter import Cpus, Results
from dbexp.workloads.sysbench import LUA_DIR

pytestmark = pytest.mark.unit


def test_default_design_puts_a_flavors_versions_in_one_window():
    sc = CHAPTER.adjust(CHAPTER.scale("default"), "default", Cpus(), {})
    main, longer, ablation = CHAPTER.design(sc, Cpus())
    windows = {}
    for p in main.points:
        windows.setdefault(p.together, []).append(p)
    mysql = windows["MySQL point-query"]
    assert [(p.server.spec, p.params.role) for p in mysql] == [
        ("mysql:5.7@offline", "baseline"), ("mysql:5.7@offline", "twin"), ("mysql:8.0@offline", "baseline"),
        ("mysql:9.7@offline", "baseline"), ("mysql:8.0@offline", "own defaults"), ("mysql:9.7@offline", "own defaults")]
    assert len({p.server.key() for p in mysql}) == len(mysql)  # a server each
    assert len(windows["Postgres scan"]) == 8 and len(windows["MariaDB insert"]) == 4
    assert main.repeats == 5 and len(windows) == 3 * len(sc.tests)
    assert {p.params.length for p in longer.points} == {10} and longer.repeats == 2
    assert ablation.points == []


def test_full_scale_runs_every_test_and_the_ablation():
    sc = CHAPTER.adjust(CHAPTER.scale("full"), "full", Cpus(), {})
    main, _, ablation = CHAPTER.design(sc, Cpus())
    assert {p.params.test for p in main.points} == set(versions.TESTS)
    configs = {p.params.config for p in ablation.points}
    assert configs == {"source baseline", *versions.FACTORS}
    assert len({p.together for p in ablation.points}) == 3


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(DbexpError, match="unknown test 'point-queries'; valid are"):
        CHAPTER.adjust(CHAPTER.scale("smoke", tests=["point-queries"]), "smoke", Cpus(), {})
    with pytest.raises(DbexpError, match="bad ablation server 'postgres:18@offline'"):
        CHAPTER.adjust(CHAPTER.scale("smoke", servers=["postgres:18@offline"], ablation_servers=["postgres:18@offline"],
                                     ablation_repeats=2), "smoke", Cpus(), {})


def test_every_query_of_the_lua_script_is_declared_and_used():
    text = (LUA_DIR / "versions_query.lua").read_text()
    shapes = set(re.findall(r'\["([a-z-]+)"\] = \{"', text))
    used = {dict(t.options)["query"] for t in versions.TESTS.values() if t.script == "versions_query"}
    assert used == shapes


def _wide(qps: dict[str, list[float]], test: str = "point-query") -> pd.DataFrame:
    rows = []
    for server, values in qps.items():
        name, _, role = server.partition("|")
        for repeat, q in enumerate(values):
            rows.append({"series_name": name, "flavor": name.split()[0], "test": test, "role": role or "baseline",
                         "length": 1, "config": "", "repeat": repeat, "qps_common": q, "cpu_per_op_common_us": 1e6 / q,
                         "cs_per_op": 1.0, "vcs_per_op": 0.5, "pool_reads": 0.0, "run_id": f"{server}{repeat}",
                         "workload": {"duration_s": 4, "table_size": 1000}, "threads": 1, "servers_at_once": 3,
                         "common_s": 2.8})
    return pd.DataFrame(rows)


def test_ratios_are_paired_by_window_against_the_base_and_the_previous_version():
    rng = np.random.default_rng(1)
    drift = 1 + 0.2 * rng.standard_normal(6)  # the machine's speed, shared by every server of a window
    w = _wide({"mysql 5.7.22": list(1000 * drift), "mysql 5.7.22|twin": list(1000 * drift),
               "mysql 8.0.15": list(800 * drift), "mysql 9.7.4": list(760 * drift)})
    res = Results("versions", w, pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "this run")
    r = versions.ratios(res)
    q = r[r["value"] == "QPS"].set_index(["view", "server"])
    assert q.loc[("base", "mysql 8.0.15"), "ratio"] == pytest.approx(0.8)
    assert q.loc[("base", "mysql 8.0.15"), "half_width"] == pytest.approx(0, abs=1e-9)  # drift cancels in pairs
    assert q.loc[("previous", "mysql 9.7.4"), "ratio"] == pytest.approx(0.95)
    assert q.loc[("A/A control", "mysql 5.7.22 (twin)"), "ratio"] == pytest.approx(1.0)
    s = versions.summary(res, "base")
    assert set(s["server"]) == {"mysql 8.0.15", "mysql 9.7.4"} and (s["tests"] == 1).all()
    assert versions.resolution(res)["within"] == 3  # 8.0 against 5.7 (base and previous alike, once), 9.7 against both
    claims = versions.claims(res)
    assert list(claims.columns)[-1] == "verdict" and claims["verdict"].str.len().min() > 0


def test_the_page_renders_before_anything_is_published(tmp_path):
    res = CHAPTER.run("default", run=False, root=tmp_path)
    assert res.source == "no published results yet" and res.wide.empty
    assert "No results" in versions.sentence(res, "findings")
    assert all(v for v in versions.claims(res)["verdict"])
