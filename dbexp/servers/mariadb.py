"""MariaDB: the MySQL protocol, options and InnoDB questions; its own server binary and defaults."""

from __future__ import annotations

from dbexp.servers import capabilities
from dbexp.servers.mysql import NO_WRITER_THREADS, MySQL, Series

# One row: 10.11 and 11.8 take the same start options and log root in the same way (no password,
# mysql_native_password); innodb_log_file_size still sizes the redo log (one file since 10.5). MariaDB's
# InnoDB has no log writer threads (nor their option).
MARIADB_SERIES: tuple[Series, ...] = (Series((10, 0), gone=NO_WRITER_THREADS),)


class Uprobes(capabilities.Uprobes):
    executables = ("mariadbd", "mysqld")


class MariaDB(MySQL):
    name = "mariadb"
    title = "MariaDB"
    series_table = MARIADB_SERIES
    innodb_metrics_on = "enabled = 1"  # MariaDB's INNODB_METRICS has ENABLED, not MySQL's STATUS
    options_probe = (("mariadbd",), None, MySQL.options_probe[2])
    capabilities = capabilities.table(MySQL.capabilities, uprobes=Uprobes)

    def comparable_settings(self) -> dict[str, str]:
        """MySQL's baseline less its GTID options: MariaDB has no gtid_mode (its binlog always carries
        GTIDs, and with the binlog off there are none). Against 11.8's defaults the baseline overrides
        ``performance_schema`` (off by default) and ``innodb_flush_method`` as for 10.11, and states
        ``sync_binlog`` 1 (0 by default); it leaves ``innodb_io_capacity`` (200), the redo log's size
        (``innodb_log_file_size`` 96 MiB) and the collation to the drift table."""
        return {k: v for k, v in super().comparable_settings().items()
                if k not in ("gtid_mode", "enforce_gtid_consistency")}

    def environment(self) -> dict[str, str]:
        return {"MARIADB_ALLOW_EMPTY_ROOT_PASSWORD": "1", "MYSQL_ALLOW_EMPTY_PASSWORD": "yes",
                "MARIADB_ROOT_HOST": "%"}
