"""MariaDB: the MySQL protocol, options and InnoDB questions; its own server binary and defaults."""

from __future__ import annotations

from dbexp.servers.mysql import MySQL


class MariaDB(MySQL):
    name = "mariadb"
    title = "MariaDB"
    supports_bare = False  # Debian's package is installed inside the image: there is no archive to unpack
    innodb_metrics_on = "enabled = 1"  # MariaDB's INNODB_METRICS has ENABLED, not MySQL's STATUS
    executables = ("mariadbd", "mysqld")

    def version_args(self) -> list[str]:
        return []

    def environment(self) -> dict[str, str]:
        return {"MARIADB_ALLOW_EMPTY_ROOT_PASSWORD": "1", "MYSQL_ALLOW_EMPTY_PASSWORD": "yes",
                "MARIADB_ROOT_HOST": "%"}

    def options_probe(self):
        return ["mariadbd"], None, ["--no-defaults", "--verbose", "--help"]


