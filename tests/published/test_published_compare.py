"""This run beside the published one (experiments/compare.py), on the published calibration data (run by `make published`)."""

from __future__ import annotations

import dataclasses

import pytest

from dbexp.experiments import compare
from dbexp.experiments.chapter import published


@pytest.fixture(scope="module")
def pub():
    return published("calibration")


def test_the_published_run_is_not_compared_with_itself(pub):
    table, sentence = compare.beside_published(pub)
    assert table.empty
    assert sentence.startswith("This page shows the published run")


def test_a_run_that_was_just_published_is_not_compared_with_itself(pub):
    mine = dataclasses.replace(pub, source="this run")  # run=True, publish=True: its runs are data/'s
    table, sentence = compare.beside_published(mine)
    assert table.empty
    assert sentence.startswith("This page shows the published run")


def test_identical_runs_match_point_by_point_with_ratio_one(pub):
    # the same values under other run ids: another run of exactly the published points
    mine = dataclasses.replace(pub, source="this run", wide=pub.wide.assign(run_id="x" + pub.wide["run_id"]))
    table, sentence = compare.beside_published(mine)
    points = pub.wide.groupby(pub.wide["point"].map(str)).ngroups
    assert len(table) == points  # every point found its counterpart, and only one
    assert table["ratio_qps"].round(12).eq(1.0).all()
    # a point with one run on each side (the run-length check's) has no interval; every other holds 1
    runs = pub.wide.groupby(pub.wide["point"].map(str)).size()
    has = table["ci_low"].notna()
    assert (~has).sum() == (runs == 1).sum() and table.loc[~has, "ci_high"].isna().all()
    assert (table.loc[has, "ci_low"] <= 1).all() and (table.loc[has, "ci_high"] >= 1).all()
    assert table["label"].is_unique
    assert f"{len(table)} points measured on both" in sentence and "CPUs" in sentence


def test_a_run_at_another_scale_matches_nothing(pub):
    other = pub.wide.copy()
    other["point"] = [dict(p, workload=dict(p["workload"] or {}, table_size=1)) if isinstance(p, dict) else p
                      for p in other["point"]]
    mine = dataclasses.replace(pub, source="this run", wide=other.assign(run_id="x" + other["run_id"]))
    table, sentence = compare.beside_published(mine)
    assert table.empty
    assert sentence.startswith("No point of this run")
