"""InnoDB's buffer pool (MySQL; MariaDB in mariadb.py): its midpoint LRU list, read live from
``INNODB_BUFFER_PAGE_LRU`` and ``INNODB_BUFFER_POOL_STATS``, the variants that move the midpoint's
settings, and the scanning session's SQL and cancel."""

from __future__ import annotations

import math
import time

import pymysql

from . import BufferPart, Variant

DEPTH = ("innodb_lru_scan_depth", "100")  # free pages the page cleaner keeps per instance: scaled to the tiny pool
# InnoDB keeps an old sublist only while the LRU list holds at least this many pages (buf0lru.h,
# MySQL and MariaDB alike); below it buf_LRU_add_block puts every page read at the head of the list
OLD_MIN_LEN = 512
# INNODB_BUFFER_PAGE_LRU numbers the pool's pages from the LRU list's tail (LRU_POSITION 0: i_s.cc walks the list
# from UT_LIST_GET_LAST), and the old sublist is the list's last LRU_old_len pages (buf_LRU_old_adjust_len keeps
# it at innodb_old_blocks_pct of the list; INNODB_BUFFER_POOL_STATS.OLD_DATABASE_PAGES): a page is old where its
# position is under that length. MySQL fills IS_OLD too, and the two agree page for page (8.0.15: 0 of 1,088 old
# pages differ); MariaDB 11.8 leaves IS_OLD NULL on every page, so there the position decides.
OLD_BY_POSITION = "l.LRU_POSITION < s.OLD_DATABASE_PAGES"
# the filler table's rows: about 5 to a 16 kB page, so a table the size of a 48 MiB pool is about 20,000 rows
FILLER_ROW_BYTES = 3000


class BufferPool(BufferPart):
    engine = "InnoDB"
    variants = (
        Variant("defaults (scan depth 100)", "seq",
                (("innodb_old_blocks_time", "1000"), ("innodb_old_blocks_pct", "37"), DEPTH)),
        Variant("old_blocks_time=0", "seq",
                (("innodb_old_blocks_time", "0"), ("innodb_old_blocks_pct", "37"), DEPTH)),
        # the server's own innodb_lru_scan_depth (MySQL 1024, MariaDB 1536), large against a small pool
        Variant("scan depth at its default", "seq",
                (("innodb_old_blocks_time", "1000"), ("innodb_old_blocks_pct", "37"),
                 ("innodb_lru_scan_depth", "DEFAULT"))),
        Variant("old_blocks_pct=5", "seq",
                (("innodb_old_blocks_time", "1000"), ("innodb_old_blocks_pct", "5"), DEPTH)),
    )
    old_min_len = OLD_MIN_LEN
    # the code the source reads (MySQL's InnoDB): where a claim is of that code's details, this flavor's runs decide
    code_the_source_reads = True
    is_old_sql = "IS_OLD = 'YES'"  # INNODB_BUFFER_PAGE_LRU.IS_OLD is 'YES'/'NO' in MySQL
    fills_is_old = True  # IS_OLD filled: the old counts of runs sampled before the position rule hold too
    page_bytes = 16384
    reads_through_page_cache = False  # with buffer_pool_settings(): O_DIRECT
    kept_first, kept_first_words = "young", "in the young sublist (by LRU position)"
    # buf_page_peek_if_too_old (buf0buf.ic, MySQL and MariaDB) makes no page young while the pool's free-page
    # clock is 0, i.e. until InnoDB has evicted a page: in a pool just restarted, a table read twice stays where
    # its first read put it (published runs before issue 43: 91 to 204 of the hot table's 550 pages in the old
    # sublist at the scan's start). A filler table larger than the pool read first starts eviction.
    fills_pool_first = True
    # the hot table is made young under the defaults' LRU settings (innodb_old_blocks_pct at 5 would evict its
    # first read from a 5% old sublist before the second; innodb_lru_scan_depth at 1,024 or 1,536 would free
    # its old pages from the tail within the pause), then the variant's own are set
    warm_settings = variants[0].settings
    # MySQL's page cleaner does its LRU batches only in a round after activity (ticker.py says how it was seen)
    writes_a_second = True
    probes_midpoint = True

    def buffer_pool_settings(self, mb: int) -> dict[str, str]:
        return {
            "innodb_buffer_pool_size": f"{mb}M",
            # below the 128M chunk, InnoDB shrinks the chunk to the pool: one pool of exactly mb
            "innodb_buffer_pool_instances": "1",
            # data pages read around the page cache: a miss is a read from the device
            "innodb_flush_method": "O_DIRECT",
            # a cold start: no page list saved at shutdown and loaded at start (on by default)
            "innodb_buffer_pool_dump_at_shutdown": "OFF",
            "innodb_buffer_pool_load_at_startup": "OFF",
        }

    def copy_rows(self, conn, src: str, dst: str, rows: int) -> None:
        self.query(conn, f"DROP TABLE IF EXISTS {dst}")
        self.query(conn, f"CREATE TABLE {dst} LIKE {src}")
        self.query(conn, f"INSERT INTO {dst} SELECT * FROM {src} WHERE id <= %s", (rows,))
        self.query(conn, f"ANALYZE TABLE {dst}")

    def _lru_pages(self, conn, tables: dict[str, str]) -> dict[str, tuple[float, float]]:
        """{role: (pages of the table's clustered index in the pool, of those in the old sublist)}."""
        names = {f"`{self._db(conn)}`.`{t}`": role for role, t in tables.items()}
        rows = self.query(conn, f"SELECT l.TABLE_NAME, COUNT(*), SUM(COALESCE({self.is_old_sql}, {OLD_BY_POSITION})) "
                                "FROM information_schema.INNODB_BUFFER_PAGE_LRU l JOIN "
                                "information_schema.INNODB_BUFFER_POOL_STATS s ON s.POOL_ID = l.POOL_ID "
                                "WHERE l.INDEX_NAME = 'PRIMARY' "
                                f"AND l.TABLE_NAME IN ({', '.join(['%s'] * len(names))}) GROUP BY l.TABLE_NAME",
                          tuple(names))
        out = {role: (0.0, 0.0) for role in tables}
        for name, pages, old in rows:
            out[names[name]] = (float(pages), float(old or 0))
        return out

    def _db(self, conn) -> str:
        return str(self.query(conn, "SELECT DATABASE()")[0][0])

    def primary_pages(self, conn, table: str) -> int:
        """The clustered index's pages resident after a read of every row: exact where the table fits
        in the pool; where it does not, the index's size from InnoDB's statistics (pages allocated)."""
        self.query(conn, f"SELECT SUM(LENGTH(pad)) FROM {table}")
        resident = int(self._lru_pages(conn, {"t": table})["t"][0])
        self.query(conn, f"ANALYZE TABLE {table}")
        (size,), = self.query(conn, "SELECT DATA_LENGTH / @@innodb_page_size FROM information_schema.TABLES "
                                    "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s", (table,))
        return resident if resident >= 0.8 * float(size) else int(size)

    def warm(self, conn, table: str) -> None:
        """One read of every page of ``table``'s clustered index (no ANALYZE TABLE, whose statistics InnoDB
        writes back: dirty pages the page cleaner would then have to write)."""
        self.query(conn, f"SELECT SUM(LENGTH(pad)) FROM {table}")

    def standing(self, conn, table: str) -> dict[str, float]:
        pages, old = self._lru_pages(conn, {"t": table})["t"]
        return {"resident": pages, "young": pages - old, "old": old}

    def make_filler(self, conn, src: str, dst: str, share: float) -> int:
        """``dst``'s ids are ``src``'s (sysbench's 1 to n), offset by n for each further round where ``src`` has
        fewer rows than the filler needs."""
        (pool,), = self.query(conn, "SELECT SUM(POOL_SIZE) FROM information_schema.INNODB_BUFFER_POOL_STATS")
        want = math.ceil(share * float(pool))
        rows = math.ceil(want * self.page_bytes / FILLER_ROW_BYTES)
        (have,), = self.query(conn, f"SELECT COUNT(*) FROM {src} WHERE id <= %s", (rows,))
        have = int(have or 0)
        if have < 1:
            raise ValueError(f"the filler table is made from {src}'s ids 1 to n, and {src} has none")
        self.query(conn, f"DROP TABLE IF EXISTS {dst}")
        self.query(conn, f"CREATE TABLE {dst} (id INT NOT NULL PRIMARY KEY, pad VARCHAR({FILLER_ROW_BYTES}) NOT NULL) "
                         "ENGINE = InnoDB")
        for offset in range(0, rows, have):
            self.query(conn, f"INSERT INTO {dst} SELECT id + %s, REPEAT('x', {FILLER_ROW_BYTES}) FROM {src} "
                             "WHERE id <= %s", (offset, min(have, rows - offset)))
        pages = self.primary_pages(conn, dst)
        if pages < want:
            raise RuntimeError(f"the filler table {dst} took {pages:,} pages, under the {want:,} "
                               f"({share:g} x the pool's {int(pool):,}) it must have")
        return pages

    def make_tick(self, conn, table: str) -> None:
        self.query(conn, f"DROP TABLE IF EXISTS {table}")
        self.query(conn, f"CREATE TABLE {table} (id INT NOT NULL PRIMARY KEY, n BIGINT NOT NULL) ENGINE = InnoDB")
        self.query(conn, f"INSERT INTO {table} VALUES (1, 0)")

    def tick(self, conn, table: str) -> None:
        self.query(conn, f"UPDATE {table} SET n = n + 1 WHERE id = 1")

    def buffer_sample(self, conn, hot: str, big: str) -> dict[str, float]:
        t0 = time.perf_counter()
        lru = self._lru_pages(conn, {"hot": hot, "big": big})
        out = {"lru_query_ms": (time.perf_counter() - t0) * 1e3}
        for role, (pages, old) in lru.items():
            out[f"resident.{role}"], out[f"old.{role}"], out[f"young.{role}"] = pages, old, pages - old
        (size, pages, old, free, young, not_young, reads, gets), = self.query(
            conn, "SELECT SUM(POOL_SIZE), SUM(DATABASE_PAGES), SUM(OLD_DATABASE_PAGES), SUM(FREE_BUFFERS), "
                  "SUM(PAGES_MADE_YOUNG), SUM(PAGES_NOT_MADE_YOUNG), SUM(NUMBER_PAGES_READ), "
                  "SUM(NUMBER_PAGES_GET) FROM information_schema.INNODB_BUFFER_POOL_STATS")
        out.update({"pool_pages": float(size), "lru_pages": float(pages), "lru_old_pages": float(old),
                    "free_pages": float(free), "made_young": float(young), "not_made_young": float(not_young),
                    "reads": float(reads), "requests": float(gets)})
        # the hot table's own misses: performance_schema's reads of its tablespace file
        got = self.query(conn, "SELECT COALESCE(SUM(COUNT_READ), 0) FROM performance_schema.file_summary_by_instance "
                               "WHERE FILE_NAME LIKE %s", (f"%/{hot}.ibd",))
        out["hot_reads"] = float(got[0][0])
        return out

    def full_read_sql(self, table: str, kind: str) -> list[str]:
        if kind not in self.scan_kinds:
            raise self.bad_kind(kind)
        # the clustered index from end to end (not COUNT(*), which 8.0 may answer from another index
        # or with parallel read threads): every page of the rows, once per pass
        return [f"SELECT SUM(LENGTH(pad)) FROM {table}"]

    def session_id(self, conn) -> int:
        return int(self.query(conn, "SELECT CONNECTION_ID()")[0][0])

    def client_sessions(self, conn) -> set[int]:
        rows = self.query(conn, "SELECT PROCESSLIST_ID FROM performance_schema.threads "
                                "WHERE TYPE = 'FOREGROUND' AND PROCESSLIST_ID IS NOT NULL")
        return {int(r[0]) for r in rows}

    def session_os_ids(self, conn, sessions) -> list[int]:
        ids = [int(s) for s in sessions]
        if not ids:
            return []
        rows = self.query(conn, "SELECT THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID IN ("
                                + ", ".join(["%s"] * len(ids)) + ") AND THREAD_OS_ID IS NOT NULL", tuple(ids))
        return [int(r[0]) for r in rows]

    def cancel_sql(self, session: int) -> str:
        return f"KILL QUERY {int(session)}"

    def is_cancel(self, exc: BaseException) -> bool:
        return isinstance(exc, pymysql.err.OperationalError) and exc.args and exc.args[0] == 1317
