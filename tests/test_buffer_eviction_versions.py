"""The buffer_eviction chapter on MySQL 9.7 and MariaDB 11.8 (issue 21), each started as the chapter
starts it at default scale: the pool it lays out, the defaults the variants rely on, the
per-second sample (old sublist, the file the hot table's misses are read from) and a dynamic
setting put back to the server's default."""

from __future__ import annotations

import pytest

from dbexp.chapters.buffer_eviction import CHAPTER
from dbexp.chapters.buffer_eviction.chapter import server_config
from dbexp.chapters.buffer_eviction.engines.innodb import OLD_MIN_LEN
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
