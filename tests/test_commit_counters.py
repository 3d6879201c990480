"""The commit path's counters and the group-commit probe against real servers, held to what the
statements run make them: one session's commits are one binlog or WAL sync each and never wait for
a group; 16 sessions commit in groups, every follower waiting at least once; the probe counts one
commit per transaction sysbench ran and the syncs the server counts."""

from __future__ import annotations

import pytest

from dbexp.chapters.group_commit import PARTS, CommitProbe
from dbexp.experiments.chapter import Chapter
from dbexp.experiments.measure import measure
from dbexp.servers.sql import query
from dbexp.waits import poll
from dbexp.workloads import sysbench
from dbexp.workloads.sysbench import Workload

pytestmark = pytest.mark.docker

COMMITS = 200
SESSIONS = 16


def _server(spec: str, binlog: bool):
    from dbexp.servers import running
    from dbexp.servers.registry import flavor_of_spec
    return running(Chapter.server_config(spec, "1", PARTS.of(flavor_of_spec(spec)).commit_settings(binlog)))


@pytest.fixture(scope="module")
def mysql_binlog(engine):
    with _server("mysql:8.0@offline", True) as server:
        yield server


@pytest.fixture(scope="module")
def postgres(engine):
    with _server("postgres:16@offline", False) as server:
        yield server


def _delta(server, work, settled=lambda change, got: True, timeout_s: float = 10.0):
    """The change of the commit counters over ``work()``, and what it returned. The counters are read
    again until ``settled(change, got)`` holds or ``timeout_s`` passes: PostgreSQL's backends report
    their WAL counts as they exit, not at each commit."""
    part = PARTS.of(server.flavor)
    conn = server.connect()
    try:
        before = part.commit_counters(conn)
        got = work()
        change: dict = {}

        def read() -> bool:
            after = part.commit_counters(conn)
            change.update({k: after[k] - before[k] for k in after if k in before})
            return settled(change, got)

        poll(read, timeout_s, 0.2)
    finally:
        conn.close()
    return change, got


def _one_session(server) -> dict:
    """The counters' change over COMMITS autocommit inserts by one session (its table made before)."""
    server.ensure_database("sbtest")
    conn = server.connect("sbtest")
    query(conn, "CREATE TABLE IF NOT EXISTS ticks (id INT PRIMARY KEY, v INT)")
    query(conn, "DELETE FROM ticks")

    def inserts() -> None:
        try:
            for i in range(COMMITS):  # autocommit: one durable commit each
                query(conn, "INSERT INTO ticks VALUES (%s, 0)", (i,))
        finally:
            conn.close()  # the backend reports its WAL counts as it exits

    return _delta(server, inserts, lambda change, _: change.get("syncs", 0) >= COMMITS)[0]


def _sessions(server) -> Workload:
    wl = Workload("oltp_update_non_index", SESSIONS, 2, 1, 1000, cpuset="0")
    sysbench.prepare(wl, server)
    return wl


def test_one_session_syncs_the_binlog_once_per_commit_and_never_waits_for_a_group(mysql_binlog):
    d = _one_session(mysql_binlog)
    # each commit is a group of its own: one binlog sync, no follower to wait
    assert d["binlog_syncs"] == COMMITS and d["syncs"] == d["binlog_syncs"]
    assert d["waits"] == 0
    # each commit's prepare syncs the redo log (innodb_flush_log_at_trx_commit = 1); 8.0's log flusher
    # thread may sync the commit's own record once more
    assert COMMITS <= d["redo_syncs"] <= 2 * COMMITS + 10
    assert 100 < d["log_bytes"] / COMMITS < 1000  # a row event and its transaction's events, in bytes


def test_sessions_commit_in_groups_and_every_follower_waits(mysql_binlog):
    wl = _sessions(mysql_binlog)
    d, got = _delta(mysql_binlog, lambda: measure(mysql_binlog, wl, sql_series=False))
    commits = got.measurements["transactions"][0]  # each one autocommit UPDATE
    assert commits / d["binlog_syncs"] > 1.5  # 16 sessions on one server CPU: groups of more than one commit
    # every commit but its group's leader follows, and waits at least once: (C - G) / W is at most 1
    assert commits - d["binlog_syncs"] <= d["waits"]


def test_one_session_syncs_the_wal_once_per_commit(postgres):
    d = _one_session(postgres)
    # one WAL flush per commit; a background commit (autovacuum's analyze of ticks) may add a few
    assert COMMITS <= d["syncs"] <= COMMITS + 5 and d["redo_syncs"] == d["syncs"]
    assert 100 < d["log_bytes"] / COMMITS < 1000  # a heap and an index record and the commit record, in bytes


def _probed(server) -> tuple[dict, float, dict]:
    """16 sessions updating for 2 s under the commit probe: its counts, the transactions sysbench did,
    and the change of the server's counters over the run."""
    wl = _sessions(server)

    def run() -> tuple[dict, float]:
        with CommitProbe(server, PARTS.of(server.flavor), pin="0") as probe:
            got = measure(server, wl, sql_series=False)
        return probe.counts, got.measurements["transactions"][0]

    d, (counts, transactions) = _delta(server, run, lambda change, got: change.get("syncs", 0) >= got[0]["syncs"])
    return counts, transactions, d


def test_probe_counts_a_commit_per_transaction_and_the_servers_binlog_syncs(mysql_binlog):
    c, transactions, d = _probed(mysql_binlog)
    assert c["commits"] == transactions  # one ordered_commit per autocommit UPDATE
    assert c["syncs"] == d["binlog_syncs"]  # sync_binlog_file calls: performance_schema's binlog syncs
    assert c["commits"] / c["syncs"] > 1.5
    # a commit enrolls at least in the flush stage; a waiting session is woken at least once
    assert c["enrolls"] >= c["commits"] and c["waits"] >= c["waiters"] > 0


def test_postgres_probe_counts_a_flush_per_transaction_and_the_servers_wal_syncs(postgres):
    c, transactions, d = _probed(postgres)
    # an XLogFlush per commit; one more where a background process flushes before writing a page
    assert transactions <= c["commits"] <= transactions * 1.01
    # issue_xlog_fsync calls: pg_stat_wal's syncs (the WAL writer's too)
    assert c["syncs"] == pytest.approx(d["syncs"], abs=3)
    assert c["commits"] / c["syncs"] > 1.5
    assert c["waits"] >= c["waiters"] > 0  # 16 sessions on one CPU: some wait for WALWriteLock


@pytest.mark.parametrize("spec", ["mysql:8.0@offline", "postgres:16@offline"])
def test_the_probe_counts_its_own_server_only_not_a_twin_of_the_same_image(spec, engine):
    """A uprobe attaches to the binary's file, which every container of the image shares: commits on a
    second server of the same build, while the first is probed, must not be counted (uprobe.only_server)."""
    with _server(spec, True) as probed, _server(spec, True) as twin:
        wl = _sessions(twin)
        with CommitProbe(probed, PARTS.of(probed.flavor), pin="0") as probe:
            got = measure(twin, wl, sql_series=False)
        assert got.measurements["transactions"][0] > 100
        assert probe.counts["commits"] <= 5  # the probed server's own background commits at most
