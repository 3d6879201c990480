"""Write transactions held open without a session each: prepared transactions (two-phase commit).

A session holding an open write transaction costs a connection (and, on PostgreSQL, a
process), which caps how many a lab can hold at about a thousand. A *prepared*
transaction (MySQL and MariaDB ``XA PREPARE``, PostgreSQL ``PREPARE TRANSACTION``: the
engine parts' SQL) stays open after its session has gone, and every snapshot still lists it.

Each holder inserts its own row into ``prepared_holders`` (no two touch one row, so
nobody waits on a lock). The set is resized in place: growing prepares the missing
ones, shrinking rolls back the newest. :class:`Holdings` keeps them beside the idle sessions
of dbexp.workloads.sessions, across the points of one server.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from dbexp.errors import DbexpError
from dbexp.waits import poll
from dbexp.workloads.sessions import HolderPool

TABLE = "prepared_holders"
PREFIX = "dbexp_h"


class PreparedHolders:
    def __init__(self, server, part, database: str = "sbtest", workers: int = 4):
        """``part``: the server's engine part (the chapter's PARTS.of(server.flavor))."""
        self.server = server
        self.part = part
        self.database = database
        self.workers = workers  # parallel connections where each needs its own (one CPU of server work)
        self.xids: list[str] = []
        self._next = 0
        self._table = False

    @property
    def n(self) -> int:
        return len(self.xids)

    def _query(self, sql: str) -> list[tuple]:
        return self.server.query(sql, database=self.database)

    def _ensure_table(self) -> None:
        if not self._table:
            self._query(f"DROP TABLE IF EXISTS {TABLE}")
            self._query(f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
            self._table = True

    def _prepare(self, conn, i: int) -> str:
        xid = f"{PREFIX}{i}"
        self.part.prepare(conn, xid, f"INSERT INTO {TABLE} (id, v) VALUES ({i}, 0)")
        return xid

    def _prepare_one_session(self, i: int) -> str:
        conn = self.server.connect(self.database)
        try:
            return self._prepare(conn, i)
        finally:
            conn.close()

    def resize(self, n: int) -> "PreparedHolders":
        """Hold exactly ``n`` prepared transactions; the server must list them all."""
        if n < 0:
            raise DbexpError(f"bad number of prepared transactions {n!r}: expected 0 or more")
        if n > self.n:
            self._ensure_table()
            ids = list(range(self._next, self._next + n - self.n))
            self._next += len(ids)
            try:
                conn = self.server.connect(self.database)
                try:
                    if self.part.one_prepared_per_session(conn):
                        with ThreadPoolExecutor(self.workers) as pool:
                            self.xids += list(pool.map(self._prepare_one_session, ids))
                    else:  # one session prepares them all (PostgreSQL; MySQL 8.0.29+ detaching XA)
                        for i in ids:
                            self.xids.append(self._prepare(conn, i))
                finally:
                    conn.close()
            except Exception as exc:
                raise DbexpError(f"could not prepare {n} transactions on {self.server.build.spec} "
                                 f"(holding {self.n}): {str(exc).splitlines()[0]}") from exc
        elif n < self.n:
            try:
                conn = self.server.connect(self.database)
                try:
                    while self.n > n:
                        self.part.rollback_prepared(conn, self.xids[-1])
                        self.xids.pop()
                finally:
                    conn.close()
            except Exception as exc:  # e.g. a server that stopped: say what its log says
                raise DbexpError(f"could not roll back to {n} prepared transactions on {self.server.build.spec} "
                                 f"(holding {self.n}): {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                                 f"; server log: {_log_of(self.server)}") from exc
        seen = self.observed()
        if seen != n:
            raise DbexpError(f"asked for {n} prepared transactions on {self.server.build.spec}, "
                             f"the server lists {seen}")
        return self

    def listed(self) -> int:
        """How many of ours the server lists now."""
        conn = self.server.connect(self.database)
        try:
            return sum(1 for x in self.part.prepared_xids(conn) if x.startswith(PREFIX))
        finally:
            conn.close()

    def observed(self, settle_s: float = 5.0) -> int:
        """How many of ours the server lists, once it lists all (a disconnecting XA session may take a
        moment) or ``settle_s`` has passed."""
        seen = [0]

        def all_listed() -> bool:
            seen[0] = self.listed()
            return seen[0] == self.n

        poll(all_listed, settle_s)
        return seen[0]

    def close(self) -> None:
        """Roll every one back (a server stopped with prepared transactions keeps them)."""
        if self.xids:
            self.resize(0)

    def __enter__(self) -> "PreparedHolders":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _log_of(server) -> str:
    try:
        return server.why_stopped()
    except Exception as exc:  # the container may be gone too
        return f"(unreadable: {type(exc).__name__})"


class Holdings(HolderPool):
    """A server's idle sessions (dbexp.workloads.sessions.HolderPool) and its prepared transactions,
    each resized in place across consecutive points."""

    def __init__(self, server, part):
        super().__init__(server)
        self.part = part
        self.prepared: PreparedHolders | None = None

    def hold_prepared(self, n: int) -> PreparedHolders | None:
        if self.prepared is None:
            if not n:
                return None
            self.prepared = PreparedHolders(self.server, self.part)
        return self.prepared.resize(n)

    def prepared_count(self) -> int:
        return self.prepared.observed() if self.prepared is not None else 0

    def close(self) -> None:
        try:
            if self.prepared is not None:
                self.prepared.close()
                self.prepared = None
        finally:
            super().close()
