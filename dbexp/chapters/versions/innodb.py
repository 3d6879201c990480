"""The versions chapter's part for InnoDB servers (MySQL, and MariaDB through it): what a twin,
a version's own defaults and the regression ablation set, and which counter counts pages read into
the buffer pool."""

from __future__ import annotations

from dbexp.chapters.gtid.binlog import MySQLBinlog

# the regression source's factors, each changed alone from its baseline (binlog and performance_schema
# on, the adaptive hash index off, commits relaxed): configuration -> the settings it changes
FACTORS = {
    "binlog off": {"skip_log_bin": "ON"},
    "P_S off": {"performance_schema": "OFF"},
    "doublewrite off": {"innodb_doublewrite": "OFF"},
    "latin1": {"character_set_server": "latin1", "collation_server": "latin1_swedish_ci"},
    "AHI on": {"innodb_adaptive_hash_index": "ON"},
}
# what the ablation cannot change on the lab's versions, and why
NOT_CHANGED = {
    "innodb_log_writer_threads": "an option from 8.0.22: 5.7.22 has no log writer threads, 8.0.15 always runs "
                                 "them with no option, 9.7 leaves them off on 2 CPUs",
    "the redo log's layout and undo tablespaces": "each version's own format, not a setting: 8.0.30+ sizes redo "
                                                  "by innodb_redo_log_capacity, 5.7 by files",
    "the change buffer": "innodb_change_buffering is ignored for these cached updates of a non-indexed column "
                         "(no secondary index page is read)",
}


class InnoDBVersions:
    pool_reads = ("status", "Innodb_buffer_pool_reads")  # pages read from the device into the pool
    ablation = True

    def __init__(self, flavor):
        self.flavor = flavor

    def baseline_settings(self) -> dict[str, str]:
        """The book's comparable baseline with commits relaxed (the CPU a statement costs, not the
        virtual disk's fsync)."""
        return {**self.flavor.comparable_settings(), **self.flavor.relaxed_commit_settings()}

    def twin_settings(self) -> dict[str, str]:
        return {**self.baseline_settings(), "server_id": "2"}

    def own_default_settings(self) -> dict[str, str]:
        """What a user upgrading gets: the version's shipped defaults, commits relaxed as everywhere."""
        return self.flavor.relaxed_commit_settings()

    def prepare_counting(self, server) -> None:
        """Nothing to do: InnoDB servers count statements (Questions) on their own."""

    def ablation_settings(self) -> dict[str, dict[str, str]]:
        """The regression source's baseline and each factor changed alone from it."""
        base = {**self.baseline_settings(), **MySQLBinlog(self.flavor).binlog_settings(),
                **self.flavor.relaxed_commit_settings(), "innodb_adaptive_hash_index": "OFF"}
        out = {"source baseline": base}
        for name, change in FACTORS.items():
            settings = dict(base)
            if name == "binlog off":
                settings = {k: v for k, v in settings.items() if k not in MySQLBinlog(self.flavor).binlog_settings()}
            out[name] = {**settings, **change}
        return out
