"""The versions chapter's engine part: what the chapter asks of each flavor's servers. One module per
engine implements it (innodb.py: MySQL; postgres.py); the chapter's PARTS
(dbexp.chapters.versions.chapter) maps flavors to them."""

from __future__ import annotations

from abc import ABC, abstractmethod

# statement types counted per sysbench event (dbexp.chapters.versions.tests.TYPES), and rows read
ROWS = "rows read"
XACT = "transactions"  # committed transactions, where a server's statement counts lack BEGIN and COMMIT


class VersionsEngine(ABC):
    """One engine's part of the versions chapter, built with the server's flavor."""

    pool_reads: tuple[str, str]  # (counter source, counter name) of pages read into the buffer pool
    ablation: bool = False  # whether the regression ablation (MySQL's settings) applies
    datadir: str  # the server's data directory inside its container (the image's volume)
    tag_setting: str  # the setting tagged() tells copies of a server apart by
    table_format: tuple[str, ...] = ()  # settings under which sysbench's table is created differently (a charset)

    def __init__(self, flavor):
        self.flavor = flavor

    @abstractmethod
    def baseline_settings(self) -> dict[str, str]:
        """The settings every version of the flavor runs with in the main windows."""

    @abstractmethod
    def tagged(self, settings: dict[str, str], tag: str) -> dict[str, str]:
        """``settings`` told apart by ``tag`` (a twin, an instance) in a setting that changes nothing measured."""

    @abstractmethod
    def own_default_settings(self) -> dict[str, str]:
        """What a user upgrading gets: the version's shipped defaults, commits relaxed."""

    @abstractmethod
    def pool_settings(self, size_mb: int) -> dict[str, str]:
        """A buffer pool (shared buffers) of ``size_mb`` MiB: the table cached, as in the sources."""

    @abstractmethod
    def prepare_counting(self, server) -> None:
        """Whatever the server needs before it can count its statements (measure_together's marks)."""

    @abstractmethod
    def ablation_settings(self) -> dict:
        """Per ablation configuration, the server's settings and the client's options ({}: none)."""

    @abstractmethod
    def warm(self, conn, table: str) -> None:
        """Read the table and its indexes into the pool (after a start on a restored data directory)."""

    @abstractmethod
    def post_write(self, conn, table: str) -> dict[str, object]:
        """The source harness's steps after writes (statistics, dirty pages written back); what they did."""

    @staticmethod
    def reads_as(setting: str, value: str, effective: dict) -> tuple[bool, object]:
        """Whether ``setting`` asked as ``value`` reads back so among a server's ``effective`` settings (as
        Server.effective_settings reports them), and what was seen."""
        from dbexp.servers.options import same_setting

        seen = effective.get(setting)
        return (seen is not None and same_setting(str(seen), str(value))), seen

    @staticmethod
    def stored_counts(deltas: dict[tuple[str, str], float]) -> dict[str, float] | None:
        """The counts of statement_counts() from a run's other stored counters {(source, name): delta} (runs
        measured before the chapter counted them itself), or None where they cannot be had."""
        return None

    @abstractmethod
    def statement_counts(self, server, database: str) -> dict[str, float]:
        """The server's own counts of the statements clients ran, by type (TYPES), and the rows read (ROWS) from
        ``database``'s sbtest tables."""
