"""The default-drift table of the published runs: republished with the comparable baseline, and every
performance setting a name the servers report (run by `make published`)."""

from __future__ import annotations

import json

import pytest

from dbexp.results.drift import drift, unsteady
from dbexp.servers.registry import FLAVORS

NEWER_THAN_PUBLISHED = {"innodb_redo_log_capacity", "innodb_log_writer_threads", "log_replica_updates",
                        "innodb_use_fdatasync"}


@pytest.fixture(scope="module")
def calibration():
    from dbexp.experiments.chapter import published
    return published("calibration").wide


@pytest.mark.parametrize("chapter", ["readview", "mvcc_chains"])
def test_published_chapters_run_with_the_baseline(chapter):
    from dbexp.chapters import mvcc_chains, readview
    from dbexp.experiments.chapter import published

    # both republished with the comparable baseline: the binary log, the flush and checksums agree; the table is
    # the page's, over the runs its chapter's tidy() keeps (a counted server's valgrind settings are not compared)
    tidy = {"readview": readview.tidy, "mvcc_chains": mvcc_chains.tidy}[chapter]
    table = drift(tidy(published(chapter)))
    for name in ("log_bin", "innodb_flush_method", "data_checksums", "performance_schema", "full_page_writes"):
        assert name not in table.index, name
    assert table.loc["character_set_server", "MySQL 5.7.22"] == "latin1"  # a default that still differs


def test_published_calibration_runs_with_the_baseline(calibration):
    # republished with the baseline: what differs is only what the versions' own defaults change
    table = drift(calibration)
    for name in ("log_bin", "log_slave_updates", "innodb_flush_method", "data_checksums", "performance_schema",
                 "sync_binlog", "innodb_flush_log_at_trx_commit", "log_checkpoints"):
        assert name not in table.index, name
    assert table.loc["character_set_server", "MySQL 5.7.22"] == "latin1"  # a default that still differs
    assert unsteady(calibration).empty


def test_performance_settings_are_names_the_servers_report(calibration):
    reported: dict[str, set] = {}
    for flavor, value in zip(calibration["flavor"], calibration["settings_effective"]):
        reported.setdefault(flavor, set()).update(json.loads(value) if isinstance(value, str) else value)
    for name, cls in FLAVORS.items():
        unknown = set(cls.performance_settings) - reported[name] - NEWER_THAN_PUBLISHED
        if name == "mariadb":  # MariaDB shares MySQL's list; names only MySQL has are "—" there
            unknown -= reported["mysql"]
        assert not unknown, f"{name}: no published version reports {sorted(unknown)}"
