"""MySQL (InnoDB): arguments, options, connections, settings, and what the chapters ask of it."""

from __future__ import annotations

import subprocess
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


class MySQL(Flavor):
    name = "mysql"
    title = "MySQL"
    server_binary = "mysqld"
    ready_line = "ready for connections"
    supports_bare = True
    version_store = "undo"
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

    def relaxed_commit_settings(self) -> dict[str, str]:
        return {"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0"}


    def set_global(self, conn, name: str, value: str) -> None:
        """An integer, or DEFAULT for the server's own default."""
        self.query(conn, f"SET GLOBAL {name} = {'DEFAULT' if value == 'DEFAULT' else int(value)}")


