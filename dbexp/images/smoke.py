"""Start an image the way the lab does (the image contract), time its first query, remove it.

MySQL/MariaDB: ``mysqld --port=N --bind-address=127.0.0.1`` with MYSQL_ALLOW_EMPTY_PASSWORD=yes;
PostgreSQL: ``postgres -c port=N -c listen_addresses=127.0.0.1`` with POSTGRES_HOST_AUTH_METHOD=trust.
Host networking, label dbexp, container and anonymous volume removed on every exit.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Sequence

from dbexp.engine import LABEL, client
from dbexp.errors import DbexpError

READY_LINE = {"mysql": "ready for connections", "mariadb": "ready for connections",
              "postgres": "database system is ready to accept connections"}


@dataclass(frozen=True)
class SmokeResult:
    ref: str
    version: str  # SELECT VERSION()
    first_query_s: float  # from `docker run` to the first successful query
    ready_lines: int  # how often the log said it was ready
    answer: str = ""  # the first value of the last ``sql`` statement, when some were given


def contract_run(flavor: str, port: int) -> tuple[list[str], dict[str, str]]:
    """(command, environment) of the image contract for a flavor."""
    if flavor == "postgres":
        return (["postgres", "-c", f"port={port}", "-c", "listen_addresses=127.0.0.1"],
                {"POSTGRES_HOST_AUTH_METHOD": "trust"})
    env = {"MYSQL_ALLOW_EMPTY_PASSWORD": "yes"}
    if flavor == "mariadb":
        env["MARIADB_ALLOW_EMPTY_ROOT_PASSWORD"] = "1"
    return ["mysqld", f"--port={port}", "--bind-address=127.0.0.1"], env


def _ask(flavor: str, port: int, queries: Sequence[str]) -> list[str]:
    """The first value of each query ("" for statements without rows), over TCP as the contract's
    superuser with no password, in one autocommit session."""
    from dbexp.servers.lifecycle import FLAVORS

    fl = FLAVORS[flavor]("")
    conn = fl.connect(port)
    try:
        out = []
        for q in queries:
            rows = fl.query(conn, q)
            out.append(str(rows[0][0]) if rows else "")
        return out
    finally:
        conn.close()


def smoke(ref: str, flavor: str, timeout_s: float = 300, extra_args: list[str] | None = None,
          sql: str | Sequence[str] = "") -> SmokeResult:
    """Run ``ref`` per the contract (plus ``extra_args``) on a free loopback port; time ``SELECT VERSION()``.

    ``sql``: statements run once the server answers; ``answer`` is the first value of the last one.
    """
    from dbexp.servers.lifecycle import free_port

    port = free_port()
    cmd, env = contract_run(flavor, port)
    started = time.monotonic()
    container = client().containers.run(ref, cmd + (extra_args or []), environment=env, detach=True,
                                        network_mode="host", labels={LABEL: "1", "dbexp.role": "smoke"})
    try:
        deadline = started + timeout_s
        while True:
            try:
                version = _ask(flavor, port, ["SELECT VERSION()"])[0]
                elapsed = time.monotonic() - started
                break
            except Exception as exc:  # not up yet
                container.reload()
                if container.status in ("exited", "dead") or time.monotonic() > deadline:
                    log = container.logs(tail=15).decode("utf-8", "replace").strip()
                    raise DbexpError(f"{ref} did not answer on port {port} ({container.status}; "
                                     f"last error: {exc}); log tail: {log.splitlines()[-3:]}") from None
                time.sleep(0.1)
        queries = [sql] if isinstance(sql, str) else list(sql)
        answer = _ask(flavor, port, queries)[-1] if sql else ""
        logs = container.logs().decode("utf-8", "replace")
        return SmokeResult(ref, version, elapsed, logs.count(READY_LINE[flavor]), answer)
    finally:
        with contextlib.suppress(Exception):
            container.remove(force=True, v=True)
