"""The readview chapter's PostgreSQL part: GetSnapshotData, PREPARE TRANSACTION, and what a snapshot
copies per holder before and from version 14."""

from __future__ import annotations

from dbexp.catalog import versions
from dbexp.servers.postgres import Postgres
from dbexp.servers.sql import query

from . import ViewPart


class Snapshots(ViewPart):
    BEFORE_14, FROM_14 = f"{Postgres.name}<14", f"{Postgres.name}>=14"
    FAMILIES = (BEFORE_14, FROM_14)
    panel = "PostgreSQL"
    symbol: str | None = "GetSnapshotData"  # every snapshot a backend takes (or, 14+, reuses)
    function: str | None = "GetSnapshotData"
    registry_shrinks = True
    idle_sessions = True  # before 14 every snapshot walks every backend, an idle one too
    double_latch = False  # no trx-sys mutex: nothing to count
    latch_counters = None  # wait events are a state of each backend, sampled, not cumulative counts
    view_latch = None
    # a snapshot built (or, 14+, reused) and copied (PushActiveSnapshot and RegisterSnapshot copy it with its
    # running xids; a smoke run of 16.14 found the reused snapshot's copies growing with H, GetSnapshotData not)
    counted_functions: tuple[str, ...] = ("GetSnapshotData", "CopySnapshot")

    def __init__(self, flavor):
        super().__init__(flavor)
        self.major = versions.major(flavor.version)

    @property
    def family(self) -> str:
        """The analysis' label: before 14, or 14 and later (a dense array of running xids)."""
        return self.BEFORE_14 if self.major < 14 else self.FROM_14

    @property
    def completion_count_offset(self) -> int | None:
        """Where a snapshot keeps the transaction-completion count it was built at (the byte offset of
        SnapshotData.snapXactCompletionCount), None before 14 (no reuse: every call rebuilds). It sits
        16 bytes earlier from 18 on; each offset was checked on the lab's builds (14.23, 15.18, 16.14,
        17.10, 18.4): the count a probe run saw go by equals the writer's commits (snapshot_probe)."""
        if self.major < 14:
            return None
        return 112 if self.major < 18 else 96

    @property
    def bytes_per_holder(self) -> int:
        # 14+ copies a TransactionId (4 bytes) from its dense array of running xids; before 14 it reads
        # each proc's 4-byte xid out of a PGXACT entry of 12 bytes, walking every entry (a prepared
        # transaction has one, an idle session too)
        return 12 if self.major < 14 else 4

    def settings(self, holders: int) -> dict[str, str]:
        return {"max_prepared_transactions": str(holders + 10)}  # 0 by default: none allowed

    def prepare(self, conn, xid: str, statement: str) -> None:
        for stmt in ("BEGIN", statement, f"PREPARE TRANSACTION '{xid}'"):
            query(conn, stmt)

    def one_prepared_per_session(self, conn) -> bool:
        return False  # after PREPARE TRANSACTION the session is free again

    def rollback_prepared(self, conn, xid: str) -> None:
        query(conn, f"ROLLBACK PREPARED '{xid}'")

    def prepared_xids(self, conn) -> list[str]:
        return [r[0] for r in query(conn, "SELECT gid FROM pg_prepared_xacts")]

    def trx_id(self, conn) -> int | None:
        # txid_current_if_assigned(): NULL until the transaction writes (12 to 18 have it)
        value = query(conn, "SELECT txid_current_if_assigned()")[0][0]
        return None if value is None else int(value)

    def held_ids(self, conn) -> list[int]:
        return sorted(int(r[0]) for r in query(conn, "SELECT transaction::text::bigint FROM pg_prepared_xacts"))

    def begin(self, conn, snapshot: bool) -> None:
        query(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ")
        if snapshot:  # the transaction's snapshot is taken by its first statement, whatever it reads
            query(conn, "SELECT 1")

    def isolation(self, conn) -> str:
        return str(query(conn, "SHOW transaction_isolation")[0][0]).lower()

    def snapshot_ids(self, conn, known: list[int]) -> list[int] | None:
        text = str(query(conn, "SELECT txid_current_snapshot()::text")[0][0])  # xmin:xmax:xip,...
        _, xmax, listed = text.split(":")
        # GetSnapshotData sets xmax to the newest completed xid + 1 and lists in xip only the running xids below
        # it: a running xid at or above xmax (the newest writer, when nothing has completed since it took its
        # id) is held as running without being listed (seen 2026-12-07 on 14: B running as 734, '734:734:')
        ids = {int(x) for x in listed.split(",") if x}
        return sorted(ids | {k for k in known if k >= int(xmax)})

    def scan_table(self, name: str) -> str:
        # no autovacuum: a vacuum would mark the pages all-visible, and a scan then checks no row
        return f"CREATE TABLE {name} (id INT PRIMARY KEY, v INT NOT NULL) WITH (autovacuum_enabled = off)"

    def numbers(self, rows: int) -> str:
        return f"SELECT generate_series(1, {rows}) AS n"

    def committed_write(self, conn, statement: str) -> int:
        query(conn, "BEGIN")
        query(conn, statement)
        trx = int(query(conn, "SELECT txid_current()")[0][0])
        query(conn, "COMMIT")
        return trx
