"""MariaDB's binlog group commit: MySQL's queue, with a wakeup of each follower's own and groups
the server counts itself."""

from __future__ import annotations

from dbexp.servers.sql import query

from .innodb import BinlogGroupCommit


class MariaDBGroupCommit(BinlogGroupCommit):
    """MariaDB wakes each follower on a condition of its own (``THD::COND_wakeup_ready``)."""

    wakeup = "own"
    probe_site = None  # its binlog functions are exported, but the chapter probes MySQL's only
    compares_redo_writers = False

    COMMIT_COND = "wait/synch/cond/sql/THD::COND_wakeup_ready"  # each follower's own condition

    log_writer_threads = False  # MariaDB's InnoDB has no such threads nor option

    def commit_settings(self, binlog: bool) -> dict[str, str]:
        return {**super().commit_settings(binlog), "performance_schema": "ON"}  # off by default in MariaDB

    def group_settings(self, sync_log: bool, delay_us: int) -> dict[str, str]:
        # a leader waits up to binlog_commit_wait_usec for binlog_commit_wait_count commits: a count
        # no group reaches makes it wait the whole delay, as MySQL's sync delay does
        return {"sync_binlog": "1" if sync_log else "0", "binlog_commit_wait_usec": str(int(delay_us)),
                "binlog_commit_wait_count": "100000" if delay_us else "0"}

    def commit_counters(self, conn) -> dict[str, float]:
        """MySQL's counts, and where the binlog is on ``binlog_groups`` and ``binlog_commits``, as
        MariaDB counts them itself."""
        out = super().commit_counters(conn)
        if "binlog_syncs" in out:  # the binlog is on, and MariaDB counts its groups itself
            status = dict(query(conn, "SHOW GLOBAL STATUS WHERE Variable_name IN "
                                      "('Binlog_commits', 'Binlog_group_commits')"))
            out["binlog_groups"] = float(status["Binlog_group_commits"])
            out["binlog_commits"] = float(status["Binlog_commits"])
        return out
