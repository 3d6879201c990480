"""What only some chapters ask of a server, asked for by name.

:class:`~dbexp.servers.flavor.Flavor` carries what the lab itself needs of every server: how to
start it, reach it, settle it, read its counters, check its options, record its provenance.
Knowledge that serves one to three chapters is a capability instead: a small object, built with
the flavor, that a chapter asks for by name::

    flavor.capability("relaxed_commit").settings()
    flavor.capability("set_global").set(conn, "innodb_lru_scan_depth", "100")
    flavor.capability("series").supported({"innodb_log_writer_threads": "ON"})

Each capability's interface is a class below; a flavor module implements it and lists the
implementation in its flavor class's ``capabilities`` (name -> class). A subclass starts from its
parent's table and adds, replaces or drops (``None``) entries. Asking a flavor for a capability it
lacks raises a one-line :class:`DbexpError` naming the flavor, the capability and those it has, so
no chapter needs a method that exists on one flavor alone (duck typing).
"""

from __future__ import annotations

import abc

from dbexp.errors import DbexpError


class Capability:
    """A piece of one flavor's knowledge, bound to the flavor (and so to its version). This module
    imports no flavor: dbexp.servers.flavor imports it."""

    def __init__(self, flavor):
        self.flavor = flavor  # the dbexp.servers.flavor.Flavor that has it


class RelaxedCommit(Capability, abc.ABC):
    """Durability off the commit path, so that thousands of small commits take seconds."""

    @abc.abstractmethod
    def settings(self) -> dict[str, str]:
        """The settings, keyed as the flavor's ``comparable_settings()`` keys them (they override it)."""


class SetGlobal(Capability, abc.ABC):
    """Change a dynamic setting for every new statement while the server runs."""

    @abc.abstractmethod
    def set(self, conn, name: str, value: str) -> None: ...


class Sessions(Capability, abc.ABC):
    """The server's own count of open transactions with a write and of client sessions."""

    @abc.abstractmethod
    def observe(self, conn) -> dict[str, int]:
        """{"open_write_trx": n, "sessions": n}"""

    @abc.abstractmethod
    def activity(self, conn) -> tuple[float, int]:
        """In one round trip: the statements clients have had executed (the flavor's ``statements()`` count,
        to which this read adds one, as every read does), and the client statements executing now besides
        this one (as the server counts them: a daemon thread it counts in, idle or not, is a constant added)."""


class Uprobes(Capability):
    """Where uprobes attach: the server's executable names, as in /proc/<pid>/exe."""

    executables: tuple[str, ...] = ()


class SeriesFacts(Capability, abc.ABC):
    """What differs between the series of a flavor (its versions' release lines), as data."""

    @abc.abstractmethod
    def supported(self, settings: dict[str, str]) -> dict[str, str]:
        """``settings`` without the options this series does not have (removed, or not there yet)."""

    gtid_table_per_commit: bool  # each commit's GTID written to mysql.gtid_executed (binlog on)


class Cleanup(Capability, abc.ABC):
    """Old row versions left by earlier writes, cleaned up before a run that must not inherit them
    (InnoDB: purge of the history list; PostgreSQL: VACUUM, which also sets the visibility map)."""

    @abc.abstractmethod
    def catch_up(self, conn, table: str) -> None:
        """Return once the cleanup has caught up with ``table``'s old versions (or after a bounded wait:
        :meth:`state` then says whether it did)."""

    @abc.abstractmethod
    def state(self, conn, table: str) -> dict[str, tuple[bool, object]]:
        """The cleanup's state as a precondition: {check: (ok, what was seen)}."""


class Callgrind(Capability, abc.ABC):
    """What valgrind's callgrind needs to count the work of a server's client statements
    (dbexp.servers.valgrind runs the server under it; dbexp.metrics.callgrind counts)."""

    entry: str  # --toggle-collect pattern: the function a client statement's work runs inside
    statement: str  # pattern of the function entered once per client statement inside ``entry``
    # One process per connection (PostgreSQL's backends), whose counts callgrind writes as the connection
    # ends; else one process serves every connection, and :meth:`mark` ends a window
    per_connection: bool
    marker: str = ""  # the function only :meth:`mark`'s statement enters: callgrind dumps before it

    @abc.abstractmethod
    def settings(self, requested: dict[str, str]) -> dict[str, str]:
        """Settings that make a count repeatable and let the server run under valgrind, given those
        requested (which win over these); options this version does not know are left out by the caller."""

    def mark(self, conn) -> None:
        """End a window: run the statement that enters :attr:`marker` (one process for every connection)."""
        raise DbexpError(f"{self.flavor.name} {self.flavor.version} counts a process per connection: there is "
                         "no window to mark")


NAMES = ("relaxed_commit", "set_global", "sessions", "uprobes", "series", "cleanup",
         "callgrind")  # every capability there is


def table(base: dict[str, type[Capability] | None], **changes: type[Capability] | None) -> dict:
    """A subclass's capability table: its parent's, with ``changes`` (``None`` drops one)."""
    unknown = set(changes) - set(NAMES)
    if unknown:
        raise ValueError(f"unknown capabilities {sorted(unknown)}: known are {NAMES}")
    return {**base, **changes}
