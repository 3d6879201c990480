"""MySQL's versions in this chapter: compared against 5.7, and Callaghan's claims on 5.7 to 8.0."""

from __future__ import annotations

from dbexp.chapters.calibration.engines import Series, VersionClaim
from dbexp.experiments.sources import CALLAGHAN_24

NEEDS = "mysql 5.7 and 8.0"
# The source's hot-points test: CPU per query grows by 23% from 5.7 to 8.0 (vmstat's CPU over QPS).
HOT_POINTS_CPU = 1.23
SOURCE_RUNS = ("5.7.44 and 8.0.44 (8.0.43 too), 16 clients, 2 sockets x 12 cores (Xeon Silver 4214R), "
               "8 tables x 10M rows cached in InnoDB, one run of 600 s per version and test")


class MySQLSeries(Series):
    base = "5.7"

    def neighbour_settings(self, i: int) -> dict[str, str]:
        return {"server_id": str(100 + i)}  # replication's identity: nothing here replicates
    start_s = 15.0
    storage_reads = ('Innodb_buffer_pool_reads', 'InnoDB buffer pool reads from disk')
    backlog = ("InnoDB's history list", ',.0f')
    claims = (
        VersionClaim(CALLAGHAN_24, "MySQL 5.7 to 8.0 lost throughput on every point-query test (read here on "
                     "oltp_point_select, one of them; the versions chapter runs the others)",
                     "8.0", "5.7", "point-select QPS", NEEDS,
                     number=(f"'big regressions for all' point tests, no QPS figure in the text; its hot-points "
                             f"cpu/o +{HOT_POINTS_CPU - 1:.0%} gives QPS x 1/{HOT_POINTS_CPU:g} = "
                             f"{1 / HOT_POINTS_CPU:.2f} where throughput is bound by CPU"),
                     conditions=SOURCE_RUNS, figure=1 / HOT_POINTS_CPU, ids=("point-5-7-to-8-0",)),
        VersionClaim(CALLAGHAN_24, "The 8.0 point-query loss is CPU per query",
                     "8.0", "5.7", "point-select cpu/o, the server's CPU", NEEDS,
                     number=(f"hot-points cpu/o +{HOT_POINTS_CPU - 1:.0%} (x{HOT_POINTS_CPU:g}): vmstat's CPU, the "
                             "whole host's with sysbench's, per query"),
                     conditions=SOURCE_RUNS + "; hot-points reads the same few rows every query",
                     figure=HOT_POINTS_CPU, value="cpu_per_op_us",
                     also=("total_cpu_per_op_us", "the server's and sysbench's CPU together, as vmstat counts"),
                     ids=("point-loss-is-cpu",)),
    )
