"""Start an image the way the lab does (the image contract), time its first query, remove it.

The contract is the flavor's own: :meth:`Flavor.command` and :meth:`Flavor.environment` on a
free loopback port with host networking; label dbexp; container and anonymous volume removed
on every exit. The container is started and removed as a server's is (:func:`lifecycle.run_container`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Sequence

from dbexp.engine import LABEL
from dbexp.errors import DbexpError
from dbexp.servers.flavor import Flavor
from dbexp.servers.lifecycle import free_port, remove, run_container
from dbexp.servers.sql import query
from dbexp.waits import poll


@dataclass(frozen=True)
class SmokeResult:
    ref: str
    version: str  # SELECT VERSION()
    first_query_s: float  # from `docker run` to the first successful query
    ready_lines: int  # how often the log said it was ready
    answer: str = ""  # the first value of the last ``sql`` statement, when some were given


def _ask(flavor: Flavor, port: int, queries: Sequence[str]) -> list[str]:
    """The first value of each query ("" for statements without rows), over TCP as the contract's
    superuser with no password, in one autocommit session."""
    conn = flavor.connect(port)
    try:
        out = []
        for q in queries:
            rows = query(conn, q)
            out.append(str(rows[0][0]) if rows else "")
        return out
    finally:
        conn.close()


def smoke(ref: str, flavor: Flavor, timeout_s: float = 300, extra_args: list[str] | None = None,
          sql: str | Sequence[str] = "") -> SmokeResult:
    """Run ``ref`` per the contract (plus ``extra_args``) on a free loopback port; time ``SELECT VERSION()``.

    ``sql``: statements run once the server answers; ``answer`` is the first value of the last one.
    """
    port = free_port()
    started = time.monotonic()
    container = run_container(ref, flavor.command(port, {}) + (extra_args or []), flavor.environment(),
                              {LABEL: "1", "dbexp.role": "smoke", "dbexp.owner": str(os.getpid())})
    try:
        last: Exception | None = None

        def version() -> str | None:
            nonlocal last
            try:
                return _ask(flavor, port, ["SELECT VERSION()"])[0]
            except Exception as exc:  # not up yet
                last = exc
                container.reload()
                if container.status in ("exited", "dead"):
                    raise _no_answer(ref, flavor, port, container, exc) from None
                return None

        answered = poll(version, started + timeout_s - time.monotonic(), interval_s=0.1)  # from `docker run`
        if answered is None:
            raise _no_answer(ref, flavor, port, container, last)
        elapsed = time.monotonic() - started
        queries = [sql] if isinstance(sql, str) else list(sql)
        answer = _ask(flavor, port, queries)[-1] if sql else ""
        logs = container.logs().decode("utf-8", "replace")
        return SmokeResult(ref, answered, elapsed, logs.count(flavor.ready_line), answer)
    finally:
        remove(container)


def _no_answer(ref: str, flavor: Flavor, port: int, container, exc: Exception | None) -> DbexpError:
    why = flavor.why_stopped(container.logs().decode("utf-8", "replace"))
    return DbexpError(f"{ref} did not answer on port {port} ({container.status}; last error: {exc}); log: {why}")
