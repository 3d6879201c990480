"""PostgreSQL's versions in this chapter: compared against 12, and Callaghan's claim on 12 to 18."""

from __future__ import annotations

from dbexp.chapters.calibration.engines import Series, VersionClaim
from dbexp.experiments.sources import CALLAGHAN_PG


class PostgresSeries(Series):
    base = "12"

    def neighbour_settings(self, i: int) -> dict[str, str]:
        return {"cluster_name": f"neighbour{i}"}  # the name in the processes' titles
    start_s = 3.0
    storage_reads = ('blks_read', 'blocks read from outside shared buffers')
    backlog = ("the table's all-visible share of pages", '.0%')
    scan_named = True  # "especially with Postgres"
    claims = (
        VersionClaim(CALLAGHAN_PG, "PostgreSQL point queries are roughly unchanged from 12.22 to 18.1",
                     "18", "12", "point-select QPS", "postgres 12 and 18",
                     number=("'similar' for the IO-bound point tests, no figure in the text (the one CPU-bound "
                             "point test, hot-points, gains largely in 17.x)"),
                     conditions=("12.22 and 18.1, 40 clients, 48 cores (EPYC 9454P), 8 tables x 250M rows "
                                 "read from NVMe (IO-bound), one run of 600 s per version and test"),
                     untestable=("the source's point queries are IO-bound, 8 tables of 250M rows; these are "
                                 "cached, on one server CPU"), ids=("pg-point-similar",)),
    )
