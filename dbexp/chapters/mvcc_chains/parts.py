"""Which engine part serves which server: InnoDB's undo for MySQL and MariaDB, the heap for PostgreSQL."""

from __future__ import annotations

from dbexp.chapters.mvcc_chains import innodb, postgres
from dbexp.servers.engines import Engines

PARTS = Engines("mvcc_chains", {"mysql": innodb.Undo, "mariadb": innodb.MariaDBUndo, "postgres": postgres.Heap})


def part_of(server):
    """The engine part of a running server (built once per flavor object)."""
    return PARTS.of(server.flavor)
