"""PostgreSQL's shared buffers: what ``pg_buffercache`` and the statistics views say they hold,
the ways the chapter reads the big table (a sequential scan and its bulk-read ring, the same rows
through the primary key, an UPDATE of every row), ``pg_prewarm``, and the cancel of a scan."""

from __future__ import annotations

import time

import psycopg

from dataclasses import dataclass

from dbexp.catalog.versions import major

from . import BufferPart, Variant

# GetAccessStrategy(BAS_BULKREAD) in src/backend/storage/buffer/freelist.c: the ring asks for 256 kB;
# from 18 on, also room for effective_io_concurrency reads of io_combine_limit blocks each, but no
# more than the buffers a backend may pin (GetPinLimit: NBuffers / (MaxBackends + NUM_AUXILIARY_PROCS),
# never under the 256 kB); GetAccessStrategyWithSize (16+), like 12 to 15's GetAccessStrategy, caps a
# ring at an eighth of shared buffers.
RING_BASE_KB = 256
SPECIAL_WORKER_PROCS = 2  # 18's NUM_SPECIAL_WORKER_PROCS: the autovacuum launcher, the slot sync worker
AUXILIARY_PROCS = 6 + 32  # 18's NUM_AUXILIARY_PROCS: 6 + MAX_IO_WORKERS


def setting_number(value) -> int:
    """A setting as pg_settings stores it ('4096 8kB' is 4096 units of 8 kB; '16' is 16)."""
    return int(str(value).split()[0])


@dataclass(frozen=True)
class Ring:
    """A sequential scan's bulk-read ring on one server, as its version sizes it from its settings."""

    buffers: int
    kb: int
    how: str  # the computation, in words and numbers


def bulkread_ring(version: str, settings: dict) -> Ring:
    """The BAS_BULKREAD ring a sequential scan of a table over a quarter of shared buffers reads
    through, computed as ``version``'s GetAccessStrategy does from ``settings`` (pg_settings' values:
    shared_buffers, block_size; on 18 also io_combine_limit, effective_io_concurrency and the
    settings that make MaxBackends)."""
    block_kb = setting_number(settings.get("block_size", 8192)) // 1024
    nbuffers = setting_number(settings["shared_buffers"])
    asked = RING_BASE_KB
    how = f"{RING_BASE_KB} kB"
    if major(version) >= 18:
        combine = setting_number(settings["io_combine_limit"])
        eic = setting_number(settings["effective_io_concurrency"])
        backends = (setting_number(settings["max_connections"]) + setting_number(settings["autovacuum_worker_slots"])
                    + setting_number(settings["max_worker_processes"]) + setting_number(settings["max_wal_senders"])
                    + SPECIAL_WORKER_PROCS)
        pins = nbuffers // (backends + AUXILIARY_PROCS)
        ceiling = max(RING_BASE_KB, pins * block_kb)
        want = RING_BASE_KB + block_kb * combine * eic
        asked = min(want, ceiling)
        how = (f"{RING_BASE_KB} + {block_kb} x {combine} x {eic} = {want:,} kB asked, capped at "
               f"max({RING_BASE_KB}, {pins} pins x {block_kb} kB) = {ceiling:,} kB (pin limit "
               f"{nbuffers:,} / ({backends} + {AUXILIARY_PROCS}))")
    buffers = min(nbuffers // 8, asked // block_kb)
    if buffers < asked // block_kb:
        how += f", capped at an eighth of shared buffers ({nbuffers // 8:,})"
    return Ring(buffers, buffers * block_kb, how)


class SharedBuffers(BufferPart):
    engine = "PostgreSQL"
    variants = (
        Variant("seq scan (ring)", "seq"),
        Variant("index scan (no ring)", "index"),
        Variant("UPDATE scan", "update"),
        Variant("index scan, then pg_prewarm", "index", prewarm=True),
    )
    scan_kinds = ("seq", "index", "update")
    page_bytes = 8192
    reads_through_page_cache = True
    # a buffer's usage count is raised at each pin up to 5, lowered by each pass of the clock sweep, which evicts it
    # at 0: buffers read twice (pg_prewarm twice, then the hot workload) need two passes or more
    kept_first, kept_first_words = "used_twice", "at usage count 2 or more"

    @staticmethod
    def reads_in_streams(version: str) -> bool:
        """Whether this version's sequential scan reads through a read stream (17; asynchronous I/O
        in 18) rather than one buffer at a time (12 to 16); ``version`` as a server or series name."""
        return major(version) >= 17

    def buffer_pool_settings(self, mb: int) -> dict[str, str]:
        # PostgreSQL reads through the page cache: a miss in shared buffers may still be served from
        # memory. The chapter limits the container's memory (the cgroup charges the page cache to it)
        # and records the device's reads beside blks_read.
        return {"shared_buffers": f"{mb}MB"}

    def copy_rows(self, conn, src: str, dst: str, rows: int) -> None:
        self.query(conn, f"DROP TABLE IF EXISTS {dst}")
        self.query(conn, f"CREATE TABLE {dst} (LIKE {src} INCLUDING ALL)")
        self.query(conn, f"INSERT INTO {dst} SELECT * FROM {src} WHERE id <= %s", (rows,))
        self.query(conn, f"VACUUM (ANALYZE) {dst}")
        for ext in ("pg_buffercache", "pg_prewarm"):
            self.query(conn, f"CREATE EXTENSION IF NOT EXISTS {ext}")

    @staticmethod
    def _key_relations(table: str) -> tuple[str, str]:
        return table, f"{table}_pkey"

    def primary_pages(self, conn, table: str) -> int:
        heap, key = self._key_relations(table)
        row = self.query(conn, "SELECT (pg_relation_size(%s) + pg_relation_size(%s)) / "
                               "current_setting('block_size')::int", (heap, key))
        return int(row[0][0])

    def buffer_sample(self, conn, hot: str, big: str) -> dict[str, float]:
        t0 = time.perf_counter()
        rows = self.query(conn, """
            SELECT CASE WHEN b.relfilenode IS NULL THEN 'free'
                        WHEN b.reldatabase <> d.oid OR b.relforknumber <> 0 THEN 'other'
                        WHEN b.relfilenode IN (pg_relation_filenode(%s), pg_relation_filenode(%s)) THEN 'hot'
                        WHEN b.relfilenode IN (pg_relation_filenode(%s), pg_relation_filenode(%s)) THEN 'big'
                        ELSE 'other' END, COALESCE(b.usagecount, 0), count(*)
            FROM pg_buffercache b, (SELECT oid FROM pg_database WHERE datname = current_database()) d
            GROUP BY 1, 2""", (*self._key_relations(hot), *self._key_relations(big)))
        out = {"lru_query_ms": (time.perf_counter() - t0) * 1e3}
        for role in ("hot", "big", "other", "free"):
            out[f"resident.{role}"] = 0.0
            for u in range(6):
                out[f"usage.{role}.{u}"] = 0.0
        for role, usage, n in rows:
            out[f"resident.{role}"] += float(n)
            out[f"usage.{role}.{int(usage)}"] = float(n)
        self.query(conn, "SELECT pg_stat_clear_snapshot()")
        (hits, reads), = self.query(conn, "SELECT blks_hit, blks_read FROM pg_stat_database "
                                          "WHERE datname = current_database()")
        out["requests"], out["reads"] = float(hits + reads), float(reads)
        (hh, hr), = self.query(conn, "SELECT COALESCE(heap_blks_hit, 0) + COALESCE(idx_blks_hit, 0), "
                                     "COALESCE(heap_blks_read, 0) + COALESCE(idx_blks_read, 0) "
                                     "FROM pg_statio_user_tables WHERE relname = %s", (hot,))
        out["hot_requests"], out["hot_reads"] = float(hh + hr), float(hr)
        # buffers handed out by the free list or the clock sweep (a ring's reuse of its own is not counted)
        out["buffers_alloc"] = float(self.query(conn, "SELECT buffers_alloc FROM pg_stat_bgwriter")[0][0])
        if self.query(conn, "SELECT 1 FROM pg_views WHERE viewname = 'pg_stat_io'"):  # 16+
            for context, reads_, evictions, reuses in self.query(
                    conn, "SELECT context, COALESCE(sum(reads), 0), COALESCE(sum(evictions), 0), "
                          "COALESCE(sum(reuses), 0) FROM pg_stat_io WHERE object = 'relation' GROUP BY context"):
                out[f"io.{context}.reads"] = float(reads_)
                out[f"io.{context}.evictions"] = float(evictions)
                out[f"io.{context}.reuses"] = float(reuses)
        return out

    def standing(self, conn, table: str) -> dict[str, float]:
        rows = self.query(conn, """
            SELECT COALESCE(b.usagecount, 0), count(*) FROM pg_buffercache b
            WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND b.relforknumber = 0 AND b.relfilenode IN (pg_relation_filenode(%s), pg_relation_filenode(%s))
            GROUP BY 1""", self._key_relations(table))
        out = {f"usage{u}": 0.0 for u in range(6)}
        for usage, n in rows:
            out[f"usage{int(usage)}"] = float(n)
        out["resident"] = sum(out[f"usage{u}"] for u in range(6))
        out["used_twice"] = sum(out[f"usage{u}"] for u in range(2, 6))
        return out

    def full_read_sql(self, table: str, kind: str) -> list[str]:
        # one backend, no parallel workers: the scan's strategy is the backend's own
        setup = ["SET max_parallel_workers_per_gather = 0"]
        if kind == "seq":  # a table over a quarter of shared buffers: the bulk-read ring
            return setup + [f"SELECT sum(length(pad)) FROM {table}"]
        if kind == "index":  # the same rows in key order through shared buffers' clock sweep, no ring
            return setup + ["SET enable_seqscan = off", "SET enable_bitmapscan = off",
                            f"SELECT sum(length(pad)) FROM {table} WHERE id > 0"]
        if kind == "update":  # a scan that dirties every page it reads (a new version of each row)
            return setup + [f"UPDATE {table} SET c = c"]
        raise self.bad_kind(kind)

    def session_id(self, conn) -> int:
        return int(self.query(conn, "SELECT pg_backend_pid()")[0][0])

    def client_sessions(self, conn) -> set[int]:
        rows = self.query(conn, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'")
        return {int(r[0]) for r in rows}

    def session_os_ids(self, conn, sessions) -> list[int]:
        return [int(s) for s in sessions]  # a backend is a process: its pid is the session's id

    def cancel_sql(self, session: int) -> str:
        return f"SELECT pg_cancel_backend({int(session)})"

    def is_cancel(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.errors.QueryCanceled)

    def prewarm(self, conn, table: str) -> float:
        return float(sum(self.query(conn, "SELECT pg_prewarm(%s)", (rel,))[0][0]
                         for rel in self._key_relations(table)))

    def warm(self, conn, table: str) -> None:
        """Every page of the table and its primary key read into shared buffers (pg_prewarm's buffer
        mode: a read each, as the hot workload's first lookups would make them)."""
        self.prewarm(conn, table)

    def restore_table(self, conn, table: str) -> None:
        """An update scan leaves a new version of every row it reached (committed or not): rewrite
        the table to its live rows and checkpoint, so the next run reads the same pages."""
        self.query(conn, f"VACUUM (FULL, ANALYZE) {table}")
        self.query(conn, "CHECKPOINT")
