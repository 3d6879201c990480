"""Where a full-table scan runs beside a workload: one session reading a whole table again and
again for a window, then cancelled mid-pass (the chapter's second client).

Usage::

    part = PARTS.of(server.flavor)
    with Scanner(server, part, "sbtest1", "seq", database="sbtest", cpus="0") as scan:
        scan.start()          # passes begin now, one after the other
        ...
        scan.stop()           # the pass in flight is cancelled; returns when the session is idle
    scan.passes               # [(start_s, end_s, completed)] relative to ``clock_zero``

A failure of the scan (anything but the cancel the scanner asked for) is raised by stop():
a run whose scan failed is a failed run.
"""

from __future__ import annotations

import os
import threading
import time

from dbexp.servers.config import cpus_of
from dbexp.waits import wait_until

from .engines import BufferPart

CANCEL_TIMEOUT_S = 120.0  # a cancel that has not landed by then fails the run (it lands within seconds)


class Scanner:
    def __init__(self, server, part: BufferPart, table: str, kind: str, database: str, cpus: str | None = None,
                 clock_zero: float | None = None):
        self.server = server
        self.part = part
        self.statements = part.full_read_sql(table, kind)
        self.database = database
        self.cpus = cpus
        self.zero = time.monotonic() if clock_zero is None else clock_zero
        self.passes: list[tuple[float, float, bool]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._conn = self._admin = None
        self._session = 0

    def __enter__(self) -> "Scanner":
        self._conn = self.server.connect(self.database)
        self._admin = self.server.connect(self.database)
        self._session = self.part.session_id(self._conn)
        for stmt in self.statements[:-1]:
            self.part.query(self._conn, stmt)
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self._thread is not None and self._thread.is_alive():
                self._cancel()
                self._thread.join()
        finally:
            self._conn.close()
            self._admin.close()

    @property
    def session(self) -> int:
        """The scanning session's id on the server (what cancel_sql() names)."""
        return self._session

    @property
    def connection(self):
        """The scanning session, idle once stop() returned (for what the chapter does after)."""
        return self._conn

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="dbexp-scanner", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        if self.cpus:
            os.sched_setaffinity(0, set(cpus_of(self.cpus)))  # this thread only
        scan = self.statements[-1]
        while not self._stop.is_set():
            t0 = time.monotonic() - self.zero
            try:
                self.part.query(self._conn, scan)
            except Exception as exc:  # kept: stop() raises it unless it is the cancel asked for
                if not (self._stop.is_set() and self.part.is_cancel(exc)):
                    self._error = exc
                self.passes.append((t0, time.monotonic() - self.zero, False))
                return
            self.passes.append((t0, time.monotonic() - self.zero, True))

    def _cancel(self) -> None:
        self._stop.set()
        # a pass may end just as the cancel arrives: cancel until the thread has left the loop
        wait_until(self._cancelled, CANCEL_TIMEOUT_S, "the scan's cancel", interval_s=0.0)

    def _cancelled(self) -> bool:
        if not self._thread.is_alive():
            return True
        self.part.query(self._admin, self.part.cancel_sql(self._session))
        self._thread.join(0.2)
        return not self._thread.is_alive()

    def stop(self) -> float:
        """Cancel the pass in flight and end the loop; the seconds the cancel took to land."""
        t0 = time.monotonic()
        self._cancel()
        if self._error is not None:
            raise RuntimeError(f"the scan failed: {type(self._error).__name__}: {self._error}") from self._error
        return time.monotonic() - t0
