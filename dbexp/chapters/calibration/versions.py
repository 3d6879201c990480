"""What the versions of one flavor are compared against: the series of its base and the sources'
claims on its versions, declared per engine (mysql.py, postgres.py, mariadb.py) and served by
:data:`dbexp.chapters.calibration.parts.PARTS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dbexp.experiments.sources import Source


@dataclass(frozen=True)
class VersionClaim:
    """A source's claim on one version's point-select throughput (or CPU per query) over another's."""

    source: Source
    claim: str  # paraphrased, as the claims table cites it
    num: str  # the series on top of the ratio ("8.0")
    den: str  # the series under it ("5.7")
    measured: str  # what the measured cell names
    needs: str  # the servers the ratio needs, for a run without them
    verdict: Callable[[float, float], str]  # the interval's verdict (dbexp.experiments.verdicts)
    value: str = "qps"  # the column compared


class Versions:
    """A flavor's part of this chapter: the series its versions are compared against (relative QPS)
    and the sources' claims on its versions (none by default)."""

    base: str
    claims: tuple[VersionClaim, ...] = ()
    # seconds a sweep spends starting one of its servers and preparing the table (the published runs'
    # gap between groups less their 5 s warm-up), for the design's time estimate
    start_s: float = 15.0

    def __init__(self, flavor):
        self.flavor = flavor
