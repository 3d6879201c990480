"""What the chapter asks of an engine (:class:`PinsPart`), one module per engine: PostgreSQL
(:mod:`.postgres`), the one whose private pin array the source is about.

A part is built with the server's flavor (see :mod:`dbexp.servers.engines`). It makes the chapter's
tables, loads them into the buffer pool, and says how many of a table's pages the pool holds (the
pin runs' declared state); the curve and the pin counts themselves are in :mod:`..measure`.
"""

from __future__ import annotations

import abc


class PinsPart(abc.ABC):
    """One engine's answers to the chapter's questions."""

    variant = "pinbench"  # the catalog variant a server needs (postgres:17+pinbench)

    def __init__(self, flavor):
        self.flavor = flavor

    @abc.abstractmethod
    def install(self, conn) -> None:
        """The chapter's extension(s) in the server's database."""

    @abc.abstractmethod
    def make_block_table(self, conn, blocks: int) -> None:
        """The timing functions' table: ``blocks`` pages of one row each."""

    @abc.abstractmethod
    def make_query_table(self, conn, rows: int) -> None:
        """The query shapes' table (sysbench's layout) with ``rows`` rows."""

    @abc.abstractmethod
    def prewarm(self, conn, relations) -> None:
        """Every page of ``relations`` in the buffer pool."""

    @abc.abstractmethod
    def resident_pages(self, conn, table: str) -> tuple[int, int]:
        """(pages of ``table`` in the buffer pool, pages of ``table``)."""

    @abc.abstractmethod
    def tagged(self, settings: dict[str, str], tag: str) -> dict[str, str]:
        """``settings`` told apart by ``tag`` (a counted server's start) in a setting that changes nothing measured."""
