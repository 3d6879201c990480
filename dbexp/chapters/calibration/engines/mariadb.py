"""MariaDB's versions in this chapter: compared against 10.11 (no source's claim on them here; its own
part, so that MySQL's base and claims do not serve it)."""

from __future__ import annotations

from dbexp.chapters.calibration.engines import Series


class MariaDBSeries(Series):
    base = "10.11"
    start_s = 5.0
    storage_reads = ('Innodb_buffer_pool_reads', 'InnoDB buffer pool reads from disk')
    backlog = ("InnoDB's history list", ',.0f')

    def neighbour_settings(self, i: int) -> dict[str, str]:
        return {"server_id": str(100 + i)}  # replication's identity: nothing here replicates
