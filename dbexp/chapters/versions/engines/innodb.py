"""The versions chapter's part for InnoDB servers (MySQL, and MariaDB through it): what a twin or an
instance, a version's own defaults and the regression ablation set, which counter counts pages read into
the buffer pool, the source harness's post-write steps and the statement counters by type."""

from __future__ import annotations

from contextlib import closing

from dbexp.chapters.versions.engines import ROWS, VersionsEngine
from dbexp.chapters.versions.regression import BASELINE_CLIENT, FACTORS, configurations
from dbexp.experiments import binlog
from dbexp.servers.sql import query

# the status counters of each statement type (Com_*, counted for prepared statements' executions too)
COM = {"select": "Com_select", "update": "Com_update", "insert": "Com_insert", "delete": "Com_delete",
       "begin": "Com_begin", "commit": "Com_commit"}
# the rows read from the tables: InnoDB's own count (MySQL), else the server's (MariaDB 10.11 and 11.8 report no
# Innodb_rows_read); neither counts the rows of the lab's own reads of information_schema and SHOW STATUS,
# which the handler's counters do
READS = ("Innodb_rows_read", "Rows_read")
FLUSH_IO_CAPACITY = 20000  # pages per second the post-write flush may write (the versions' defaults: 200 to 10000)
FLUSH_WAIT_S = 60.0


class InnoDBVersions(VersionsEngine):
    pool_reads = ("status", "Innodb_buffer_pool_reads")  # pages read from the device into the pool
    ablation = True
    tag_setting = "server_id"  # what tagged() sets
    datadir = "/var/lib/mysql"
    table_format = ("character_set_server", "collation_server")  # the ablation's latin1 creates a latin1 table

    def baseline_settings(self) -> dict[str, str]:
        """The book's comparable baseline with commits relaxed (the CPU a statement costs, not the
        virtual disk's fsync), and what the regression source's baseline makes equal: the adaptive hash
        index off (as 9.x ships it; 5.7 and 8.0 ship it on) and the log writer threads on where the
        version has the option (8.0.15 always runs them, 5.7 and MariaDB have none)."""
        return {**self.flavor.comparable_settings(), **self.flavor.capability("relaxed_commit").settings(),
                "innodb_adaptive_hash_index": "OFF",
                **self.flavor.capability("series").supported({"innodb_log_writer_threads": "ON"})}

    def tagged(self, settings: dict[str, str], tag: str) -> dict[str, str]:
        """The server id (with the binlog off, or no replica, it names the server and changes nothing else):
        a number from the tag's characters."""
        return {**settings, "server_id": str(2 + sum((i + 1) * ord(ch) for i, ch in enumerate(tag)) % 100_000)}

    def own_default_settings(self) -> dict[str, str]:
        """What a user upgrading gets: the version's shipped defaults, commits relaxed as everywhere."""
        return self.flavor.capability("relaxed_commit").settings()

    def pool_settings(self, size_mb: int) -> dict[str, str]:
        return {"innodb_buffer_pool_size": f"{int(size_mb)}M"}

    def prepare_counting(self, server) -> None:
        """Nothing to do: InnoDB servers count statements (Questions) on their own."""

    def source_baseline(self) -> dict[str, str]:
        """The regression source's baseline: the chapter's (log writer threads on where the version has the
        option, the adaptive hash index off, innodb_flush_log_at_trx_commit 2 and sync_binlog 0), with the
        binlog on (row events, GTIDs off) and performance_schema on."""
        book = {k: v for k, v in self.baseline_settings().items() if k != "skip_log_bin"}
        return {**book, **binlog.binlog_settings(self.flavor), **self.flavor.capability("relaxed_commit").settings()}

    def ablation_settings(self) -> dict[str, tuple[dict[str, str], tuple[tuple[str, str], ...]]]:
        """Per configuration (configurations()), the server's settings and the client's sysbench options."""
        base = self.source_baseline()
        binlog_keys = set(binlog.binlog_settings(self.flavor)) - set(binlog.gtid_settings(False))
        out = {}
        for config, factors in configurations().items():
            settings, client = dict(base), dict(BASELINE_CLIENT)
            for f in (FACTORS[name] for name in factors):
                if f.binlog_off:
                    settings = {**{k: v for k, v in settings.items() if k not in binlog_keys}, "skip_log_bin": "ON"}
                settings.update(self.flavor.capability("series").supported(f.settings))
                client.update(f.client)
            out[config] = (settings, tuple(client.items()))
        return out

    def warm(self, conn, table: str) -> None:
        """The clustered index read whole (every row's c), then the secondary index k."""
        query(conn, f"SELECT SUM(LENGTH(c)) FROM {table}")
        query(conn, f"SELECT SUM(k) FROM {table} FORCE INDEX (k_1) WHERE k > 0")

    def post_write(self, conn, table: str) -> dict[str, object]:
        """ANALYZE TABLE, then the dirty pages written back (the harness lowers innodb_max_dirty_pages_pct and
        sleeps; here it is set to 0 with a higher I/O capacity until none is dirty, then restored)."""
        query(conn, f"ANALYZE TABLE {table}")
        names = ("innodb_io_capacity_max", "innodb_io_capacity", "innodb_max_dirty_pages_pct")
        old = dict(zip(names, query(conn, "SELECT " + ", ".join(f"@@GLOBAL.{n}" for n in names))[0]))
        try:
            query(conn, f"SET GLOBAL innodb_io_capacity_max = {max(FLUSH_IO_CAPACITY, int(old[names[0]]))}")
            query(conn, f"SET GLOBAL innodb_io_capacity = {max(FLUSH_IO_CAPACITY, int(old[names[1]]))}")
            clean = self.flavor.settle(conn, FLUSH_WAIT_S)
        finally:
            query(conn, f"SET GLOBAL innodb_io_capacity = {int(old[names[1]])}")
            query(conn, f"SET GLOBAL innodb_io_capacity_max = {int(old[names[0]])}")
        dirty = int(query(conn, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")[0][1])
        return {"analyzed": True, "dirty pages after the flush": dirty, "flushed": bool(clean)}

    @staticmethod
    def reads_as(setting: str, value: str, effective: dict) -> tuple[bool, object]:
        """As the base part, but for the binlog off (skip_log_bin ON): the server reports log_bin OFF."""
        from dbexp.servers.options import same_setting

        if setting == "skip_log_bin":
            seen = effective.get("log_bin")
            return (seen is not None and same_setting(str(seen), "OFF" if same_setting(str(value), "ON") else "ON")), seen
        if setting == "log_bin" and str(value).upper() not in ("ON", "OFF", "0", "1"):  # a base name: the binlog on
            seen = effective.get("log_bin")
            return (seen is not None and same_setting(str(seen), "ON")), seen
        return VersionsEngine.reads_as(setting, value, effective)

    @staticmethod
    def stored_counts(deltas: dict[tuple[str, str], float]) -> dict[str, float] | None:
        """The statement counts by type and the rows read from a run's stored status counters (runs measured
        before the chapter counted them itself read the same status counters); None where they are missing."""
        status = {name: v for (source, name), v in deltas.items() if source == "status"}
        if not any(name in status for name in COM.values()):
            return None
        out = {kind: float(status.get(name, 0.0)) for kind, name in COM.items()}
        out[ROWS] = float(next((status[n] for n in READS if n in status), 0.0))
        return out

    def statement_counts(self, server, database: str) -> dict[str, float]:
        names = list(COM.values()) + list(READS)
        with closing(server.connect()) as conn:
            rows = dict(query(conn, "SHOW GLOBAL STATUS WHERE Variable_name IN (" + ", ".join(f"'{n}'" for n in names)
                              + ")"))
        out = {kind: float(rows.get(name, 0)) for kind, name in COM.items()}
        out[ROWS] = float(next((float(rows[n]) for n in READS if n in rows), float("nan")))
        return out

