"""MySQL (InnoDB): arguments, options, connections, settings, and what the chapters ask of it."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pymysql

from dbexp.catalog.versions import version_key
from dbexp.errors import DbexpError
from dbexp.servers import capabilities, sql
from dbexp.servers.flavor import CONNECT_TIMEOUT_S, Flavor
from dbexp.servers.sql import query
from dbexp.waits import poll

# Prefixes MySQL accepts in front of an option name.
OPTION_PREFIXES = ("loose_", "skip_", "enable_", "disable_", "maximum_")
# root's password where the series has no mysql_native_password (9.x): caching_sha2_password over
# plain TCP then needs one full authentication per account after a start (RSA, with the server's key)
ROOT_PASSWORD = "dbexp"
# Log lines of a sound start that look like failures: InnoDB asks for CPUs outside the container's
# cpuset (9.x, with --cpuset-cpus) and says so as an [ERROR]; the server runs pinned all the same.
HARMLESS_LOG = re.compile(r"sched_setaffinity\(\) failed")


@dataclass(frozen=True)
class Series:
    """What differs between the series of a flavor, as data: a server takes the facts of the newest
    row whose ``since`` is at or below its version (``series_of``). Everything else about the
    flavor holds for every series it runs."""

    since: tuple[int, ...]  # the first version these facts hold for
    args: tuple[str, ...] = ()  # start options every server of the series gets
    password: str = ""  # root's password: '' where root logs in with mysql_native_password
    gone: frozenset[str] = frozenset()  # options the lab's own settings name that the series lacks
    # InnoDB writes each committed transaction's GTID into mysql.gtid_executed even with the binlog on
    # (8.0.17+; before, that table is written only when the binlog rotates or the server stops)
    gtid_table_per_commit: bool = False


def series_of(table: tuple[Series, ...], version: str) -> Series:
    """The row of ``table`` (oldest first) for ``version``; the oldest where it is older still."""
    rows = [row for row in table if row.since <= version_key(version)]
    return rows[-1] if rows else table[0]


NATIVE_PASSWORD_80 = ("--mysqlx=OFF", "--default-authentication-plugin=mysql_native_password")
# Write sets and the dependency tracker: 9.x always extracts write sets and tracks WRITESET (both
# options are gone), so binlog_settings() cannot turn them off there.
WRITESET_OPTIONS = frozenset({"transaction_write_set_extraction", "binlog_transaction_dependency_tracking"})
# innodb_log_writer_threads: an option from 8.0.22 (8.0's earlier log writer threads always run)
NO_WRITER_THREADS = frozenset({"innodb_log_writer_threads"})
MYSQL_SERIES: tuple[Series, ...] = (
    Series((5, 7), gone=NO_WRITER_THREADS),
    # X Protocol off (a listener on 33060 the lab never uses); mysql_native_password for Debian's
    # sysbench (libmariadb), which fails now and then to load caching_sha2_password with 16 threads
    Series((8, 0), args=NATIVE_PASSWORD_80, gone=NO_WRITER_THREADS),
    Series((8, 0, 17), args=NATIVE_PASSWORD_80, gone=NO_WRITER_THREADS, gtid_table_per_commit=True),
    Series((8, 0, 22), args=NATIVE_PASSWORD_80, gtid_table_per_commit=True),
    # 8.4: default_authentication_plugin is gone; mysql_native_password is a plugin loaded on demand
    # (official images only: no registry here ships 8.4, so its other removals are not listed)
    Series((8, 4), args=("--mysqlx=OFF", "--mysql-native-password=ON"),
           gone=frozenset({"default_authentication_plugin"}), gtid_table_per_commit=True),
    # 9.x: no mysql_native_password at all: root has a password, for caching_sha2_password over TCP
    Series((9, 0), args=("--mysqlx=OFF",), password=ROOT_PASSWORD,
           gone=frozenset({"default_authentication_plugin", "innodb_log_file_size",
                           "innodb_log_files_in_group"}) | WRITESET_OPTIONS, gtid_table_per_commit=True),
)


# --- what only some chapters ask (dbexp.servers.capabilities) ----------------------------------
class RelaxedCommit(capabilities.RelaxedCommit):
    def settings(self) -> dict[str, str]:
        return {"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0"}


class SetGlobal(capabilities.SetGlobal):
    def set(self, conn, name: str, value: str) -> None:
        """An integer, ON or OFF, or DEFAULT for the server's own default."""
        word = str(value).strip().upper()
        if word not in ("DEFAULT", "ON", "OFF"):
            try:
                word = str(int(value))
            except ValueError:
                raise DbexpError(f"bad value {value!r} for SET GLOBAL {name}: expected an integer, ON, OFF or "
                                 "DEFAULT") from None
        query(conn, f"SET GLOBAL {name} = {word}")


class Sessions(capabilities.Sessions):
    def observe(self, conn) -> dict[str, int]:
        trx = query(conn, "SELECT COUNT(*) FROM information_schema.innodb_trx "
                          "WHERE trx_state = 'RUNNING' AND trx_rows_modified > 0")[0][0]
        sessions = query(conn, "SELECT COUNT(*) FROM information_schema.processlist")[0][0]
        return {"open_write_trx": int(trx), "sessions": int(sessions)}

    def activity(self, conn) -> tuple[float, int]:
        """``Questions`` (counted as a statement begins, this read included) and ``Threads_running`` less this
        read's own thread: the connections inside a command (a statement ends, its thread leaves it), and the
        event scheduler's thread where it runs (``event_scheduler`` ON, the default from 8.0), which counts
        itself in for as long as it runs."""
        rows = dict(query(conn, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Threads_running')"))
        return float(rows["Questions"]), int(rows["Threads_running"]) - 1


class Uprobes(capabilities.Uprobes):
    executables = ("mysqld",)


class SeriesFacts(capabilities.SeriesFacts):
    """This version's row of the flavor's series table."""

    def supported(self, settings: dict[str, str]) -> dict[str, str]:
        """``settings`` without the options this series does not have (the series' ``gone``: removed,
        or not there yet): for the lab's own settings, whose docstrings say what the series does
        instead."""
        gone = self.flavor.series.gone
        return {k: v for k, v in settings.items() if Flavor._normalize(k) not in gone}

    @property
    def gtid_table_per_commit(self) -> bool:
        return self.flavor.series.gtid_table_per_commit


class Cleanup(capabilities.Cleanup):
    """Purge: the history list (undo logs of committed transactions not yet purged) brought under
    HISTORY_LIMIT."""

    HISTORY_LIMIT = 5000  # a 5 s window of one client commits 10,000 to 30,000 transactions; purge
    # leaves about 1,000 behind when idle
    WAIT_S = 20.0

    def history_length(self, conn) -> int:
        rows = query(conn, "SELECT `count` FROM information_schema.INNODB_METRICS WHERE name = 'trx_rseg_history_len'")
        return int(rows[0][0])

    def catch_up(self, conn, table: str) -> None:
        poll(lambda: self.history_length(conn) <= self.HISTORY_LIMIT, self.WAIT_S, 0.1)

    def state(self, conn, table: str) -> dict[str, tuple[bool, object]]:
        history = self.history_length(conn)
        return {f"history list <= {self.HISTORY_LIMIT}": (history <= self.HISTORY_LIMIT, history)}


class Callgrind(capabilities.Callgrind):
    """A client statement's work: ``do_command`` (one command read and dispatched, login and the
    connection's other work outside it), one ``dispatch_command`` per statement. One process serves
    every connection: a window ends with ``DO ACOS(...)``, whose function no workload of the lab calls
    and every MySQL and MariaDB build here exports (callgrind names only exported functions in these
    stripped binaries)."""

    entry = "do_command(*"
    statement = "dispatch_command(*"
    per_connection = False
    marker = "Item_func_acos::val_real*"

    def settings(self, requested: dict[str, str]) -> dict[str, str]:
        """No buffer pool loaded at startup (8.0's default loads the pages of the last shutdown: two
        500-statement counts then differed by 3%) nor dumped; no spin loops (valgrind runs one thread at
        a time, so a spinning thread spins its whole time slice, counted): InnoDB's mutexes and
        8.0's waits for the redo log (a CPU high-water mark of 0 turns their spinning off); InnoDB's own
        I/O threads instead of native AIO (sid's libaio waits with io_pgetevents, which valgrind 3.19
        does not handle; a statement's page reads are synchronous either way); MariaDB 11.8's address
        space for the buffer pool reserved to its size (its default reservation, 8 TiB, does not map
        under valgrind)."""
        return {"innodb_buffer_pool_load_at_startup": "OFF", "innodb_buffer_pool_dump_at_shutdown": "OFF",
                "innodb_spin_wait_delay": "0", "innodb_sync_spin_loops": "0", "innodb_log_spin_cpu_pct_hwm": "0",
                "innodb_use_native_aio": "OFF",
                "innodb_buffer_pool_size_max": requested.get("innodb_buffer_pool_size", "128M")}

    def mark(self, conn) -> None:
        query(conn, "DO ACOS(@dbexp_mark)")


class MySQL(Flavor):
    name = "mysql"
    title = "MySQL"
    server_binary = "mysqld"
    ready_line = "ready for connections"
    options_probe = (("mysqld",), None, ("--no-defaults", "--verbose", "--help"))
    capabilities = {"relaxed_commit": RelaxedCommit, "set_global": SetGlobal, "sessions": Sessions,
                    "uprobes": Uprobes, "series": SeriesFacts, "cleanup": Cleanup, "callgrind": Callgrind}
    series_table: tuple[Series, ...] = MYSQL_SERIES  # what differs between its series (``series``)
    version_store = "undo"
    counter_series = ("Questions", "Com_select", "Com_commit", "Innodb_rows_read", "Innodb_rows_updated",
                      "Innodb_buffer_pool_reads", "Innodb_data_written", "Innodb_os_log_written",
                      "Threads_running", "trx_rseg_history_len")
    gauges = frozenset({"Threads_running", "Threads_connected", "trx_rseg_history_len"})
    innodb_metrics_on = "status = 'enabled'"  # which InnoDB metrics are being counted
    performance_settings = (
        # durability, logging, instrumentation
        "log_bin", "sync_binlog", "binlog_format", "binlog_row_image", "log_slave_updates",
        "log_replica_updates", "gtid_mode", "enforce_gtid_consistency",
        "innodb_flush_log_at_trx_commit", "innodb_flush_log_at_timeout", "innodb_flush_method",
        "innodb_doublewrite", "innodb_checksum_algorithm", "performance_schema", "general_log",
        "slow_query_log",
        # memory and redo
        "innodb_buffer_pool_size", "innodb_buffer_pool_instances", "innodb_page_size", "innodb_log_buffer_size",
        "innodb_log_file_size", "innodb_log_files_in_group", "innodb_redo_log_capacity",
        "innodb_log_writer_threads", "innodb_numa_interleave",
        # flushing and I/O
        "innodb_io_capacity", "innodb_io_capacity_max", "innodb_flush_neighbors", "innodb_max_dirty_pages_pct",
        "innodb_max_dirty_pages_pct_lwm", "innodb_adaptive_flushing", "innodb_lru_scan_depth",
        "innodb_page_cleaners", "innodb_read_io_threads", "innodb_write_io_threads", "innodb_use_native_aio",
        "innodb_use_fdatasync",
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
        """The series' ``args`` (X Protocol off, clients given mysql_native_password where the series
        has it), then ``settings``."""
        args = [self.server_binary, f"--port={port}", "--bind-address=127.0.0.1"]
        args += list(self.series.args)
        args += [f"--{k}={v}" for k, v in settings.items()]
        return args

    @property
    def series(self) -> Series:
        """This version's row of :attr:`series_table` (what differs between series, as data)."""
        return series_of(self.series_table, self.version)

    def environment(self) -> dict[str, str]:
        """The official images' variables (ours read the same): root from any host, with the series'
        password or none."""
        password = self.series.password
        root = {"MYSQL_ROOT_PASSWORD": password} if password else {"MYSQL_ALLOW_EMPTY_PASSWORD": "yes"}
        return {**root, "MYSQL_ROOT_HOST": "%"}

    def _failure_lines(self, log: str) -> list[str]:
        return [line for line in super()._failure_lines(log) if not HARMLESS_LOG.search(line)]

    def parse_options(self, text: str) -> set[str]:
        names: set[str] = set()
        in_vars = False
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("--") and not in_vars:
                # "  --innodb-buffer-pool-size=#  Description" style option lines
                names.add(self._normalize(stripped[2:].split()[0].split("=")[0].split("[")[0]))
            elif stripped.startswith("Variables (--variable-name=value)"):
                in_vars = True
            elif in_vars and stripped and not stripped.startswith("-"):
                names.add(self._normalize(stripped.split()[0]))
        return names

    def knows_option(self, key: str, known: set[str]) -> bool:
        name = self._normalize(key)
        if name in known or name.startswith("loose_"):  # mysqld itself ignores unknown loose- options
            return True
        return any(name.startswith(p) and name[len(p):] in known for p in OPTION_PREFIXES)

    # --- talking to it ------------------------------------------------------------------------
    def connect(self, port: int, database: str | None = None, autocommit: bool = True):
        # no TLS: with a password (9.x), caching_sha2_password's full authentication (the first login
        # after a start) encrypts it with the server's RSA key, which needs the cryptography package
        return pymysql.connect(host="127.0.0.1", port=port, user="root", password=self.series.password,
                               database=database, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S,
                               ssl_disabled=True)

    def create_database(self, conn, name: str) -> None:
        query(conn, f"CREATE DATABASE IF NOT EXISTS `{name}`")

    def effective_settings(self, conn) -> dict[str, str]:
        return {k: str(v) for k, v in query(conn, "SHOW GLOBAL VARIABLES")}

    def sysbench_args(self, port: int, database: str) -> list[str]:
        return ["--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={port}",
                "--mysql-user=root", f"--mysql-password={self.series.password}", f"--mysql-db={database}"]

    def connect_hint(self, port: int) -> str:
        password = f" -p{self.series.password}" if self.series.password else ""
        return f"mysql -h 127.0.0.1 -P {port} -u root{password}"

    # --- what the lab asks ------------------------------------------------------------------------
    def settle(self, conn, timeout_s: float = 30.0) -> bool:
        """Flush InnoDB's dirty pages (max dirty pct 0 until none is left, then restored); False if
        some were still dirty after ``timeout_s``."""
        old = query(conn, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct")[0][0]
        query(conn, "SET GLOBAL innodb_max_dirty_pages_pct = 0")
        try:
            return bool(poll(lambda: int(query(
                conn, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")[0][1]) == 0, timeout_s, 0.2))
        finally:
            query(conn, f"SET GLOBAL innodb_max_dirty_pages_pct = {float(old)}")

    def counters(self, conn, database: str) -> dict[tuple[str, str], float]:
        out = sql.name_value_rows(conn, "SHOW GLOBAL STATUS", "status")
        out.update(sql.name_value_rows(conn, "SELECT name, count FROM information_schema.innodb_metrics "
                                             f"WHERE {self.innodb_metrics_on}", "innodb_metrics"))
        return out

    def statements(self, conn) -> float:
        # client statements, prepared statements' executions included (this query too)
        return float(query(conn, "SHOW GLOBAL STATUS LIKE 'Questions'")[0][1])

    # --- what chapters ask ----------------------------------------------------------------------
    def comparable_settings(self) -> dict[str, str]:
        """The same durability, logging and instrumentation in every series; the rest of each
        version's defaults is left as shipped, and the drift table shows where it differs.

        Against MySQL 9.7.4's defaults (SELECT @@ on 2 CPUs), the baseline overrides: ``log_bin``
        (ON there, as since 8.0: off here), ``gtid_mode`` and ``enforce_gtid_consistency`` (ON since
        9.5: OFF here, as 5.7 and 8.0 ship them; with no binlog, GTIDs would still be written to
        mysql.gtid_executed at commit) and ``innodb_flush_method`` (O_DIRECT since 8.4: fsync here,
        8.0's). It states without changing them 9.7's ``sync_binlog`` 1, ``innodb_flush_log_at_trx_commit``
        1, ``innodb_doublewrite`` ON and ``performance_schema`` ON. It leaves, for the drift table to
        show: ``innodb_adaptive_hash_index`` (OFF since 8.4; ON in 5.7 and 8.0), ``innodb_log_writer_threads``
        (OFF here: 9.x turns them on only with more CPUs; 8.0.15 always has log writer threads and no
        option), ``innodb_io_capacity``/``innodb_io_capacity_max`` (10000/20000; 200/2000 before 8.4),
        the redo log's size (``innodb_redo_log_capacity`` 100 MiB; 8.0.15 two 48 MiB files,
        ``innodb_log_file_size``) and ``character_set_server`` (utf8mb4 since 8.0; latin1 in 5.7).
        These are performance defaults a version ships, part of what a comparison of versions
        measures; a chapter that studies one sets it itself, after these settings."""
        return {
            # No binary log. 8.0 turned it on by default (5.7 and MariaDB have it off): a second log
            # written and fsynced at every commit. One spelling for every version: mysqld reads
            # --skip-log-bin=ON as "no binlog" (5.7, 8.0, MariaDB). A chapter that studies it sets
            # log_bin after these (the later option wins; server_id below lets 5.7 accept it).
            "skip_log_bin": "ON",
            # 8.0's default; 5.7's is 0, under which it refuses log_bin. Nothing else depends on it here.
            "server_id": "1",
            # No GTIDs: the default of 5.7 and 8.0; 9.5+ turns both on. A chapter that studies them
            # sets gtid_settings(True) after these.
            "gtid_mode": "OFF",
            "enforce_gtid_consistency": "OFF",
            # The binlog fsynced at every commit (group) once a chapter turns it on: the default of
            # 5.7.7+ and 8.0; MariaDB's is 0.
            "sync_binlog": "1",
            # Redo written and fsynced at every commit: every version's durable default.
            # The "relaxed_commit" capability overrides this key and sync_binlog.
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
