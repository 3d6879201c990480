"""The versions chapter's engine part: what the chapter asks of each flavor's servers. One module per
engine implements it (innodb.py: MySQL; postgres.py); the chapter's PARTS
(dbexp.chapters.versions.chapter) maps flavors to them."""

from __future__ import annotations

from abc import ABC, abstractmethod


class VersionsEngine(ABC):
    """One engine's part of the versions chapter, built with the server's flavor."""

    pool_reads: tuple[str, str]  # (counter source, counter name) of pages read into the buffer pool
    ablation: bool = False  # whether the regression ablation (MySQL's settings) applies

    def __init__(self, flavor):
        self.flavor = flavor

    @abstractmethod
    def baseline_settings(self) -> dict[str, str]:
        """The settings every version of the flavor runs with in the main windows."""

    @abstractmethod
    def twin_settings(self) -> dict[str, str]:
        """The base's A/A twin: the baseline, told apart only where the server needs it."""

    @abstractmethod
    def own_default_settings(self) -> dict[str, str]:
        """What a user upgrading gets: the version's shipped defaults, commits relaxed."""

    @abstractmethod
    def prepare_counting(self, server) -> None:
        """Whatever the server needs before it can count its statements (measure_together's marks)."""

    @abstractmethod
    def ablation_settings(self) -> dict:
        """Per ablation configuration, the server's settings and the client's options ({}: none)."""
