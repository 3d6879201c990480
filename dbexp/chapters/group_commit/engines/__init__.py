"""What the group_commit chapter asks of an engine's commit path: the interface each engine module
of this folder implements (``innodb.py``: MySQL's binlog group commit over InnoDB's redo log,
``mariadb.py``: MariaDB's, ``postgres.py``: PostgreSQL's WAL flush). Which part serves which server
is ``chapter.PARTS``; the analysis reads the class attributes of the part serving a stored run."""

from __future__ import annotations

import abc


class CommitPath(abc.ABC):
    """One engine's durable commit as the chapter sets, counts and probes it, built with the server's flavor."""

    has_binlog: bool  # a second, replication log written at commit that the chapter turns on and off
    # how a committer waiting for its durable write is woken: "broadcast" (one condition for every
    # follower of a group), "own" (a condition of each follower's own), "lock release" (every waiter
    # for a lock wakes when it is released)
    wakeup: str
    probe_site: str | None  # the function a probe run counts a waiting committer's wakeups in (None: no probe)
    compares_redo_writers: bool  # the redo log's writing changed between the versions measured here
    counts_settle_s: float  # seconds after a run before commit_counters() holds all of its counts

    def __init__(self, flavor):
        self.flavor = flavor

    @abc.abstractmethod
    def commit_settings(self, binlog: bool) -> dict[str, str]:
        """Start-up settings: durable commits, and the binlog on or off where the engine has one."""

    @abc.abstractmethod
    def group_settings(self, sync_log: bool, delay_us: int) -> dict[str, str]:
        """Dynamic settings (the flavor's "set_global" capability): the log synced at every group or
        not, and a leader's wait of ``delay_us`` for more commits to join its group (0: none)."""

    @abc.abstractmethod
    def commit_counters(self, conn) -> dict[str, float]:
        """Cumulative counts of the commit path (``syncs`` of the log a durable commit waits on,
        ``log_bytes`` written to it, and what else the server counts); a count the server does not
        keep is absent."""

    @abc.abstractmethod
    def probe_program(self, path: str, pid: int) -> tuple[str, int, str]:
        """The bpftrace program for the server binary at ``path`` (process ``pid``), the probes it
        attaches, and what it probes, in words for its errors (only where ``probe_site`` is set)."""
