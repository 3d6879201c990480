"""The versions chapter's part for PostgreSQL: statements counted by pg_stat_statements (the marks
of measure_together need a server's own count, and the witness its statements by type), a twin or an
instance told apart, shared buffers, the counter of blocks read into shared_buffers and the source
harness's post-write steps."""

from __future__ import annotations

from contextlib import closing

from dbexp.chapters.versions.engines import ROWS, XACT, VersionsEngine
from dbexp.servers.sql import query
from dbexp.waits import poll

EXTENSION = "pg_stat_statements"
SETTLE_S = 3.0  # at most, for the window's sessions to end
TYPES = ("select", "update", "insert", "delete", "begin", "commit")


class PostgresVersions(VersionsEngine):
    pool_reads = ("pg_stat_database", "blks_read")  # blocks not found in shared_buffers
    ablation = False
    tag_setting = "cluster_name"  # what tagged() sets
    datadir = "/var/lib/postgresql/data"

    def baseline_settings(self) -> dict[str, str]:
        return {**self.flavor.comparable_settings(), **self.flavor.capability("relaxed_commit").settings(),
                "shared_preload_libraries": EXTENSION}

    def tagged(self, settings: dict[str, str], tag: str) -> dict[str, str]:
        """The cluster's name (shown in its processes' titles only)."""
        return {**settings, "cluster_name": tag.replace(" ", "_")}

    def own_default_settings(self) -> dict[str, str]:
        return {**self.flavor.capability("relaxed_commit").settings(), "shared_preload_libraries": EXTENSION}

    def pool_settings(self, size_mb: int) -> dict[str, str]:
        """Shared buffers: a sequential scan of a table larger than a quarter of them reads through a small
        ring of buffers instead (the bulk-read strategy), so they are made four times the table or more."""
        return {"shared_buffers": f"{int(size_mb)}MB"}

    def prepare_counting(self, server) -> None:
        """The extension's view in the database the marks connect to (the server's default)."""
        conn = server.connect()
        try:
            query(conn, f"CREATE EXTENSION IF NOT EXISTS {EXTENSION}")
        finally:
            conn.close()

    def ablation_settings(self) -> dict:
        return {}

    def warm(self, conn, table: str) -> None:
        """The heap read whole (a sequential scan, below a quarter of shared buffers: through the buffers), then
        both indexes by index-only scans."""
        query(conn, f"SELECT SUM(LENGTH(c)) FROM {table}")
        query(conn, "SET enable_seqscan = off")
        try:
            query(conn, f"SELECT SUM(k) FROM {table} WHERE k > 0")
            query(conn, f"SELECT COUNT(id) FROM {table} WHERE id > 0")
        finally:
            query(conn, "RESET enable_seqscan")

    def post_write(self, conn, table: str) -> dict[str, object]:
        """The harness's VACUUM (ANALYZE, INDEX_CLEANUP ON) of the table and a CHECKPOINT."""
        query(conn, f"VACUUM (ANALYZE, INDEX_CLEANUP ON) {table}")
        query(conn, "CHECKPOINT")
        return {"vacuumed": True, "checkpoint": True}

    @staticmethod
    def stored_counts(deltas: dict[tuple[str, str], float]) -> dict[str, float] | None:
        """Runs measured before the chapter counted statements by type stored none (pg_stat_database has no
        count per type)."""
        return None

    def statement_counts(self, server, database: str) -> dict[str, float]:
        """pg_stat_statements' calls of the statements on sbtest tables (and BEGIN, COMMIT) by their first word
        (read in the server's default database, where the view was created), the database's committed
        transactions (XACT: pg_stat_statements 18 counts a session's BEGIN and COMMIT once, not each), and the
        rows the table's scans read (its sequential scans' rows and its indexes' entries, pg_stat_user_tables
        and pg_stat_user_indexes: autovacuum's reads not among them), once no other client is connected to the
        database (a session's counts reach the statistics when it ends)."""
        with closing(server.connect()) as conn:
            poll(lambda: not query(conn, "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> "
                                         "pg_backend_pid() AND backend_type = 'client backend'", (database,))[0][0],
                 SETTLE_S, 0.02)
            rows = query(conn, f"SELECT lower(split_part(ltrim(query), ' ', 1)), SUM(calls) FROM {EXTENSION} "
                               "WHERE query ILIKE '%%sbtest%%' OR upper(query) IN ('BEGIN', 'COMMIT') GROUP BY 1")
            xact = float(query(conn, "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", (database,))[0][0])
        calls = {str(k): float(v) for k, v in rows}
        out = {kind: calls.get(kind, 0.0) for kind in TYPES}
        with closing(server.connect(database)) as conn:
            seq = query(conn, "SELECT COALESCE(SUM(seq_tup_read), 0) FROM pg_stat_user_tables WHERE relname LIKE 'sbtest%%'")
            idx = query(conn, "SELECT COALESCE(SUM(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relname LIKE 'sbtest%%'")
        out[ROWS] = float(seq[0][0]) + float(idx[0][0])
        out[XACT] = xact
        return out
