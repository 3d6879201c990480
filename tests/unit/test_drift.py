"""The default-drift table (dbexp.results.drift) on fixed runs with known answers, and the flavors'
comparable settings it relies on (the published runs' drift is checked in tests/published/)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dbexp.results.drift import EMPTY, MISSING, drift, drift_by_flavor, readable, servers, unsteady
from dbexp.servers.registry import FLAVORS

pytestmark = pytest.mark.unit

# Settings names newer than every version in data/ (MySQL 8.0.20+): they cannot be checked there.


def run(flavor, version, settings, kind="container", config=None, as_json=False) -> dict:
    return {"flavor": flavor, "version": version, "server_kind": kind, "config_requested": config or {},
            "settings_effective": json.dumps(settings) if as_json else settings}


def wide(*runs) -> pd.DataFrame:
    return pd.DataFrame(list(runs))


FIXED = wide(
    run("mysql", "5.7.22", {"log_bin": "OFF", "sync_binlog": "1", "tx_isolation": "REPEATABLE-READ",
                            "innodb_flush_method": "", "version": "5.7.22", "port": "1"}),
    run("mysql", "5.7.22", {"log_bin": "OFF", "sync_binlog": "1", "tx_isolation": "REPEATABLE-READ",
                            "innodb_flush_method": "", "version": "5.7.22", "port": "2"}),
    run("mysql", "8.0.15", {"log_bin": "ON", "sync_binlog": "1", "innodb_flush_method": "fsync",
                            "version": "8.0.15", "port": "3"}, as_json=True),
    run("mariadb", "10.11.19-MariaDB-0+deb12u1", {"log_bin": "OFF", "sync_binlog": "0",
                                                  "innodb_flush_method": "O_DIRECT"}),
    run("postgres", "12.22", {"shared_buffers": "16384 8kB", "fsync": "on", "data_checksums": "off"}),
    run("postgres", "18.4", {"shared_buffers": "16384 8kB", "fsync": "on", "data_checksums": "on",
                             "io_method": "worker"}),
)


def test_drift_rows_are_settings_that_differ_within_a_flavor():
    expected = pd.DataFrame(
        [["OFF", "OFF", "ON", MISSING, MISSING],
         ["O_DIRECT", EMPTY, "fsync", MISSING, MISSING],
         [MISSING, "REPEATABLE-READ", MISSING, MISSING, MISSING],
         [MISSING, MISSING, MISSING, "off", "on"],
         [MISSING, MISSING, MISSING, MISSING, "worker"]],
        index=pd.Index(["log_bin", "innodb_flush_method", "tx_isolation", "data_checksums", "io_method"],
                       name="setting"),
        columns=["MariaDB 10.11.19", "MySQL 5.7.22", "MySQL 8.0.15", "PostgreSQL 12.22", "PostgreSQL 18.4"],
        dtype=object)
    # sync_binlog differs only between flavors (MariaDB 0), port between runs and outside the
    # performance settings, version outside them: none is a row
    pd.testing.assert_frame_equal(drift(FIXED), expected)


def test_drift_of_named_settings():
    table = drift(FIXED, names=(n for n in ["version", "sync_binlog", "data_checksums"]))  # each flavor's
    assert list(table.index) == ["version", "data_checksums"]
    assert table.loc["version", "MySQL 5.7.22"] == "5.7.22" and table.loc["version", "MariaDB 10.11.19"] == MISSING


def test_drift_by_flavor_keeps_each_flavors_servers():
    tables = drift_by_flavor(FIXED)
    assert list(tables) == ["MySQL", "PostgreSQL"]  # MariaDB: one server, nothing to differ from
    assert list(tables["MySQL"].columns) == ["MySQL 5.7.22", "MySQL 8.0.15"]
    assert list(tables["MySQL"].index) == ["log_bin", "innodb_flush_method", "tx_isolation"]
    assert list(tables["PostgreSQL"].index) == ["data_checksums", "io_method"]


def test_no_drift_gives_an_empty_table_with_the_servers_as_columns():
    same = wide(run("postgres", "16.14", {"fsync": "on"}), run("postgres", "17.10", {"fsync": "on"}))
    table = drift(same)
    assert table.empty and list(table.columns) == ["PostgreSQL 16.14", "PostgreSQL 17.10"]
    assert drift_by_flavor(same) == {}


def test_settings_that_differ_between_runs_of_one_server_are_flagged():
    runs = wide(run("mysql", "8.0.15", {"innodb_buffer_pool_size": "134217728", "log_bin": "ON", "port": "1"}),
                run("mysql", "8.0.15", {"innodb_buffer_pool_size": "268435456", "port": "2"}),
                run("mysql", "5.7.22", {"innodb_buffer_pool_size": "134217728", "log_bin": "OFF"}))
    expected = pd.DataFrame([["MySQL 8.0.15", "log_bin", f"ON | {MISSING}", 2],
                             ["MySQL 8.0.15", "innodb_buffer_pool_size", "134217728 | 268435456", 2]],
                            columns=["server", "setting", "values seen", "runs"])
    pd.testing.assert_frame_equal(unsteady(runs), expected)
    # the drift table shows what the runs disagree on, in the cell
    assert drift(runs).loc["innodb_buffer_pool_size", "MySQL 8.0.15"] == "134217728 | 268435456"
    assert unsteady(FIXED).empty


def test_server_columns_name_bare_runs_and_requested_settings_that_tell_them_apart():
    runs = wide(run("postgres", "16.14", {"fsync": "on"}, kind="bare"),
                run("postgres", "16.14", {"fsync": "on"}),
                run("mysql", "8.0.15", {"sync_binlog": "0"}, config={"sync_binlog": "0", "server_id": "1"}),
                run("mysql", "8.0.15", {"sync_binlog": "1"}, config={"server_id": "1"}))
    assert list(servers(runs)["server"]) == ["PostgreSQL 16.14 (bare)", "PostgreSQL 16.14",
                                             "MySQL 8.0.15 [sync_binlog=0]", "MySQL 8.0.15 [no extra settings]"]
    assert list(drift(runs).columns) == ["MySQL 8.0.15 [no extra settings]", "MySQL 8.0.15 [sync_binlog=0]",
                                         "PostgreSQL 16.14", "PostgreSQL 16.14 (bare)"]
    assert list(drift(runs).index) == ["sync_binlog"]


@pytest.mark.parametrize("value,shown", [("16384 8kB", "128 MB"), ("600000 ms", "10 min"), ("300 s", "5 min"),
                                         ("2048 kB", "2 MB"), ("16 8kB", "128 kB"), ("0 ms", "0 ms"),
                                         ("-1 ms", "-1 ms"), ("1 s", "1 s"), ("", EMPTY), ("on", "on"),
                                         ("0.9", "0.9"), ("134217728", "134217728"), ("75.000000", "75"),
                                         ("0.000000", "0"), ("10.500000", "10.5"), ("100.000000", "100")])
def test_values_with_units_read_in_the_largest_unit(value, shown):
    assert readable(value) == shown


# --- the comparable settings every chapter applies ----------------------------------------------------

@pytest.mark.parametrize("name", sorted(FLAVORS))
def test_comparable_settings_are_spelled_as_the_chapter_settings_they_meet(name):
    flavor = FLAVORS[name]("0")
    comparable = flavor.comparable_settings()
    # every key in the flavor's normal spelling of option names (the spelling its option list uses)
    assert comparable and all(flavor.knows_option(k, set(comparable)) for k in comparable)
    assert flavor.title and len(flavor.performance_settings) == len(set(flavor.performance_settings))
    # a chapter that relaxes commits merges its settings after these: the same keys, so its values win
    assert set(flavor.capability("relaxed_commit").settings()) <= set(comparable)
