"""The interface every server flavor implements (one module per flavor beside this one).

Everything the lab or a chapter asks of a server is a method here, so that no code
outside ``dbexp/servers/`` needs to know which server it holds (the shape of
ann-benchmarks' ``BaseANN``). Methods take an open DB-API connection where they
talk to the server; a flavor knows nothing of containers.
"""

from __future__ import annotations

import abc
import re
import signal
from pathlib import Path
from typing import Any

from dbexp.errors import DbexpError
from dbexp.servers import sql

# Log lines that say why a server did not start (MySQL "[ERROR]", PostgreSQL "FATAL:", ...).
FAILURE_LINE = re.compile(r"\[ERROR\]|\bERROR\b|\bFATAL\b|\bPANIC\b")


class Flavor(abc.ABC):
    """How to run, reach and question one kind of server."""

    name: str
    title: str  # how the book names it in tables and headers ("PostgreSQL")
    default_db = "sbtest"  # the database sysbench and the experiments use
    ready_line: str  # the log line that says the server accepts connections
    stop_signal = signal.SIGTERM  # a bare process's clean, fast shutdown
    supports_bare = False  # can the same binary run as a host process (calibration's control)?
    base_version: str  # the series versions of this flavor are compared against (relative QPS)
    version_store: str  # "undo": newest version in place, older ones in undo; "heap": every version a tuple
    statement_clock: str  # how a statement is timed at the server (a key of dbexp.metrics.statement_time.CLOCKS)
    counter_series: tuple[str, ...] = ()  # counters worth a per-second series
    gauges: frozenset[str] = frozenset()  # of those, the ones that are levels, not cumulative counts
    waits_cumulative = True  # waits(): cumulative counts (deltas over a window) or a sample of now
    # Effective settings (names as effective_settings() reports them, across this flavor's versions)
    # that change what a run measures: the rows a drift table may show (dbexp.results.drift).
    performance_settings: tuple[str, ...] = ()

    def __init__(self, version: str):
        self.version = version  # the catalog's version (exact for offline builds)

    # --- starting ---------------------------------------------------------------------------
    @abc.abstractmethod
    def command(self, port: int, settings: dict[str, str]) -> list[str]:
        """Arguments to the image's entrypoint (official images and ours share the contract)."""

    @abc.abstractmethod
    def environment(self) -> dict[str, str]:
        """Environment for the container."""

    @abc.abstractmethod
    def options_probe(self) -> tuple[list[str], str | None, list[str]]:
        """(entrypoint, user, args) that list every option this version knows."""

    @abc.abstractmethod
    def parse_options(self, text: str) -> set[str]:
        """Option names from the probe's output, normalized with :meth:`normalize`."""

    @staticmethod
    def normalize(name: str) -> str:
        return name.strip().lower().replace("-", "_")

    def knows_option(self, name: str, known: set[str]) -> bool:
        """Whether the server accepts setting ``name`` (normalized), given every option it lists."""
        return name in known

    def failure_lines(self, log: str) -> list[str]:
        """The lines of a server's log that say why it stopped."""
        return [line.strip() for line in log.splitlines() if FAILURE_LINE.search(line)]

    def why_stopped(self, log: str) -> str:
        """One line for a failed start: the first failure lines (the cause comes first; what follows
        is mostly consequences) and the last, else the log's last lines."""
        lines = self.failure_lines(log) or [ln.strip() for ln in log.splitlines() if ln.strip()][-3:]
        if len(lines) > 4:
            lines = lines[:3] + ["..."] + lines[-1:]
        return " | ".join(lines) or "(no log)"

    def bare_command(self, build, port: int, settings: dict[str, str], home: Path, data: Path,
                     run: Path) -> list[str]:
        """Initialize ``data`` and return the command that starts this build's binary from ``home``
        as a host process (only where :attr:`supports_bare`)."""
        raise NotImplementedError(f"{self.name} has no bare-process start")

    # --- talking to it ------------------------------------------------------------------------
    @abc.abstractmethod
    def connect(self, port: int, database: str | None = None, autocommit: bool = True) -> Any:
        """A DB-API connection over 127.0.0.1."""

    @abc.abstractmethod
    def create_database(self, conn, name: str) -> None: ...

    @abc.abstractmethod
    def effective_settings(self, conn) -> dict[str, str]:
        """Every setting the running server uses (SHOW GLOBAL VARIABLES, pg_settings)."""

    @abc.abstractmethod
    def sysbench_args(self, port: int, database: str) -> list[str]:
        """sysbench driver options to reach this server."""

    @abc.abstractmethod
    def connect_hint(self, port: int) -> str:
        """A command line a person can paste to connect."""

    def version_sql(self) -> str:
        return "SELECT VERSION()"

    query = staticmethod(sql.query)

    # --- what the lab asks of every server ------------------------------------------------------
    @abc.abstractmethod
    def settle(self, conn) -> bool:
        """Finish the background work a bulk load leaves behind before the first measured run;
        False if it gave up before the work was done (the runs on that dataset record it)."""

    @abc.abstractmethod
    def counters(self, conn, database: str) -> dict[tuple[str, str], float]:
        """{(source, name): value} for every numeric counter the server exposes cheaply."""

    def statements(self, conn) -> float:
        """The statements clients have had executed since the server started (its own counter)."""
        raise DbexpError(f"{self.name} keeps no count of the statements it executed")

    @abc.abstractmethod
    def observe_sessions(self, conn) -> dict[str, int]:
        """The server's own count of open transactions with a write and of client sessions:
        {"open_write_trx": n, "sessions": n}."""

    # --- what chapters ask ----------------------------------------------------------------------
    @abc.abstractmethod
    def comparable_settings(self) -> dict[str, str]:
        """Durability, logging and instrumentation settings every chapter sets explicitly, so that the
        versions it compares differ only in what their defaults change elsewhere (which a drift table
        shows). Keys are spelled as this flavor's other settings methods spell them, so that a chapter
        studying one of them overrides it by merging its own after: ``{**comparable, **own}``."""

    # --- where a mechanism runs: for uprobes (dbexp.metrics.uprobe) ------------------------------
    executables: tuple[str, ...] = ()  # the server's executable names, as in /proc/<pid>/exe
    snapshot_symbol: str | None = None  # the exported function that builds a snapshot (None: none exported)
    # False where the structure a snapshot walks keeps its peak size after transactions end, so that a
    # snapshot's cost depends on the most transactions held since the server started, not only now
    trx_registry_shrinks: bool = True

    # --- prepared transactions: write transactions held open without a session each -----------
    prepared_one_per_session = True  # a session can hold only one until it ends (XA before 8.0.29)

    def prepared_settings(self, n: int) -> dict[str, str]:
        """Start-up settings that allow ``n`` prepared transactions at once."""
        return {}

    @abc.abstractmethod
    def prepare_transaction(self, conn, xid: str, statement: str) -> None:
        """Run ``statement`` in a new transaction named ``xid`` and leave it prepared (two-phase
        commit's first phase): it stays open, a read-write transaction every snapshot must list,
        after the session that prepared it has gone."""

    @abc.abstractmethod
    def rollback_prepared(self, conn, xid: str) -> None:
        """End the prepared transaction ``xid`` (from any session)."""

    @abc.abstractmethod
    def prepared_xids(self, conn) -> list[str]:
        """The names of the prepared transactions the server holds."""

    def snapshot_wait_settings(self) -> dict[str, str]:
        """Start-up settings that make :meth:`snapshot_waits` observable."""
        return {}

    @abc.abstractmethod
    def snapshot_waits(self, conn) -> dict[str, float]:
        """Waits around taking a snapshot: cumulative counts and times (``waits_cumulative``), or
        a sample of what client sessions wait on right now."""

    @abc.abstractmethod
    def relaxed_commit_settings(self) -> dict[str, str]:
        """Settings that let thousands of small commits take seconds (durability off the path)."""

    def prompt_gc_settings(self) -> dict[str, str]:
        """Settings under which old versions are collected within seconds once no snapshot needs them."""
        return {}

    def table_options(self, fillfactor: int | None) -> str:
        """The CREATE TABLE suffix for a heap fillfactor ('' where the engine has none)."""
        return ""

    @abc.abstractmethod
    def analyze(self, conn, table: str) -> None:
        """Fresh statistics (and, where it matters, a visibility map) for ``table``."""

    def pin_index_access(self, conn) -> None:
        """Make this session read single rows through the primary-key index, whatever the statistics say."""

    @abc.abstractmethod
    def begin_snapshot(self, conn) -> None:
        """Begin a REPEATABLE READ transaction whose snapshot is kept until it ends (the caller's
        first read takes it where the server takes it lazily)."""

    @abc.abstractmethod
    def garbage(self, conn, table: str) -> dict[str, float]:
        """The engine's own measures of unreclaimed old versions."""

    @abc.abstractmethod
    def garbage_settled(self, g: dict[str, float]) -> bool:
        """Whether earlier work's versions are gone, so that a new point's garbage is its own."""

    @abc.abstractmethod
    def reclaimed(self, g: dict[str, float], before: dict[str, float], peak: dict[str, float]) -> bool:
        """After an old snapshot ended: has the collector removed what it kept? ``before``: the
        garbage before the point started; ``peak``: right after the snapshot ended."""

    def statement_timing_settings(self) -> dict[str, str]:
        """Start-up settings under which the ``statement_clock`` can time every statement."""
        return {}

    @abc.abstractmethod
    def held_versions(self, conn, table: str, hold_s: float) -> dict[str, tuple[float, str]]:
        """Try to reclaim ``table``'s old versions now, and say how many the collector could not
        remove (an open snapshot may still need them): {measurement: (value, unit)}."""

    # --- the buffer pool under a scan (the buffer_eviction chapter) -----------------------------
    scan_kinds: tuple[str, ...] = ("seq",)  # the full reads full_read_sql() can issue (see there)
    page_bytes: int  # the data page size the lab's servers use (each engine's default, never changed here)
    reads_through_page_cache: bool  # True: a buffer-pool miss may be served by the OS page cache

    @abc.abstractmethod
    def buffer_pool_settings(self, mb: int) -> dict[str, str]:
        """Start-up settings for a buffer pool (shared buffers) of ``mb`` MiB whose misses are
        reads from the device where the engine can bypass the page cache, and that starts cold."""

    @abc.abstractmethod
    def copy_rows(self, conn, src: str, dst: str, rows: int) -> None:
        """Create ``dst`` like ``src`` (same columns and primary key) with its first ``rows`` ids."""

    @abc.abstractmethod
    def primary_pages(self, conn, table: str) -> int:
        """Pages of ``table`` a primary-key lookup can touch (the rows and their key), after a read
        of all of it."""

    @abc.abstractmethod
    def buffer_sample(self, conn, hot: str, big: str) -> dict[str, float]:
        """One sample of the buffer pool: pages of ``hot``'s and ``big``'s primary key resident
        (``resident.hot``, ``resident.big``; InnoDB also how many sit in the old sublist), the
        pool's cumulative page requests and reads, and the engine's own counters of where pages
        went (made young, ring reuses, usage counts), each as a float."""

    @abc.abstractmethod
    def full_read_sql(self, table: str, kind: str) -> list[str]:
        """Statements that read every row of ``table`` once: ``seq`` a sequential scan, ``index``
        the same rows through the primary key, ``update`` a scan that rewrites every row (only
        the kinds in ``scan_kinds``). All but the last set the session up."""

    @abc.abstractmethod
    def session_id(self, conn) -> int:
        """The server's id of this connection's session (what cancel_sql() names)."""

    @abc.abstractmethod
    def cancel_sql(self, session: int) -> str:
        """A statement that cancels what session ``session`` is running, leaving it connected."""

    def is_cancel(self, exc: BaseException) -> bool:
        """Whether ``exc`` is what a statement raises when cancel_sql() stopped it."""
        return False

    def set_global(self, conn, name: str, value: str) -> None:
        """Change a dynamic server setting for every new statement (MySQL's SET GLOBAL)."""
        raise NotImplementedError(f"{self.name} cannot change {name} at run time here")

    def prewarm(self, conn, table: str) -> float:
        """Load ``table``'s primary key into the buffer pool now; pages loaded."""
        raise NotImplementedError(f"{self.name} has no prewarm")

    def restore_table(self, conn, table: str) -> None:
        """Undo what an ``update`` scan left (dead versions, a grown table) so that the next run
        starts from the same table; a no-op where nothing is left."""

    # --- the commit path (the group_commit chapter) ---------------------------------------------
    has_binlog: bool = False  # a second, replication log written at commit that a chapter can turn on
    # exported functions of the group commit a probe run counts ({} where the chapter has no probe for it)
    commit_symbols: dict = {}

    @abc.abstractmethod
    def commit_settings(self, binlog: bool) -> dict[str, str]:
        """Start-up settings for the commit path: durable commits, the binlog on or off (where the
        flavor has one), and the instrumentation commit_counters() needs."""

    @abc.abstractmethod
    def group_settings(self, sync_log: bool, delay_us: int) -> dict[str, str]:
        """Dynamic settings (set_global) for a commit: the log synced at every commit group or left to
        the OS (``sync_log``: MySQL's sync_binlog), and a leader's wait of ``delay_us`` for more
        commits to join its group (0: none)."""

    @abc.abstractmethod
    def commit_counters(self, conn) -> dict[str, float]:
        """Cumulative counts of the commit path: ``syncs`` of the log a durable commit waits on (the
        binlog where it is on, else the redo log or WAL), ``redo_syncs``, ``waits`` of committing
        sessions on the wakeup of their group (where instrumented; absent otherwise) and
        ``log_bytes`` written to that log. A count the server does not keep is absent."""

    def version_chain(self, conn_snapshot, conn, table: str, row_id: int) -> list[dict]:
        """The physical versions of one row as stored (heap engines only)."""
        raise NotImplementedError(f"{self.name} keeps old versions in undo, not as tuples on a page")
