"""PostgreSQL's WAL flush, as the group_commit chapter measures it: the settings of a durable commit
and of commit_delay, the WAL sync counts of pg_stat_wal and pg_stat_io, and the bpftrace program that
counts the wakeups of backends waiting for WALWriteLock."""

from __future__ import annotations

from dbexp.metrics.uprobe import exported, only_server
from dbexp.servers.sql import query

from . import CommitPath


class WalFlush(CommitPath):
    """A backend that must flush WAL waits for WALWriteLock in ``LWLockAcquireOrWait``; when the
    holder releases it every waiter wakes, and one whose record was flushed meanwhile returns."""

    has_binlog = False
    wakeup = "lock release"  # every waiter for WALWriteLock wakes when it is released
    probe_site = "XLogFlush"
    compares_redo_writers = False
    counts_settle_s = 0.5  # backends report their WAL statistics as they exit: wait for them after a run

    # the WAL flush a commit waits on (exported by every version's binary): XLogFlush(record), whose
    # loop waits for WALWriteLock in LWLockAcquireOrWait (false: woken when it was released, without
    # it, to look again whether its record is flushed yet), and issue_xlog_fsync, the sync itself
    SYMBOLS = {"flush": "XLogFlush", "wait": "LWLockAcquireOrWait", "sync": "issue_xlog_fsync"}
    # every XLogFlush, the LWLockAcquireOrWait calls inside it that returned false, and every
    # issue_xlog_fsync; a C bool comes back in the low byte of the return register
    PROGRAM = """
uprobe:{bin}:{flush} /{only}/ {{ @in[tid] = 1; @k[tid] = 0; }}
uretprobe:{bin}:{wait} /@in[tid] && (retval & 0xff) == 0/ {{ @k[tid] = @k[tid] + 1; }}
uretprobe:{bin}:{flush} /@in[tid]/ {{
  @commits = count(); @enrolls = count();
  if (@k[tid] > 0) {{ @waiters = count(); @waits = sum(@k[tid]); @khist = lhist(@k[tid], 1, 11, 1); }}
  delete(@in[tid]); delete(@k[tid]);
}}
uprobe:{bin}:{sync} /{only}/ {{ @syncs = count(); }}
BEGIN {{ printf("ready\\n"); }}
END {{ clear(@in); clear(@k); }}
"""
    PROBES = 6  # what PROGRAM attaches

    def commit_settings(self, binlog: bool) -> dict[str, str]:
        """Start-up settings: durable commits (there is no binlog to turn on)."""
        return {"synchronous_commit": "on", "fsync": "on"}

    def group_settings(self, sync_log: bool, delay_us: int) -> dict[str, str]:
        """Dynamic settings (the flavor's "set_global" capability): commit_delay, a backend about to flush waiting
        ``delay_us`` for others to join its flush when at least commit_siblings other transactions are
        open (5, the default, kept)."""
        return {"commit_delay": str(int(delay_us)), "commit_siblings": "5"}

    def commit_counters(self, conn) -> dict[str, float]:
        """Cumulative ``syncs`` of the WAL (also ``redo_syncs``) and ``log_bytes`` written to it:
        pg_stat_wal on 14 to 17, pg_stat_io on 18; 12 and 13 have no such count."""
        query(conn, "SELECT pg_stat_clear_snapshot()")
        out = {}
        views = {r[0] for r in query(conn, "SELECT viewname FROM pg_views WHERE viewname IN "
                                           "('pg_stat_wal', 'pg_stat_io')")}
        cols = {r[0] for r in query(conn, "SELECT attname FROM pg_attribute WHERE attrelid = "
                                          "'pg_catalog.pg_stat_wal'::regclass")} if "pg_stat_wal" in views else set()
        if "wal_sync" in cols:  # 14 to 17
            (syncs, wbytes), = query(conn, "SELECT wal_sync, wal_bytes FROM pg_stat_wal")
            out["syncs"], out["log_bytes"] = float(syncs), float(wbytes)
        elif "pg_stat_io" in views and "wal_bytes" in cols:  # 18: WAL's I/O moved to pg_stat_io
            (syncs,), = query(conn, "SELECT COALESCE(sum(fsyncs), 0) FROM pg_stat_io WHERE object = 'wal'")
            out["syncs"] = float(syncs)
            out["log_bytes"] = float(query(conn, "SELECT wal_bytes FROM pg_stat_wal")[0][0])
        if "syncs" in out:  # 12, 13: no view counts WAL syncs
            out["redo_syncs"] = out["syncs"]
        return out

    def probe_program(self, path: str, pid: int) -> tuple[str, int, str]:
        """The bpftrace program for the server binary at ``path``, the probes it attaches, and what
        it probes, in words for its errors."""
        text = self.PROGRAM.format(bin=path, only=only_server(pid),
                                   **{k: exported(path, v) for k, v in self.SYMBOLS.items()})
        return text, self.PROBES, f"the WAL flush of {path}"
