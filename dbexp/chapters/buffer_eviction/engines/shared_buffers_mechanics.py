"""PostgreSQL's shared buffers step by step, read with pg_buffercache and the statistics views: claims of
Zhao Song's "MySQL vs PostgreSQL Internals (Part 1): Buffer Pool" (kernelmaker.github.io/mysql-vs-pg-bufferpool)
tested on the server under test, started with SETTINGS (2,048 buffers of 8 kB, a 6 s checkpoint window).
The probe's tables hold one 1 kB row per page (fillfactor 10): a table is as many pages as it needs to be
for a fraction of the rows to generate, and every page an UPDATE of all rows touches is one dirty buffer.

1. **The clock sweep decrements.** Restarted (an empty pool, the hand at buffer 0), the server loads a
   table B of 1.5 x shared buffers (``pg_prewarm(.., 'buffer')``: no ring), then reads a table A of 256
   pages 6 times (under NBuffers / 4, so its sequential scan takes no ring): every buffer of A at usage
   count 5. B's first 8 pages are loaded again; the buffer they land in says where the hand stands.
   Then B is loaded twice more in chunks of 128 pages, and after each chunk pg_buffercache says where
   each page of A and B sits. The buffer holding a chunk's last new page is the sweep's latest victim, so
   the hand's path between two looks is known: from just past the previous victim to this one, plus a
   whole lap when B's pages off that path all lost a count (an allocation that finds no buffer at 0 ahead
   goes all the way round). Each of A's buffers should then stand at 5 minus the hand's passes over it and
   be gone on the pass that finds it at 0 (``hot_count_matches_passes``: the share of (page, look) pairs
   where it does). Reported after the first load (``hot_*_after``, ``sweep_laps``) and after both
   (``*_end``). Every new page enters at count 1, so after the restart a lap's worth of B's pages sit at
   1 together and the sweep needs a whole lap lowering them before it finds a victim: laps alternate
   between one that only lowers and one that evicts, and two loads (about 6,100 allocations) are over 7
   laps. A, lowered once a lap, is evicted during the second load; after the first it is resident at 2
   (measured on 12, 14 and 18 alike).
2. **Rings for bulk writes and VACUUM.** About 40 MB of rows COPY'd (FROM STDIN) into a new table C keep
   only the BAS_BULKWRITE ring resident; the same rows by INSERT ... SELECT into D (no ring) fill the pool.
   After a restart (an empty pool) VACUUM of C, never vacuumed so it reads every page, keeps only its
   BAS_VACUUM ring: 32 buffers on 12 to 15, vacuum_buffer_usage_limit's from 16 on (2 MB by default from
   17 on: 256 buffers, just the cap of an eighth of the pool; measured on 18). On 18, C is 2 pages longer
   than D, likely because its COPY extends the table several pages at a time (hio.c, RelationAddBlocks,
   from 16 on) and the last of them stay empty; 12 and 14 give both 5,120.
3. **The background writer writes at most bgwriter_lru_maxpages a round.** A second session updates
   every row of B (1.5 x the pool) again and again for 3 s while pg_stat_bgwriter is sampled every 50 ms:
   each pass reads every page (allocations) and leaves it dirty, so the background writer always finds
   dirty buffers at count 0 ahead of the hand. ``maxwritten_clean`` counts the rounds that stopped at the
   cap; ``buffers_clean`` can grow by at most the cap a round, rounds bgwriter_delay apart (at most
   elapsed / delay + 1 of them in the window). The pool dirtied once (an UPDATE of a table of 3/4 of it)
   and then pg_prewarm loads for 3 s gave one round at the cap at most (18: none, 0 buffers cleaned):
   the loading backend goes round the pool 20 times a second or more, so it brings the dirty buffers to 0 and
   evicts them, writing them itself, in a fraction of a second, before the background writer's next round
   finds them. On 14 and earlier a backend reads the statistics collector's file, rewritten at most every
   500 ms, so one step between two samples may hold several rounds (``bgwriter_largest_step`` 300 there is
   three rounds, no breach of the cap); from 15 on each round's counts are reported at its end, so a step
   between samples 50 ms apart is one round.
4. **The checkpointer spreads its writes.** After an immediate CHECKPOINT (which also restarts the
   checkpoint timer, so no timed checkpoint falls in the step) 1,000 buffers are dirtied and a spread
   checkpoint is requested and waited for (``pg_backup_start(.., false)`` on 15+,
   ``pg_start_backup(.., false, false)`` before: a checkpoint without CHECKPOINT_IMMEDIATE): it should take
   about checkpoint_completion_target x checkpoint_timeout (6 s): 5.4 to 6.1 s in trials on 12, 14 and 18.
   The writes may end up to a second early, as the checkpointer's schedule counts from ``ckpt_start_time``,
   the whole second (time(NULL)) in which the checkpoint began; the request, the WAL switch and the fsyncs
   add a little. The same again with CHECKPOINT (immediate): a few milliseconds.
5. **Resizing needs a restart.** shared_buffers is a postmaster setting. ALTER SYSTEM with the running
   size and a reload: no ``pending_restart`` (the control); with twice the size and a reload: still 16 MB,
   and ``pending_restart``. ALTER SYSTEM RESET and a reload leave postgresql.auto.conf as found, but
   ``pending_restart`` stays on (``resize_reset_pending``): postgresql.conf holds initdb's
   ``shared_buffers = 128MB``, and the lab's ``-c shared_buffers=16MB`` outranks both files, so at a reload
   the file's value differs from the running one. A restart (the chapter's before each run) clears it and
   starts with 16 MB again.

What this relies on in PostgreSQL's source (12 to 18, the same in each unless said):

* freelist.c, StrategyGetBuffer: a buffer from the free list first (after a restart every buffer is on it,
  in buffer order; StrategyInitialize puts the hand at 0); else the clock sweep (ClockSweepTick, in buffer
  order): each unpinned buffer it passes with a usage count above 0 loses 1, the first at 0 is the victim.
  Each allocation counts in numBufferAllocs, which the background writer reads (StrategySyncStart) and
  reports as buffers_alloc: that counter moves once a background-writer round, not at each allocation.
* bufmgr.c, PinBuffer: a pin without a strategy raises the usage count by one up to BM_MAX_USAGE_COUNT (5);
  a page read in enters at 1 (BufferAlloc, GetVictimBuffer from 16 on). pg_prewarm's 'buffer' mode reads
  with ReadBufferExtended and no strategy (through a read stream from 17 on, also without one).
* heapam.c, initscan: a sequential scan takes the BAS_BULKREAD ring only for a table over NBuffers / 4 pages.
* freelist.c, GetAccessStrategy: BAS_BULKWRITE asks 16 MB, BAS_VACUUM 256 kB (12 to 15), capped at
  NBuffers / 8; from 16 on VACUUM sizes its ring from vacuum_buffer_usage_limit (vacuum.c), through
  GetAccessStrategyWithSize, capped at NBuffers / 8 as well. COPY FROM takes a BulkInsertState
  (GetBulkInsertState: BAS_BULKWRITE); INSERT ... SELECT takes none. A ring reuses its own buffer when it is
  unpinned at usage count 1 or less (GetBufferFromRing).
* bufmgr.c, BgBufferSync: one round scans ahead of the hand and writes (SyncOneBuffer with
  skip_recently_used: only unpinned dirty buffers at usage count 0) until ``++num_written >=
  bgwriter_lru_maxpages``, then ``maxwritten_clean++`` and the round ends; rounds are bgwriter_delay apart
  (bgwriter.c), each reported at its end.
* checkpointer.c, CheckpointWriteDelay: after each buffer a checkpoint without CHECKPOINT_IMMEDIATE writes,
  sleep 100 ms while IsCheckpointOnSchedule(progress): progress x checkpoint_completion_target against the
  time since ckpt_start_time as a fraction of checkpoint_timeout (and the WAL written against max_wal_size).
* guc.c, set_config_option: a PGC_POSTMASTER setting read again at a reload (PGC_SIGHUP) with a value
  other than the running one keeps the running one and gets GUC_PENDING_RESTART, whatever source set it.

The counters read here lag: pg_stat_force_next_flush (15+) flushes only the calling backend's counts, and
buffers_alloc, buffers_clean and the checkpointer's counts are the background processes'. So a reading
before or after an action waits until the counter is at least what the action must have added and has not
moved for two background-writer rounds (15+), or 1.2 s on 14 and earlier, whose collector's file a backend
may see up to 500 ms old. Step 3's last reading waits for nothing: its bound counts the rounds up to it.
"""

from __future__ import annotations

import threading
import time
from contextlib import closing
from functools import partial

from dbexp.servers.sql import query

SETTINGS = {"shared_buffers": "16MB", "checkpoint_timeout": "30s", "checkpoint_completion_target": "0.2"}

HOT, BIG, COPIED, INSERTED, CKPT = "sbm_hot", "sbm_big", "sbm_copy", "sbm_insert", "sbm_ckpt"
TABLES = (HOT, BIG, COPIED, INSERTED, CKPT)
PAD = 1000  # bytes of a row's text: with fillfactor 10 a page takes one row, so rows = pages
HOT_PAGES = 256  # well under NBuffers / 4 (512): read without a ring
HOT_READS = 6  # the first read brings a page in at count 1, five more raise it to the cap
MAX_USAGE = 5  # BM_MAX_USAGE_COUNT
ANCHOR = 8  # B's first pages loaded after A's reads: where they land is where the hand is
CHUNK = 128  # pages of B loaded between two looks: far fewer than a lap evicts, so at most one whole lap between
BIG_LOADS = 2
COPY_MB = 40
BULKWRITE_KB = 16 * 1024  # GetAccessStrategy(BAS_BULKWRITE)
VACUUM_RING_KB = 256  # GetAccessStrategy(BAS_VACUUM), 12 to 15
BGWRITER_WINDOW_S = 3.0
SAMPLE_S = 0.05
CKPT_PAGES = 1000
RELOAD_WAIT_S = 5.0
STATS_TIMEOUT_S = 15.0


def _create(conn, table: str, rows: int) -> None:
    """A table of ``rows`` pages, one 1 kB row each, that autovacuum leaves alone."""
    query(conn, f"CREATE TABLE {table} (id int NOT NULL, pad text NOT NULL) "
                "WITH (fillfactor = 10, autovacuum_enabled = false)")
    query(conn, f"INSERT INTO {table} SELECT g, repeat('x', {PAD}) FROM generate_series(1, {rows}) g")


def _pages(conn, table: str) -> int:
    return int(query(conn, "SELECT pg_relation_size(%s::regclass) / current_setting('block_size')::int",
                     (table,))[0][0])


def _setting(conn, name: str) -> tuple[str, str | None]:
    rows = query(conn, "SELECT setting, unit FROM pg_settings WHERE name = %s", (name,))
    if not rows:
        raise RuntimeError(f"pg_settings has no {name}")
    return rows[0]


def _number(conn, name: str) -> float:
    return float(_setting(conn, name)[0])


def _resident(conn, table: str, dirty_only: bool = False) -> int:
    """``table``'s main-fork pages in shared buffers (only the dirty ones: ``dirty_only``)."""
    return int(query(conn, "SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode(%s::regclass) "
                           "AND relforknumber = 0 AND (isdirty OR NOT %s) AND reldatabase = (SELECT oid "
                           "FROM pg_database WHERE datname = current_database())", (table, dirty_only))[0][0])


def _quiet_s(version: int) -> float:
    """How long a background process's counter must stand still to be current: two background-writer
    rounds (200 ms apart) from 15 on; on 14 and earlier also the collector's file, up to 500 ms old, and
    the collector's own delay in taking the processes' messages."""
    return 1.2 if version < 150000 else 0.5


def _settled(conn, sql: str, version: int, floor: float = 0.0) -> float:
    """A statistics counter once it is at least ``floor`` and has not moved for ``_quiet_s``."""
    quiet = _quiet_s(version)
    deadline = time.monotonic() + STATS_TIMEOUT_S
    last, since = None, time.monotonic()
    while True:
        value = float(query(conn, sql)[0][0])
        now = time.monotonic()
        if value != last:
            last, since = value, now
        elif value >= floor and now - since >= quiet:
            return value
        if now > deadline:
            raise RuntimeError(f"{sql!r} did not settle at or above {floor:g} within {STATS_TIMEOUT_S:g} s "
                               f"(last {last:g})")
        time.sleep(SAMPLE_S)


def observe(server, database: str = "sbtest") -> dict[str, tuple[float, str]]:
    """The five steps on ``server`` (started with SETTINGS): {measurement: (value, unit)}. Restarts the
    server twice (steps 1 and 2)."""
    m: dict[str, tuple[float, str]] = {}
    with closing(server.connect(database, autocommit=True)) as conn:
        version = int(query(conn, "SHOW server_version_num")[0][0])
        for ext in ("pg_buffercache", "pg_prewarm"):
            query(conn, f"CREATE EXTENSION IF NOT EXISTS {ext}")
        for table in TABLES:
            query(conn, f"DROP TABLE IF EXISTS {table}")
        nbuffers = int(_number(conn, "shared_buffers"))  # in blocks
        big_pages = nbuffers * 3 // 2
        _create(conn, BIG, big_pages)
        _create(conn, HOT, HOT_PAGES)
        exts = query(conn, "SELECT count(*) FROM pg_extension WHERE extname IN ('pg_buffercache', 'pg_prewarm')")[0][0]
        made = _pages(conn, BIG) == big_pages and _pages(conn, HOT) == HOT_PAGES
        others = query(conn, "SELECT count(*) FROM pg_class WHERE relname = ANY(%s)", (list(TABLES[2:]),))[0][0]
        m["precondition_ok"] = (float(exts == 2 and made and others == 0), "bool")
        m["pool_buffers"] = (float(nbuffers), "buffers")
    m["sweep_restart_s"] = (server.restart(), "s")
    with closing(server.connect(database, autocommit=True)) as conn:
        _sweep(conn, m, nbuffers, big_pages, version)
        _rings(conn, m, nbuffers)
    m["vacuum_restart_s"] = (server.restart(), "s")
    with closing(server.connect(database, autocommit=True)) as conn:
        _vacuum(conn, m, nbuffers, version)
        _bgwriter(server, conn, m, version, database)
        _checkpoints(conn, m, version)
        _resize(conn, m)
    return m


# --- 1. the clock sweep ---------------------------------------------------------------------------
class _Pool:
    """Where A's and B's pages sit in shared buffers, read in one pass over pg_buffercache."""

    def __init__(self, conn):
        self.conn = conn
        self.db = query(conn, "SELECT oid FROM pg_database WHERE datname = current_database()")[0][0]
        self.hot_node = query(conn, "SELECT pg_relation_filenode(%s::regclass)", (HOT,))[0][0]
        self.big_node = query(conn, "SELECT pg_relation_filenode(%s::regclass)", (BIG,))[0][0]

    def look(self) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
        """A's pages and B's, each {block: (buffer, usage count)}; buffers numbered from 0, as the hand
        counts them (pg_buffercache's bufferid counts from 1)."""
        hot: dict[int, tuple[int, int]] = {}
        big: dict[int, tuple[int, int]] = {}
        for node, buffer, block, usage in query(
                self.conn, "SELECT relfilenode, bufferid, relblocknumber, usagecount FROM pg_buffercache "
                           "WHERE reldatabase = %s AND relforknumber = 0 AND relfilenode IN (%s, %s)",
                (self.db, self.hot_node, self.big_node)):
            (hot if node == self.hot_node else big)[int(block)] = (int(buffer) - 1, int(usage))
        return hot, big


def _usage(hot: dict[int, tuple[int, int]]) -> list[int]:
    return [usage for _, usage in hot.values()]


def _on_path(buffer: int, hand: int, span: int, nbuffers: int) -> bool:
    """Whether the hand, going from ``hand`` to ``hand + span`` (circular; span -1: it did not move), passed
    ``buffer``."""
    return (buffer - hand) % nbuffers <= span


def _full_laps(before: dict, after: dict, first: int, last: int, path) -> int:
    """Whole laps the hand made between two looks besides its ``path`` to the latest victim, read from B's
    pages off that path: an allocation that finds every buffer ahead above 0 goes all the way round,
    lowering each (the rule after the restart's empty pool, when a lap's new pages all sit at count 1).
    B's pages the chunk itself read (a hit raises a count) and those at 0 (nothing to lower) say nothing;
    the others all drop in such a lap, while a stray allocation by another process (a catalog page)
    lowers only a few."""
    told = dropped = 0
    for block, (buffer, usage) in before.items():
        now = after.get(block)
        if first <= block <= last or usage == 0 or path(buffer) or now is None or now[0] != buffer:
            continue
        told += 1
        drop = usage - now[1]
        if drop > 1:
            raise RuntimeError(f"B's page {block} lost {drop} usage counts between two looks: the sweep went "
                               f"round more than once within {CHUNK} pages")
        dropped += drop > 0
    return int(told > 0 and dropped * 2 >= told)


class _HotPages:
    """A's pages that started at the cap, each with its buffer and the hand's passes over it, checked at
    each look against what the passes predict: 5 minus the passes, gone on the pass after the fifth."""

    def __init__(self, hot: dict[int, tuple[int, int]]):
        self.where = {block: buffer for block, (buffer, count) in hot.items() if count == MAX_USAGE}
        self.passes = dict.fromkeys(self.where, 0)
        self.last_seen = dict.fromkeys(self.where, MAX_USAGE)
        self.evicted_at: dict[int, int] = {}  # page: its count when last seen resident
        self.matched = self.checked = self.largest_drop = self.spread = 0
        self.hot = hot

    def look(self, hot: dict[int, tuple[int, int]], path, whole: int) -> None:
        for block, buffer in self.where.items():
            self.passes[block] += path(buffer) + whole
            seen = hot.get(block)
            if seen is not None and seen[0] != buffer:
                raise RuntimeError(f"A's page {block} moved from buffer {buffer} to {seen[0]}")
            self.checked += 1
            if self.passes[block] > MAX_USAGE:  # the pass that found it at 0 took its buffer
                self.matched += seen is None
            else:
                self.matched += seen is not None and seen[1] == MAX_USAGE - self.passes[block]
            if seen is not None:
                if block in self.hot:
                    self.largest_drop = max(self.largest_drop, self.hot[block][1] - seen[1])
                self.last_seen[block] = seen[1]
            elif block not in self.evicted_at:
                self.evicted_at[block] = self.last_seen[block]
        usage = _usage(hot)
        self.spread = max(self.spread, max(usage, default=0) - min(usage, default=0))
        self.hot = hot


def _sweep(conn, m: dict, nbuffers: int, big_pages: int, version: int) -> None:
    pool = _Pool(conn)
    alloc_sql = "SELECT buffers_alloc FROM pg_stat_bgwriter"
    query(conn, f"SELECT pg_prewarm('{BIG}', 'buffer')")  # every free buffer taken: the sweep chooses from now on
    for _ in range(HOT_READS):
        query(conn, f"SELECT count(*) FROM {HOT}")
    alloc_before = _settled(conn, alloc_sql, version)
    # B's first pages are long evicted (the sweep took the oldest first): they land right after A's
    _, big = pool.look()
    if any(block in big for block in range(ANCHOR)):
        raise RuntimeError(f"B's first {ANCHOR} pages were still resident after A's reads")
    query(conn, f"SELECT pg_prewarm('{BIG}', 'buffer', 'main', 0, {ANCHOR - 1})")
    hot, big = pool.look()
    if ANCHOR - 1 not in big:
        raise RuntimeError(f"B's page {ANCHOR - 1}, just loaded, is not resident")
    hand = (big[ANCHOR - 1][0] + 1) % nbuffers
    usage = _usage(hot)
    m["hot_table_pages"] = (float(HOT_PAGES), "pages")
    m["big_table_pages"] = (float(big_pages), "pages")
    m["hot_buffers"] = (float(len(hot)), "buffers")
    m["hot_usage_min_before"] = (float(min(usage, default=0)), "usage count")
    m["hot_usage_mean_before"] = (sum(usage) / len(usage) if usage else 0.0, "usage count")

    pages = _HotPages(hot)
    travelled = counted = laps_whole = 0
    for load in range(BIG_LOADS):
        for first in range(ANCHOR if load == 0 else 0, big_pages, CHUNK):
            last = min(first + CHUNK, big_pages) - 1
            new = [b for b in range(first, last + 1) if b not in big]
            query(conn, f"SELECT pg_prewarm('{BIG}', 'buffer', 'main', {first}, {last})")
            before = big
            hot, big = pool.look()
            counted += len(new)
            span = -1
            if new:
                if new[-1] not in big:
                    raise RuntimeError(f"B's page {new[-1]}, just loaded, is no longer resident")
                victim = big[new[-1]][0]  # the sweep's latest victim: the hand stands just past it
                span = (victim - hand) % nbuffers
            path = partial(_on_path, hand=hand, span=span, nbuffers=nbuffers)
            whole = _full_laps(before, big, first, last, path)
            pages.look(hot, path, whole)
            laps_whole += whole
            travelled += span + 1 + whole * nbuffers
            hand = (hand + span + 1) % nbuffers
        if load == 0:
            usage = _usage(hot)
            m["hot_resident_after"] = (float(len(hot)), "buffers")
            m["hot_usage_max_after"] = (float(max(usage, default=0)), "usage count")
            m["hot_usage_mean_after"] = (sum(usage) / len(usage) if usage else 0.0, "usage count")
            m["hot_passes_after"] = (float(max(pages.passes.values(), default=0)), "passes")
            m["sweep_laps"] = (travelled / nbuffers, "laps")
            m["allocations_first_load"] = (float(counted), "buffers")
    alloc_after = _settled(conn, alloc_sql, version, alloc_before + counted)
    m["allocations"] = (alloc_after - alloc_before, "buffers")
    m["allocations_counted"] = (float(counted), "buffers")  # B's pages the loads brought in (pg_buffercache)
    m["sweep_laps_end"] = (travelled / nbuffers, "laps")
    m["sweep_whole_laps"] = (float(laps_whole), "laps")
    m["hot_resident_end"] = (float(len(hot)), "buffers")
    m["hot_count_matches_passes"] = (pages.matched / pages.checked if pages.checked else 0.0, "share")
    m["hot_largest_drop_per_look"] = (float(pages.largest_drop), "usage count")
    m["hot_usage_spread_max"] = (float(pages.spread), "usage count")
    m["hot_evicted"] = (float(len(pages.evicted_at)), "buffers")
    m["hot_evicted_last_seen_max"] = (float(max(pages.evicted_at.values(), default=-1)), "usage count")


# --- 2. rings ---------------------------------------------------------------------------------------
def _rings(conn, m: dict, nbuffers: int) -> None:
    block_kb = int(_number(conn, "block_size")) // 1024
    rows = COPY_MB * 1024 // block_kb
    query(conn, f"CREATE TABLE {COPIED} (id int NOT NULL, pad text NOT NULL) "
                "WITH (fillfactor = 10, autovacuum_enabled = false)")
    pad = "x" * PAD
    data = "".join(f"{i}\t{pad}\n" for i in range(1, rows + 1))
    with closing(conn.cursor()) as cur:
        with cur.copy(f"COPY {COPIED} (id, pad) FROM STDIN") as copy:
            copy.write(data)
    m["copy_table_pages"] = (float(_pages(conn, COPIED)), "pages")
    m["copy_resident"] = (float(_resident(conn, COPIED)), "buffers")
    m["copy_ring_buffers"] = (float(min(nbuffers // 8, BULKWRITE_KB // block_kb)), "buffers")
    _create(conn, INSERTED, rows)  # the same rows, no ring
    m["insert_table_pages"] = (float(_pages(conn, INSERTED)), "pages")
    m["insert_resident"] = (float(_resident(conn, INSERTED)), "buffers")


def _vacuum(conn, m: dict, nbuffers: int, version: int) -> None:
    block_kb = int(_number(conn, "block_size")) // 1024
    if version >= 160000:
        setting, unit = _setting(conn, "vacuum_buffer_usage_limit")
        if unit != "kB":
            raise RuntimeError(f"vacuum_buffer_usage_limit in {unit!r}, not kB")
        ring_kb = int(setting)  # 0 would mean no ring at all
    else:
        ring_kb = VACUUM_RING_KB
    query(conn, f"VACUUM {COPIED}")
    m["vacuum_table_pages"] = (float(_pages(conn, COPIED)), "pages")
    m["vacuum_resident"] = (float(_resident(conn, COPIED)), "buffers")
    m["vacuum_ring_buffers"] = (float(min(nbuffers // 8, ring_kb // block_kb)), "buffers")


# --- 3. the background writer ---------------------------------------------------------------------
def _bgwriter(server, conn, m: dict, version: int, database: str) -> None:
    delay_s = _number(conn, "bgwriter_delay") / 1000  # ms
    query(conn, "CHECKPOINT")  # a clean pool to start from (and the checkpoint timer restarts)
    stats = "SELECT buffers_clean, maxwritten_clean FROM pg_stat_bgwriter"
    clean0 = _settled(conn, "SELECT buffers_clean FROM pg_stat_bgwriter", version)
    rounds0 = float(query(conn, stats)[0][1])

    stop = threading.Event()
    failed: list[BaseException] = []
    passes = [0]

    def update() -> None:
        try:
            with closing(server.connect(database, autocommit=True)) as writer:
                while not stop.is_set():
                    query(writer, f"UPDATE {BIG} SET id = id")
                    passes[0] += 1
        except BaseException as e:  # handed to the main thread, raised there
            failed.append(e)

    samples: list[tuple[float, float, float]] = []  # (seconds since the start, buffers_clean, maxwritten_clean)
    writer = threading.Thread(target=update, name="sbm-writer", daemon=True)
    start = time.monotonic()
    writer.start()
    try:
        while time.monotonic() - start < BGWRITER_WINDOW_S and not failed:
            clean, rounds = query(conn, stats)[0]
            samples.append((time.monotonic() - start, float(clean), float(rounds)))
            time.sleep(SAMPLE_S)
    finally:
        stop.set()
        writer.join()
    if failed:
        raise RuntimeError(f"updating {BIG} during the background writer's window failed: {failed[0]}") from failed[0]
    # the last sample counts every round reported since the start: at most elapsed / delay + 1 of them
    # (one may have begun before the start); no settling wait, which would add rounds, not a bound
    elapsed, clean1, rounds1 = samples[-1]
    steps = [(b[1] - a[1], b[0] - a[0]) for a, b in zip([(0.0, clean0, rounds0)] + samples, samples)]
    m["bgwriter_clean"] = (clean1 - clean0, "buffers")
    m["bgwriter_maxwritten"] = (rounds1 - rounds0, "rounds")
    m["bgwriter_elapsed_s"] = (elapsed, "s")
    m["bgwriter_delay_s"] = (delay_s, "s")
    m["bgwriter_rounds_max"] = (elapsed / delay_s + 1, "rounds")
    m["bgwriter_lru_maxpages"] = (_number(conn, "bgwriter_lru_maxpages"), "buffers")
    m["bgwriter_largest_step"] = (max(step for step, _ in steps), "buffers")
    m["bgwriter_largest_step_gap_s"] = (max(steps)[1], "s")  # the time between the two samples of that step
    m["bgwriter_samples"] = (float(len(samples)), "samples")
    m["bgwriter_update_passes"] = (float(passes[0]), "passes")


# --- 4. checkpoints -------------------------------------------------------------------------------
def _checkpoints(conn, m: dict, version: int) -> None:
    written = ("SELECT buffers_written FROM pg_stat_checkpointer" if version >= 170000
               else "SELECT buffers_checkpoint FROM pg_stat_bgwriter")
    _create(conn, CKPT, CKPT_PAGES)
    query(conn, "CHECKPOINT")  # immediate; the timer restarts, so no timed checkpoint comes within the step
    query(conn, f"UPDATE {CKPT} SET id = id")
    dirty = _resident(conn, CKPT, dirty_only=True)
    m["spread_dirty"] = (float(dirty), "buffers")
    before = _settled(conn, written, version)
    t = time.monotonic()
    if version >= 150000:
        query(conn, "SELECT pg_backup_start('dbexp', false)")  # fast = false: a spread checkpoint, waited for
        m["spread_s"] = (time.monotonic() - t, "s")
        query(conn, "SELECT lsn FROM pg_backup_stop()")
    else:
        query(conn, "SELECT pg_start_backup('dbexp', false, false)")  # not fast, not exclusive
        m["spread_s"] = (time.monotonic() - t, "s")
        query(conn, "SELECT lsn FROM pg_stop_backup(false)")
    after = _settled(conn, written, version, before + dirty)
    m["spread_window_s"] = (_number(conn, "checkpoint_completion_target") * _number(conn, "checkpoint_timeout"), "s")
    m["spread_buffers"] = (after - before, "buffers")

    query(conn, f"UPDATE {CKPT} SET id = id")
    dirty = _resident(conn, CKPT, dirty_only=True)
    m["immediate_dirty"] = (float(dirty), "buffers")
    t = time.monotonic()
    query(conn, "CHECKPOINT")
    m["immediate_s"] = (time.monotonic() - t, "s")
    m["immediate_buffers"] = (_settled(conn, written, version, after + dirty) - after, "buffers")


# --- 5. resizing ------------------------------------------------------------------------------------
def _reload(conn) -> None:
    """pg_reload_conf(), and wait until this backend has read the files again (pg_conf_load_time is the
    session's own: the signal reaches it a moment after the function returns)."""
    loaded = query(conn, "SELECT pg_conf_load_time()")[0][0]
    query(conn, "SELECT pg_reload_conf()")
    deadline = time.monotonic() + RELOAD_WAIT_S
    while query(conn, "SELECT pg_conf_load_time() > %s", (loaded,))[0][0] is not True:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the session did not read the configuration again within {RELOAD_WAIT_S:g} s "
                               "of a reload")
        time.sleep(SAMPLE_S)


def _pending(conn) -> float:
    return float(query(conn, "SELECT pending_restart FROM pg_settings WHERE name = 'shared_buffers'")[0][0])


def _resize(conn, m: dict) -> None:
    context = query(conn, "SELECT context FROM pg_settings WHERE name = 'shared_buffers'")[0][0]
    m["shared_buffers_context_postmaster"] = (float(context == "postmaster"), "bool")
    block = _number(conn, "block_size")
    running_mb = _number(conn, "shared_buffers") * block / 2 ** 20
    try:
        # the control: the file names the running size, so nothing waits for a restart
        query(conn, f"ALTER SYSTEM SET shared_buffers = '{running_mb:.0f}MB'")
        _reload(conn)
        m["resize_pending_same_size"] = (_pending(conn), "bool")
        query(conn, f"ALTER SYSTEM SET shared_buffers = '{2 * running_mb:.0f}MB'")
        _reload(conn)
        m["resize_pending_restart"] = (_pending(conn), "bool")
        m["shared_buffers_after_reload_mb"] = (_number(conn, "shared_buffers") * block / 2 ** 20, "MB")
    finally:
        query(conn, "ALTER SYSTEM RESET shared_buffers")
        _reload(conn)
    m["resize_reset_pending"] = (_pending(conn), "bool")
