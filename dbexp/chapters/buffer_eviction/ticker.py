"""One small write a second beside the hot workload, on a session of its own: what keeps InnoDB's page
cleaner doing its LRU batches.

MySQL's page cleaner coordinator (buf_flush_page_cleaner_coordinator, 5.7 to 9.x) runs the LRU batch that
keeps innodb_lru_scan_depth pages free only in a round that follows activity (srv_check_activity: a write
since its last round); on a server that only reads, its rounds flush the flush list and free nothing. A scan
on a read-only server drains the free list for good: at 0 for 4 s after a scan on 5.7.22, 8.0.15 and 9.7.4,
back at 100 (the scan depth) within a second of a write a second (MariaDB 11.8.9: 79 without, 99 with).
The runs published before issue 43 had such activity by chance (ANALYZE TABLE at each warm-up wrote the
tables' statistics); the chapter now writes on purpose, one row of a table of its own, once a second.

Usage::

    with Ticker(server, part, "tick", database="sbtest", cpus="0") as tick:   # connected here
        tick.start()            # a write now, then one a second
        ...
        tick.stop()             # the writes made; raises what failed
"""

from __future__ import annotations

import os
import threading
import time

from dbexp.servers.config import cpus_of

from .engines import BufferPart

TICK_S = 1.0  # the page cleaner's round: about a second


class Ticker:
    def __init__(self, server, part: BufferPart, table: str, database: str, cpus: str | None = None,
                 every_s: float = TICK_S):
        self.server, self.part, self.table, self.database = server, part, table, database
        self.cpus, self.every_s = cpus, every_s
        self.ticks = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._conn = None

    def __enter__(self) -> "Ticker":
        self._conn = self.server.connect(self.database)
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._halt()
        finally:
            self._conn.close()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="dbexp-ticker", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        if self.cpus:
            os.sched_setaffinity(0, set(cpus_of(self.cpus)))  # this thread only
        next_at = time.monotonic()
        while not self._stop.is_set():
            try:
                self.part.tick(self._conn, self.table)
            except Exception as exc:  # kept: stop() raises it
                self._error = exc
                return
            self.ticks += 1
            next_at += self.every_s
            self._stop.wait(max(0.0, next_at - time.monotonic()))

    def _halt(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def stop(self) -> int:
        """End the writes; how many were made. A write that failed fails the run."""
        self._halt()
        if self._error is not None:
            raise RuntimeError(f"the write a second failed: {type(self._error).__name__}: {self._error}") from self._error
        return self.ticks
