"""The readview chapter's InnoDB part, for MySQL (MariaDB's derives from it): the function that builds
a ReadView, prepared transactions as XA, and the trx-sys mutexes counted by performance_schema."""

from __future__ import annotations

from dbexp.servers.mysql import MySQL
from dbexp.servers.sql import query

SNAPSHOT_LATCHES = "wait/synch/mutex/innodb/trx_sys%"  # the mutexes around building a ReadView


class Views:
    family = MySQL.name  # the analysis' label for this engine's rows (what the claims pick)
    panel = "MySQL and MariaDB"  # the charts' panel
    # MVCC::view_open(ReadView*&, trx_t*): opens (or reopens) a statement's or transaction's view,
    # copying the ids of the active read-write transactions (the same mangled name in 5.7 and 8.0)
    symbol: str | None = "_ZN4MVCC9view_openERP8ReadViewP5trx_t"
    # False where the structure a view walks keeps its peak size after transactions end, so that a
    # view's cost depends on the most transactions held since the server started, not only now
    registry_shrinks = True
    bytes_per_holder = 8  # a trx_id_t per active read-write transaction, copied into the ReadView
    # where a snapshot records whether it was rebuilt (PostgreSQL 14+ reuses snapshots): None here, every
    # timed call is counted as a build (as we read its source, InnoDB reuses an autocommit reader's view
    # while it lists no transaction: at H = 0)
    completion_count_offset: int | None = None
    idle_sessions = False  # an idle session is in no list a view copies: not measured
    double_latch = True  # readers in multi-statement READ COMMITTED transactions, against autocommit
    prepared_one_per_session = True  # a session holds one XA transaction until it ends (before 8.0.29)

    def __init__(self, flavor):
        self.flavor = flavor

    def settings(self, holders: int) -> dict[str, str]:
        """Start-up settings: the trx-sys mutex instruments on (prepared transactions need none)."""
        return {"performance-schema-instrument": f"{SNAPSHOT_LATCHES}=ON"}

    def prepare(self, conn, xid: str, statement: str) -> None:
        """Run ``statement`` in a new transaction named ``xid`` and leave it prepared (two-phase
        commit's first phase): it stays open, a read-write transaction every view must list, after
        the session that prepared it has gone."""
        for stmt in (f"XA START '{xid}'", statement, f"XA END '{xid}'", f"XA PREPARE '{xid}'"):
            query(conn, stmt)

    def rollback_prepared(self, conn, xid: str) -> None:
        query(conn, f"XA ROLLBACK '{xid}'")

    def prepared_xids(self, conn) -> list[str]:
        # formatID, gtrid_length, bqual_length, data (the gtrid, as bytes in 8.0)
        return [d.decode() if isinstance(d, bytes) else str(d) for *_, d in query(conn, "XA RECOVER")]

    def latch_counters(self, conn) -> dict[str, float]:
        """Acquisitions of and time waited on the trx-sys mutexes (performance_schema, cumulative)."""
        out = {}
        for name, count, wait_ps in query(
                conn, "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT FROM "
                      "performance_schema.events_waits_summary_global_by_event_name WHERE EVENT_NAME LIKE %s",
                (SNAPSHOT_LATCHES,)):
            short = name.rsplit("/", 1)[-1]
            out[f"{short}.count"] = float(count)
            out[f"{short}.wait_ns"] = float(wait_ps) / 1000.0
        return out
