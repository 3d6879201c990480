"""The buffer_eviction chapter on MySQL 9.7 and MariaDB 11.8 (issue 21), each started as the chapter
starts it at default scale: the pool it lays out, the defaults the variants rely on, the
per-second sample (old sublist, the file the hot table's misses are read from), a dynamic
setting put back to the server's default, and the hot table made young before a run (issue 43: after a
filler table, read by LRU position, which agrees with IS_OLD where the server fills it)."""

from __future__ import annotations

import time

import pytest

from dbexp.chapters.buffer_eviction import CHAPTER
from dbexp.chapters.buffer_eviction.chapter import FILLER_SHARE, WARM_GAP_S, server_config
from dbexp.chapters.buffer_eviction.engines.innodb import OLD_BY_POSITION, OLD_MIN_LEN
from test_buffer_pool import load

pytestmark = pytest.mark.docker


@pytest.fixture(params=["mysql:9.7@offline", "mariadb:11.8@offline"], scope="module")
def loaded(request, engine):
    from dbexp.servers import running

    sc = CHAPTER.scale("default")
    with running(server_config(request.param, sc, "1")) as server:
        part, pages = load(server)
        yield server, part, pages, sc


def _global(part, conn, name: str) -> str:
    return str(part.query(conn, f"SELECT @@GLOBAL.{name}")[0][0])


def test_the_pool_leaves_an_old_sublist_at_the_servers_own_scan_depth(loaded):
    server, part, pages, sc = loaded
    conn = server.connect("sbtest")
    try:
        s = part.buffer_sample(conn, "hot", "sbtest1")
        # the settings the chapter starts every InnoDB server with, taken by this version
        assert _global(part, conn, "innodb_flush_method") == "O_DIRECT"
        assert int(_global(part, conn, "innodb_buffer_pool_size")) == sc.pool_mb * 2 ** 20
        # the defaults the variants name (old_blocks_pct 37, old_blocks_time 1000): unchanged in this version
        old = (_global(part, conn, "innodb_old_blocks_pct"), _global(part, conn, "innodb_old_blocks_time"))
        assert old == ("37", "1000")
        depth = int(_global(part, conn, "innodb_lru_scan_depth"))
        # the variant at the server's own depth: the page cleaner's target leaves an LRU list above the minimum
        assert s["pool_pages"] - depth >= 2 * OLD_MIN_LEN, (s["pool_pages"], depth)
        server.flavor.capability("set_global").set(conn, "innodb_lru_scan_depth", "100")
        assert _global(part, conn, "innodb_lru_scan_depth") == "100"
        server.flavor.capability("set_global").set(conn, "innodb_lru_scan_depth", "DEFAULT")
        assert int(_global(part, conn, "innodb_lru_scan_depth")) == depth
    finally:
        conn.close()
    assert s["resident.hot"] == pages
    assert 0 < s["lru_old_pages"] < s["lru_pages"] <= s["pool_pages"]
    assert 0 <= s["old.hot"] <= s["resident.hot"]  # the old flag's own type (MySQL 'YES', MariaDB 1)


def test_the_hot_tables_file_is_where_its_misses_are_counted(loaded):
    """buffer_sample reads the hot table's misses as performance_schema's reads of ``hot.ibd``: the
    file is instrumented under that name in this version (the chapter's runs show the count rising)."""
    server, part, _, _ = loaded
    conn = server.connect("sbtest")
    try:
        (n,), = part.query(conn, "SELECT COUNT(*) FROM performance_schema.file_summary_by_instance "
                                 "WHERE FILE_NAME LIKE %s", ("%/hot.ibd",))
    finally:
        conn.close()
    assert n == 1


def test_a_hot_table_read_twice_after_the_filler_is_young_by_its_lru_position(loaded):
    """reset()'s warm-up: a filler larger than the pool starts eviction (before it InnoDB makes no page young),
    the hot table read twice past innodb_old_blocks_time is then in the young sublist; the position rule
    (OLD_BY_POSITION) gives IS_OLD's answer page for page where the server fills IS_OLD (MySQL), and MariaDB
    leaves IS_OLD NULL on every page."""
    server, part, pages, _ = loaded
    conn = server.connect("sbtest")
    try:
        filler = part.make_filler(conn, "sbtest1", "filler", FILLER_SHARE)
    finally:
        conn.close()
    server.restart()
    conn = server.connect("sbtest")
    try:
        for name, value in part.warm_settings:
            server.flavor.capability("set_global").set(conn, name, value)
        part.warm(conn, "filler")
        (pool, free), = part.query(conn, "SELECT SUM(POOL_SIZE), SUM(FREE_BUFFERS) "
                                         "FROM information_schema.INNODB_BUFFER_POOL_STATS")
        part.warm(conn, "hot")
        first = part.standing(conn, "hot")
        time.sleep(WARM_GAP_S)
        part.warm(conn, "hot")
        second = part.standing(conn, "hot")
        (n, flagged, by_position, differ, empty), = part.query(
            conn, f"SELECT COUNT(*), SUM({part.is_old_sql}), SUM({OLD_BY_POSITION}), "
                  f"SUM(({part.is_old_sql}) <> ({OLD_BY_POSITION})), SUM(l.IS_OLD IS NULL) "
                  "FROM information_schema.INNODB_BUFFER_PAGE_LRU l JOIN information_schema.INNODB_BUFFER_POOL_STATS s "
                  "ON s.POOL_ID = l.POOL_ID")
    finally:
        conn.close()
    assert filler >= FILLER_SHARE * float(pool)
    assert float(free) < 0.1 * float(pool)  # the pool full after the filler: eviction started
    assert first["resident"] == pages and first["old"] == pages  # a page read from disk enters old
    assert second == {"resident": pages, "young": pages, "old": 0.0}  # read again after 1 s: young
    if part.fills_is_old:
        assert empty == 0 and differ == 0 and flagged == by_position > 0
    else:
        assert empty == n and by_position > 0
