"""MariaDB's InnoDB undo, as the mvcc_chains chapter reads it: MySQL's (innodb.py) but for the
statement consumers its performance_schema leaves off by default, and a LOB written anew on every update (its JSON
is text, and its InnoDB has no partial update of a LOB)."""

from __future__ import annotations

from .innodb import Undo


class MariaDBUndo(Undo):
    """MariaDB's InnoDB: as MySQL's, with performance_schema's "current" statements consumer off by
    default."""

    def statement_timing_settings(self) -> dict[str, str]:
        # the history consumers record only what the "current" one does: on by default in MySQL, off here
        return {"performance-schema-consumer-events-statements-current": "ON", **super().statement_timing_settings()}

    def step_facts(self) -> dict[str, tuple[float, str]]:
        return {"lob_partial_update": (0.0, "bool")}  # no partial update of a LOB in any version
