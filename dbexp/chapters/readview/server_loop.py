"""A server-side loop of consistent reads (MySQL, MariaDB): what one read view costs, with no
round trip and no probe in the time.

A stored procedure runs N point selects of a sysbench table inside one READ COMMITTED
transaction (the session's isolation level): each statement closes the previous read view and
builds a new one, which a view reused between autocommit statements would not. The client
calls it again and again for a fixed time and divides the wall time by the reads: one round trip
per N reads, the same at every point, so a slope over the number of open transactions is the
server's own. A probe run measures it where a server exports no view function to time (MariaDB).
"""

from __future__ import annotations

import time

from dbexp.experiments.measure import Measured, client_pinned, cpu_window
from dbexp.servers.sql import query

PROCEDURE = "dbexp_rc_reads"
LOOP_READS = 1000  # reads per call (one round trip per call)


def install(conn, table: str, rows: int) -> None:
    """(Re)create the procedure: ``CALL dbexp_rc_reads(n)`` reads ``n`` rows of ``table`` (ids 1 to
    ``rows``, spread by a stride prime to it) in one transaction."""
    query(conn, f"DROP PROCEDURE IF EXISTS {PROCEDURE}")
    query(conn, f"""CREATE PROCEDURE {PROCEDURE}(IN n INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  DECLARE x INT;
  START TRANSACTION READ ONLY;
  WHILE i < n DO
    SELECT k INTO x FROM {table} WHERE id = 1 + MOD(i * 7919, {rows});
    SET i = i + 1;
  END WHILE;
  COMMIT;
END""")


def timed_reads(conn, reads_per_call: int, duration_s: float) -> tuple[int, float]:
    """Call the procedure until ``duration_s`` has passed, under READ COMMITTED: (reads, seconds)."""
    query(conn, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    cur = conn.cursor()
    calls = 0
    started = time.perf_counter()
    try:
        while True:
            cur.execute(f"CALL {PROCEDURE}(%s)", (reads_per_call,))
            calls += 1
            elapsed = time.perf_counter() - started
            if elapsed >= duration_s:
                return calls * reads_per_call, elapsed
    finally:
        cur.close()


def measure_loop(server, point) -> Measured:
    """A run of the loop: the point's sysbench readers and writer do not run; the procedure's reads are
    timed alone, from the client CPU, with the point's H held as in its other runs."""
    wl = point.workload
    conn = server.connect(wl.database)
    try:
        install(conn, "sbtest1", wl.table_size)
        with client_pinned(wl.cpuset), cpu_window(server, wl.cpuset) as cpu:
            reads, seconds = timed_reads(conn, LOOP_READS, wl.duration_s)
    finally:
        conn.close()
    return Measured({"loop_reads": (float(reads), "count"), "loop_s": (seconds, "s"),
                     "loop_ns_per_read": (seconds * 1e9 / reads, "ns"), **cpu}, [], [],
                    f"CALL {PROCEDURE}({LOOP_READS}) for {wl.duration_s} s, READ COMMITTED")
