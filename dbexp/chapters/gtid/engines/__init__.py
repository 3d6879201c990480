"""The gtid chapter's engine part: what the chapter asks of a server whose binary log and GTIDs it
measures. One module per engine implements it (innodb.py: MySQL); the chapter's PARTS
(dbexp.chapters.gtid.chapter) maps flavors to them and says why the others are skipped."""

from __future__ import annotations

from abc import ABC, abstractmethod


class GtidEngine(ABC):
    """One engine's part of the gtid chapter, built with the server's flavor."""

    def __init__(self, flavor):
        self.flavor = flavor

    @abstractmethod
    def configurations(self) -> dict[str, dict[str, str]]:
        """The server settings of each configuration (configs.CONFIGS)."""

    @abstractmethod
    def binlog_bytes(self, conn) -> float | None:
        """Bytes in the binary log now, or None where it is off (per-commit bytes come from two reads)."""

    @abstractmethod
    def gtids_executed(self, conn) -> float:
        """How many GTIDs the server has executed (per-run GTIDs come from two reads: the witness that each
        commit got one)."""

    @abstractmethod
    def binlog_end(self, conn) -> tuple[str, int] | None:
        """Where the binary log ends now (its last file and that file's size), or None where it is off: the
        position a window's events are read from afterwards (:meth:`binlog_events`)."""

    @abstractmethod
    def binlog_events(self, conn, start: tuple[str, int], limit: int) -> dict[str, float]:
        """The events of the binary log from ``start`` (at most ``limit``), counted by type up to the last
        transaction's end: {event type: count, "transactions": the transactions ended}."""

    @abstractmethod
    def compiled_defaults(self, server) -> dict[str, bool]:
        """Whether GTIDs are on by the binary's own defaults, no option file read (``gtid_mode``,
        ``enforce_gtid_consistency``: True where ON)."""

    @abstractmethod
    def gtid_table_per_commit(self) -> bool:
        """Whether each commit's GTID is written to a table (what the GTID source's versions do)."""

    @abstractmethod
    def has_log_writer_threads_option(self) -> bool:
        """Whether the series has the log writer threads' option (the regression source's first factor)."""

    @abstractmethod
    def declared_state(self, conn, settings: dict[str, str]) -> dict[str, tuple[bool, object]]:
        """A window's starting state, checked: the configuration's ``settings`` in effect where the
        chapter varies them, and no purge backlog ({check: (ok, what was seen)})."""
