"""The versions chapter's part for PostgreSQL: statements counted by pg_stat_statements (the marks
of measure_together need a server's own count), a twin, and the counter of blocks read into
shared_buffers."""

from __future__ import annotations

from dbexp.chapters.versions.engines import VersionsEngine
from dbexp.servers.sql import query

EXTENSION = "pg_stat_statements"


class PostgresVersions(VersionsEngine):
    pool_reads = ("pg_stat_database", "blks_read")  # blocks not found in shared_buffers
    ablation = False

    def baseline_settings(self) -> dict[str, str]:
        return {**self.flavor.comparable_settings(), **self.flavor.capability("relaxed_commit").settings(),
                "shared_preload_libraries": EXTENSION}

    def twin_settings(self) -> dict[str, str]:
        return {**self.baseline_settings(), "cluster_name": "twin"}

    def own_default_settings(self) -> dict[str, str]:
        return {**self.flavor.capability("relaxed_commit").settings(), "shared_preload_libraries": EXTENSION}

    def prepare_counting(self, server) -> None:
        """The extension's view in the database the marks connect to (the server's default)."""
        conn = server.connect()
        try:
            query(conn, f"CREATE EXTENSION IF NOT EXISTS {EXTENSION}")
        finally:
            conn.close()

    def ablation_settings(self) -> dict:
        return {}
