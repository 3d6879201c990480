"""PostgreSQL: arguments, settings, connections, and what the chapters ask of it."""

from __future__ import annotations

import os
import pwd
import re
import signal
import subprocess
import time
from pathlib import Path

import psycopg

from dbexp.errors import DbexpError
from dbexp.servers import sql
from dbexp.servers.flavor import Flavor

BARE_USER = "dbexp"  # PostgreSQL refuses to run as root
STAT_VIEWS = ("pg_stat_bgwriter", "pg_stat_wal", "pg_stat_checkpointer")  # whichever this version has
# Page checksums in every data directory: initdb's default from 18 on, off before; InnoDB always
# checksums its pages. An initdb option, not a setting: every PostgreSQL server gets it.
INITDB_ARGS = ("--data-checksums",)


class Postgres(Flavor):
    name = "postgres"
    title = "PostgreSQL"
    ready_line = "database system is ready to accept connections"
    stop_signal = signal.SIGINT  # fast shutdown (SIGTERM would wait for clients)
    supports_bare = True
    base_version = "12"
    version_store = "heap"
    statement_clock = "explain_analyze"  # the executor's time and buffers, from EXPLAIN ANALYZE
    counter_series = ("xact_commit", "tup_returned", "tup_fetched", "tup_updated", "blks_read", "blks_hit",
                      "numbackends", "wal_bytes", "buffers_alloc")
    gauges = frozenset({"numbackends"})
    waits_cumulative = False  # wait events are a state of each backend now, sampled
    performance_settings = (
        # durability, WAL, logging, instrumentation
        "fsync", "synchronous_commit", "full_page_writes", "wal_level", "wal_sync_method", "wal_compression",
        "wal_log_hints", "data_checksums", "commit_delay", "commit_siblings", "wal_buffers", "wal_writer_delay",
        "wal_writer_flush_after", "wal_segment_size", "max_wal_size", "min_wal_size", "checkpoint_timeout",
        "checkpoint_completion_target", "checkpoint_flush_after", "log_checkpoints", "log_autovacuum_min_duration",
        "log_min_duration_statement", "log_statement", "track_io_timing", "track_wal_io_timing",
        "track_commit_timestamp", "track_activities", "track_counts", "compute_query_id", "shared_preload_libraries",
        # memory
        "shared_buffers", "huge_pages", "work_mem", "hash_mem_multiplier", "maintenance_work_mem", "temp_buffers",
        "effective_cache_size", "block_size",
        # I/O and background writing
        "io_method", "io_workers", "io_combine_limit", "effective_io_concurrency", "maintenance_io_concurrency",
        "bgwriter_delay", "bgwriter_lru_maxpages", "bgwriter_lru_multiplier", "bgwriter_flush_after",
        "backend_flush_after",
        # planning and execution
        "jit", "jit_above_cost", "plan_cache_mode", "random_page_cost", "seq_page_cost",
        "default_statistics_target", "max_parallel_workers_per_gather", "max_worker_processes",
        # vacuum
        "autovacuum", "autovacuum_naptime", "autovacuum_max_workers", "autovacuum_vacuum_scale_factor",
        "autovacuum_vacuum_insert_scale_factor", "autovacuum_vacuum_cost_delay", "autovacuum_vacuum_cost_limit",
        "vacuum_cost_page_miss", "vacuum_buffer_usage_limit",
        # sessions and isolation
        "max_connections", "default_transaction_isolation",
    )

    # --- starting ---------------------------------------------------------------------------
    def command(self, port: int, settings: dict[str, str]) -> list[str]:
        args = ["postgres", "-c", f"port={port}", "-c", "listen_addresses=127.0.0.1"]
        for k, v in settings.items():
            args += ["-c", f"{k}={v}"]
        return args

    def environment(self) -> dict[str, str]:
        return {"POSTGRES_HOST_AUTH_METHOD": "trust", "POSTGRES_PASSWORD": "",
                "POSTGRES_INITDB_ARGS": " ".join(INITDB_ARGS)}

    def options_probe(self):
        return ["postgres"], "postgres", ["--describe-config"]

    def parse_options(self, text: str) -> set[str]:
        return {self.normalize(line.split("\t")[0]) for line in text.splitlines() if "\t" in line}

    @staticmethod
    def normalize(name: str) -> str:
        return name.strip().lower()

    def bare_command(self, build, port, settings, home: Path, data: Path, run: Path) -> list[str]:
        """initdb as a non-root user with the image's locale where this host has it, then postgres."""
        uid, gid = _ensure_user()
        for path in (data, run):
            os.chown(path, uid, gid)
        os.chmod(data, 0o700)
        env = dict(os.environ, LANG=_locale())
        proc = subprocess.run(_as_user(uid, gid) + [str(home / "bin" / "initdb"), "-D", str(data), "-U", "postgres",
                                                    "--auth=trust", "-E", "UTF8", "--no-sync", *INITDB_ARGS],
                              capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise DbexpError(f"bare initdb failed: {(proc.stderr or proc.stdout).strip()[-300:]}")
        return (_as_user(uid, gid) + [str(home / "bin" / "postgres"), "-D", str(data), "-k", str(run)]
                + self.command(port, settings)[1:])

    # --- talking to it ------------------------------------------------------------------------
    def connect(self, port: int, database: str | None = None, autocommit: bool = True):
        return psycopg.connect(host="127.0.0.1", port=port, user="postgres",
                               dbname=database or "postgres", autocommit=autocommit, connect_timeout=5,
                               sslmode="disable")

    def create_database(self, conn, name: str) -> None:
        if not self.query(conn, "SELECT 1 FROM pg_database WHERE datname = %s", (name,)):
            self.query(conn, f'CREATE DATABASE "{name}"')

    def effective_settings(self, conn) -> dict[str, str]:
        rows = self.query(conn, "SELECT name, setting || COALESCE(' ' || unit, '') FROM pg_settings")
        return {k: str(v) for k, v in rows}

    def sysbench_args(self, port: int, database: str) -> list[str]:
        return ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", f"--pgsql-port={port}",
                "--pgsql-user=postgres", "--pgsql-password=", f"--pgsql-db={database}"]

    def version_sql(self) -> str:
        return "SHOW server_version"

    def connect_hint(self, port: int) -> str:
        return f"psql -h 127.0.0.1 -p {port} -U postgres"

    # --- what the lab asks ------------------------------------------------------------------------
    def settle(self, conn) -> bool:
        """VACUUM (visibility map, hint bits) and a checkpoint, in the connection's database (both
        finish before they return: never timed out)."""
        self.query(conn, "VACUUM (ANALYZE)")
        self.query(conn, "CHECKPOINT")
        return True

    def counters(self, conn, database: str) -> dict[tuple[str, str], float]:
        out = sql.column_rows(conn, "SELECT * FROM pg_stat_database WHERE datname = %s", "pg_stat_database",
                              (database,), skip=("datid",))
        present = {r[0] for r in self.query(conn, "SELECT viewname FROM pg_views WHERE viewname = ANY(%s)",
                                            (list(STAT_VIEWS),))}
        for view in STAT_VIEWS:
            if view in present:
                out.update(sql.column_rows(conn, f"SELECT * FROM {view}", view))
        return out

    def observe_sessions(self, conn) -> dict[str, int]:
        trx = self.query(conn, "SELECT COUNT(*) FROM pg_stat_activity WHERE backend_xid IS NOT NULL "
                               "AND state = 'idle in transaction'")[0][0]
        sessions = self.query(conn, "SELECT COUNT(*) FROM pg_stat_activity "
                                    "WHERE backend_type = 'client backend'")[0][0]
        return {"open_write_trx": int(trx), "sessions": int(sessions)}

    executables = ("postgres",)
    snapshot_symbol = "GetSnapshotData"  # every snapshot a backend takes (or, 14+, reuses)
    prepared_one_per_session = False  # after PREPARE TRANSACTION the session is free again

    def prepared_settings(self, n: int) -> dict[str, str]:
        return {"max_prepared_transactions": str(n + 10)}  # 0 by default: none allowed

    def prepare_transaction(self, conn, xid: str, statement: str) -> None:
        for stmt in ("BEGIN", statement, f"PREPARE TRANSACTION '{xid}'"):
            self.query(conn, stmt)

    def rollback_prepared(self, conn, xid: str) -> None:
        self.query(conn, f"ROLLBACK PREPARED '{xid}'")

    def prepared_xids(self, conn) -> list[str]:
        return [r[0] for r in self.query(conn, "SELECT gid FROM pg_prepared_xacts")]

    # --- what chapters ask ----------------------------------------------------------------------
    def comparable_settings(self) -> dict[str, str]:
        return {
            # Data and WAL reach the disk, and a commit waits for its WAL flush: every version's
            # durable default. relaxed_commit_settings() overrides synchronous_commit.
            "fsync": "on",
            "synchronous_commit": "on",
            # Torn-page protection (InnoDB's doublewrite counterpart): the default.
            "full_page_writes": "on",
            # The default since 10, what a server that may have a standby runs with. minimal would
            # need max_wal_senders=0 and skip WAL for bulk loads in the same transaction.
            "wal_level": "replica",
            # How a commit flushes WAL: Linux's default in every version, named.
            "wal_sync_method": "fdatasync",
            # WAL full-page images uncompressed: the default; 15 made it an enum, where off still holds.
            "wal_compression": "off",
            # No wait for other commits to share a flush (commit_delay 0 is the default).
            "commit_delay": "0",
            # Instrumentation off by default and kept off: timing every read costs a clock call,
            # a commit timestamp costs WAL at every commit.
            "track_io_timing": "off",
            "track_commit_timestamp": "off",
            # One log line per checkpoint: the default from 15 on (off before); the log then says
            # when a checkpoint fell into a run.
            "log_checkpoints": "on",
            # No autovacuum log lines (the default before 15; 15+ log runs over 10 min): chapters read
            # autovacuum from the statistics views.
            "log_autovacuum_min_duration": "-1",
        }

    def snapshot_waits(self, conn) -> dict[str, float]:
        """What active client backends wait on now ('CPU': no wait event), as counts of backends."""
        rows = self.query(conn, "SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU'), count(*) "
                                "FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' "
                                "AND pid <> pg_backend_pid() GROUP BY 1")
        return {name: float(n) for name, n in rows}

    def relaxed_commit_settings(self) -> dict[str, str]:
        return {"synchronous_commit": "off"}

    def prompt_gc_settings(self) -> dict[str, str]:
        # autovacuum reacts within a second, so reclaim time is not the default 60 s nap
        return {"autovacuum_naptime": "1"}

    def table_options(self, fillfactor: int | None) -> str:
        return f" WITH (fillfactor = {fillfactor})" if fillfactor else ""

    def analyze(self, conn, table: str) -> None:
        self.query(conn, f"VACUUM (ANALYZE) {table}")

    def pin_index_access(self, conn) -> None:
        self.query(conn, "SET enable_seqscan = off")
        self.query(conn, "SET enable_bitmapscan = off")

    def begin_snapshot(self, conn) -> None:
        self.query(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ")

    def garbage(self, conn, table: str) -> dict[str, float]:
        self.query(conn, "SELECT pg_stat_clear_snapshot()")
        row = self.query(conn, "SELECT n_dead_tup, n_live_tup, COALESCE(autovacuum_count, 0), "
                               "COALESCE(vacuum_count, 0), pg_relation_size(relid) FROM pg_stat_user_tables "
                               "WHERE relname = %s", (table,))
        dead, live, av, v, size = row[0] if row else (0, 0, 0, 0, 0)
        return {"n_dead_tup": float(dead), "n_live_tup": float(live), "autovacuum_count": float(av),
                "vacuum_count": float(v), "relation_bytes": float(size)}

    def garbage_settled(self, g: dict[str, float]) -> bool:
        return True  # dead tuples are counted per table, and each point's table is new

    def reclaimed(self, g, before, peak) -> bool:
        """A vacuum has run on the table since the point began (autovacuum, or the lab's own while it
        asked what was held) and no dead tuple is left."""
        runs = g["autovacuum_count"] + g.get("vacuum_count", 0.0)
        return g["n_dead_tup"] == 0 and runs > before["autovacuum_count"] + before.get("vacuum_count", 0.0)

    def held_versions(self, conn, table: str, hold_s: float) -> dict[str, tuple[float, str]]:
        """A VACUUM now: the dead tuples it removed and those it found dead but could not remove yet
        (``hold_s`` is not needed: VACUUM says so at once)."""
        said: list[str] = []
        conn.add_notice_handler(lambda d: said.append(f"{d.message_primary or ''} {d.message_detail or ''}"))
        self.query(conn, f"VACUUM (VERBOSE) {table}")
        got = parse_vacuum_verbose(" ".join(said))
        return {"held_dead_tuples": (got["not_removable"], "dead tuples"),
                "vacuum_removed": (got["removed"], "dead tuples")}

    def version_chain(self, conn_snapshot, conn, table: str, row_id: int) -> list[dict]:
        """The heap tuples of one row on its page, followed from the version ``conn_snapshot`` sees
        along t_ctid (pageinspect's heap_page_items)."""
        ctid = self.query(conn_snapshot, f"SELECT ctid::text FROM {table} WHERE id = %s", (row_id,))[0][0]
        block, lp = (int(x) for x in ctid.strip("()").split(","))
        self.query(conn, "CREATE EXTENSION IF NOT EXISTS pageinspect")
        rows = self.query(conn, "SELECT lp, lp_flags, t_xmin::text::bigint, t_xmax::text::bigint, t_ctid::text, "
                                "t_infomask2 FROM heap_page_items(get_raw_page(%s, %s))", (table, block))
        items = {r[0]: r for r in rows}
        chain, seen, cur = [], set(), lp
        while cur in items and cur not in seen:
            seen.add(cur)
            lp_, flags, xmin, xmax, tctid, infomask2 = items[cur]
            nb, nl = (int(x) for x in (tctid or "(0,0)").strip("()").split(","))
            chain.append({"lp": lp_, "lp_flags": flags, "t_xmin": xmin, "t_xmax": xmax, "ctid_block": nb,
                          "ctid_lp": nl, "hot_updated": int(bool((infomask2 or 0) & 0x4000)),
                          "heap_only": int(bool((infomask2 or 0) & 0x8000)), "block": block})
            if nb != block or nl == cur:
                break  # the chain leaves the page (not HOT) or ends
            cur = nl
        return chain

    # --- the buffer pool under a scan ---------------------------------------------------------
    scan_kinds = ("seq", "index", "update")
    page_bytes = 8192
    reads_through_page_cache = True

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
        raise ValueError(f"bad scan kind {kind!r} for {self.title}: valid are {', '.join(self.scan_kinds)}")

    def session_id(self, conn) -> int:
        return int(self.query(conn, "SELECT pg_backend_pid()")[0][0])

    def cancel_sql(self, session: int) -> str:
        return f"SELECT pg_cancel_backend({int(session)})"

    def is_cancel(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.errors.QueryCanceled)

    def prewarm(self, conn, table: str) -> float:
        return float(sum(self.query(conn, "SELECT pg_prewarm(%s)", (rel,))[0][0]
                         for rel in self._key_relations(table)))

    # --- the commit path ----------------------------------------------------------------------
    def commit_settings(self, binlog: bool) -> dict[str, str]:
        return {"synchronous_commit": "on", "fsync": "on"}

    def group_settings(self, sync_log: bool, delay_us: int) -> dict[str, str]:
        # commit_delay: a backend about to flush waits this long for others to join its flush,
        # when at least commit_siblings other transactions are open (5, the default, kept)
        return {"commit_delay": str(int(delay_us)), "commit_siblings": "5"}

    # the WAL flush a commit waits on (exported by every version's binary): XLogFlush(record), whose
    # loop waits for WALWriteLock in LWLockAcquireOrWait (false: woken when it was released, without
    # it, to look again whether its record is flushed yet), and issue_xlog_fsync, the sync itself
    commit_symbols = {"flush": "XLogFlush", "wait": "LWLockAcquireOrWait", "sync": "issue_xlog_fsync"}

    def set_global(self, conn, name: str, value: str) -> None:
        """ALTER SYSTEM and a reload: new sessions and, at their next command, the others use it."""
        self.query(conn, f"ALTER SYSTEM SET {name} = {int(value)}")
        self.query(conn, "SELECT pg_reload_conf()")

    def commit_counters(self, conn) -> dict[str, float]:
        self.query(conn, "SELECT pg_stat_clear_snapshot()")
        out = {}
        views = {r[0] for r in self.query(conn, "SELECT viewname FROM pg_views WHERE viewname IN "
                                                "('pg_stat_wal', 'pg_stat_io')")}
        cols = {r[0] for r in self.query(conn, "SELECT attname FROM pg_attribute WHERE attrelid = "
                                               "'pg_catalog.pg_stat_wal'::regclass")} if "pg_stat_wal" in views else set()
        if "wal_sync" in cols:  # 14 to 17
            (syncs, wbytes), = self.query(conn, "SELECT wal_sync, wal_bytes FROM pg_stat_wal")
            out["syncs"], out["log_bytes"] = float(syncs), float(wbytes)
        elif "pg_stat_io" in views and "wal_bytes" in cols:  # 18: WAL's I/O moved to pg_stat_io
            (syncs,), = self.query(conn, "SELECT COALESCE(sum(fsyncs), 0) FROM pg_stat_io WHERE object = 'wal'")
            out["syncs"] = float(syncs)
            out["log_bytes"] = float(self.query(conn, "SELECT wal_bytes FROM pg_stat_wal")[0][0])
        if "syncs" in out:  # 12, 13: no view counts WAL syncs
            out["redo_syncs"] = out["syncs"]
        return out

    def restore_table(self, conn, table: str) -> None:
        """An update scan leaves a new version of every row it reached (committed or not): rewrite
        the table to its live rows and checkpoint, so the next run reads the same pages."""
        self.query(conn, f"VACUUM (FULL, ANALYZE) {table}")
        self.query(conn, "CHECKPOINT")


VACUUM_PATTERNS = {
    # PostgreSQL 15+: "tuples: 0 removed, 1002 remain, 2000 are dead but not yet removable"
    "removed": (r"tuples: (\d+) removed", r"found (\d+) removable"),
    # 12 to 14: "found 0 removable, 3002 nonremovable row versions ..." and, in the detail,
    # "2000 dead row versions cannot be removed yet"
    "not_removable": (r"(\d+) are dead but not yet removable", r"(\d+) dead row versions cannot be removed yet"),
}


def parse_vacuum_verbose(text: str) -> dict[str, float]:
    """VACUUM VERBOSE's messages -> dead tuples it removed and those it found dead but could not
    remove yet (an older snapshot may still see them)."""
    out = {}
    for name, patterns in VACUUM_PATTERNS.items():
        for pat in patterns:
            m = re.search(pat, text)
            if m:
                out[name] = float(m.group(1))
                break
        else:
            raise DbexpError(f"VACUUM VERBOSE did not say how many tuples were {name.replace('_', ' ')}: "
                             f"{' '.join(text.split())[:300]!r}")
    return out


def _ensure_user() -> tuple[int, int]:
    try:
        pw = pwd.getpwnam(BARE_USER)
    except KeyError:
        if os.geteuid() != 0:
            raise DbexpError(f"bare PostgreSQL needs a non-root user {BARE_USER!r}; create it (useradd) first")
        subprocess.run(["useradd", "--system", "--no-create-home", BARE_USER], check=True)
        pw = pwd.getpwnam(BARE_USER)
    return pw.pw_uid, pw.pw_gid


def _as_user(uid: int, gid: int) -> list[str]:
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--init-groups"]


def _locale() -> str:
    """The image's locale (en_US.utf8) where this host has it, else C.UTF-8."""
    have = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
    return "en_US.utf8" if "en_US.utf8" in have else "C.UTF-8"
