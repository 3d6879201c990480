"""InnoDB's undo (MySQL, MariaDB): its purge state, its collector's lag, and performance_schema's
statement clock.

performance_schema's statement timer keeps every statement a thread runs in
``events_statements_history_long`` (a ring shared by all threads, emptied before each block of
statements here, so one block, and what other threads run meanwhile, must fit in it) with
``TIMER_WAIT`` in picoseconds, from the statement's start to its end inside the server. The server
records a statement's end (``MYSQL_END_STATEMENT`` at the end of ``dispatch_command``) after it has
sent the result to the client, so a monitor that reads the history as soon as the reader's last
statement returned can miss that statement (or, in the next block, see it arrive after the history
was emptied). The reader therefore runs one more statement that the marker does not match
(:data:`PerfSchemaClock.FENCE`) before the history is read: its thread handles one command at a time,
so once the fence has answered, every timed statement's end is recorded.
"""

from __future__ import annotations

import re

import numpy as np

from dbexp import waits
from . import StatementClockError, VersionStore
from dbexp.errors import DbexpError
from dbexp.servers.sql import query


def innodb_purge_state(status: str) -> dict[str, float]:
    """From SHOW ENGINE INNODB STATUS: the history list length (undo logs not yet freed, which
    InnoDB truncates lazily, in batches) and the purge lag: transactions committed since the last
    one whose old versions purge has removed ("Purge done for trx's n:o < N"). Raises DbexpError
    naming a line the status lacks (a lag of 0 would read as purge being done)."""

    def num(pattern: str) -> float:
        m = re.search(pattern, status)
        if not m:
            line = pattern.split(" (", 1)[0].replace("\\", "")
            raise DbexpError(f'SHOW ENGINE INNODB STATUS has no "{line}" line: cannot tell the purge state')
        return float(m.group(1))

    counter = num(r"Trx id counter (\d+)")
    done = num(r"Purge done for trx's n:o < (\d+)")
    return {"history_list_length": num(r"History list length (\d+)"), "trx_id_counter": counter,
            "purge_done_no": done, "purge_lag_trx": max(0.0, counter - done)}


class PerfSchemaClock:
    """MySQL, MariaDB: statement times from ``performance_schema.events_statements_history_long``
    (needs performance_schema on; the consumer is turned on if it is not)."""

    kind = "performance_schema"
    # run by the reader after its block, before the history is read: once it has answered, the
    # block's last statement has ended inside the server (see the module's docstring); the marker
    # must not match it
    FENCE = "DO 0"

    def __init__(self, reader, monitor, marker: str):
        self.reader, self.monitor, self.marker = reader, monitor, marker  # marker: how timed statements begin
        if self.FENCE.upper().startswith(marker.strip().upper()):
            raise DbexpError(f"the statement clock's marker {marker!r} matches its fence {self.FENCE!r}: "
                             "give the timed statements a marker of their own")
        conn_id = query(reader, "SELECT CONNECTION_ID()")[0][0]
        rows = query(monitor, "SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = %s",
                     (conn_id,))
        if not rows:
            raise DbexpError(f"performance_schema has no thread for connection {conn_id} "
                             "(is performance_schema on?)")
        self.thread_id = int(rows[0][0])
        # the consumers the clock reads (the history records what "current" does): on from the start
        # where the lab set them (Undo.statement_timing_settings), else turned on here, at run time
        query(monitor, "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN "
                       "('events_statements_current', 'events_statements_history_long') AND ENABLED <> 'YES'")
        self.history_size = int(query(monitor, "SELECT @@performance_schema_events_statements_history_long_size")
                                [0][0])

    def wrap(self, sql: str) -> str:
        return sql

    def begin(self) -> None:
        query(self.monitor, "TRUNCATE TABLE performance_schema.events_statements_history_long")

    def after(self, rows) -> None:
        pass

    def end(self, n: int) -> dict[str, np.ndarray]:
        if n + 1 > self.history_size:  # the block and the fence: it could never fit
            raise DbexpError(
                f"a block of {n} statements does not fit performance_schema's statement history "
                f"({self.history_size} statements, performance_schema_events_statements_history_long_size): "
                "raise the size or time fewer statements per block")
        query(self.reader, self.FENCE)
        ps = query(self.monitor, "SELECT TIMER_WAIT FROM performance_schema.events_statements_history_long "
                                 "WHERE THREAD_ID = %s AND SQL_TEXT LIKE %s ORDER BY EVENT_ID",
                   (self.thread_id, self.marker + "%"))
        if len(ps) == n and all(t is not None for (t,) in ps):
            return {"server_us": np.array([float(t) / 1e6 for (t,) in ps])}
        raise StatementClockError(self._missed(len(ps), n))

    def _missed(self, got: int, n: int) -> str:
        """Why the history does not hold the block: the ring filled (how many statements were this
        reader's and how many other threads'), or, failing that, the plain count."""
        total, mine = query(self.monitor, "SELECT COUNT(*), COALESCE(SUM(THREAD_ID = %s), 0) "
                                          "FROM performance_schema.events_statements_history_long",
                            (self.thread_id,))[0]
        total, mine = int(total), int(mine)
        if total >= self.history_size:
            return (f"performance_schema timed {got} of {n} statements: its statement history "
                    f"({self.history_size} statements) filled during the block ({mine} of this reader's, "
                    f"{total - mine} of other threads')")
        return (f"performance_schema timed {got} of {n} statements (its history holds {total} of "
                f"{self.history_size}: {mine} of this reader's, {total - mine} of other threads')")


class Undo(VersionStore):
    """MySQL's InnoDB: the newest version in the clustered index, older ones in undo records, which
    purge removes by itself once no read view needs them."""

    version_store = "undo"

    def statement_timing_settings(self) -> dict[str, str]:
        # every statement's timer kept (a ring of 10,000 by default, 1,000 in MariaDB): read by
        # PerfSchemaClock
        return {"performance-schema-consumer-events-statements-history-long": "ON"}

    def analyze(self, conn, table: str) -> None:
        query(conn, f"ANALYZE TABLE {table}")

    def begin_snapshot(self, conn) -> None:
        query(conn, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        query(conn, "START TRANSACTION WITH CONSISTENT SNAPSHOT")

    def garbage(self, conn, table: str) -> dict[str, float]:
        """The purge state from SHOW ENGINE INNODB STATUS, and the history list length from InnoDB's
        metrics table (the status text prints the same counter)."""
        state = innodb_purge_state(query(conn, "SHOW ENGINE INNODB STATUS")[0][2])
        hll = query(conn, "SELECT `COUNT` FROM information_schema.INNODB_METRICS "
                          "WHERE NAME = 'trx_rseg_history_len'")
        if hll:
            state["history_list_length"] = float(hll[0][0])
        return state

    def garbage_settled(self, g: dict[str, float]) -> bool:
        return g["purge_lag_trx"] <= 2

    def held_versions(self, conn, table: str, hold_s: float) -> dict[str, tuple[float, str]]:
        """Purge runs by itself: give it up to ``hold_s`` to catch up, then its lag behind the
        transaction counter (what it could not purge) and the history list length."""
        seen: list[dict[str, float]] = []

        def caught_up() -> bool:
            seen.append(self.garbage(conn, table))
            return self.garbage_settled(seen[-1])

        waits.poll(caught_up, hold_s, interval_s=0.25)
        g = seen[-1]
        return {"held_purge_lag_trx": (g["purge_lag_trx"], "trx numbers"),
                "held_history_list_length": (g["history_list_length"], "undo logs")}

    def reclaimed(self, g, before, peak) -> bool:
        """Purge has removed the versions of every transaction committed before the snapshot ended."""
        return g["purge_done_no"] >= peak["trx_id_counter"]

    # the first MySQL with partial updates of a LOB (JSON_SET, JSON_REPLACE, JSON_REMOVE of a JSON column by values
    # no longer than the old: the optimizer hands InnoDB binary diffs, lob::update in lob0update.cc)
    LOB_PARTIAL_SINCE = (8, 0, 3)

    def step_facts(self) -> dict[str, tuple[float, str]]:
        """Whether this version updates a LOB partially (its step-by-step probe's LOB step is judged by it)."""
        version = tuple(int(x) for x in re.findall(r"\d+", self.flavor.version)[:3])
        return {"lob_partial_update": (float(version >= self.LOB_PARTIAL_SINCE), "bool")}

    def clock(self, reader, monitor, marker: str, loop: int = 1) -> PerfSchemaClock:
        if loop != 1:  # performance_schema times each statement to the nanosecond: one lookup each
            raise DbexpError(f"bad loop {loop!r} for InnoDB's statement clock: it times single statements (1)")
        return PerfSchemaClock(reader, monitor, marker)

