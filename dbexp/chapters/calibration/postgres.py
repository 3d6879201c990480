"""PostgreSQL's versions in this chapter: compared against 12, and Callaghan's claim on 12 to 18."""

from __future__ import annotations

from functools import partial

from dbexp.chapters.calibration.versions import VersionClaim, Versions
from dbexp.experiments import verdicts
from dbexp.experiments.sources import CALLAGHAN_PG


class PostgresVersions(Versions):
    base = "12"
    start_s = 3.0
    claims = (
        VersionClaim(CALLAGHAN_PG, "PostgreSQL point queries are roughly unchanged from 12.22 to 18.1 (48 "
                                   "cores, 40 clients, IO-bound)",
                     "18", "12", "18.4 / 12.22 point-select QPS (cached, one server CPU)", "postgres 12 and 18",
                     partial(verdicts.interval, expect="near")),
    )
