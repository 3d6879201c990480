"""The commit path's counters against real servers: binlog and redo syncs, waits on the commit
condition, WAL syncs, bytes written per commit; and the group-commit probe on MySQL."""

from __future__ import annotations

import pytest

from dbexp.experiments.group_commit import CommitProbe
from dbexp.experiments.measure import measure
from dbexp.experiments.chapter import Chapter
from dbexp.workloads import sysbench
from dbexp.workloads.sysbench import Workload

pytestmark = pytest.mark.docker

COMMITS = 200


def _server(spec: str, binlog: bool):
    from dbexp.servers import running
    from dbexp.servers.registry import flavor_of_spec
    flavor = flavor_of_spec(spec)
    return running(Chapter.server_config(spec, "1", flavor.commit_settings(binlog)))


@pytest.fixture(scope="module")
def mysql_binlog(engine):
    with _server("mysql:8.0@offline", True) as server:
        yield server


@pytest.fixture(scope="module")
def postgres(engine):
    with _server("postgres:16@offline", False) as server:
        yield server


def _commits(server, n: int = COMMITS) -> None:
    server.ensure_database("sbtest")
    conn = server.connect("sbtest")
    try:
        server.flavor.query(conn, "CREATE TABLE IF NOT EXISTS ticks (id INT PRIMARY KEY, v INT)")
        server.flavor.query(conn, "DELETE FROM ticks")
        for i in range(n):  # autocommit: one durable commit each
            server.flavor.query(conn, "INSERT INTO ticks VALUES (%s, 0)", (i,))
    finally:
        conn.close()


def _delta(server, work):
    conn = server.connect()
    try:
        before = server.flavor.commit_counters(conn)
        work()
        after = server.flavor.commit_counters(conn)
    finally:
        conn.close()
    return {k: after[k] - before[k] for k in after if k in before}


def test_mysql_counts_binlog_and_redo_syncs_and_bytes_per_commit(mysql_binlog):
    d = _delta(mysql_binlog, lambda: _commits(mysql_binlog))
    # one session commits one at a time: every commit is its own group, so at least one binlog sync each
    assert d["binlog_syncs"] >= COMMITS and d["syncs"] == d["binlog_syncs"]
    assert d["redo_syncs"] >= COMMITS * 0.9
    assert 50 < d["log_bytes"] / COMMITS < 2000  # a row event and its transaction's events, in bytes
    assert "waits" in d  # the condition instrument is counted


def test_mysql_counts_waits_on_the_commit_condition_under_concurrency(mysql_binlog):
    wl = Workload("oltp_update_non_index", 16, 2, 1, 1000, cpuset="0")
    sysbench.prepare(wl, mysql_binlog)
    d = _delta(mysql_binlog, lambda: measure(mysql_binlog, wl, sql_series=False))
    assert d["waits"] > 0 and d["binlog_syncs"] > 0


def test_postgres_counts_wal_syncs(postgres):
    import time
    d = _delta(postgres, lambda: (_commits(postgres), time.sleep(1.2)))
    assert d["syncs"] >= COMMITS * 0.9  # one session: a WAL flush per commit
    assert d["log_bytes"] > 0


def _probed(server) -> tuple[dict, float]:
    """16 sessions updating for 2 s under the commit probe: its counts, and the transactions sysbench did."""
    wl = Workload("oltp_update_non_index", 16, 2, 1, 1000, cpuset="0")
    sysbench.prepare(wl, server)
    with CommitProbe(server, pin="0") as probe:
        got = measure(server, wl, sql_series=False)
    return probe.counts, got.measurements["transactions"][0]


def test_probe_counts_commits_syncs_and_followers_waits(mysql_binlog):
    c, transactions = _probed(mysql_binlog)
    assert c["commits"] >= transactions * 0.9
    assert 0 < c["syncs"] <= c["commits"]
    assert c["enrolls"] >= c["commits"] and c["waits"] >= c["waiters"]


def test_postgres_probe_counts_flushes_syncs_and_wakeups_from_the_wal_write_lock(postgres):
    c, transactions = _probed(postgres)
    assert c["commits"] >= transactions * 0.9  # an XLogFlush per commit at least
    assert 0 < c["syncs"] <= c["commits"]
    assert c["waits"] >= c["waiters"] > 0  # 16 sessions on one CPU: some wait for WALWriteLock

