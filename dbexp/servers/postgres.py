"""PostgreSQL: arguments, settings, connections."""

from __future__ import annotations

import psycopg

from dbexp.servers.flavor import Flavor


class Postgres(Flavor):
    name = "postgres"
    default_db = "sbtest"

    def command(self, port: int, settings: dict[str, str]) -> list[str]:
        args = ["postgres", "-c", f"port={port}", "-c", "listen_addresses=127.0.0.1"]
        for k, v in settings.items():
            args += ["-c", f"{k}={v}"]
        return args

    def environment(self) -> dict[str, str]:
        return {"POSTGRES_HOST_AUTH_METHOD": "trust", "POSTGRES_PASSWORD": ""}

    def options_probe(self):
        return ["postgres"], "postgres", ["--describe-config"]

    def parse_options(self, text: str) -> set[str]:
        return {self.normalize(line.split("\t")[0]) for line in text.splitlines() if "\t" in line}

    @staticmethod
    def normalize(name: str) -> str:
        return name.strip().lower()

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
