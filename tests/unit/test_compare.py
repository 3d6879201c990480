"""This run beside the published one (experiments/compare.py), on constructed runs: the published
results are a stand-in, so the matching, the ratios and the sentences are tested, not data/."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from dbexp.experiments import chapter, compare
from dbexp.experiments.chapter import Results

HOST = {"cpus": 2, "cpu_model": "Test CPU", "hypervisor": "kvm", "memory_gib": 4.0, "kernel": "6.1.0-x"}


def _runs(prefix: str, source: str, qps: dict[str, list[float]], table_size: int = 10_000) -> Results:
    rows = []
    for spec, values in qps.items():
        for i, v in enumerate(values):
            point = {"server": {"spec": spec, "mode": "container"}, "params": {"holders": 10}, "sample": True,
                     "workload": {"script": "oltp_point_select", "threads": 1, "duration_s": 3,
                                  "tables": 1, "table_size": table_size}}
            rows.append({"run_id": f"{prefix}{spec}-{i}", "point": point, "series_name": spec.split("@")[0],
                         "qps": v, "host": HOST})
    return Results("demo", pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), source)


PUBLISHED = {"postgres:16@offline": [100.0, 102.0, 98.0], "mysql:8.0@offline": [50.0]}


@pytest.fixture()
def pub(monkeypatch):
    res = _runs("p", "published data/", PUBLISHED)
    monkeypatch.setattr(chapter, "published", lambda name, root=None: res)
    return res


def test_the_published_run_is_not_compared_with_itself(pub):
    table, sentence = compare.beside_published(pub)
    assert table.empty and sentence.startswith("This page shows the published run")


def test_a_run_that_was_just_published_is_not_compared_with_itself(pub):
    mine = dataclasses.replace(pub, source="this run")  # run=True, publish=True: its runs are data/'s
    table, sentence = compare.beside_published(mine)
    assert table.empty and sentence.startswith("This page shows the published run")


def test_identical_runs_match_point_by_point_with_ratio_one(pub):
    mine = _runs("x", "this run", PUBLISHED)  # the same values under other run ids
    table, sentence = compare.beside_published(mine)
    assert list(table["label"]) == ["postgres:16 holders=10 oltp_point_select", "mysql:8.0 holders=10 oltp_point_select"]
    assert table["ratio_qps"].round(12).eq(1.0).all() and list(table["pairs"]) == [3, 1]
    # a point with one run on each side has no interval; the other holds 1
    pg, my = table.to_dict("records")
    assert pg["ci_low"] <= 1 <= pg["ci_high"] and pd.isna(my["ci_low"]) and pd.isna(my["ci_high"])
    assert sentence.startswith("This run on 2 CPUs (Test CPU, VM), 4.0 GiB, Linux 6.1.0 beside the published one")
    assert "2 points measured on both; on 1 of them the whole interval lies within 5%" in sentence  # not the one-run point


def test_a_faster_run_is_read_as_its_ratio(pub):
    table, _ = compare.beside_published(_runs("x", "this run", {"postgres:16@offline": [120.0, 122.0, 118.0]}))
    row = table.iloc[0]
    assert row["ratio_qps"] == pytest.approx(1.2, rel=1e-3) and 1 < row["ci_low"] < row["ci_high"]


def test_a_run_at_another_scale_matches_nothing(pub):
    table, sentence = compare.beside_published(_runs("x", "this run", PUBLISHED, table_size=1))
    assert table.empty and sentence.startswith("No point of this run")
