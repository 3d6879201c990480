"""The buffer_eviction chapter's parts against real servers: the hot table and its pages, the
per-second buffer-pool sample (residency, usage counts, requests and reads), the scanning session
and its cancel, and the hot workload's Lua script."""

from __future__ import annotations

import time

import pytest

from dbexp.chapters.buffer_eviction import PARTS
from dbexp.chapters.buffer_eviction.scanner import Scanner
from dbexp.metrics.sampler import Sampler
from dbexp.workloads import sysbench
from dbexp.workloads.sysbench import Workload

pytestmark = pytest.mark.docker

ROWS, HOT_ROWS = 20_000, 1_000


@pytest.fixture(params=["pg", "my"], scope="module")
def loaded(request):
    """The shared PostgreSQL and MySQL servers with a sysbench table and a hot copy of its first rows,
    and the chapter's part for the server's engine."""
    server = request.getfixturevalue(request.param)
    return (server, *load(server))


def load(server):
    """A sysbench table of ROWS rows on ``server`` and its hot copy of HOT_ROWS: the chapter's part
    for the server's engine and the hot table's pages."""
    part = PARTS.of(server.flavor)
    wl = Workload("hot_select", 1, 1, 1, ROWS, cpuset="0", options=(("hot-table", "hot"), ("hot-rows", str(HOT_ROWS))))
    sysbench.prepare(wl, server)
    conn = server.connect("sbtest")
    try:
        part.copy_rows(conn, "sbtest1", "hot", HOT_ROWS)
        pages = part.primary_pages(conn, "hot")
    finally:
        conn.close()
    return part, pages


def test_hot_table_is_resident_after_a_full_read_and_the_sample_says_so(loaded):
    server, part, pages = loaded
    conn = server.connect("sbtest")
    try:
        assert part.query(conn, "SELECT COUNT(*), MAX(id) FROM hot")[0] == (HOT_ROWS, HOT_ROWS)
        if part.reads_through_page_cache:  # PostgreSQL: pg_prewarm
            assert part.prewarm(conn, "hot") == pages  # heap and key, every page loaded
        s = part.buffer_sample(conn, "hot", "sbtest1")
    finally:
        conn.close()
    # a thousand sysbench rows and their key: about 250 kB (the published runs' 25,000 take 5.8 MiB)
    assert 200_000 <= pages * part.page_bytes <= 400_000, pages
    assert s["resident.hot"] == pages  # every page a lookup can touch is in the pool
    assert s["resident.big"] > 0 and s["requests"] >= s["reads"] > 0
    assert s["lru_query_ms"] > 0
    if part.reads_through_page_cache:
        assert sum(s[f"usage.hot.{u}"] for u in range(6)) == pages
        assert "buffers_alloc" in s
    else:
        assert 0 < s["lru_old_pages"] < s["lru_pages"] <= s["pool_pages"]
        assert s["old.hot"] <= s["resident.hot"] and s["young.hot"] + s["old.hot"] == s["resident.hot"]


def test_the_hot_tables_standing_counts_what_the_pool_keeps_first(loaded):
    """standing(): the hot table's pages resident and those kept first (InnoDB: young by LRU position; PostgreSQL:
    at usage count 2 or more, as a second pg_prewarm leaves them), what each run stores as its scan starts."""
    server, part, pages = loaded
    conn = server.connect("sbtest")
    try:
        part.warm(conn, "hot")
        part.warm(conn, "hot")
        at = part.standing(conn, "hot")
    finally:
        conn.close()
    assert at["resident"] == pages and 0 <= at[part.kept_first] <= pages
    if part.reads_through_page_cache:
        assert at["used_twice"] == pages  # two reads: usage count 2 at least
        assert sum(at[f"usage{u}"] for u in range(6)) == pages
    else:
        assert at["young"] + at["old"] == pages


def test_hot_misses_count_reads_of_the_hot_table(loaded):
    server, part, pages = loaded
    conn = server.connect("sbtest")
    try:
        before = part.buffer_sample(conn, "hot", "sbtest1")
        # the hot table read by key, every row: hits now, its page requests grow and its misses do not fall
        part.query(conn, f"SELECT SUM(LENGTH(c)) FROM hot WHERE id BETWEEN 1 AND {HOT_ROWS}")
        time.sleep(1.1)  # PostgreSQL's backends flush their statistics at most once a second
        part.query(conn, "SELECT 1")
        after = part.buffer_sample(conn, "hot", "sbtest1")
    finally:
        conn.close()
    # a read of every row touches each page that holds rows at least once: more than half the table's
    # pages (the rest is its key's, or InnoDB's non-leaf pages)
    assert after["requests"] - before["requests"] >= pages / 2, (before["requests"], after["requests"], pages)
    assert after["hot_reads"] >= before["hot_reads"]


def test_scanner_reads_in_a_loop_and_is_cancelled_cleanly(loaded):
    server, part, _ = loaded
    for kind in part.scan_kinds:
        if kind == "update":
            continue
        with Scanner(server, part, "sbtest1", kind, "sbtest", cpus="0") as scan:
            scan.start()
            time.sleep(1.0)
            assert scan.stop() < 5
            assert part.query(scan.connection, "SELECT 1")[0][0] == 1  # still connected, idle
        assert sum(ok for *_, ok in scan.passes) >= 1, kind
        # one pass after another on one session: every pass but the last (cancelled mid-way, or
        # ended as the stop came) completed, each began after the one before it ended
        assert all(ok for *_, ok in scan.passes[:-1]), kind
        assert all(b >= a for a, b, _ in scan.passes)
        assert all(a2 >= b1 for (_, b1, _), (a2, _, _) in zip(scan.passes, scan.passes[1:])), kind


def test_scanner_rejects_a_kind_the_server_has_not(loaded):
    server, part, _ = loaded
    with pytest.raises(ValueError, match="bad scan kind 'sideways'"):
        Scanner(server, part, "sbtest1", "sideways", "sbtest")


def test_sampler_probe_gives_one_pool_sample_a_second_beside_the_hot_workload(loaded):
    server, part, pages = loaded
    wl = Workload("hot_select", 1, 3, 1, ROWS, cpuset="0", options=(("hot-table", "hot"), ("hot-rows", str(HOT_ROWS))))
    probe = {"pool": lambda c: part.buffer_sample(c, "hot", "sbtest1")}
    with Sampler(server, probes=probe, sql_series=False, cpus="0", database="sbtest") as sampler:
        done = sysbench.run(wl, server)
    assert done.result.queries > 0 and len(done.result.series) >= 2
    resident = [(t, v) for t, src, name, v in sampler.series if src == "pool" and name == "resident.hot"]
    assert 2 <= len(resident) <= 4
    # the hot table fits the pool many times over and the workload reads only it: all of it stays
    assert [v for _, v in resident] == [pages] * len(resident)
    assert sampler.t0 > 0
