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


ALL_SERVERS = ("mysql:5.7@offline", "mysql:8.0@offline", "mysql:9.7@offline", "mariadb:10.11@offline",
               "mariadb:11.8@offline", "postgres:12@offline", "postgres:14@offline", "postgres:18@offline")
# what default scale leaves out of ALL_SERVERS to stay within 20 minutes on a 2-CPU machine, and why
# (design.py's docstring has the estimate; the page's notes say it where a run lacks them)
LEFT_OUT = {"postgres:18@offline": "PostgreSQL 14 already answers for the dense array of xids and the reused "
                                   "snapshots of 14 and later, and PostgreSQL 12 for the walk before 14; a third "
                                   "PostgreSQL would take the chapter past 20 minutes with MySQL 9.7 and MariaDB "
                                   "11.8 added (full scale measures it)"}
DEFAULT_SERVERS = tuple(s for s in ALL_SERVERS if s not in LEFT_OUT)


def server_config(spec: str, sc: Scale, server_cpus: str) -> ServerConfig:
    settings = {"max_connections": str(max(sc.idle, default=0) + 100),
                **parts.of_spec(spec).settings(max(sc.holders))}
    return Chapter.server_config(spec, server_cpus, settings)
