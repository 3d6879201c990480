"""The interface every server flavor implements (one module per flavor beside this one)."""

from __future__ import annotations

import abc
from typing import Any


class Flavor(abc.ABC):
    """How to run, reach and question one kind of server; knows nothing of containers."""

    name: str
    default_db: str  # the database sysbench and the experiments use

    def __init__(self, version: str):
        self.version = version  # the catalog's version (exact for offline builds)

    # --- starting ---------------------------------------------------------------------------
    @abc.abstractmethod
    def command(self, port: int, settings: dict[str, str]) -> list[str]:
        """Arguments to the image's entrypoint (official images and ours share the contract)."""

    @abc.abstractmethod
    def environment(self) -> dict[str, str]:
        """Environment for the container."""

    @abc.abstractmethod
    def options_probe(self) -> tuple[list[str], str | None, list[str]]:
        """(entrypoint, user, args) that list every option this version knows."""

    @abc.abstractmethod
    def parse_options(self, text: str) -> set[str]:
        """Option names from the probe's output, normalized with :meth:`normalize`."""

    @staticmethod
    def normalize(name: str) -> str:
        return name.strip().lower().replace("-", "_")

    # --- talking to it ------------------------------------------------------------------------
    @abc.abstractmethod
    def connect(self, port: int, database: str | None = None, autocommit: bool = True) -> Any:
        """A DB-API connection over 127.0.0.1."""

    @abc.abstractmethod
    def create_database(self, conn, name: str) -> None: ...

    @abc.abstractmethod
    def effective_settings(self, conn) -> dict[str, str]:
        """Every setting the running server uses (SHOW GLOBAL VARIABLES, pg_settings)."""

    @abc.abstractmethod
    def sysbench_args(self, port: int, database: str) -> list[str]:
        """sysbench driver options to reach this server."""

    @abc.abstractmethod
    def connect_hint(self, port: int) -> str:
        """A command line a person can paste to connect."""

    def version_sql(self) -> str:
        return "SELECT VERSION()"

    @staticmethod
    def query(conn, sql: str, params=None) -> list[tuple]:
        cur = conn.cursor()
        try:
            cur.execute(sql, params)
            return list(cur.fetchall()) if cur.description else []
        finally:
            cur.close()
