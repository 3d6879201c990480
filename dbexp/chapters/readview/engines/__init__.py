"""What the readview chapter asks of an engine: the interface each engine module of this folder
implements (``innodb.py``: MySQL's ReadView, ``mariadb.py``: MariaDB's differences, ``postgres.py``:
PostgreSQL's snapshots). Which part serves which server is ``chapter.PARTS``; the analysis reads the
part of a stored run (``chapter.of_run``) for its labels and what its views copy."""

from __future__ import annotations

import abc


class ViewPart(abc.ABC):
    """One engine's MVCC snapshot as the chapter times it and its open transactions as the chapter
    holds them, built with the server's flavor."""

    family: str  # the analysis' label for this engine's rows (what the claims pick)
    panel: str  # the charts' panel
    symbol: str | None  # the function a probe run times (None where none is exported: the server-side loop)
    function: str | None  # that function as the page names it (demangled)
    # False where the structure a view walks keeps its peak size after transactions end, so that a
    # view's cost depends on the most transactions held since the server started, not only now
    registry_shrinks: bool
    bytes_per_holder: int  # what a view copies per open transaction (the prediction's bytes)
    # where a snapshot records the transaction-completion count it was built at (rebuilds told apart
    # from reuses: snapshot_probe.SplitTimer), None where none is kept
    completion_count_offset: int | None
    idle_sessions: bool  # idle sessions are measured too (a view walks them)
    double_latch: bool  # readers in multi-statement READ COMMITTED transactions, against autocommit
    view_latch: str | None  # the mutex the double latch is counted on (None: none counted)
    # latch_counters(conn) -> {name: cumulative value} where the server counts its snapshot latches
    # (performance_schema's extra counters of a run); None where nothing is counted
    latch_counters = None
    # the functions that build and copy a view, as callgrind names them (fnmatch patterns; none calls another):
    # the counted part's witness, their inclusive instructions per statement (counting.py); () where none is known
    counted_functions: tuple[str, ...] = ()

    def counted_settings(self) -> dict[str, str]:
        """Start-up settings of a counted server beside the timed servers' (what makes a read's path the same
        however many reads came before it); none by default."""
        return {}

    def __init__(self, flavor):
        self.flavor = flavor

    @abc.abstractmethod
    def settings(self, holders: int) -> dict[str, str]:
        """Start-up settings for up to ``holders`` prepared transactions and the counts the part reads."""

    @abc.abstractmethod
    def prepare(self, conn, xid: str, statement: str) -> None:
        """Run ``statement`` in a new transaction named ``xid`` and leave it prepared (two-phase
        commit's first phase): open, listed by every view, after its session has gone."""

    @abc.abstractmethod
    def one_prepared_per_session(self, conn) -> bool:
        """Whether a session holds its prepared transaction until it ends (each holder then needs a
        session of its own)."""

    @abc.abstractmethod
    def rollback_prepared(self, conn, xid: str) -> None:
        """Roll back the prepared transaction ``xid``."""

    @abc.abstractmethod
    def prepared_xids(self, conn) -> list[str]:
        """The names of the prepared transactions the server lists now."""

    # --- the transaction's own id and snapshot, for the mechanics runs (mechanics.py) and the visibility
    # runs (visibility.py) ------------------------------------------------------------------------------
    @abc.abstractmethod
    def trx_id(self, conn) -> int | None:
        """The id of the transaction open on ``conn``, as the server lists it; None where it has none yet
        (a transaction that has only read, or none open)."""

    @abc.abstractmethod
    def held_ids(self, conn) -> list[int]:
        """The ids of the read-write transactions the server lists as open now (the holders), sorted."""

    @abc.abstractmethod
    def begin(self, conn, snapshot: bool) -> None:
        """Begin a REPEATABLE READ transaction on ``conn``; ``snapshot``: take its snapshot at once (MySQL's
        START TRANSACTION WITH CONSISTENT SNAPSHOT; PostgreSQL's first statement), else nothing is read."""

    @abc.abstractmethod
    def isolation(self, conn) -> str:
        """The isolation level of ``conn``'s transaction as the server reports it, in words ("repeatable read")."""

    def snapshot_ids(self, conn, known: list[int]) -> list[int] | None:
        """The ids a snapshot taken now on ``conn`` holds as running, where SQL can read them (PostgreSQL's
        txid_current_snapshot()): those it lists, and those of ``known`` that it holds as running without
        listing them; None where no statement shows a view's ids (InnoDB)."""
        return None

    @abc.abstractmethod
    def scan_table(self, name: str) -> str:
        """The DDL of a visibility run's table ``name`` (id, v): a clustered or heap table whose every row a
        scan checks against its view, with nothing in the background to rewrite its rows."""

    @abc.abstractmethod
    def numbers(self, rows: int) -> str:
        """A SELECT of the whole numbers 1 to ``rows``, as column n."""

    @abc.abstractmethod
    def committed_write(self, conn, statement: str) -> int:
        """Run ``statement`` in a transaction of its own and commit it: that transaction's id (each row it
        wrote carries it)."""

    def refill(self, conn, table: str, source: str) -> int:
        """Empty ``table`` (a new file: no delete-marked rows or dead versions left to meet) and copy
        ``source``'s rows into it in one committed transaction: that transaction's id."""
        from dbexp.servers.sql import query

        query(conn, f"TRUNCATE TABLE {table}")
        return self.committed_write(conn, f"INSERT INTO {table} (id, v) SELECT id, v FROM {source}")
