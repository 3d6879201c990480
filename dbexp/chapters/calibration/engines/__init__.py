"""The calibration chapter's engine part: what the versions of one flavor are compared against (the
series of its base) and the sources' claims on its versions, declared per engine (innodb.py: MySQL,
mariadb.py, postgres.py) and served by :data:`dbexp.chapters.calibration.chapter.PARTS`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from dbexp.experiments.sources import Source


@dataclass(frozen=True)
class VersionClaim:
    """A source's claim on one version's point-select throughput (or CPU per query) over another's,
    with the source's own number and conditions (recomputed from its text) for the claims table."""

    source: Source
    claim: str  # paraphrased, as the claims table cites it
    num: str  # the series on top of the ratio ("8.0")
    den: str  # the series under it ("5.7")
    measured: str  # what the measured cell names
    needs: str  # the servers the ratio needs, for a run without them
    number: str  # the source's number in words, and how it follows from the source's text
    conditions: str  # the source's versions, clients, cores, rows, run length and test
    figure: float | None = None  # the source's number as a ratio num / den (None: it gives none)
    untestable: str | None = None  # the source's condition this lab cannot meet (None: testable)
    value: str = "qps"  # the column compared
    # a second reading of the same figure, where the source's definition can be read two ways:
    # (column, words), e.g. the server's CPU and sysbench's together, as vmstat counts the host's
    also: tuple[str, str] | None = None
    ids: tuple[str, ...] = ()  # the ledger entries (dbexp/chapters/calibration/claims.yaml) the claim's row tests


class Series(ABC):
    """A flavor's part of this chapter: the series its versions are compared against (relative QPS)
    and the sources' claims on its versions (none by default)."""

    @property
    @abstractmethod
    def base(self) -> str:
        """The series the flavor's versions are compared against ('5.7')."""

    claims: tuple[VersionClaim, ...] = ()
    # seconds a sweep spends starting one of its servers and preparing the table (the published runs'
    # gap between groups less their 5 s warm-up), for the design's time estimate
    start_s: float = 15.0
    # the server's own count of reads from storage (a count of its status or statistics) and its words
    storage_reads: tuple[str, str] = ("", "")
    # what the cleanup capability's state reads after writes (the settle part's backlog), in words, and its format
    backlog: tuple[str, str] = ("the backlog", ",.0f")
    scan_named = False  # the flavor the source names where it says the scan test varies ("especially")

    def __init__(self, flavor):
        self.flavor = flavor

    @abstractmethod
    def neighbour_settings(self, i: int) -> dict[str, str]:
        """A harmless setting that tells the ``i``-th neighbour server apart from the others of the same
        build (each its own server, started on its own), changing nothing the workload touches."""
