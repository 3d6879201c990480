"""The readview chapter's MariaDB part: InnoDB's, with no function to time and a registry of
transactions that keeps its peak size."""

from __future__ import annotations

from dbexp.servers.mariadb import MariaDB

from .innodb import Views


class MariaDBViews(Views):
    family = MariaDB.name
    # Debian's mariadbd exports no ReadView function (ReadView::open is internal): a probe run times a
    # server-side loop of READ COMMITTED reads instead (server_loop)
    symbol = None
    function = None
    # Its read-write transactions live in a lock-free hash (rw_trx_hash) whose buckets stay once grown,
    # and a ReadView iterates all of it: reads stayed 3.7x slower after 10,000 prepared transactions had
    # come and gone (a side test of this chapter). A point of H must not follow a larger H.
    registry_shrinks = False
    # the source's names (10.5 and later: ReadView::open, which takes the ids in ReadViewBase::snapshot from
    # trx_sys_t::snapshot_ids). Debian's mariadbd 10.11 has no .symtab and exports none of InnoDB's functions
    # (nm -D, 2026-12-07: 29,125 dynamic symbols): callgrind cannot name them, and a count has no witness there
    counted_functions: tuple[str, ...] = ("ReadView::open(*", "ReadViewBase::snapshot(*", "trx_sys_t::snapshot_ids(*")

    def settings(self, holders: int) -> dict[str, str]:
        return {**super().settings(holders), "performance_schema": "ON"}  # off by default in MariaDB
