"""The versions chapter's part for InnoDB servers (MySQL, and MariaDB through it): what a twin,
a version's own defaults and the regression ablation set, and which counter counts pages read into
the buffer pool."""

from __future__ import annotations

from dbexp.chapters.versions.regression import BASELINE_CLIENT, FACTORS, configurations
from dbexp.chapters.versions.engines import VersionsEngine
from dbexp.experiments import binlog


class InnoDBVersions(VersionsEngine):
    pool_reads = ("status", "Innodb_buffer_pool_reads")  # pages read from the device into the pool
    ablation = True

    def baseline_settings(self) -> dict[str, str]:
        """The book's comparable baseline with commits relaxed (the CPU a statement costs, not the
        virtual disk's fsync), and what the regression source's baseline makes equal: the adaptive hash
        index off (as 9.x ships it; 5.7 and 8.0 ship it on) and the log writer threads on where the
        version has the option (8.0.15 always runs them, 5.7 and MariaDB have none)."""
        return {**self.flavor.comparable_settings(), **self.flavor.capability("relaxed_commit").settings(),
                "innodb_adaptive_hash_index": "OFF",
                **self.flavor.capability("series").supported({"innodb_log_writer_threads": "ON"})}

    def twin_settings(self) -> dict[str, str]:
        return {**self.baseline_settings(), "server_id": "2"}

    def own_default_settings(self) -> dict[str, str]:
        """What a user upgrading gets: the version's shipped defaults, commits relaxed as everywhere."""
        return self.flavor.capability("relaxed_commit").settings()

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
