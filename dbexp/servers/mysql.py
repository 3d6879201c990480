"""MySQL (InnoDB): arguments, options, connections, settings, and what the chapters ask of it."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pymysql

from dbexp.catalog.versions import version_key
from dbexp.errors import DbexpError
from dbexp.servers import sql
from dbexp.servers.flavor import Flavor
from dbexp.waits import poll

# Prefixes MySQL accepts in front of an option name.
OPTION_PREFIXES = ("loose_", "skip_", "enable_", "disable_", "maximum_")
# Options of the image's my.cnf that name paths of the image; a bare process gets its own.
PATH_OPTIONS = ("basedir", "datadir", "socket", "pid-file", "pid_file", "secure-file-priv", "secure_file_priv")
SNAPSHOT_LATCHES = "wait/synch/mutex/innodb/trx_sys%"  # the mutexes around building a ReadView


class MySQL(Flavor):
    name = "mysql"
    title = "MySQL"
    server_binary = "mysqld"
    ready_line = "ready for connections"
    supports_bare = True
    base_version = "5.7"
    version_store = "undo"
    statement_clock = "performance_schema"  # its statement timer, from events_statements_history_long
    counter_series = ("Questions", "Com_select", "Com_commit", "Innodb_rows_read", "Innodb_rows_updated",
                      "Innodb_buffer_pool_reads", "Innodb_data_written", "Innodb_os_log_written",
                      "Threads_running", "trx_rseg_history_len")
    gauges = frozenset({"Threads_running", "Threads_connected", "trx_rseg_history_len"})
    innodb_metrics_on = "status = 'enabled'"  # which InnoDB metrics are being counted
    performance_settings = (
        # durability, logging, instrumentation
        "log_bin", "sync_binlog", "binlog_format", "binlog_row_image", "log_slave_updates",
        "innodb_flush_log_at_trx_commit", "innodb_flush_log_at_timeout", "innodb_flush_method",
        "innodb_doublewrite", "innodb_checksum_algorithm", "performance_schema", "general_log",
        "slow_query_log",
        # memory and redo
        "innodb_buffer_pool_size", "innodb_buffer_pool_instances", "innodb_page_size", "innodb_log_buffer_size",
        "innodb_log_file_size", "innodb_log_files_in_group", "innodb_redo_log_capacity",
        # flushing and I/O
        "innodb_io_capacity", "innodb_io_capacity_max", "innodb_flush_neighbors", "innodb_max_dirty_pages_pct",
        "innodb_max_dirty_pages_pct_lwm", "innodb_adaptive_flushing", "innodb_lru_scan_depth",
        "innodb_page_cleaners", "innodb_read_io_threads", "innodb_write_io_threads", "innodb_use_native_aio",
        # concurrency, purge, undo
        "innodb_thread_concurrency", "innodb_spin_wait_delay", "innodb_sync_spin_loops",
        "innodb_adaptive_hash_index", "innodb_autoinc_lock_mode", "innodb_change_buffering",
        "innodb_deadlock_detect", "innodb_purge_threads", "innodb_undo_tablespaces", "innodb_undo_log_truncate",
        "innodb_open_files", "innodb_stats_persistent", "thread_handling", "thread_cache_size", "back_log",
        "max_connections", "table_open_cache", "table_open_cache_instances", "table_definition_cache",
        # what statements see and use
        "transaction_isolation", "tx_isolation", "character_set_server", "collation_server", "query_cache_type",
        "query_cache_size", "sort_buffer_size", "join_buffer_size", "tmp_table_size", "max_heap_table_size",
        "internal_tmp_mem_storage_engine",
    )

    # --- starting ---------------------------------------------------------------------------
    def command(self, port: int, settings: dict[str, str]) -> list[str]:
        args = [self.server_binary, f"--port={port}", "--bind-address=127.0.0.1"]
        args += self.version_args()
        args += [f"--{k}={v}" for k, v in settings.items()]
        return args

    def version_args(self) -> list[str]:
        """Keep X Protocol off loopback-only hosts and give clients mysql_native_password."""
        v = version_key(self.version)
        if v >= (9,):
            return ["--mysqlx=OFF"]
        if v >= (8, 4):
            return ["--mysqlx=OFF", "--mysql-native-password=ON"]
        if v >= (8, 0):
            return ["--mysqlx=OFF", "--default-authentication-plugin=mysql_native_password"]
        return []

    def environment(self) -> dict[str, str]:
        return {"MYSQL_ALLOW_EMPTY_PASSWORD": "yes", "MYSQL_ROOT_HOST": "%"}

    def options_probe(self):
        return [self.server_binary], None, ["--no-defaults", "--verbose", "--help"]

    def parse_options(self, text: str) -> set[str]:
        names: set[str] = set()
        in_vars = False
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("--") and not in_vars:
                # "  --innodb-buffer-pool-size=#  Description" style option lines
                names.add(self.normalize(stripped[2:].split()[0].split("=")[0].split("[")[0]))
            elif stripped.startswith("Variables (--variable-name=value)"):
                in_vars = True
            elif in_vars and stripped and not stripped.startswith("-"):
                names.add(self.normalize(stripped.split()[0]))
        return names

    def knows_option(self, name: str, known: set[str]) -> bool:
        if name in known or name.startswith("loose_"):  # mysqld itself ignores unknown loose- options
            return True
        return any(name.startswith(p) and name[len(p):] in known for p in OPTION_PREFIXES)

    def bare_command(self, build, port, settings, home: Path, data: Path, run: Path) -> list[str]:
        """The image's own my.cnf minus its paths, the same first-start account set-up (init-root.sql)."""
        from dbexp.images.recipes import recipe_dir

        recipe = recipe_dir(build.recipe)
        lines = [line for line in (recipe / "my.cnf").read_text().splitlines()
                 if not line.startswith("!include") and line.split("=")[0].strip() not in PATH_OPTIONS]
        defaults = run / "my.cnf"
        defaults.write_text("\n".join(lines) + "\n")
        mysqld = str(home / "bin" / "mysqld")
        base = [f"--defaults-file={defaults}", f"--basedir={home}", f"--datadir={data}", "--user=root",
                f"--secure-file-priv={run}"]
        proc = subprocess.run([mysqld] + base + ["--initialize-insecure", f"--log-error={run / 'init.err'}"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise DbexpError(f"bare mysqld --initialize-insecure failed: {(run / 'init.err').read_text()[-300:]}")
        return [mysqld] + base + [f"--socket={run / 'mysqld.sock'}", f"--pid-file={run / 'mysqld.pid'}",
                                  f"--init-file={recipe / 'init-root.sql'}"] + self.command(port, settings)[1:]

    # --- talking to it ------------------------------------------------------------------------
    def connect(self, port: int, database: str | None = None, autocommit: bool = True):
        return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                               database=database, autocommit=autocommit, connect_timeout=5,
                               ssl_disabled=True)

    def create_database(self, conn, name: str) -> None:
        self.query(conn, f"CREATE DATABASE IF NOT EXISTS `{name}`")

    def effective_settings(self, conn) -> dict[str, str]:
        return {k: str(v) for k, v in self.query(conn, "SHOW GLOBAL VARIABLES")}

    def sysbench_args(self, port: int, database: str) -> list[str]:
        return ["--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={port}",
                "--mysql-user=root", "--mysql-password=", f"--mysql-db={database}"]

    def connect_hint(self, port: int) -> str:
        return f"mysql -h 127.0.0.1 -P {port} -u root"

    # --- what the lab asks ------------------------------------------------------------------------
    def settle(self, conn, timeout_s: float = 30.0) -> bool:
        """Flush InnoDB's dirty pages (max dirty pct 0 until none is left, then restored); False if
        some were still dirty after ``timeout_s``."""
        old = self.query(conn, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct")[0][0]
        self.query(conn, "SET GLOBAL innodb_max_dirty_pages_pct = 0")
        try:
            return bool(poll(lambda: int(self.query(
                conn, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")[0][1]) == 0, timeout_s, 0.2))
        finally:
            self.query(conn, f"SET GLOBAL innodb_max_dirty_pages_pct = {float(old)}")

    def counters(self, conn, database: str) -> dict[tuple[str, str], float]:
        out = sql.name_value_rows(conn, "SHOW GLOBAL STATUS", "status")
        out.update(sql.name_value_rows(conn, "SELECT name, count FROM information_schema.innodb_metrics "
                                             f"WHERE {self.innodb_metrics_on}", "innodb_metrics"))
        return out

    def statements(self, conn) -> float:
        # client statements, prepared statements' executions included (this query too)
        return float(self.query(conn, "SHOW GLOBAL STATUS LIKE 'Questions'")[0][1])

    def observe_sessions(self, conn) -> dict[str, int]:
        trx = self.query(conn, "SELECT COUNT(*) FROM information_schema.innodb_trx "
                               "WHERE trx_state = 'RUNNING' AND trx_rows_modified > 0")[0][0]
        sessions = self.query(conn, "SELECT COUNT(*) FROM information_schema.processlist")[0][0]
        return {"open_write_trx": int(trx), "sessions": int(sessions)}

    executables = ("mysqld",)
    # MVCC::view_open(ReadView*&, trx_t*): opens (or reopens) a statement's or transaction's view,
    # copying the ids of the active read-write transactions (the same mangled name in 5.7 and 8.0)
    snapshot_symbol = "_ZN4MVCC9view_openERP8ReadViewP5trx_t"

    def prepare_transaction(self, conn, xid: str, statement: str) -> None:
        for stmt in (f"XA START '{xid}'", statement, f"XA END '{xid}'", f"XA PREPARE '{xid}'"):
            self.query(conn, stmt)

    def rollback_prepared(self, conn, xid: str) -> None:
        self.query(conn, f"XA ROLLBACK '{xid}'")

    def prepared_xids(self, conn) -> list[str]:
        # formatID, gtrid_length, bqual_length, data (the gtrid, as bytes in 8.0)
        return [d.decode() if isinstance(d, bytes) else str(d) for *_, d in self.query(conn, "XA RECOVER")]

    # --- what chapters ask ----------------------------------------------------------------------
    def comparable_settings(self) -> dict[str, str]:
        return {
            # No binary log. 8.0 turned it on by default (5.7 and MariaDB have it off): a second log
            # written and fsynced at every commit. One spelling for every version: mysqld reads
            # --skip-log-bin=ON as "no binlog" (5.7, 8.0, MariaDB). A chapter that studies it sets
            # log_bin after these (the later option wins; server_id below lets 5.7 accept it).
            "skip_log_bin": "ON",
            # 8.0's default; 5.7's is 0, under which it refuses log_bin. Nothing else depends on it here.
            "server_id": "1",
            # The binlog fsynced at every commit (group) once a chapter turns it on: the default of
            # 5.7.7+ and 8.0; MariaDB's is 0.
            "sync_binlog": "1",
            # Redo written and fsynced at every commit: every version's durable default.
            # relaxed_commit_settings() overrides this key and sync_binlog.
            "innodb_flush_log_at_trx_commit": "1",
            # Data files written through the page cache and fsynced: 8.0's default and what 5.7 does
            # when unset (it reports ''); MariaDB 10.6+ and MySQL 8.4+ default to O_DIRECT. fsync works
            # on any filesystem, a bare run's tmpfs data directory included.
            "innodb_flush_method": "fsync",
            # Torn-page protection: on in every version; stated so that no version's change goes unseen.
            "innodb_doublewrite": "ON",
            # The same instrumentation cost everywhere: MySQL's default is on, MariaDB's off; the
            # waits chapters read it.
            "performance_schema": "ON",
            # No statement logs (every version's default): the general log writes every query.
            "general_log": "OFF",
            "slow_query_log": "OFF",
        }

    def snapshot_wait_settings(self) -> dict[str, str]:
        return {"performance-schema-instrument": f"{SNAPSHOT_LATCHES}=ON"}

    def snapshot_waits(self, conn) -> dict[str, float]:
        """Acquisitions of and time waited on the trx-sys mutexes (performance_schema, cumulative)."""
        out = {}
        for name, count, wait_ps in self.query(
                conn, "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT FROM "
                      "performance_schema.events_waits_summary_global_by_event_name WHERE EVENT_NAME LIKE %s",
                (SNAPSHOT_LATCHES,)):
            short = name.rsplit("/", 1)[-1]
            out[f"{short}.count"] = float(count)
            out[f"{short}.wait_ns"] = float(wait_ps) / 1000.0
        return out

    def relaxed_commit_settings(self) -> dict[str, str]:
        return {"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0"}

    def analyze(self, conn, table: str) -> None:
        self.query(conn, f"ANALYZE TABLE {table}")

    def begin_snapshot(self, conn) -> None:
        self.query(conn, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        self.query(conn, "START TRANSACTION WITH CONSISTENT SNAPSHOT")

    def garbage(self, conn, table: str) -> dict[str, float]:
        """The purge state from SHOW ENGINE INNODB STATUS, and the history list length from InnoDB's
        metrics table (the status text prints the same counter)."""
        state = innodb_purge_state(self.query(conn, "SHOW ENGINE INNODB STATUS")[0][2])
        hll = self.query(conn, "SELECT `COUNT` FROM information_schema.INNODB_METRICS "
                               "WHERE NAME = 'trx_rseg_history_len'")
        if hll:
            state["history_list_length"] = float(hll[0][0])
        return state

    def garbage_settled(self, g: dict[str, float]) -> bool:
        return g["purge_lag_trx"] <= 2

    def statement_timing_settings(self) -> dict[str, str]:
        # every statement's timer kept (a ring of 10,000 by default, 1,000 in MariaDB): read by
        # PerfSchemaClock
        return {"performance-schema-consumer-events-statements-history-long": "ON"}

    def held_versions(self, conn, table: str, hold_s: float) -> dict[str, tuple[float, str]]:
        """Purge runs by itself: give it up to ``hold_s`` to catch up, then its lag behind the
        transaction counter (what it could not purge) and the history list length."""
        g: dict[str, float] = {}

        def settled() -> bool:
            nonlocal g
            g = self.garbage(conn, table)
            return self.garbage_settled(g)

        poll(settled, hold_s, 0.25)
        return {"held_purge_lag_trx": (g["purge_lag_trx"], "trx numbers"),
                "held_history_list_length": (g["history_list_length"], "undo logs")}

    def reclaimed(self, g, before, peak) -> bool:
        """Purge has removed the versions of every transaction committed before the snapshot ended."""
        return g["purge_done_no"] >= peak["trx_id_counter"]

    # --- the buffer pool under a scan ---------------------------------------------------------
    page_bytes = 16384
    reads_through_page_cache = False  # with buffer_pool_settings(): O_DIRECT

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
        rows = self.query(conn, "SELECT TABLE_NAME, COUNT(*), SUM(IS_OLD = 'YES') FROM "
                                "information_schema.INNODB_BUFFER_PAGE_LRU WHERE INDEX_NAME = 'PRIMARY' "
                                f"AND TABLE_NAME IN ({', '.join(['%s'] * len(names))}) GROUP BY TABLE_NAME",
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

    def buffer_sample(self, conn, hot: str, big: str) -> dict[str, float]:
        t0 = time.perf_counter()
        lru = self._lru_pages(conn, {"hot": hot, "big": big})
        out = {"lru_query_ms": (time.perf_counter() - t0) * 1e3}
        for role, (pages, old) in lru.items():
            out[f"resident.{role}"], out[f"old.{role}"] = pages, old
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
        if kind != "seq":
            raise ValueError(f"bad scan kind {kind!r} for {self.title}: valid is seq")
        # the clustered index from end to end (not COUNT(*), which 8.0 may answer from another index
        # or with parallel read threads): every page of the rows, once per pass
        return [f"SELECT SUM(LENGTH(pad)) FROM {table}"]

    def session_id(self, conn) -> int:
        return int(self.query(conn, "SELECT CONNECTION_ID()")[0][0])

    def cancel_sql(self, session: int) -> str:
        return f"KILL QUERY {int(session)}"

    def is_cancel(self, exc: BaseException) -> bool:
        return isinstance(exc, pymysql.err.OperationalError) and exc.args and exc.args[0] == 1317

    def set_global(self, conn, name: str, value: str) -> None:
        """An integer, or DEFAULT for the server's own default."""
        self.query(conn, f"SET GLOBAL {name} = {'DEFAULT' if value == 'DEFAULT' else int(value)}")

    # --- the commit path ----------------------------------------------------------------------
    has_binlog = True
    COMMIT_COND = "wait/synch/cond/sql/MYSQL_BIN_LOG::COND_done"  # one broadcast per finished group
    # dynamic symbols of the binlog group commit (5.7 and 8.0; the mutex type's name differs)
    commit_symbols = {"ordered_commit": "_ZN13MYSQL_BIN_LOG14ordered_commitEP3THDbb",
                      "sync": "_ZN13MYSQL_BIN_LOG16sync_binlog_fileEb",
                      "enroll": ("_ZN13Stage_manager10enroll_forENS_7StageIDEP3THDP14st_mysql_mutex",
                                 "_ZN13Stage_manager10enroll_forENS_7StageIDEP3THDP13mysql_mutex_t")}

    def commit_settings(self, binlog: bool) -> dict[str, str]:
        out = {"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1",
               # condition instruments are off by default: counted, not timed (the cheapest state)
               "performance-schema-instrument": f"{self.COMMIT_COND}=COUNTED"}
        if binlog:
            out["log_bin"] = "binlog"  # after comparable_settings()' skip_log_bin: the later option wins
        return out

    def group_settings(self, sync_log: bool, delay_us: int) -> dict[str, str]:
        return {"sync_binlog": "1" if sync_log else "0", "binlog_group_commit_sync_delay": str(int(delay_us))}

    def binlog_on(self, conn) -> bool:
        return str(self.query(conn, "SELECT @@GLOBAL.log_bin")[0][0]) in ("1", "ON")

    def commit_counters(self, conn) -> dict[str, float]:
        out = {}
        status = dict(self.query(conn, "SHOW GLOBAL STATUS WHERE Variable_name IN "
                                       "('Innodb_os_log_fsyncs', 'Innodb_os_log_written')"))
        if "Innodb_os_log_fsyncs" in status:  # MariaDB 10.11 keeps no count of redo log syncs
            out["redo_syncs"] = float(status["Innodb_os_log_fsyncs"])
        binlog = self.query(conn, "SELECT COUNT_MISC, SUM_NUMBER_OF_BYTES_WRITE FROM "
                                  "performance_schema.file_summary_by_event_name "
                                  "WHERE EVENT_NAME = 'wait/io/file/sql/binlog'")
        if self.binlog_on(conn):  # a binlog file's syncs are among its "misc" operations (open, close, sync, ...)
            out["binlog_syncs"] = float(binlog[0][0])
            out["syncs"], out["log_bytes"] = out["binlog_syncs"], float(binlog[0][1])
        else:
            out["log_bytes"] = float(status["Innodb_os_log_written"])
            if "redo_syncs" in out:
                out["syncs"] = out["redo_syncs"]
        waits = self.query(conn, "SELECT COUNT_STAR FROM performance_schema.events_waits_summary_global_by_event_name "
                                 "WHERE EVENT_NAME = %s", (self.COMMIT_COND,))
        if waits:
            out["waits"] = float(waits[0][0])
        return out

    # --- GTIDs (the gtid chapter) ---------------------------------------------------------------
    def binlog_settings(self) -> dict[str, str]:
        """The binlog on, everything it writes stated: row events with full images, no write sets
        (5.7's default; 8.0 extracts them by default), dependencies by commit order, GTIDs off
        (gtid_settings() turns them on from the start, set_gtid() on a running server)."""
        return {"log_bin": "binlog", "binlog_format": "ROW", "binlog_row_image": "FULL",
                "transaction_write_set_extraction": "OFF", "binlog_transaction_dependency_tracking": "COMMIT_ORDER",
                **self.gtid_settings(False)}

    GTID_STEPS = ("OFF", "OFF_PERMISSIVE", "ON_PERMISSIVE", "ON")

    def gtid_settings(self, on: bool) -> dict[str, str]:
        """GTIDs from the server's start (with binlog_settings(), whose GTIDs are off)."""
        value = "ON" if on else "OFF"
        return {"gtid_mode": value, "enforce_gtid_consistency": value}

    def set_gtid(self, conn, on: bool, timeout_s: float = 30.0) -> None:
        """gtid_mode and enforce_gtid_consistency ON (or OFF) on a running server, one step at a
        time as MySQL requires, waiting before the last step for transactions of the old kind to end."""
        now = str(self.query(conn, "SELECT @@GLOBAL.gtid_mode")[0][0])
        steps = list(self.GTID_STEPS) if on else list(reversed(self.GTID_STEPS))
        if on:
            self.query(conn, "SET GLOBAL enforce_gtid_consistency = ON")
        for i, mode in enumerate(steps[steps.index(now) + 1:], start=steps.index(now) + 1):
            if i == len(steps) - 1:  # the last step needs the other kind of transaction gone
                counter = "Ongoing_anonymous_transaction_count" if on else "Ongoing_automatic_gtid_violating_transaction_count"
                rows: list[tuple] = []

                def gone() -> bool:
                    nonlocal rows
                    rows = self.query(conn, f"SHOW GLOBAL STATUS LIKE '{counter}'")
                    return not rows or int(rows[0][1]) == 0

                if not poll(gone, timeout_s, 0.1):
                    raise DbexpError(f"gtid_mode could not reach {mode}: {counter} stayed {rows[0][1]}")
            self.query(conn, f"SET GLOBAL gtid_mode = {mode}")
        if not on:
            self.query(conn, "SET GLOBAL enforce_gtid_consistency = OFF")

    def binlog_bytes(self, conn) -> float | None:
        """Bytes in the binlog files now (SHOW BINARY LOGS), or None with the binlog off."""
        if not self.binlog_on(conn):
            return None
        return float(sum(int(r[1]) for r in self.query(conn, "SHOW BINARY LOGS")))


def innodb_purge_state(status: str) -> dict[str, float]:
    """From SHOW ENGINE INNODB STATUS: the history list length (undo logs not yet freed, which
    InnoDB truncates lazily, in batches) and the purge lag: transactions committed since the last
    one whose old versions purge has removed ("Purge done for trx's n:o < N")."""

    def num(pattern: str) -> float:
        m = re.search(pattern, status)
        return float(m.group(1)) if m else float("nan")

    counter = num(r"Trx id counter (\d+)")
    done = num(r"Purge done for trx's n:o < (\d+)")
    return {"history_list_length": num(r"History list length (\d+)"), "trx_id_counter": counter,
            "purge_done_no": done, "purge_lag_trx": max(0.0, counter - done)}
