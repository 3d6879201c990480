"""The interface every server flavor implements (one module per flavor beside this one).

What the lab itself asks of every server is a method here: how to start it (``command``,
``environment``, ``why_stopped``), check its options (``parse_options``, ``knows_option``), reach
it (``connect``, ``create_database``, ``sysbench_args``, ``connect_hint``), settle it and read its
counters (``settle``, ``counters``, ``statements``), record what it ran with (``effective_settings``)
and hold its versions to one baseline (``comparable_settings``); so that no code outside
``dbexp/servers/`` needs to know which server it holds (the shape of ann-benchmarks' ``BaseANN``).
What only some chapters ask is a capability, asked for by name with :meth:`Flavor.capability`
(``dbexp/servers/capabilities.py``); starting the same binary as a bare host process is
``dbexp/servers/bare.py``'s. Statements go through :func:`dbexp.servers.sql.query`. Methods take an
open DB-API connection where they talk to the server; a flavor knows nothing of containers.
"""

from __future__ import annotations

import abc
import re
import signal
from typing import Any

from dbexp.errors import DbexpError, choices
from dbexp.servers.capabilities import Capability

# Log lines that say why a server did not start (MySQL "[ERROR]", PostgreSQL "FATAL:", ...).
FAILURE_LINE = re.compile(r"\[ERROR\]|\bERROR\b|\bFATAL\b|\bPANIC\b")
# A client connection's limit: a busy server (a thousand sessions just closed, ten thousand transactions
# just prepared, a VM losing a fifth of its CPU to steal) took over 5 s to accept one in readview's runs
CONNECT_TIMEOUT_S = 20


class Flavor(abc.ABC):
    """How to run, reach and question one kind of server."""

    name: str
    title: str  # how the book names it in tables and headers ("PostgreSQL")
    default_db = "sbtest"  # the database sysbench and the experiments use
    ready_line: str  # the log line that says the server accepts connections
    stop_signal = signal.SIGTERM  # a bare process's clean, fast shutdown
    version_store: str  # "undo": newest version in place, older ones in undo; "heap": every version a tuple
    counter_series: tuple[str, ...] = ()  # counters worth a per-second series
    gauges: frozenset[str] = frozenset()  # of those, the ones that are levels, not cumulative counts
    # Effective settings (names as effective_settings() reports them, across this flavor's versions)
    # that change what a run measures: the rows a drift table may show (dbexp.results.drift).
    performance_settings: tuple[str, ...] = ()
    # (entrypoint, user, args) that make the image's server list every option this version knows
    options_probe: tuple[tuple[str, ...], str | None, tuple[str, ...]]
    version_query = "SELECT VERSION()"  # the version as the server reports it
    # What only some chapters ask (dbexp.servers.capabilities): name -> class built with the flavor
    capabilities: dict[str, type[Capability] | None] = {}

    def __init__(self, version: str):
        self.version = version  # the catalog's version (exact for offline builds)

    def capability(self, name: str) -> Any:
        """This flavor's capability ``name`` (see dbexp.servers.capabilities), or a one-line error."""
        cls = self.capabilities.get(name)
        if cls is None:
            have = sorted(k for k, v in self.capabilities.items() if v is not None)
            raise DbexpError(f"{self.name} {self.version} has no capability {name!r}: "
                             f"it has {choices(have) or 'none'}")
        return cls(self)

    # --- starting ---------------------------------------------------------------------------
    @abc.abstractmethod
    def command(self, port: int, settings: dict[str, str]) -> list[str]:
        """Arguments to the image's entrypoint (official images and ours share the contract)."""

    @abc.abstractmethod
    def environment(self) -> dict[str, str]:
        """Environment for the container."""

    @abc.abstractmethod
    def parse_options(self, text: str) -> set[str]:
        """Option names from the output of :attr:`options_probe`, in this flavor's normal spelling."""

    @staticmethod
    def _normalize(name: str) -> str:
        return name.strip().lower().replace("-", "_")

    def knows_option(self, key: str, known: set[str]) -> bool:
        """Whether the server accepts the setting ``key``, given every option it lists."""
        return self._normalize(key) in known

    def _failure_lines(self, log: str) -> list[str]:
        """The lines of a server's log that say why it stopped."""
        return [line.strip() for line in log.splitlines() if FAILURE_LINE.search(line)]

    def why_stopped(self, log: str) -> str:
        """One line for a failed start: the first failure lines (the cause comes first; what follows
        is mostly consequences) and the last, else the log's last lines."""
        lines = self._failure_lines(log) or [ln.strip() for ln in log.splitlines() if ln.strip()][-3:]
        if len(lines) > 4:
            lines = lines[:3] + ["..."] + lines[-1:]
        return " | ".join(lines) or "(no log)"

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
    def comparable_settings(self) -> dict[str, str]:
        """Durability, logging and instrumentation settings every chapter sets explicitly, so that the
        versions it compares differ only in what their defaults change elsewhere (which a drift table
        shows). Keys are spelled as this flavor's other settings are spelled (its normal spelling of
        option names), so that a chapter studying one of them overrides it by merging its own after:
        ``{**comparable, **own}``."""
