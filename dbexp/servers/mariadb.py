"""MariaDB: the MySQL protocol, options and InnoDB questions; its own server binary and defaults."""

from __future__ import annotations

from dbexp.servers.mysql import MySQL


class MariaDB(MySQL):
    name = "mariadb"
    title = "MariaDB"
    supports_bare = False  # Debian's package is installed inside the image: there is no archive to unpack
    base_version = "10.11"
    innodb_metrics_on = "enabled = 1"  # MariaDB's INNODB_METRICS has ENABLED, not MySQL's STATUS
    executables = ("mariadbd", "mysqld")
    # Debian's mariadbd exports no ReadView function (ReadView::open is internal): time it another way
    snapshot_symbol = None
    # Its read-write transactions live in a lock-free hash (rw_trx_hash) whose buckets stay once grown,
    # and a ReadView iterates all of it: reads stayed 3.7x slower after 10,000 prepared transactions had
    # come and gone (a side test of the readview chapter). A point of H must not follow a larger H.
    trx_registry_shrinks = False

    def version_args(self) -> list[str]:
        return []

    def environment(self) -> dict[str, str]:
        return {"MARIADB_ALLOW_EMPTY_ROOT_PASSWORD": "1", "MYSQL_ALLOW_EMPTY_PASSWORD": "yes",
                "MARIADB_ROOT_HOST": "%"}

    def options_probe(self):
        return ["mariadbd"], None, ["--no-defaults", "--verbose", "--help"]

    def statement_timing_settings(self) -> dict[str, str]:
        # the history consumers record only what the "current" one does: on by default in MySQL, off here
        return {"performance-schema-consumer-events-statements-current": "ON", **super().statement_timing_settings()}

    def buffer_pool_settings(self, mb: int) -> dict[str, str]:
        settings = super().buffer_pool_settings(mb)
        del settings["innodb_buffer_pool_instances"]  # one instance always since 10.5: the option is gone
        return settings

    COMMIT_COND = "wait/synch/cond/sql/THD::COND_wakeup_ready"  # each follower's own condition
    commit_symbols = {}  # its binlog functions are exported, but the chapter probes MySQL's only

    def commit_settings(self, binlog: bool) -> dict[str, str]:
        return {**super().commit_settings(binlog), "performance_schema": "ON"}  # off by default in MariaDB

    def group_settings(self, sync_log: bool, delay_us: int) -> dict[str, str]:
        # a leader waits up to binlog_commit_wait_usec for binlog_commit_wait_count commits: a count
        # no group reaches makes it wait the whole delay, as MySQL's sync delay does
        return {"sync_binlog": "1" if sync_log else "0", "binlog_commit_wait_usec": str(int(delay_us)),
                "binlog_commit_wait_count": "100000" if delay_us else "0"}

    def commit_counters(self, conn) -> dict[str, float]:
        out = super().commit_counters(conn)
        if "binlog_syncs" in out:  # the binlog is on, and MariaDB counts its groups itself
            status = dict(self.query(conn, "SHOW GLOBAL STATUS WHERE Variable_name IN "
                                           "('Binlog_commits', 'Binlog_group_commits')"))
            out["binlog_groups"] = float(status["Binlog_group_commits"])
            out["binlog_commits"] = float(status["Binlog_commits"])
        return out

    def snapshot_wait_settings(self) -> dict[str, str]:
        return {**super().snapshot_wait_settings(), "performance_schema": "ON"}  # off by default in MariaDB
