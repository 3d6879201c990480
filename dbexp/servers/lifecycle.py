"""Where servers start and stop: a pinned container per server, always torn down."""

from __future__ import annotations

import atexit
import contextlib
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

from dbexp.catalog import Build, parse_spec
from dbexp.engine import LABEL, client
from dbexp.errors import DbexpError
from dbexp.servers.config import ServerConfig
from dbexp.servers.flavor import Flavor
from dbexp.servers.mariadb import MariaDB
from dbexp.servers.mysql import MySQL
from dbexp.servers.options import check_settings, known_options
from dbexp.servers.postgres import Postgres

FLAVORS: dict[str, type[Flavor]] = {"mysql": MySQL, "postgres": Postgres, "mariadb": MariaDB}
READY_TIMEOUT_S = 300
_LIVE: dict[str, Any] = {}  # containers this process started and has not removed yet


def flavor_for(build: Build) -> Flavor:
    return FLAVORS[build.flavor](build.version)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A running server: how to reach it and what it really is."""

    config: ServerConfig
    build: Build
    flavor: Flavor
    image: Any  # dbexp.images.ImageInfo
    port: int
    container: Any = None  # docker Container, or None for a bare process
    process: Any = None  # subprocess.Popen for a bare process
    version: str = ""  # the server's own version number (SHOW server_version on PostgreSQL)
    version_full: str = ""  # SELECT VERSION()
    started_at: float = 0.0
    ready_s: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def host(self) -> str:
        return "127.0.0.1"

    @property
    def kind(self) -> str:
        return "container" if self.container is not None else "bare"

    def connect(self, database: str | None = None, autocommit: bool = True):
        return self.flavor.connect(self.port, database, autocommit)

    def query(self, sql: str, params=None, database: str | None = None) -> list[tuple]:
        conn = self.connect(database)
        try:
            return self.flavor.query(conn, sql, params)
        finally:
            conn.close()

    def effective_settings(self) -> dict[str, str]:
        conn = self.connect()
        try:
            return self.flavor.effective_settings(conn)
        finally:
            conn.close()

    def ensure_database(self, name: str) -> None:
        conn = self.connect()
        try:
            self.flavor.create_database(conn, name)
        finally:
            conn.close()

    def main_pid(self) -> int | None:
        """The server's main process id as this host sees it."""
        if self.process is not None:
            return self.process.pid
        self.container.reload()
        return self.container.attrs["State"]["Pid"] or None

    def logs(self, tail: int = 30) -> str:
        if self.container is not None:
            return self.container.logs(tail=tail).decode("utf-8", "replace")
        return self.extra.get("log_tail", lambda: "")()

    def stop(self) -> None:
        if self.container is not None:
            _remove(self.container)
        if self.process is not None and "stop" in self.extra:
            self.extra["stop"]()


def _remove(container) -> None:
    with contextlib.suppress(Exception):
        container.remove(force=True, v=True)
    _LIVE.pop(container.id, None)


@atexit.register
def _remove_leftovers() -> None:
    for container in list(_LIVE.values()):
        _remove(container)


def wait_ready(server: Server, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Poll until the server answers a query over TCP, or fail with its last log lines."""
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        if server.container is not None:
            server.container.reload()
            if server.container.status in ("exited", "dead"):
                raise DbexpError(f"{server.build.spec} exited while starting: "
                                 f"{server.logs(8).strip().splitlines()[-1:] or '(no log)'}")
        elif server.process is not None and server.process.poll() is not None:
            raise DbexpError(f"{server.build.spec} (bare) exited while starting: {server.logs(8)!r}")
        try:
            conn = server.connect()
            try:
                server.version = str(server.flavor.query(conn, server.flavor.version_sql())[0][0])
                server.version_full = str(server.flavor.query(conn, "SELECT VERSION()")[0][0])
            finally:
                conn.close()
            server.ready_s = time.monotonic() - server.started_at
            return
        except Exception as exc:  # not up yet
            last = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            time.sleep(0.5)
    raise DbexpError(f"{server.build.spec} did not accept queries within {timeout_s:.0f} s "
                     f"(last error: {last})")


def prepare_build(config: ServerConfig) -> tuple[Build, Flavor, Any]:
    """Resolve the spec, make sure the image exists and validate settings; starts nothing."""
    from dbexp import images

    build = images.resolve(parse_spec(config.spec, config.source))
    flavor = flavor_for(build)
    image = images.ensure(build)
    if config.settings:
        known = known_options(flavor, image.ref, image.id)
        check_settings(flavor, config.settings, known, build.version)
    return build, flavor, image


def start(config: ServerConfig, role: str = "experiment", name: str | None = None) -> Server:
    """Start a server container pinned to ``config.cpuset``; host networking on a free port."""
    build, flavor, image = prepare_build(config)
    port = free_port()
    labels = {LABEL: "1", "dbexp.role": role, "dbexp.spec": build.spec, "dbexp.port": str(port),
              "dbexp.cpuset": config.cpuset or ""}
    kwargs: dict[str, Any] = {}
    if config.cpuset:
        kwargs["cpuset_cpus"] = config.cpuset
    if config.memory:
        kwargs["mem_limit"] = config.memory
        kwargs["memswap_limit"] = config.memory
    started = time.monotonic()
    container = client().containers.run(
        image.ref, flavor.command(port, config.settings), detach=True, network_mode="host",
        environment=flavor.environment(), labels=labels, name=name, shm_size="256m",
        **kwargs)
    _LIVE[container.id] = container
    server = Server(config, build, flavor, image, port, container=container, started_at=started)
    try:
        wait_ready(server)
    except BaseException:
        server.stop()
        raise
    return server


@contextlib.contextmanager
def running(config: ServerConfig, role: str = "experiment") -> Iterator[Server]:
    """A server for the length of a ``with`` block; removed on any exit, Ctrl-C included."""
    server = start(config, role)
    try:
        yield server
    finally:
        server.stop()


def interactive_containers() -> list:
    return client().containers.list(all=True, filters={"label": [LABEL, "dbexp.role=interactive"]})


def clean() -> int:
    """Remove every container the lab made (label dbexp); returns how many."""
    found = client().containers.list(all=True, filters={"label": LABEL})
    for container in found:
        _remove(container)
    return len(found)
