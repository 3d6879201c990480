"""The buffer_eviction chapter's parts against real servers: the hot table and its pages, the
per-second buffer-pool sample (residency, usage counts, requests and reads), the scanning session
and its cancel, and the hot workload's Lua script."""

from __future__ import annotations

import time

import pytest

from dbexp.metrics.sampler import Sampler
from dbexp.workloads import sysbench
from dbexp.workloads.scan import Scanner
from dbexp.workloads.sysbench import Workload

pytestmark = pytest.mark.docker

ROWS, HOT_ROWS = 20_000, 1_000


@pytest.fixture(params=["pg", "my"], scope="module")
def loaded(request):
    """The shared PostgreSQL and MySQL servers with a sysbench table and a hot copy of its first rows."""
    server = request.getfixturevalue(request.param)
    wl = Workload("hot_select", 1, 1, 1, ROWS, cpuset="0", options=(("hot-table", "hot"), ("hot-rows", str(HOT_ROWS))))
    sysbench.prepare(wl, server)
    conn = server.connect("sbtest")
    try:
        server.flavor.copy_rows(conn, "sbtest1", "hot", HOT_ROWS)
        pages = server.flavor.primary_pages(conn, "hot")
    finally:
        conn.close()
    return server, wl, pages


def test_hot_table_is_resident_after_a_full_read_and_the_sample_says_so(loaded):
    server, _, pages = loaded
    conn = server.connect("sbtest")
    try:
        assert server.flavor.query(conn, "SELECT COUNT(*), MAX(id) FROM hot")[0] == (HOT_ROWS, HOT_ROWS)
        if server.flavor.name == "postgres":
            assert server.flavor.prewarm(conn, "hot") == pages  # heap and key, every page loaded
        s = server.flavor.buffer_sample(conn, "hot", "sbtest1")
    finally:
        conn.close()
    assert pages > 5
    assert s["resident.hot"] == pages  # every page a lookup can touch is in the pool
    assert s["resident.big"] > 0 and s["requests"] >= s["reads"] > 0
    assert s["lru_query_ms"] > 0
    if server.flavor.name == "postgres":
        assert sum(s[f"usage.hot.{u}"] for u in range(6)) == pages
        assert "buffers_alloc" in s
    else:
        assert 0 < s["lru_old_pages"] < s["lru_pages"] <= s["pool_pages"]
        assert s["old.hot"] <= s["resident.hot"]


def test_hot_misses_count_reads_of_the_hot_table(loaded):
    server, _, _ = loaded
    conn = server.connect("sbtest")
    try:
        before = server.flavor.buffer_sample(conn, "hot", "sbtest1")
        # the hot table read by key, every row: hits now, its page requests grow and its misses do not fall
        server.flavor.query(conn, f"SELECT SUM(LENGTH(c)) FROM hot WHERE id BETWEEN 1 AND {HOT_ROWS}")
        time.sleep(1.1)  # PostgreSQL's backends flush their statistics at most once a second
        server.flavor.query(conn, "SELECT 1")
        after = server.flavor.buffer_sample(conn, "hot", "sbtest1")
    finally:
        conn.close()
    assert after["requests"] > before["requests"]
    assert after["hot_reads"] >= before["hot_reads"]


def test_scanner_reads_in_a_loop_and_is_cancelled_cleanly(loaded):
    server, wl, _ = loaded
    for kind in server.flavor.scan_kinds:
        if kind == "update":
            continue
        with Scanner(server, "sbtest1", kind, "sbtest", cpus="0") as scan:
            scan.start()
            time.sleep(1.0)
            assert scan.stop() < 5
            assert server.flavor.query(scan.connection, "SELECT 1")[0][0] == 1  # still connected, idle
        assert sum(ok for *_, ok in scan.passes) >= 1, kind
        assert all(b >= a for a, b, _ in scan.passes)


def test_scanner_rejects_a_kind_the_server_has_not(loaded):
    server, _, _ = loaded
    with pytest.raises(ValueError, match="bad scan kind 'sideways'"):
        server.flavor.full_read_sql("sbtest1", "sideways")


def test_sampler_probe_gives_one_pool_sample_a_second_beside_the_hot_workload(loaded):
    server, wl, _ = loaded
    wl = Workload("hot_select", 1, 3, 1, ROWS, cpuset="0", options=(("hot-table", "hot"), ("hot-rows", str(HOT_ROWS))))
    probe = {"pool": lambda c: server.flavor.buffer_sample(c, "hot", "sbtest1")}
    with Sampler(server, probes=probe, sql_series=False, cpus="0", database="sbtest") as sampler:
        done = sysbench.run(wl, server)
    assert done.result.queries > 0 and len(done.result.series) >= 2
    resident = [(t, v) for t, src, name, v in sampler.series if src == "pool" and name == "resident.hot"]
    assert 2 <= len(resident) <= 4
    assert sampler.t0 > 0
