"""MySQL's versions in this chapter: compared against 5.7, and Callaghan's claims on 5.7 to 8.0."""

from __future__ import annotations

from functools import partial

from dbexp.chapters.calibration.versions import VersionClaim, Versions
from dbexp.experiments import verdicts
from dbexp.experiments.sources import CALLAGHAN_24

NEEDS = "mysql 5.7 and 8.0"


class MySQLVersions(Versions):
    base = "5.7"
    start_s = 15.0
    claims = (
        VersionClaim(CALLAGHAN_24, "MySQL 5.7 to 8.0 lost throughput on every point-query test (24 cores, "
                                   "16 clients, 8 x 10M rows, cached)",
                     "8.0", "5.7", "8.0.15 / 5.7.22 point-select QPS", NEEDS,
                     partial(verdicts.interval, expect="below")),
        VersionClaim(CALLAGHAN_24, "The 8.0 point-query loss is CPU per query (hot-points cpu/o up 23% from "
                                   "5.7 to 8.0)",
                     "8.0", "5.7", "8.0.15 / 5.7.22 point-select cpu/o (oltp_point_select, 4 clients, one server "
                                   "CPU, not hot-points with 16 clients on 24 cores)", NEEDS,
                     # the source's own number, +23%, against the interval (not only the direction)
                     partial(verdicts.claimed_range, low=1.23, high=1.23), value="cpu_per_op_us"),
    )
