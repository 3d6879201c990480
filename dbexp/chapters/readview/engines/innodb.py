"""The readview chapter's InnoDB part, for MySQL (MariaDB's derives from it): the function that builds
a ReadView, prepared transactions as XA, and the trx-sys mutexes counted by performance_schema.

Which trx-sys mutexes a server has is the server's own answer (every instrument named
``trx_sys%`` is counted, each apart): 5.7.22, 8.0.15 and MariaDB have one, ``trx_sys_mutex``;
MySQL 9.7 has two more (``OTHER_LATCHES``), where the transaction system's work was split out
from under the global one. A ReadView is still opened, and in READ COMMITTED closed at every
statement's end, under ``trx_sys_mutex`` there (read0read.cc's MVCC::view_open, ha_innodb.cc's
external_lock and store_lock, as we read MySQL 8.4 and 9.x): ``VIEW_LATCH`` is the one the double
latch is counted on, in every version."""

from __future__ import annotations

import time

from dbexp.servers.mysql import MySQL
from dbexp.servers.sql import query

from . import ViewPart

SNAPSHOT_LATCHES = "wait/synch/mutex/innodb/trx_sys%"  # every trx-sys mutex the server has, counted
# the global trx-sys mutex: a ReadView is copied from trx_sys->rw_trx_ids under it (MVCC::view_open), and
# a READ COMMITTED statement's view is closed under it at the statement's end
VIEW_LATCH = "trx_sys_mutex"
# the trx-sys mutexes a server may have beside it (MySQL 9.7; not 5.7.22, 8.0.15 or MariaDB), what each guards
OTHER_LATCHES = {
    "trx_sys_shard_mutex": "a shard of the active read-write transactions by id (a transaction's start "
                           "and end, lookups of a transaction by id)",
    "trx_sys_serialisation_mutex": "the serialisation list (a committing transaction's number)",
}


class Views(ViewPart):
    family = MySQL.name  # the analysis' label for this engine's rows (what the claims pick)
    panel = "MySQL and MariaDB"  # the charts' panel
    # MVCC::view_open(ReadView*&, trx_t*): opens (or reopens) a statement's or transaction's view,
    # copying the ids of the active read-write transactions (the same mangled name in 5.7 and 8.0)
    symbol: str | None = "_ZN4MVCC9view_openERP8ReadViewP5trx_t"
    function: str | None = "MVCC::view_open"
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
    view_latch: str | None = VIEW_LATCH  # the mutex the double latch is counted on (None: none counted)
    # as callgrind names it (demangled): MVCC::view_open(ReadView*&, trx_t*), which calls ReadView::prepare and
    # its copy of the active ids
    counted_functions: tuple[str, ...] = ("MVCC::view_open(*",)

    def counted_settings(self) -> dict[str, str]:
        """The adaptive hash index off: it builds its entries as reads repeat (a smoke run of MySQL 8.0.15 counted
        2,580 more instructions per read in the B-tree descent at the first H a start counted than at the next,
        whatever the H), so that with it on a count depends on the reads before it."""
        return {"innodb_adaptive_hash_index": "OFF"}

    def settings(self, holders: int) -> dict[str, str]:
        """Start-up settings: the trx-sys mutex instruments on (prepared transactions need none)."""
        return {"performance-schema-instrument": f"{SNAPSHOT_LATCHES}=ON"}

    def prepare(self, conn, xid: str, statement: str) -> None:
        """Run ``statement`` in a new transaction named ``xid`` and leave it prepared (two-phase
        commit's first phase): it stays open, a read-write transaction every view must list, after
        the session that prepared it has gone."""
        for stmt in (f"XA START '{xid}'", statement, f"XA END '{xid}'", f"XA PREPARE '{xid}'"):
            query(conn, stmt)

    def one_prepared_per_session(self, conn) -> bool:
        """Whether a session holds its prepared XA transaction until it ends (so each holder needs a
        session of its own): the server's answer. MySQL 8.0.29+ detaches an XA transaction from its
        session at XA PREPARE while ``xa_detach_on_prepare`` is ON (its default; 9.7 included), and the
        session can start the next one; 5.7, 8.0.15 and MariaDB have no such variable."""
        rows = query(conn, "SHOW GLOBAL VARIABLES LIKE 'xa_detach_on_prepare'")
        return not (rows and str(rows[0][1]).upper() in ("ON", "1"))

    def rollback_prepared(self, conn, xid: str) -> None:
        query(conn, f"XA ROLLBACK '{xid}'")

    def prepared_xids(self, conn) -> list[str]:
        # formatID, gtrid_length, bqual_length, data (the gtrid, as bytes in 8.0)
        return [d.decode() if isinstance(d, bytes) else str(d) for *_, d in query(conn, "XA RECOVER")]

    # MySQL lists a transaction that has no id yet (one that has only read) under its address with this bit
    # set (trx_get_id_for_print): an id at or above it is no id; MariaDB lists it with trx_id 0 (10.11 and 11.8,
    # seen 2026-12-07: 0 after a read, 21 after the same transaction's first write), and InnoDB assigns no id 0
    NO_ID = 1 << 48
    # INNODB_TRX is read from a cache that a read refreshes only where no read came in the 0.1 s before it
    # (trx0i_s.cc, CACHE_MIN_IDLE_TIME_US): waited out before each read, so that it lists the transactions now
    TRX_CACHE_S = 0.11

    def _innodb_trx(self, conn, where: str = "") -> list[tuple]:
        time.sleep(self.TRX_CACHE_S)
        return query(conn, f"SELECT trx_id FROM information_schema.INNODB_TRX {where}")

    def trx_id(self, conn) -> int | None:
        rows = self._innodb_trx(conn, "WHERE trx_mysql_thread_id = CONNECTION_ID()")
        value = int(rows[0][0]) if rows else None
        return value if value is not None and 0 < value < self.NO_ID else None

    def held_ids(self, conn) -> list[int]:
        ids = (int(r[0]) for r in self._innodb_trx(conn))
        return sorted(i for i in ids if 0 < i < self.NO_ID)

    def begin(self, conn, snapshot: bool) -> None:
        query(conn, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        query(conn, "START TRANSACTION WITH CONSISTENT SNAPSHOT" if snapshot else "START TRANSACTION")

    def isolation(self, conn) -> str:
        # transaction_isolation from 5.7.20 and in MariaDB 11.1+, tx_isolation before (and in 10.11)
        rows = dict(query(conn, "SHOW SESSION VARIABLES WHERE Variable_name IN ('transaction_isolation', "
                                "'tx_isolation')"))
        value = rows.get("transaction_isolation") or rows.get("tx_isolation") or ""
        return str(value).replace("-", " ").lower()

    def scan_table(self, name: str) -> str:
        return f"CREATE TABLE {name} (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB"

    def numbers(self, rows: int) -> str:
        # MySQL 5.7 has no recursive WITH: a cross product of digits
        digits = "(" + " UNION ALL ".join(f"SELECT {d} AS d" for d in range(10)) + ")"
        places = max(1, len(str(rows)))
        total = " + ".join(f"{10 ** i} * t{i}.d" for i in range(places))
        tables = ", ".join(f"{digits} AS t{i}" for i in range(places))
        return f"SELECT n FROM (SELECT 1 + {total} AS n FROM {tables}) AS s WHERE n <= {rows}"

    def committed_write(self, conn, statement: str) -> int:
        query(conn, "START TRANSACTION")
        query(conn, statement)
        trx = self.trx_id(conn)
        query(conn, "COMMIT")
        if trx is None:
            raise RuntimeError(f"a committed write has no transaction id the server lists: {statement}")
        return trx

    def latch_counters(self, conn) -> dict[str, float]:
        """Acquisitions of and time waited on each trx-sys mutex the server has (performance_schema,
        cumulative), by its short name (``VIEW_LATCH``, and ``OTHER_LATCHES`` where it has them)."""
        out = {}
        for name, count, wait_ps in query(
                conn, "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT FROM "
                      "performance_schema.events_waits_summary_global_by_event_name WHERE EVENT_NAME LIKE %s",
                (SNAPSHOT_LATCHES,)):
            short = name.rsplit("/", 1)[-1]
            out[f"{short}.count"] = float(count)
            out[f"{short}.wait_ns"] = float(wait_ps) / 1000.0
        return out
