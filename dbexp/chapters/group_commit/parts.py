"""The group_commit chapter's part per engine: where each server's commit path is set, counted and
probed."""

from __future__ import annotations

from dbexp.servers.engines import Engines

from . import binlog, mariadb, postgres

PARTS = Engines("group_commit", {"mysql": binlog.BinlogGroupCommit, "mariadb": mariadb.MariaDBGroupCommit,
                                 "postgres": postgres.WalFlush})


def part_of_rows(flavors) -> list:
    """The part class serving each of ``flavors`` (a stored results' ``flavor`` column)."""
    known = {name: PARTS.part_for_name(name) for name in set(flavors)}
    return [known[name] for name in flavors]
