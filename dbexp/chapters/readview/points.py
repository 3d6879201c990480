"""What one run of the readview chapter is: its knobs (Scale) and its point's parameters."""

from __future__ import annotations

from dataclasses import dataclass

from dbexp.chapters.readview import parts
from dbexp.experiments.chapter import Chapter
from dbexp.servers.config import ServerConfig

LATCH_STMTS = 10  # statements per transaction of the double-latch readers


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    holders: tuple[int, ...]  # H: prepared transactions held open
    idle: tuple[int, ...]  # PostgreSQL: idle sessions at these H too (a process each, so smaller)
    readers: int  # R: reader threads (plus one committing writer)
    repeats: int
    duration_s: int
    table_size: int = 10000
    warmup_s: float = 5.0  # unrecorded readers after each server's load, before its first point


@dataclass(frozen=True)
class ReadViewPoint:
    holders: int  # H
    mode: str  # prepared: H prepared transactions; idle: H idle sessions; none: H = 0
    readers: int  # R reader threads (a committing writer runs beside them)
    trx_stmts: int = 0  # 0: every select in autocommit; N: N selects per READ COMMITTED transaction
    # the view's cost timed at the server in this run: bpftrace on the snapshot function, or, where the
    # server exports none (MariaDB), a server-side loop of READ COMMITTED reads (server_loop)
    probe: bool = False


DEFAULT_SERVERS = ("mysql:5.7@offline", "mysql:8.0@offline", "mariadb:10.11@offline", "postgres:12@offline",
                   "postgres:14@offline", "postgres:18@offline")


def server_config(spec: str, sc: Scale, server_cpus: str) -> ServerConfig:
    settings = {"max_connections": str(max(sc.idle, default=0) + 100),
                **parts.of_spec(spec).settings(max(sc.holders))}
    return Chapter.server_config(spec, server_cpus, settings)
