"""The versions chapter's part for InnoDB servers (MySQL, and MariaDB through it): what a twin,
a version's own defaults and the regression ablation set, and which counter counts pages read into
the buffer pool."""

from __future__ import annotations

from dataclasses import dataclass, field

from dbexp.chapters.gtid.binlog import MySQLBinlog


@dataclass(frozen=True)
class Factor:
    """One of the regression ablation's factors: what it changes from the source's baseline, on the
    server (settings; ``binlog_off`` takes the binlog's own settings away) or on the client (sysbench
    options)."""

    settings: dict[str, str] = field(default_factory=dict)
    client: tuple[tuple[str, str], ...] = ()
    binlog_off: bool = False


# the regression source's factors, in the order its table of steps takes them away (each step on top of
# the ones before), then the others the issue names, each of which is only changed alone
FACTORS: dict[str, Factor] = {
    "writer threads off": Factor({"innodb_log_writer_threads": "OFF"}),
    "P_S off": Factor({"performance_schema": "OFF"}),
    "binlog off": Factor(binlog_off=True),
    "prepared statements": Factor(client=(("db-ps-mode", "auto"),)),
    "flush_log_at_trx_commit=0": Factor({"innodb_flush_log_at_trx_commit": "0"}),
    "doublewrite off": Factor({"innodb_doublewrite": "OFF"}),
    "latin1": Factor({"character_set_server": "latin1", "collation_server": "latin1_swedish_ci"}),
    "AHI on": Factor({"innodb_adaptive_hash_index": "ON"}),
}
STEPS = ("writer threads off", "P_S off", "binlog off", "prepared statements", "flush_log_at_trx_commit=0")
BASELINE = "source baseline"
BASELINE_CLIENT = (("db-ps-mode", "disable"),)  # the source's: every statement sent as text


def step_name(k: int) -> str:
    """The configuration with the source's first ``k`` steps taken (step 1 is its first factor alone)."""
    return STEPS[0] if k == 1 else f"steps 1-{k}"


def configurations() -> dict[str, tuple[str, ...]]:
    """Every configuration of the ablation and the factors it takes away from the source's baseline:
    the baseline, the source's steps one on top of the other, and each factor alone (the first step is
    its first factor alone)."""
    out: dict[str, tuple[str, ...]] = {BASELINE: ()}
    for k in range(1, len(STEPS) + 1):
        out[step_name(k)] = STEPS[:k]
    for name in FACTORS:
        out.setdefault(name, (name,))
    return out


# what the ablation cannot change on the lab's versions, and why
NOT_CHANGED = {
    "innodb_log_writer_threads on 5.7.22 and 8.0.15": "an option from 8.0.22: 5.7 has no log writer threads, "
                                                      "8.0.15 always runs them, so step 1 changes 9.7 only",
    "the redo log's layout and undo tablespaces": "each version's own format, not a setting: 8.0.30+ sizes redo "
                                                  "by innodb_redo_log_capacity, 5.7 by files",
    "the change buffer": "it buffers changes to secondary index pages not in the pool; update-nonindex changes "
                         "column c, which no secondary index holds, and the table is cached",
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

    def source_baseline(self) -> dict[str, str]:
        """The regression source's baseline: the book's, with the binlog on (row events, GTIDs off),
        performance_schema on, log writer threads on where the version has the option, the adaptive hash
        index off, innodb_flush_log_at_trx_commit 2 and sync_binlog 0."""
        book = {k: v for k, v in self.baseline_settings().items() if k != "skip_log_bin"}
        return {**book, **MySQLBinlog(self.flavor).binlog_settings(), **self.flavor.relaxed_commit_settings(),
                **self.flavor.supported({"innodb_log_writer_threads": "ON"}), "innodb_adaptive_hash_index": "OFF"}

    def ablation_settings(self) -> dict[str, tuple[dict[str, str], tuple[tuple[str, str], ...]]]:
        """Per configuration (configurations()), the server's settings and the client's sysbench options."""
        base = self.source_baseline()
        binlog = set(MySQLBinlog(self.flavor).binlog_settings()) - set(MySQLBinlog.gtid_settings(False))
        out = {}
        for config, factors in configurations().items():
            settings, client = dict(base), dict(BASELINE_CLIENT)
            for f in (FACTORS[name] for name in factors):
                if f.binlog_off:
                    settings = {**{k: v for k, v in settings.items() if k not in binlog}, "skip_log_bin": "ON"}
                settings.update(self.flavor.supported(f.settings))
                client.update(f.client)
            out[config] = (settings, tuple(client.items()))
        return out
