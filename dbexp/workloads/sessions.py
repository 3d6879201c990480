"""Sessions held open beside a workload: idle connections, or open write transactions.

``active``: each session begins a transaction and updates its own row of a
``holders`` table (no two sessions touch one row, so nobody waits on a lock), then
stays idle without committing. Every such transaction is in MySQL's list of active
read-write transactions (copied into each new ReadView) and has an xid in
PostgreSQL's proc array (scanned by every GetSnapshotData).
``idle``: the same number of connections, with no transaction open.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from dbexp.errors import DbexpError, choices
from dbexp.servers.sql import query
from dbexp.waits import poll

MODES = ("active", "idle")
TABLE = "holders"


@dataclass
class HeldSessions:
    server: object
    n: int
    mode: str = "active"
    database: str = "sbtest"
    conns: list = field(default_factory=list)

    def __post_init__(self):
        if self.mode not in MODES:
            raise DbexpError(f"bad holder mode {self.mode!r}: valid are {choices(MODES)}")
        if self.n < 0:
            raise DbexpError(f"bad number of holders {self.n!r}: expected 0 or more")

    def _create_table(self) -> None:
        conn = self.server.connect(self.database)
        try:
            q = query
            q(conn, f"DROP TABLE IF EXISTS {TABLE}")
            q(conn, f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
            if self.n:
                values = ",".join(f"({i},0)" for i in range(self.n))
                q(conn, f"INSERT INTO {TABLE} (id, v) VALUES {values}")
        finally:
            conn.close()

    def open(self) -> "HeldSessions":
        if self.mode == "active":
            self._create_table()
        return self._add(self.n)

    def _add(self, n: int) -> "HeldSessions":
        """Open sessions until ``n`` are held (active ones update rows len(conns) .. n - 1)."""
        _allow_files(2 * n + 256)  # a socket per session (Debian's soft limit is 1024)
        try:
            for i in range(len(self.conns), n):
                conn = self.server.connect(self.database, autocommit=False)
                self.conns.append(conn)
                cur = conn.cursor()
                if self.mode == "active":
                    cur.execute(f"UPDATE {TABLE} SET v = v + 1 WHERE id = {i}")
                else:
                    cur.execute("SELECT 1")
                    cur.fetchall()
                    conn.rollback()  # no transaction left open
                cur.close()
        except Exception as exc:
            self.close()
            raise DbexpError(f"could not open {n} {self.mode} sessions on {self.server.build.spec} "
                             f"(opened {len(self.conns)}): {str(exc).splitlines()[0]}") from exc
        self.n = n
        return self

    def resize(self, n: int, settle_s: float = 10.0) -> "HeldSessions":
        """Idle sessions only: close the surplus or open the missing ones, keeping the rest, then wait
        until the server no longer lists the closed ones (their backends exiting would otherwise
        overlap the next measurement)."""
        if self.mode != "idle":
            raise DbexpError(f"only idle sessions can be resized, not {self.mode}")
        if n < 0:
            raise DbexpError(f"bad number of holders {n!r}: expected 0 or more")
        if n >= len(self.conns):
            return self._add(n)
        surplus, self.conns = self.conns[n:], self.conns[:n]
        for conn in surplus:
            with contextlib.suppress(Exception):
                conn.close()
        self.n = n
        poll(lambda: observe(self.server)["sessions"] <= n + 1, settle_s)  # + the observer's own
        return self

    def close(self) -> None:
        for conn in self.conns:
            with contextlib.suppress(Exception):
                conn.rollback()
            with contextlib.suppress(Exception):
                conn.close()
        self.conns = []

    def __enter__(self) -> "HeldSessions":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    def observed(self, settle_s: float = 2.0) -> dict[str, int]:
        """What the server itself sees: open transactions with a write, and sessions. InnoDB
        refreshes information_schema.innodb_trx at most every 0.1 s, so this polls briefly until
        the holders show up."""
        seen: dict[str, int] = {}

        def enough() -> bool:
            seen.update(observe(self.server))
            return seen["open_write_trx"] >= (self.n if self.mode == "active" else 0)

        poll(enough, settle_s, 0.15)
        return seen


def _allow_files(n: int) -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < n:
        new = n if hard == resource.RLIM_INFINITY else min(n, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))


def observe(server) -> dict[str, int]:
    """Count active read-write transactions and client sessions, as the server reports them."""
    conn = server.connect()
    try:
        return server.flavor.capability("sessions").observe(conn)
    finally:
        conn.close()


class HolderPool:
    """The held sessions of one server, kept open across consecutive points with the same number and
    mode (idle ones resized in place)."""

    def __init__(self, server):
        self.server = server
        self.held: HeldSessions | None = None

    def hold(self, h: int, mode: str) -> HeldSessions:
        if self.held is not None and self.held.mode == mode == "idle" and self.held.n != h:
            return self.held.resize(h)  # keep the sessions both counts share
        if self.held is None or (self.held.n, self.held.mode) != (h, mode):
            # the sessions only: a subclass's close() may release more (readview's Holdings rolled back
            # its prepared transactions here, so the first point of each server ran with none held)
            self.release_sessions()
            self.held = HeldSessions(self.server, h, mode).open()
        return self.held

    def release_sessions(self) -> None:
        if self.held is not None:
            self.held.close()
            self.held = None

    def close(self) -> None:
        self.release_sessions()

    def __enter__(self) -> "HolderPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
