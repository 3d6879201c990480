"""MySQL's binlog group commit (over InnoDB's redo log), as the group_commit chapter measures it:
the server's settings for the commit path, its counts of syncs and of waits on the group's wakeup,
and the bpftrace program that counts where a follower waits."""

from __future__ import annotations

from dbexp.metrics.uprobe import exported, mapped_library, only_server
from dbexp.servers.sql import query

from . import CommitPath


class BinlogGroupCommit(CommitPath):
    """MySQL (5.7 and later): committing sessions queue for the binlog's flush, sync and commit
    stages; the first in each queue leads it, and a finished group's followers are woken by one
    broadcast of ``MYSQL_BIN_LOG::COND_done``."""

    has_binlog = True  # a second, replication log written at commit that the chapter turns on and off
    wakeup = "broadcast"  # one condition for every follower of a group
    probe_site = "enroll_for"  # where the probe counts a waiting session's wakeups (None: no probe)
    # the redo log's writing changed between the versions measured here (8.0's log_writer and
    # log_flusher threads; 5.7's sessions write and sync it themselves)
    compares_redo_writers = True
    counts_settle_s = 0.0  # status and performance_schema count as commits happen: nothing to wait for
    log_writer_threads = True  # innodb_log_writer_threads ON where the series has the option (8.0.22 on)

    COMMIT_COND = "wait/synch/cond/sql/MYSQL_BIN_LOG::COND_done"  # one broadcast per finished group
    # dynamic symbols of the binlog group commit (5.7 and 8.0.15 name the queue Stage_manager, their mutex
    # types differ; later versions, 9.7 among them, name it Commit_stage_manager, whose enroll_for also
    # takes the mutex to enter with)
    SYMBOLS = {"ordered_commit": "_ZN13MYSQL_BIN_LOG14ordered_commitEP3THDbb",
               "sync": "_ZN13MYSQL_BIN_LOG16sync_binlog_fileEb",
               "enroll": ("_ZN13Stage_manager10enroll_forENS_7StageIDEP3THDP14st_mysql_mutex",
                          "_ZN13Stage_manager10enroll_forENS_7StageIDEP3THDP13mysql_mutex_t",
                          "_ZN20Commit_stage_manager10enroll_forENS_7StageIDEP3THDP13mysql_mutex_tS4_")}
    # every Stage_manager::enroll_for (a session joining a stage's queue; a follower waits inside it
    # until its group is done), the pthread_cond_wait calls made inside it, every binlog sync and
    # every ordered commit; a follower's time inside enroll_for (from entering it to its return) is its
    # wait: summed (@wait_ns), and counted where it passed 100 ms (@long, the source's "over 100 ms", with
    # the waits of those followers, @long_waits); and every time a follower that has begun waiting is switched
    # out: asleep (@fsleeps; in its second wait or later, after a wakeup that found its commit not done,
    # @needless_sleeps), or preempted (@fpreempted). The scheduler reports a sleeping task's state with bit 0
    # or 1 set (S or D) and a preempted one's without (TASK_REPORT_MAX).
    PROGRAM = """
uprobe:{bin}:{enroll} /{only}/ {{ @in[tid] = nsecs; @k[tid] = 0; }}
uprobe:{libc}:pthread_cond_wait /@in[tid]/ {{ @k[tid] = @k[tid] + 1; }}
tracepoint:sched:sched_switch /@k[args->prev_pid] > 0/ {{
  if (args->prev_state & 3) {{
    @fsleeps = count();
    if (@k[args->prev_pid] > 1) {{ @needless_sleeps = count(); }}
  }} else {{ @fpreempted = count(); }}
}}
uretprobe:{bin}:{enroll} /@in[tid]/ {{
  @enrolls = count();
  if (@k[tid] > 0) {{
    @waiters = count(); @waits = sum(@k[tid]); @khist = lhist(@k[tid], 1, 11, 1);
    $d = nsecs - @in[tid]; @wait_ns = sum($d);
    if ($d > 100000000) {{ @long = count(); @long_waits = sum(@k[tid]); }}
  }}
  delete(@in[tid]); delete(@k[tid]);
}}
uprobe:{bin}:{sync} /{only}/ {{ @syncs = count(); }}
uprobe:{bin}:{ordered} /{only}/ {{ @commits = count(); }}
BEGIN {{ printf("ready\\n"); }}
END {{ clear(@in); clear(@k); }}
"""
    PROBES = 8  # what PROGRAM attaches

    def commit_settings(self, binlog: bool) -> dict[str, str]:
        """Start-up settings: durable commits, the binlog on or off, and the condition instrument
        commit_counters() reads."""
        out = {"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1",
               # condition instruments are off by default: counted, not timed (the cheapest state)
               "performance-schema-instrument": f"{self.COMMIT_COND}=COUNTED"}
        if self.log_writer_threads:
            # the redo log written and flushed by its own threads, as 8.0.15 always does (it has no option)
            # and as the sources' baselines run 8.0; 9.x turns them on by default only with more CPUs
            out.update(self.flavor.capability("series").supported({"innodb_log_writer_threads": "ON"}))
        if binlog:
            out["log_bin"] = "binlog"  # after comparable_settings()' skip_log_bin: the later option wins
        return out

    def group_settings(self, sync_log: bool, delay_us: int) -> dict[str, str]:
        """Dynamic settings (the flavor's "set_global" capability): the binlog synced at every group or left to the
        OS, and a leader's wait of ``delay_us`` for more commits to join its group (0: none)."""
        return {"sync_binlog": "1" if sync_log else "0", "binlog_group_commit_sync_delay": str(int(delay_us))}

    def binlog_on(self, conn) -> bool:
        return str(query(conn, "SELECT @@GLOBAL.log_bin")[0][0]) in ("1", "ON")

    def commit_counters(self, conn) -> dict[str, float]:
        """Cumulative counts of the commit path: ``syncs`` of the log a durable commit waits on (the
        binlog where it is on, else the redo log), ``redo_syncs``, ``binlog_syncs``, ``waits`` of
        committing sessions on their group's wakeup and ``log_bytes`` written to that log. A count
        the server does not keep is absent."""
        out = {}
        status = dict(query(conn, "SHOW GLOBAL STATUS WHERE Variable_name IN "
                                  "('Innodb_os_log_fsyncs', 'Innodb_os_log_written')"))
        if "Innodb_os_log_fsyncs" in status:  # MariaDB 10.11 keeps no count of redo log syncs
            out["redo_syncs"] = float(status["Innodb_os_log_fsyncs"])
        binlog = query(conn, "SELECT COUNT_MISC, SUM_NUMBER_OF_BYTES_WRITE FROM "
                             "performance_schema.file_summary_by_event_name "
                             "WHERE EVENT_NAME = 'wait/io/file/sql/binlog'")
        if self.binlog_on(conn):  # a binlog file's syncs are among its "misc" operations (open, close, sync, ...)
            out["binlog_syncs"] = float(binlog[0][0])
            out["syncs"], out["log_bytes"] = out["binlog_syncs"], float(binlog[0][1])
        else:
            out["log_bytes"] = float(status["Innodb_os_log_written"])
            if "redo_syncs" in out:
                out["syncs"] = out["redo_syncs"]
        waits = query(conn, "SELECT COUNT_STAR FROM performance_schema.events_waits_summary_global_by_event_name "
                            "WHERE EVENT_NAME = %s", (self.COMMIT_COND,))
        if waits:
            out["waits"] = float(waits[0][0])
        return out

    def probe_program(self, path: str, pid: int) -> tuple[str, int, str]:
        """The bpftrace program for the server binary at ``path`` (process ``pid``), the probes it
        attaches, and what it probes, in words for its errors."""
        s = self.SYMBOLS
        text = self.PROGRAM.format(bin=path, libc=mapped_library(pid, "libc.so.6"), only=only_server(pid),
                                   enroll=exported(path, s["enroll"]), sync=s["sync"], ordered=s["ordered_commit"])
        return text, self.PROBES, f"the binlog group commit of {path}"
