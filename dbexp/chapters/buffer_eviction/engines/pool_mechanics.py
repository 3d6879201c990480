"""InnoDB's buffer pool step by step (MySQL, MariaDB): what the source says of the LRU list's midpoint, the
pool's instances and its chunks, observed with ``information_schema.INNODB_BUFFER_PAGE_LRU`` and
``INNODB_BUFFER_POOL_STATS``. Two probes, each on the server it needs.

**The midpoint** (observe_midpoint), on a server set up as the chapter's eviction runs (a pool of a few
thousand pages), restarted just before: the big table is read once, which fills the pool and starts eviction
(until InnoDB has evicted a page, buf_page_peek_if_too_old moves no page at all: the free-page clock is still
0), then the hot table, which no read has touched since the restart. The precondition: the hot table not
resident (MariaDB reads its key's root page when it opens the table: that one page may be), the pool full
(eviction started, fewer free pages than a tenth of the pool) and an old sublist in place (an LRU list of at
least innodb.OLD_MIN_LEN pages).

1. **New pages enter at the midpoint.** The hot table is read once from disk: of its pages in the pool, how
   many sit in the old sublist (``IS_OLD``). buf_LRU_add_block puts a page read from disk at the old
   sublist's head (buf0lru.cc), so all of them should be old, while the young pages of the big table's last
   read show that the list has a young end they did not go to. But where the read takes pages from the free
   list (the page cleaner keeps up to innodb_lru_scan_depth of them), the list grows, and
   buf_LRU_old_adjust_len keeps the old sublist at innodb_old_blocks_pct of the longer list by moving the
   midpoint tailwards over the pages just added: up to (1 - pct) of the growth turns young without a
   promotion (``list_growth``). (In a pool still filling, the whole read is growth; hence the full pool.)
2. **Promotion waits innodb_old_blocks_time (1 s).** The table is read again at once, its first read less
   than a second old: buf_page_peek_if_too_old (buf0buf.ic) leaves a page in the old sublist while less than
   innodb_old_blocks_time has passed since its first access, counting it in PAGES_NOT_MADE_YOUNG. After a
   pause that takes the first access past 1 s, a third read should make its pages young (PAGES_MADE_YOUNG).

**Instances and chunks** (observe_instances), on a server of its own with a pool of 1 GiB (4 instances on
MySQL, which splits a pool only from 1 GiB on; MariaDB has had one instance since 10.5) and a new table of
about 600 pages, resident from its writes.

3. **Instances shard the pool.** The pool's instances (rows of INNODB_BUFFER_POOL_STATS) and how the table's
   pages spread over them (POOL_ID): buf_pool_get (buf0buf.ic) picks the instance from a hash of the
   tablespace and the page number.
4. **An extent of 64 pages shares an instance.** The hash leaves out the page number's low 6 bits (page_no
   >> 6), so every run of 64 consecutive pages of a tablespace should sit in one instance, and different
   extents in different ones.
5. **Chunks resize the pool online.** SET GLOBAL innodb_buffer_pool_size grows the pool by 512 MiB (one
   chunk of 128 MiB per instance on MySQL); the resize runs in a background thread while the server keeps
   serving: its time, the pool's pages before and after, the server's uptime carrying on (no restart) and
   the table's pages still resident.
"""

from __future__ import annotations

import time

from dbexp.servers.sql import query

from .innodb import OLD_MIN_LEN

TABLE = "mech"
DOUBLINGS = 16  # the instances probe's rows: 2 ** 16 = 65,536 of about 210 bytes, about 600 pages of 16 KiB
POOL_MB = 1024  # MySQL splits a pool into instances only from 1 GiB on
INSTANCES = 4
GROW_MB = 512  # the pool grows in whole chunks per instance: 4 x 128 MiB
RESIZE_WAIT_S = 60.0
PROMOTE_AFTER_S = 1.3  # innodb_old_blocks_time's 1 s, with room for the reads' own time
EARLY_WITHIN_S = 1.0  # the early re-read must end within this of the first read's start
FULL_FREE_SHARE = 0.10  # a full pool: fewer free pages than this share of it
EXTENT = 64  # pages


def instances_settings(part) -> dict[str, str]:
    """The instances probe's server: ``part``'s pool settings at 1 GiB (a cold start, O_DIRECT) and 4
    instances where the server has them."""
    s = part.buffer_pool_settings(POOL_MB)
    if "innodb_buffer_pool_instances" in s:  # MySQL; MariaDB has one instance since 10.5
        s["innodb_buffer_pool_instances"] = str(INSTANCES)
    return s


def _read(conn, table: str) -> float:
    """Read every row of ``table`` through its clustered index; seconds taken."""
    t0 = time.monotonic()
    query(conn, f"SELECT SUM(LENGTH(pad)) FROM {table}")
    return time.monotonic() - t0


_IS_TABLE = "TABLE_NAME = CONCAT('`', DATABASE(), '`.`', %s, '`')"


def _pages(conn, part, table: str) -> tuple[int, int]:
    """(pages of ``table``'s clustered index in the pool, of those in the old sublist). MariaDB leaves
    INNODB_BUFFER_PAGE_LRU.IS_OLD empty (NULL); there a page is old if its place counted from the list's tail
    (LRU_POSITION, 0 at the tail, as MySQL's IS_OLD pages show) is within the old sublist's length."""
    (n, old), = query(conn, f"SELECT COUNT(*), COALESCE(SUM(COALESCE({part.is_old_sql}, "
                            "l.LRU_POSITION < s.OLD_DATABASE_PAGES)), 0) FROM information_schema.INNODB_BUFFER_PAGE_LRU l "
                            "JOIN information_schema.INNODB_BUFFER_POOL_STATS s ON s.POOL_ID = l.POOL_ID "
                            f"WHERE l.INDEX_NAME = 'PRIMARY' AND l.{_IS_TABLE}", (table,))
    return int(n), int(old)


def _stats(conn) -> list[tuple[int, ...]]:
    """Per instance: (pool id, pool size, LRU pages, old pages, free pages, made young, not made young)."""
    return [tuple(int(v) for v in r) for r in query(
        conn, "SELECT POOL_ID, POOL_SIZE, DATABASE_PAGES, OLD_DATABASE_PAGES, FREE_BUFFERS, PAGES_MADE_YOUNG, "
              "PAGES_NOT_MADE_YOUNG FROM information_schema.INNODB_BUFFER_POOL_STATS ORDER BY POOL_ID")]


def _young_counts(conn) -> tuple[int, int]:
    s = _stats(conn)
    return sum(r[5] for r in s), sum(r[6] for r in s)


def _variable(conn, name: str) -> float:
    """A global variable as a number; NaN where the server has no such variable."""
    rows = query(conn, "SHOW GLOBAL VARIABLES LIKE %s", (name,))
    return float(rows[0][1]) if rows else float("nan")


def _status(conn, name: str) -> str:
    rows = query(conn, "SHOW GLOBAL STATUS LIKE %s", (name,))
    return str(rows[0][1]) if rows else ""


def observe_midpoint(server, part, big: str, hot: str, database: str = "sbtest") -> dict[str, tuple[float, str]]:
    """Steps 1 and 2 on the chapter's server, restarted just before: {measurement: (value, unit)}."""
    m: dict[str, tuple[float, str]] = {}
    conn = server.connect(database)
    try:
        hot_before = _pages(conn, part, hot)[0]
        _read(conn, big)  # fills the pool: eviction starts
        stats = _stats(conn)
        pool, lru, old_len, free = (sum(r[i] for r in stats) for i in (1, 2, 3, 4))
        big_pages, big_old = _pages(conn, part, big)
        m["pool_pages"], m["lru_pages"], m["free_pages"] = (float(pool), "pages"), (float(lru), "pages"), (float(free), "pages")
        m["old_sublist_pages"], m["hot_pages_before"] = (float(old_len), "pages"), (float(hot_before), "pages")
        # MariaDB reads the key's root page when it opens the table: at most that one page before the read
        m["precondition_ok"] = (float(hot_before <= 1 and free < FULL_FREE_SHARE * pool and lru >= OLD_MIN_LEN
                                      and old_len > 0), "bool")

        # 1. a page read from disk goes to the old sublist's head
        lru_before = sum(r[2] for r in _stats(conn))
        first_at = time.monotonic()
        m["first_read_s"] = (_read(conn, hot), "s")
        pages, old = _pages(conn, part, hot)
        # free pages the read took grew the list, and InnoDB keeps the old sublist at its share of a longer list
        # (buf_LRU_old_adjust_len) by moving the midpoint tailwards over the pages just added: that many turn young
        m["list_growth"] = (float(sum(r[2] for r in _stats(conn)) - lru_before), "pages")
        m["old_blocks_pct"] = (_variable(conn, "innodb_old_blocks_pct"), "%")
        m["new_pages"] = (float(pages - hot_before), "pages")  # brought in by this read
        m["table_pages"], m["new_pages_old"] = (float(pages), "pages"), (float(old), "pages")
        m["big_young_pages"] = (float(big_pages - big_old), "pages")

        # 2. read again while the first read is under 1 s old: no page moves; again after 1 s: they do
        young0, not_young0 = _young_counts(conn)
        _read(conn, hot)
        m["early_reread_after_s"] = (time.monotonic() - first_at, "s")  # the first read's start to this one's end
        young1, not_young1 = _young_counts(conn)
        m["early_made_young"] = (float(young1 - young0), "pages")
        m["early_not_made_young"] = (float(not_young1 - not_young0), "pages")
        m["early_old_pages"] = (float(_pages(conn, part, hot)[1]), "pages")
        last_first_access = first_at + m["first_read_s"][0]
        time.sleep(max(0.0, last_first_access + PROMOTE_AFTER_S - time.monotonic()))
        m["late_reread_after_s"] = (time.monotonic() - last_first_access, "s")  # the first read's end to this one's start
        _read(conn, hot)
        young2, _ = _young_counts(conn)
        pages2, old2 = _pages(conn, part, hot)
        m["late_made_young"] = (float(young2 - young1), "pages")
        m["late_old_pages"], m["late_pages"] = (float(old2), "pages"), (float(pages2), "pages")
    finally:
        conn.close()
    return m


def observe_instances(server, part, database: str = "sbtest") -> dict[str, tuple[float, str]]:
    """Steps 3 to 5 on a server started with instances_settings(part): {measurement: (value, unit)}."""
    m: dict[str, tuple[float, str]] = {}
    conn = server.connect(database)
    try:
        query(conn, f"DROP TABLE IF EXISTS {TABLE}")
        query(conn, f"CREATE TABLE {TABLE} (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, pad CHAR(200) NOT NULL) "
                    "ENGINE = InnoDB")
        query(conn, f"INSERT INTO {TABLE} (pad) VALUES (REPEAT('x', 200))")
        for _ in range(DOUBLINGS):
            query(conn, f"INSERT INTO {TABLE} (pad) SELECT pad FROM {TABLE}")
        _read(conn, TABLE)
        stats = _stats(conn)
        pages = _pages(conn, part, TABLE)[0]
        m["new_table_pages"] = (float(pages), "pages")
        m["precondition_ok"] = (float(pages > 8 * EXTENT), "bool")  # several extents resident

        # 3. instances: the pool's, and the table's pages per instance
        m["instances_setting"] = (_variable(conn, "innodb_buffer_pool_instances"), "instances")
        m["pool_instances"] = (float(len(stats)), "instances")
        counts = [int(n) for _, n in query(
            conn, "SELECT POOL_ID, COUNT(*) FROM information_schema.INNODB_BUFFER_PAGE_LRU "
                  f"WHERE INDEX_NAME = 'PRIMARY' AND {_IS_TABLE} GROUP BY POOL_ID", (TABLE,))]
        m["instances_holding_table"] = (float(len(counts)), "instances")
        m["largest_instance_share"] = (max(counts) / sum(counts), "share")

        # 4. extents: the instances each run of 64 pages of the table is spread over
        (extents, split, pools), = query(
            conn, "SELECT COUNT(*), COALESCE(SUM(n > 1), 0), COUNT(DISTINCT first_pool) FROM (SELECT SPACE, "
                  f"FLOOR(PAGE_NUMBER / {EXTENT}) AS extent, COUNT(DISTINCT POOL_ID) AS n, MIN(POOL_ID) AS first_pool "
                  f"FROM information_schema.INNODB_BUFFER_PAGE_LRU WHERE {_IS_TABLE} GROUP BY SPACE, extent) AS e",
            (TABLE,))
        m["extents_seen"] = (float(extents), "extents")
        m["extents_split"] = (float(split), "extents")
        m["extent_instances"] = (float(pools), "instances")

        # 5. an online resize by whole chunks
        m["chunk_mb"] = (_variable(conn, "innodb_buffer_pool_chunk_size") / 2 ** 20, "MiB")
        size0 = _variable(conn, "innodb_buffer_pool_size")
        uptime0 = float(_status(conn, "Uptime"))
        pool0 = sum(r[1] for r in _stats(conn))
        target = int(size0) + GROW_MB * 2 ** 20
        t0 = time.monotonic()
        query(conn, f"SET GLOBAL innodb_buffer_pool_size = {target}")
        # done when the variable says the new size (5.7 sets it at the end of the resize) and the pool has it
        while _variable(conn, "innodb_buffer_pool_size") < target or sum(r[1] for r in _stats(conn)) <= pool0:
            if time.monotonic() - t0 > RESIZE_WAIT_S:
                raise RuntimeError(f"the buffer pool did not grow within {RESIZE_WAIT_S:.0f} s of SET GLOBAL "
                                   f"innodb_buffer_pool_size = {target}: "
                                   f"{_status(conn, 'Innodb_buffer_pool_resize_status')!r}")
            time.sleep(0.05)
        m["resize_s"] = (time.monotonic() - t0, "s")
        m["pool_pages_before"] = (float(pool0), "pages")
        m["pool_pages_after"] = (float(sum(r[1] for r in _stats(conn))), "pages")
        m["pool_mb_before"] = (size0 / 2 ** 20, "MiB")
        m["pool_mb_after"] = (_variable(conn, "innodb_buffer_pool_size") / 2 ** 20, "MiB")
        m["uptime_continued"] = (float(float(_status(conn, "Uptime")) >= uptime0), "bool")
        m["table_pages_kept"] = (float(_pages(conn, part, TABLE)[0]), "pages")
    finally:
        conn.close()
    return m
