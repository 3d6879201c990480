"""MySQL: arguments, options, connections and settings."""

from __future__ import annotations

import pymysql

from dbexp.servers.flavor import Flavor


def _vtuple(version: str) -> tuple[int, ...]:
    out = []
    for part in version.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


class MySQL(Flavor):
    name = "mysql"
    default_db = "sbtest"
    server_binary = "mysqld"

    def command(self, port: int, settings: dict[str, str]) -> list[str]:
        args = [self.server_binary, f"--port={port}", "--bind-address=127.0.0.1"]
        args += self.version_args()
        args += [f"--{k}={v}" for k, v in settings.items()]
        return args

    def version_args(self) -> list[str]:
        """Keep X Protocol off loopback-only hosts and give clients mysql_native_password."""
        v = _vtuple(self.version)
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
        return ["mysqld"], None, ["--no-defaults", "--verbose", "--help"]

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
