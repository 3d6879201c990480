"""What the chapter asks of an engine's buffer pool: the interface each engine module of this
folder implements (``innodb.py``, ``mariadb.py``, ``postgres.py``), and a variant of a run on that
engine. Which part serves which server is ``chapter.PARTS``."""

from __future__ import annotations

import abc
from dataclasses import dataclass

from dbexp.servers.sql import query


@dataclass(frozen=True)
class Variant:
    name: str
    scan: str  # seq | index | update (BufferPart.full_read_sql)
    settings: tuple[tuple[str, str], ...] = ()  # dynamic settings made before the run (capability "set_global")
    prewarm: bool = False  # load the hot table with pg_prewarm the moment the scan stops


class BufferPart(abc.ABC):
    """One engine's buffer pool as the chapter measures it, built with the server's flavor."""

    engine: str  # the engine's name on the page ("InnoDB", "PostgreSQL"): charts and tables group by it
    variants: tuple[Variant, ...]  # the variants this engine runs, in the page's order
    scan_kinds: tuple[str, ...] = ("seq",)  # the full reads full_read_sql() can issue (see there)
    page_bytes: int  # the data page size the lab's servers use (each engine's default, never changed here)
    reads_through_page_cache: bool  # True: a buffer-pool miss may be served by the OS page cache
    # the key of standing() that counts the pages the policy keeps first ("young": InnoDB's young sublist;
    # "used_twice": PostgreSQL's buffers at usage count 2 or more), and those words on the page
    kept_first: str
    kept_first_words: str
    # True: the pool must be full (eviction started) before a page can be made young, and the chapter reads a
    # filler table larger than the pool before it warms the hot table (InnoDB: make_filler)
    fills_pool_first: bool = False
    # settings made while the hot table is warmed, before the variant's own (InnoDB: the defaults' LRU settings)
    warm_settings: tuple[tuple[str, str], ...] = ()
    # True: a write a second beside the hot workload (make_tick, tick; ticker.py), without which the pool's
    # background cleaner does not run (InnoDB's page cleaner: only after activity)
    writes_a_second: bool = False
    # True: the midpoint probe (pool_mechanics) runs on the eviction runs' own servers (InnoDB's LRU midpoint)
    probes_midpoint: bool = False

    query = staticmethod(query)

    def __init__(self, flavor):
        self.flavor = flavor

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
    def standing(self, conn, table: str) -> dict[str, float]:
        """Where ``table``'s primary-key pages stand in the pool now: ``resident``, and by the policy's own
        mark, with ``kept_first`` among them (InnoDB: ``young`` and ``old``, by LRU position; PostgreSQL:
        ``usage0`` to ``usage5`` and ``used_twice``)."""

    def make_filler(self, conn, src: str, dst: str, share: float) -> int:
        """Create ``dst``, a table of at least ``share`` times the pool's pages (rows made from ``src``'s ids),
        whose read fills the pool; its pages. Only where ``fills_pool_first``."""
        raise NotImplementedError(f"{self.flavor.name} needs no filler table")

    def make_tick(self, conn, table: str) -> None:
        """Create ``table``, one row the write a second updates. Only where ``writes_a_second``."""
        raise NotImplementedError(f"{self.flavor.name} makes no write a second")

    def tick(self, conn, table: str) -> None:
        """One small write (a committed update of ``table``'s one row)."""
        raise NotImplementedError(f"{self.flavor.name} makes no write a second")

    @abc.abstractmethod
    def full_read_sql(self, table: str, kind: str) -> list[str]:
        """Statements that read every row of ``table`` once: ``seq`` a sequential scan, ``index``
        the same rows through the primary key, ``update`` a scan that rewrites every row (only
        the kinds in ``scan_kinds``). All but the last set the session up."""

    def bad_kind(self, kind: str) -> ValueError:
        return ValueError(f"bad scan kind {kind!r} for {self.flavor.title}: "
                          + ("valid is " if len(self.scan_kinds) == 1 else "valid are ") + ", ".join(self.scan_kinds))

    @abc.abstractmethod
    def session_id(self, conn) -> int:
        """The server's id of this connection's session (what cancel_sql() names)."""

    @abc.abstractmethod
    def client_sessions(self, conn) -> set[int]:
        """The ids (as session_id() gives them) of every client session connected now."""

    @abc.abstractmethod
    def session_os_ids(self, conn, sessions) -> list[int]:
        """The thread or process ids, in the server's own pid namespace, that run ``sessions``."""

    @abc.abstractmethod
    def cancel_sql(self, session: int) -> str:
        """A statement that cancels what session ``session`` is running, leaving it connected."""

    def is_cancel(self, exc: BaseException) -> bool:
        """Whether ``exc`` is what a statement raises when cancel_sql() stopped it."""
        return False

    def prewarm(self, conn, table: str) -> float:
        """Load ``table``'s primary key into the buffer pool now; pages loaded."""
        raise NotImplementedError(f"{self.flavor.name} has no prewarm")

    def warm(self, conn, table: str) -> None:
        """Read every page of ``table``'s primary key (its rows and their key) into the pool."""
        self.primary_pages(conn, table)

    def restore_table(self, conn, table: str) -> None:
        """Undo what an ``update`` scan left (dead versions, a grown table) so that the next run
        starts from the same table; a no-op where nothing is left."""
