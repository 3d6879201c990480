"""Each statement's time at the server, by the server's own clock: no network round trip in it.

- MySQL and MariaDB: performance_schema's statement timer. Every statement a thread runs is
  kept in ``events_statements_history_long`` (a ring shared by all threads, emptied before each
  block of statements here, so one block, and what other threads run meanwhile, must fit in it)
  with ``TIMER_WAIT`` in picoseconds, from the statement's start to its end inside the server.
  The server records a statement's end (``MYSQL_END_STATEMENT`` at the end of
  ``dispatch_command``) after it has sent the result to the client, so a monitor that reads the
  history as soon as the reader's last statement returned can miss that statement (or, in the next
  block, see it arrive after the history was emptied). The reader therefore runs one more statement
  that the marker does not match (:data:`PerfSchemaClock.FENCE`) before the history is read: its
  thread handles one command at a time, so once the fence has answered, every timed statement's end
  is recorded.
- PostgreSQL: ``EXPLAIN (ANALYZE, BUFFERS, TIMING OFF)`` runs the statement and reports the
  executor's own time (``Execution Time``, to the microsecond) and the shared buffers it touched
  (pages, hit or read): how many pages a read visits is the evidence of where versions lie.
  ``TIMING OFF`` leaves per-node clocks out, so the statement pays for one clock read at each end.

A clock is made for one reader connection, with a second connection that reads the timer
(``monitor``) where the server keeps it apart. :meth:`wrap` turns a statement into what the
reader runs, :meth:`after` sees each statement's result rows, :meth:`begin` and :meth:`end` frame
a block of statements; ``end`` returns one value per statement or raises when any is missing.
"""

from __future__ import annotations

import json

import numpy as np

from dbexp.errors import DbexpError, RetryableError
from dbexp.servers.sql import query


class StatementClockError(RetryableError):
    """The server did not report a time for every statement of a block: the run may be measured
    again (a clock that cannot work at all, say performance_schema off or a block larger than the
    history, raises a plain DbexpError instead)."""


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
        # where the lab set them (statement_timing_settings), else turned on here, at run time
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


def parse_explain(doc) -> tuple[float, float]:
    """EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)'s document (text or parsed) -> (execution time in
    microseconds, shared buffers the plan touched: hit plus read)."""
    if isinstance(doc, str):
        doc = json.loads(doc)
    top = doc[0]
    plan = top["Plan"]
    if "Execution Time" not in top:
        raise DbexpError("EXPLAIN reported no Execution Time (was ANALYZE on?)")
    buffers = float(plan.get("Shared Hit Blocks", 0)) + float(plan.get("Shared Read Blocks", 0))
    return float(top["Execution Time"]) * 1000.0, buffers


class ExplainClock:
    """PostgreSQL: the executor's time and buffers of each statement, from EXPLAIN ANALYZE."""

    kind = "explain_analyze"
    PREFIX = "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) "

    def __init__(self, reader=None, monitor=None, marker: str = ""):
        self._times: list[float] = []
        self._buffers: list[float] = []

    def wrap(self, sql: str) -> str:
        return self.PREFIX + sql

    def begin(self) -> None:
        self._times, self._buffers = [], []

    def after(self, rows) -> None:
        t, b = parse_explain(rows[0][0])
        self._times.append(t)
        self._buffers.append(b)

    def end(self, n: int) -> dict[str, np.ndarray]:
        if len(self._times) != n:
            raise StatementClockError(f"EXPLAIN timed {len(self._times)} of {n} statements")
        return {"server_us": np.array(self._times), "buffers": np.array(self._buffers)}


CLOCKS = {"performance_schema": PerfSchemaClock, "explain_analyze": ExplainClock}


def clock(kind: str, reader, monitor, marker: str):
    """The clock of a flavor's ``statement_clock`` kind for ``reader``'s statements that begin with
    ``marker``; ``monitor``: a second connection to the same server."""
    if kind not in CLOCKS:
        raise DbexpError(f"bad statement clock {kind!r}: valid are {', '.join(sorted(CLOCKS))}")
    return CLOCKS[kind](reader, monitor, marker)
