"""PostgreSQL: arguments, settings, connections, and what the chapters ask of it."""

from __future__ import annotations

import signal

import psycopg

from dbexp.errors import DbexpError
from dbexp.servers import capabilities, sql
from dbexp.servers.flavor import CONNECT_TIMEOUT_S, Flavor
from dbexp.servers.sql import query
from dbexp.waits import poll

STAT_VIEWS = ("pg_stat_bgwriter", "pg_stat_wal", "pg_stat_checkpointer")  # whichever this version has
# Page checksums in every data directory: initdb's default from 18 on, off before; InnoDB always
# checksums its pages. An initdb option, not a setting: every PostgreSQL server gets it.
INITDB_ARGS = ("--data-checksums",)


# --- what only some chapters ask (dbexp.servers.capabilities) ----------------------------------
class RelaxedCommit(capabilities.RelaxedCommit):
    def settings(self) -> dict[str, str]:
        return {"synchronous_commit": "off"}


class SetGlobal(capabilities.SetGlobal):
    def set(self, conn, name: str, value: str) -> None:
        """For every new session. A setting a session may change (pg_settings.context user or superuser):
        ALTER ROLE ALL SET, which outranks the server's command line (where the lab states its baseline,
        commit_delay among it: ALTER SYSTEM, a configuration file, does not). Any other: ALTER SYSTEM and a
        reload, and where the command line sets it that cannot take effect: a one-line error."""
        rows = query(conn, "SELECT context, source FROM pg_settings WHERE name = %s", (name,))
        if not rows:
            raise DbexpError(f"unknown PostgreSQL setting {name!r}: see pg_settings for the valid names")
        context, source = rows[0]
        if context in ("user", "superuser"):
            query(conn, f"ALTER ROLE ALL SET {name} = {int(value)}")
            return
        if source == "command line":
            raise DbexpError(f"cannot change {name} while the server runs: its command line sets it and "
                             f"{name} ({context}) takes no per-session value; start the server with it instead")
        query(conn, f"ALTER SYSTEM SET {name} = {int(value)}")
        query(conn, "SELECT pg_reload_conf()")


class Sessions(capabilities.Sessions):
    def observe(self, conn) -> dict[str, int]:
        trx = query(conn, "SELECT COUNT(*) FROM pg_stat_activity WHERE backend_xid IS NOT NULL "
                          "AND state = 'idle in transaction'")[0][0]
        sessions = query(conn, "SELECT COUNT(*) FROM pg_stat_activity "
                               "WHERE backend_type = 'client backend'")[0][0]
        return {"open_write_trx": int(trx), "sessions": int(sessions)}

    def activity(self, conn) -> tuple[float, int]:
        """pg_stat_statements' calls, summed (counted as a statement ends; see Flavor.statements), and the
        other client backends whose state is a statement in progress (set as it begins, cleared as it ends)."""
        try:
            n, running = query(conn, "SELECT (SELECT COALESCE(SUM(calls), 0) FROM pg_stat_statements), "
                                     "(SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                                     "AND state IN ('active', 'fastpath function call') AND pid <> pg_backend_pid())")[0]
        except psycopg.errors.UndefinedTable:
            raise DbexpError("postgres counts statements with pg_stat_statements, which this server lacks: "
                             "preload it (shared_preload_libraries) and CREATE EXTENSION it first") from None
        return float(n), int(running)


class Uprobes(capabilities.Uprobes):
    executables = ("postgres",)


class Cleanup(capabilities.Cleanup):
    """VACUUM of the table: dead tuples removed and the visibility map set, so that index-only scans
    read no heap page a write left unmarked."""

    ALL_VISIBLE = 0.99  # the share of the table's pages the visibility map must mark all-visible

    FLUSH_WAIT_S = 3.0  # the walwriter flushes asynchronous commits within 3 x wal_writer_delay (200 ms)

    def catch_up(self, conn, table: str) -> None:
        """VACUUM (it finishes before it returns); where it left pages out of the visibility map, again once
        the WAL is flushed past what was written so far. Rows just written by asynchronous commits (the lab's
        relaxed baseline) can take no committed hint before their commit is flushed, and VACUUM marks no page
        all-visible that holds a row without it (measured: 541 of 851 pages marked right after the rows a
        delete removed were inserted again, all 851 a second later)."""
        query(conn, f"VACUUM {table}")
        if all(ok for ok, _ in self.state(conn, table).values()):
            return
        written = query(conn, "SELECT pg_current_wal_insert_lsn()")[0][0]
        poll(lambda: bool(query(conn, "SELECT pg_current_wal_flush_lsn() >= %s::pg_lsn", (str(written),))[0][0]),
             self.FLUSH_WAIT_S, 0.02)
        query(conn, f"VACUUM {table}")

    def state(self, conn, table: str) -> dict[str, tuple[bool, object]]:
        pages, visible = query(conn, "SELECT relpages, relallvisible FROM pg_class WHERE oid = %s::regclass",
                               (table,))[0]
        share = float(visible) / pages if pages else 1.0
        return {f"all-visible pages >= {self.ALL_VISIBLE:.0%}": (share >= self.ALL_VISIBLE, round(share, 4))}


class Callgrind(capabilities.Callgrind):
    """A client statement's work: ``PostgresMain``, the backend's loop over its client's messages
    (login included: a count subtracts two windows that both hold one), one ``PortalRun`` per statement
    executed (simple or extended protocol: the npm builds inline the message handlers into the loop).
    A process per connection: callgrind writes each backend's counts as its connection ends."""

    entry = "PostgresMain"
    statement = "PortalRun"
    per_connection = True

    def settings(self, requested: dict[str, str]) -> dict[str, str]:
        """No autovacuum: its workers start by the clock (slower under valgrind), and what they prune or
        mark changes what the counted backend finds."""
        return {"autovacuum": "off"}


class Postgres(Flavor):
    name = "postgres"
    title = "PostgreSQL"
    ready_line = "database system is ready to accept connections"
    stop_signal = signal.SIGINT  # fast shutdown (SIGTERM would wait for clients)
    options_probe = (("postgres",), "postgres", ("--describe-config",))
    version_query = "SHOW server_version"
    capabilities = {"relaxed_commit": RelaxedCommit, "set_global": SetGlobal, "sessions": Sessions,
                    "uprobes": Uprobes, "cleanup": Cleanup, "callgrind": Callgrind}
    version_store = "heap"
    counter_series = ("xact_commit", "tup_returned", "tup_fetched", "tup_updated", "blks_read", "blks_hit",
                      "numbackends", "wal_bytes", "buffers_alloc")
    gauges = frozenset({"numbackends"})
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

    def parse_options(self, text: str) -> set[str]:
        return {self._normalize(line.split("\t")[0]) for line in text.splitlines() if "\t" in line}

    @staticmethod
    def _normalize(name: str) -> str:
        return name.strip().lower()

    # --- talking to it ------------------------------------------------------------------------
    def connect(self, port: int, database: str | None = None, autocommit: bool = True):
        return psycopg.connect(host="127.0.0.1", port=port, user="postgres",
                               dbname=database or "postgres", autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S,
                               sslmode="disable")

    def create_database(self, conn, name: str) -> None:
        if not query(conn, "SELECT 1 FROM pg_database WHERE datname = %s", (name,)):
            query(conn, f'CREATE DATABASE "{name}"')

    def effective_settings(self, conn) -> dict[str, str]:
        rows = query(conn, "SELECT name, setting || COALESCE(' ' || unit, '') FROM pg_settings")
        return {k: str(v) for k, v in rows}

    def sysbench_args(self, port: int, database: str) -> list[str]:
        return ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", f"--pgsql-port={port}",
                "--pgsql-user=postgres", "--pgsql-password=", f"--pgsql-db={database}"]

    def connect_hint(self, port: int) -> str:
        return f"psql -h 127.0.0.1 -p {port} -U postgres"

    # --- what the lab asks ------------------------------------------------------------------------
    def settle(self, conn) -> bool:
        """VACUUM (visibility map, hint bits) and a checkpoint, in the connection's database (both
        finish before they return: never timed out)."""
        query(conn, "VACUUM (ANALYZE)")
        query(conn, "CHECKPOINT")
        return True

    def counters(self, conn, database: str) -> dict[tuple[str, str], float]:
        out = sql.column_rows(conn, "SELECT * FROM pg_stat_database WHERE datname = %s", "pg_stat_database",
                              (database,), skip=("datid",))
        present = {r[0] for r in query(conn, "SELECT viewname FROM pg_views WHERE viewname = ANY(%s)",
                                       (list(STAT_VIEWS),))}
        for view in STAT_VIEWS:
            if view in present:
                out.update(sql.column_rows(conn, f"SELECT * FROM {view}", view))
        return out

    def statements(self, conn) -> float:
        """Statements clients have had executed: pg_stat_statements' calls, summed. Its counts are
        current at each statement's end (pg_stat_database's are flushed a second or so late), but
        the extension must be preloaded (shared_preload_libraries) and created in the connection's
        database: a chapter that counts statements sets both up."""
        try:
            return float(query(conn, "SELECT COALESCE(SUM(calls), 0) FROM pg_stat_statements")[0][0])
        except psycopg.errors.UndefinedTable:
            raise DbexpError("postgres counts statements with pg_stat_statements, which this server lacks: "
                             "preload it (shared_preload_libraries) and CREATE EXTENSION it first") from None

    # --- what chapters ask ----------------------------------------------------------------------
    def comparable_settings(self) -> dict[str, str]:
        return {
            # Data and WAL reach the disk, and a commit waits for its WAL flush: every version's
            # durable default. The "relaxed_commit" capability overrides
            # synchronous_commit.
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
