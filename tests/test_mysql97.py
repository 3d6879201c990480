"""MySQL 9.7 from Debian sid, the offline build's contract against a real server: the pinned image,
a start with the book's baseline, sysbench's point selects counted by the server as sysbench counts
them, the counters the lab reads, and MVCC::view_open probed once per point select. Also the pin's
failures: a version the mirror no longer has, a .deb whose SHA256 is not the pinned one.

Builds dbexp/base:sid and dbexp/mysql:9.7.4 when missing (about a minute on 2 cores)."""

from __future__ import annotations

import dataclasses

import pytest

from dbexp import catalog, images
from dbexp.errors import DbexpError
from dbexp.images import build as image_build
from dbexp.metrics import tracing, uprobe
from dbexp.servers.registry import flavor_for
from dbexp.servers.smoke import smoke
from dbexp.servers.sql import query
from dbexp.workloads import sysbench
from dbexp.workloads.sysbench import Workload

pytestmark = pytest.mark.docker

SPEC = "mysql:9.7@offline"
BUILD = next(b for b in catalog.OFFLINE if b.flavor == "mysql" and b.major == "9.7")
POINT_SELECTS = Workload("oltp_point_select", threads=4, duration_s=3, table_size=10000)
# MVCC::view_open(ReadView*&, trx_t*): the same mangled name as in 5.7 and 8.0
VIEW_OPEN = "_ZN4MVCC9view_openERP8ReadViewP5trx_t"
# 9.7.4's defaults that the book's baseline overrides or leaves to the drift table (MySQL.comparable_settings)
DEFAULTS = {"gtid_mode": "ON", "enforce_gtid_consistency": "ON", "log_bin": "1",
            "innodb_adaptive_hash_index": "0", "innodb_io_capacity": "10000",
            "innodb_flush_method": "O_DIRECT", "innodb_redo_log_capacity": "104857600",
            "character_set_server": "utf8mb4"}


@pytest.fixture(scope="module")
def server(engine):
    from dbexp.servers import ServerConfig, running
    from dbexp.servers.registry import flavor_of_spec

    settings = flavor_of_spec(SPEC).comparable_settings()
    with running(ServerConfig(SPEC, cpuset="1", memory="2g", settings=settings)) as srv:
        sysbench.prepare(POINT_SELECTS, srv)
        yield srv


def test_the_image_is_the_pinned_package(engine):
    info = images.ensure(BUILD)
    art = BUILD.artifact
    assert (BUILD.base, art.registry, art.package, art.version) == ("sid", "debian", "mysql-server-core", "9.7.4-2")
    assert info.artifact == "debian:mysql-server-core=9.7.4-2" and info.artifact_sha256 == art.sha256
    labels = engine.images.get(info.ref).labels
    assert labels["dbexp.artifact-sha256"] == art.sha256 and labels["dbexp.version"] == "9.7.4"


def test_contract_and_the_defaults_the_baseline_knows(engine):
    """A plain start per the contract (no settings): one initialization, one ready line, root over
    TCP with caching_sha2_password, and the 9.7 defaults comparable_settings() names."""
    info = images.ensure(BUILD)
    sql = "SELECT CONCAT_WS(',', " + ", ".join(f"@@GLOBAL.{name}" for name in DEFAULTS) + ")"
    result = smoke(info.ref, flavor_for(BUILD), timeout_s=180, sql=sql)
    assert result.version.startswith("9.7.4")
    assert result.ready_lines == 1
    assert dict(zip(DEFAULTS, result.answer.split(","))) == DEFAULTS


def test_the_baseline_is_accepted_and_effective(server):
    assert server.version.startswith("9.7.4")
    assert server.query("SELECT plugin FROM mysql.user WHERE user = 'root' AND host = '%'") == \
        [("caching_sha2_password",)]
    effective = server.effective_settings()
    for key, value in server.flavor.comparable_settings().items():
        name = key[len("skip_"):] if key.startswith("skip_") else key
        want = "OFF" if key.startswith("skip_") else value
        assert effective[name].lower() == want.lower(), (name, effective[name])


def test_point_selects_are_counted_as_sysbench_counts_them(server):
    """Every point select is one execution of a prepared statement (--db-ps-mode=auto)."""
    def executions() -> int:
        return int(server.query("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'")[0][1])

    before = executions()
    done = sysbench.run(POINT_SELECTS, server)
    after = executions()
    summary = done.result.summary()
    assert summary["errors"] == 0 and summary["reconnects"] == 0
    assert summary["transactions"] == summary["reads"] > 1000
    assert after - before == summary["transactions"]


def test_the_counters_the_lab_reads_exist(server):
    conn = server.connect()
    try:
        counters = server.flavor.counters(conn, POINT_SELECTS.database)
        statements = server.flavor.statements(conn)
        sessions = server.flavor.capability("sessions").observe(conn)
    finally:
        conn.close()
    names = {name for _, name in counters}
    assert set(server.flavor.counter_series) <= names
    assert {"Innodb_os_log_fsyncs", "Com_stmt_execute", "Ongoing_anonymous_transaction_count"} <= names
    assert statements > 0 and sessions["sessions"] >= 1 and sessions["open_write_trx"] == 0
    # the instruments the chapters read: the trx-sys mutexes (9.7 shards them, since 8.0.27, beside
    # trx_sys_mutex), the binlog group's wakeup, the binlog file
    instruments = {name for (name,) in server.query(
        "SELECT NAME FROM performance_schema.setup_instruments WHERE NAME LIKE 'wait/synch/mutex/innodb/trx_sys%' "
        "OR NAME IN ('wait/synch/cond/sql/MYSQL_BIN_LOG::COND_done', 'wait/io/file/sql/binlog')")}
    assert instruments == {"wait/synch/mutex/innodb/trx_sys_mutex", "wait/synch/mutex/innodb/trx_sys_shard_mutex",
                           "wait/synch/mutex/innodb/trx_sys_serialisation_mutex",
                           "wait/synch/cond/sql/MYSQL_BIN_LOG::COND_done", "wait/io/file/sql/binlog"}


# What the chapters probe in 9.7's mysqld (exported, as in 5.7 and 8.0): the view functions, the
# version-chain walk and the binlog group commit, whose stage manager 9.7 calls Commit_stage_manager
PROBED = (VIEW_OPEN, "_ZN4MVCC10view_closeERP8ReadViewb",
          "_Z34row_vers_build_for_consistent_readPKhP5mtr_tP12dict_index_tPPmP8ReadViewPP16mem_block_info_tSA_PPhPPK8dtuple_tPN3lob11undo_vers_tE",
          "_ZN13MYSQL_BIN_LOG14ordered_commitEP3THDbb", "_ZN13MYSQL_BIN_LOG16sync_binlog_fileEb",
          "_ZN20Commit_stage_manager10enroll_forENS_7StageIDEP3THDP13mysql_mutex_tS4_",
          "_ZN20Commit_stage_manager11signal_doneEP3THDNS_7StageIDE")


def test_the_probed_functions_are_exported(server):
    path = uprobe.server_binary(server.main_pid(), server.flavor.capability("uprobes").executables)
    assert uprobe.defined_symbols(path, PROBED) == set(PROBED)


def test_one_view_per_point_select(server):
    """A uprobe on MVCC::view_open counts one view per autocommit point select."""
    why = tracing.unavailable()
    if why:
        pytest.skip(f"probes cannot work here: {why}")
    path = uprobe.server_binary(server.main_pid(), server.flavor.capability("uprobes").executables)
    with uprobe.UprobeTimer(path, VIEW_OPEN, pin="0") as timer:
        done = sysbench.run(dataclasses.replace(POINT_SELECTS, threads=2), server)
    t = timer.result
    selects = done.result.summary()["transactions"]
    assert selects > 500
    assert selects <= t.calls + t.switched_calls <= selects * 1.02 + 20, (t.calls, t.switched_calls, selects)


def test_sql_shutdown_stops_it_cleanly(server):
    """SHUTDOWN as SQL (the MariaDB client's mysqladmin shutdown fails against 9.x). Last: it stops
    the module's server."""
    conn = server.connect()
    try:
        query(conn, "SHUTDOWN")
    finally:
        conn.close()
    assert server.container.wait(timeout=120)["StatusCode"] == 0
    assert "Shutdown complete" in server.logs(tail=5)


# --- the pin's failures (a build that stops before installing anything) ---------------------------

def _pinned(version: str, sha256: str) -> catalog.Build:
    art = dataclasses.replace(BUILD.artifact, version=version, sha256=sha256)
    return dataclasses.replace(BUILD, image="dbexp/mysql:pin-check", artifact=art)


def test_a_pin_the_mirror_no_longer_has_names_what_it_has(engine):
    with pytest.raises(DbexpError) as err:
        images.ensure(_pinned("9.7.3-1", BUILD.artifact.sha256))
    text = str(err.value)
    assert "\n" not in text
    assert "mysql-server-core 9.7.3-1 is not on the mirror, which has mysql-server-core 9.7.4-2" in text
    assert "dbexp/catalog/catalog.py" in text and BUILD.artifact.sha256 in text  # where, and what to pin


def test_a_deb_that_is_not_the_pinned_one_is_not_installed(engine):
    with pytest.raises(DbexpError) as err:
        images.ensure(_pinned(BUILD.artifact.version, "0" * 64))
    text = str(err.value)
    assert "\n" not in text
    assert f"has SHA256 {BUILD.artifact.sha256}, not the pinned {'0' * 64}" in text
    assert image_build.pull.local_attrs("dbexp/mysql:pin-check") is None
