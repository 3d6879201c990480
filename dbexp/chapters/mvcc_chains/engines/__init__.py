"""What the chapter asks of an engine's version store: the base of its per-engine parts
(:class:`~dbexp.chapters.mvcc_chains.engines.innodb.Undo`, its MariaDB variant in ``mariadb.py``,
:class:`~dbexp.chapters.mvcc_chains.engines.postgres.Heap`) and the error of their statement clocks.
Which part serves which server is ``chapter.PARTS``.

A part is built with the server's flavor (see :mod:`dbexp.servers.engines`). It gives the start-up
settings the chapter needs, builds and reads the ``chains`` table the engine's way, says how much
garbage the engine holds and whether its collector has reclaimed it, and makes the clock that times a
reader's statements at the server.

A statement clock is made for one reader connection, with a second connection that reads the timer
(``monitor``) where the server keeps it apart. :meth:`wrap` turns a statement into what the reader
runs, :meth:`after` sees each statement's result rows, :meth:`begin` and :meth:`end` frame a block of
statements; ``end`` returns one value per statement (``server_us``, and ``buffers`` where the engine
counts them) or raises when any is missing.
"""

from __future__ import annotations

import abc

from dbexp.errors import RetryableError


class StatementClockError(RetryableError):
    """The server did not report a time for every statement of a block: the run may be measured
    again (a clock that cannot work at all, say performance_schema off or a block larger than the
    history, raises a plain DbexpError instead)."""


class VersionStore(abc.ABC):
    """One engine's answers to the chapter's questions (the defaults: an engine without them)."""

    version_store: str  # "undo": newest version in place, older ones in undo; "heap": every version a tuple

    def __init__(self, flavor):
        self.flavor = flavor

    def prompt_gc_settings(self) -> dict[str, str]:
        """Settings under which old versions are collected within seconds once no snapshot needs them."""
        return {}

    def statement_timing_settings(self) -> dict[str, str]:
        """Start-up settings under which :meth:`clock` can time every statement."""
        return {}

    def table_options(self, fillfactor: int | None) -> str:
        """The CREATE TABLE suffix for a heap fillfactor ('' where the engine has none)."""
        return ""

    @abc.abstractmethod
    def analyze(self, conn, table: str) -> None:
        """Fresh statistics (and, where it matters, a visibility map) for ``table``."""

    def pin_index_access(self, conn) -> None:
        """Make this session read single rows through the primary-key index, whatever the statistics say."""

    @abc.abstractmethod
    def begin_snapshot(self, conn) -> None:
        """Begin a REPEATABLE READ transaction whose snapshot is kept until it ends (the caller's
        first read takes it where the server takes it lazily)."""

    @abc.abstractmethod
    def garbage(self, conn, table: str) -> dict[str, float]:
        """The engine's own measures of unreclaimed old versions."""

    @abc.abstractmethod
    def garbage_settled(self, g: dict[str, float]) -> bool:
        """Whether earlier work's versions are gone, so that a new point's garbage is its own."""

    @abc.abstractmethod
    def reclaimed(self, g: dict[str, float], before: dict[str, float], peak: dict[str, float]) -> bool:
        """After an old snapshot ended: has the collector removed what it kept? ``before``: the
        garbage before the point started; ``peak``: right after the snapshot ended."""

    @abc.abstractmethod
    def held_versions(self, conn, table: str, hold_s: float) -> dict[str, tuple[float, str]]:
        """Try to reclaim ``table``'s old versions now, and say how many the collector could not
        remove (an open snapshot may still need them): {measurement: (value, unit)}."""

    def update_kinds(self, conn, table: str) -> dict[str, float]:
        """The engine's own counts of ``table``'s updates since it was created: ``updates`` and, of them,
        ``hot_updates`` (heap-only: no new index entry); empty where the engine keeps no such count."""
        return {}

    def step_facts(self) -> dict[str, tuple[float, str]]:
        """What this version's code is known to do that its step-by-step probe's claims are judged by, stored with
        each probe run ({measurement: (value, unit)}; none by default)."""
        return {}

    def version_chain(self, conn_snapshot, conn, table: str, row_id: int) -> list[dict]:
        """The physical versions of one row as stored (heap engines only)."""
        raise NotImplementedError(f"{self.flavor.name} keeps old versions in undo, not as tuples on a page")

    @abc.abstractmethod
    def clock(self, reader, monitor, marker: str, loop: int = 1):
        """The clock of ``reader``'s statements that begin with ``marker`` (see the module's docstring);
        ``monitor``: a second connection to the same server. ``loop`` > 1: each timed statement repeats
        its lookup that many times at the server, and the clock reports the time per lookup (for a clock
        too coarse for one lookup); an engine whose clock needs no loop refuses it."""
