"""The gtid chapter's ratios on fixed inputs: pairs by repeat, the source-shaped table, the design."""

from __future__ import annotations

import pandas as pd
import pytest

from dbexp.errors import DbexpError
from dbexp.experiments import gtid
from dbexp.experiments.chapter import Cpus, Results


def _res(rows):
    return Results("gtid", pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "test")


def _row(config, repeat, qps, cpu):
    return {"series_name": "mysql 8.0.15", "test": "insert", "threads": 1, "config": config, "repeat": repeat,
            "qps_common": qps, "cpu_per_op_common_us": cpu, "vcs_per_op": 2.0, "wchar_kb_per_op": 1.0}


def test_gtid_ratio_is_paired_by_repeat():
    rows = []
    for rep, drift in enumerate((1.0, 0.8, 1.2)):  # a drift that moves both configurations of a repeat
        rows += [_row("binlog", rep, 1000 * drift, 50.0), _row("binlog + GTID", rep, 900 * drift, 55.0),
                 _row("binlog off", rep, 1250 * drift, 40.0)]
    r = gtid.ratios(_res(rows))
    g = r[(r["comparison"] == "GTIDs") & (r["value"] == "throughput")].iloc[0]
    assert g["ratio"] == pytest.approx(0.9) and g["ci_low"] == pytest.approx(0.9)  # the drift cancels in pairs
    assert g["pairs"] == 3
    b = r[(r["comparison"] == "the binlog") & (r["value"] == "throughput")].iloc[0]
    assert b["ratio"] == pytest.approx(0.8)
    st = gtid.source_table(_res(rows))
    assert st["throughput B / A"].iloc[0] == pytest.approx(1 / 0.9)
    assert st["cpu/o"].iloc[0] == pytest.approx(1.1)


def test_design_measures_the_configurations_of_a_version_at_once_on_a_server_each():
    points = gtid.CHAPTER.design(gtid.CHAPTER.scale("default"), Cpus("1", "0"))[0].points
    groups = {p.group for p in points}
    assert groups == {"gtid mysql:5.7@offline", "gtid mysql:8.0@offline"}
    windows = {}
    for p in points:
        windows.setdefault(p.together, []).append(p)
    assert len(windows) == 2 * len(gtid.TESTS) * 2  # versions x tests x threads
    for ps in windows.values():
        assert [p.params.config for p in ps] == list(gtid.CONFIGS)
        assert len({p.server.key() for p in ps}) == len(gtid.CONFIGS)  # a server per configuration
        assert len({p.group for p in ps}) == 1
    gtid_on = [p for p in points if p.params.config == "binlog + GTID"][0]
    assert gtid_on.server.settings["gtid_mode"] == "ON" and gtid_on.server.settings["enforce_gtid_consistency"] == "ON"
    assert len({p.key("gtid") for p in points}) == len(points)


def test_non_mysql_servers_and_unknown_tests_are_refused_in_one_line():
    with pytest.raises(DbexpError, match="unknown test 'select'; valid are"):
        gtid.CHAPTER.adjust(gtid.CHAPTER.scale("smoke", tests=["select"]), "smoke", Cpus(), {})
    with pytest.raises(DbexpError, match="'postgres:16' is not a MySQL server"):
        gtid.CHAPTER.adjust(gtid.CHAPTER.scale("smoke", servers=["postgres:16"]), "smoke", Cpus(), {})


def test_gtid_loss_and_the_a_a_control_are_said_from_the_ratios():
    rows = []
    for rep in range(3):
        rows += [_row("binlog", rep, 1000.0, 50.0), _row("binlog + GTID", rep, 970.0 + rep, 51.0),
                 _row("binlog, twin", rep, 1000.0 + 5 * (rep - 1), 50.0), _row("binlog off", rep, 1200.0, 40.0)]
    res = _res(rows)
    assert gtid.gtid_loss(res) == "2.9 to 2.9% less"  # one point: the geometric mean of 0.970, 0.971, 0.972
    c = gtid.control(res)
    assert c["n"] == 1 and c["holding_1"] == 1 and c["max_off"] < 0.01
    assert gtid.resolution(res)["n"] == 2  # GTIDs and the binlog (no P_S off here); the control is left out
