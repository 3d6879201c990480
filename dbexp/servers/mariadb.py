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

    def snapshot_wait_settings(self) -> dict[str, str]:
        return {**super().snapshot_wait_settings(), "performance_schema": "ON"}  # off by default in MariaDB
