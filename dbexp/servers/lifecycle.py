"""Where servers start and stop: a pinned container per server, always torn down.

A container is started by testcontainers' ``DockerContainer`` (:func:`run_container`): the lab's
labels (``dbexp``, ``dbexp.role``, ...; testcontainers adds its own ``org.testcontainers.*``), host
networking (``network="host"``, which also keeps testcontainers from looking for a network of its
own), the server bound to 127.0.0.1 on a free port by its command, cpuset, memory limit and shm size
passed through to the docker SDK. Readiness is the lab's own (:func:`wait_ready`: the server answers a
query, or the log says why it exited), as it is for a bare process, so no testcontainers wait strategy.

Removal stays the lab's: Ryuk, testcontainers' reaper, is turned off (its image cannot be pulled
offline, and it would take a ``dbexp server start`` container, which must outlive this process, with
it). Every container this process started is removed with its anonymous volumes on any exit, Ctrl-C
included (``running``, and an ``atexit`` hook for what is left); ``dbexp clean`` and orphan detection
find leftovers by the ``dbexp`` label.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import random
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from dbexp.catalog import Build, parse_spec
from dbexp.engine import LABEL, client
from dbexp.errors import DbexpError
from dbexp.process import Child
from dbexp.servers.config import ServerConfig
from dbexp.servers.flavor import Flavor
from dbexp.servers.options import check_settings, known_options
from dbexp.servers.registry import flavor_for
from dbexp.servers.sql import query
from dbexp.waits import poll

READY_TIMEOUT_S = 300
_LIVE: dict[str, Any] = {}  # containers this process started and has not removed yet


PORTS_FROM = 10000  # a server's port is drawn from here to below the kernel's ephemeral range


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_port() -> int:
    """A port free on 127.0.0.1 for a server to listen on, below the kernel's ephemeral range: a port the
    kernel hands out (bind to port 0) is one it also gives outgoing connections as their local port, and one of
    the lab's clients took it as such between this call and the server's bind in a make test of 2026-12-07
    (PostgreSQL 16: "could not create any TCP/IP sockets"); ports below the range are never given out so."""
    low = _ephemeral_low()
    rng = random.SystemRandom()
    for _ in range(100) if low - PORTS_FROM > 100 else ():
        port = rng.randrange(PORTS_FROM, low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:  # no room below the range (or none free there): the kernel's choice
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
    process: Child | None = None  # a bare process (dbexp.process.Child, its own process group)
    version: str = ""  # the server's own version number (SHOW server_version on PostgreSQL)
    version_full: str = ""  # SELECT VERSION()
    started_at: float = 0.0
    ready_s: float = 0.0
    data_dir: str | None = None  # a bare process's data directory on this host (containers: None)
    log_path: Path | None = None  # a bare process's log file
    under: Any = None  # the dbexp.servers.valgrind.Valgrind it runs under (config.under), else None

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
            return query(conn, sql, params)
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

    def logs(self, tail: int | None = 30) -> str:
        """The server's log (its last ``tail`` lines; None: all of it)."""
        if self.container is not None:
            return self.container.logs(tail="all" if tail is None else tail).decode("utf-8", "replace")
        text = self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""
        return text if tail is None else "\n".join(text.splitlines()[-tail:])

    def why_stopped(self) -> str:
        """The log lines that explain a failed start (ERROR, FATAL, ...), else the log's last lines."""
        return self.flavor.why_stopped(self.logs(None))

    def restart(self, timeout_s: int = 60) -> float:
        """Stop the server cleanly and start it again on the same data directory: a fresh process whose
        caches (buffer pool, shared buffers) start empty; the seconds it took. A container only (a bare
        process's start is its runner's)."""
        if self.container is None:
            raise DbexpError(f"{self.build.spec} runs as a bare process: the lab restarts containers only")
        t0 = time.monotonic()
        self.container.restart(timeout=timeout_s)
        self.started_at = time.monotonic()
        wait_ready(self)
        return time.monotonic() - t0

    def stop(self) -> None:
        if self.container is not None:
            remove(self.container)
        if self.process is not None:
            stop_process(self.process, self.flavor.stop_signal)
        if self.under is not None:
            self.under.close()


def stop_process(proc: Child, sig: int, timeout_s: float = 60) -> None:
    """Stop a bare server process with its clean shutdown signal, sent to the server alone (its
    group's other processes, PostgreSQL's backends, would take it for something else); kill its
    group if it has not ended after ``timeout_s``."""
    if proc.poll() is None:
        proc.send_signal(sig)
        if not proc.reap(timeout_s):
            proc.end()


def detach(server: Server) -> None:
    """Let a container outlive this process (``dbexp server start``): not removed at exit."""
    if server.container is not None:
        _LIVE.pop(server.container.id, None)


def run_container(ref: str, command: list[str], environment: dict[str, str], labels: dict[str, str],
                  name: str | None = None, volumes: list[tuple[str, str, str]] | None = None, **kwargs: Any):
    """Start ``ref`` with host networking (testcontainers' DockerContainer); the docker Container.
    ``volumes``: (host path, container path, mode) bind mounts; ``kwargs`` go to the docker SDK (cpuset_cpus,
    mem_limit, shm_size, ...). Until removed (:func:`remove` or at exit) it is this process's; a start that
    fails or is interrupted leaves nothing behind."""
    from testcontainers.core.config import testcontainers_config
    from testcontainers.core.container import DockerContainer

    client()  # an engine answers, or one line says how to start one
    testcontainers_config.ryuk_disabled = True  # the lab removes its own containers (module docstring)
    wrapper = (DockerContainer(ref, docker_client_kw={"timeout": 120}, command=command, env=environment,
                               name=name, volumes=volumes)
               .with_kwargs(network="host", labels=labels, **kwargs))
    try:
        wrapper.start()
    except BaseException:
        with contextlib.suppress(Exception):
            wrapper.stop()  # removes the container if it was created
        raise
    container = wrapper.get_wrapped_container()
    _LIVE[container.id] = container
    return container


def remove(container) -> None:
    """Remove a container and its anonymous volumes (a server's data directory); errors ignored."""
    with contextlib.suppress(Exception):
        container.remove(force=True, v=True)
    _LIVE.pop(container.id, None)


@atexit.register
def _remove_leftovers() -> None:
    for container in list(_LIVE.values()):
        remove(container)


def wait_ready(server: Server, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Poll until the server answers a query over TCP, or fail with its last log lines."""
    last = ""

    def answers() -> bool:
        nonlocal last
        if server.container is not None:
            server.container.reload()
            if server.container.status in ("exited", "dead"):
                raise DbexpError(f"{server.build.spec} exited while starting: {server.why_stopped()}")
        elif server.process is not None and server.process.poll() is not None:
            raise DbexpError(f"{server.build.spec} (bare) exited while starting: {server.why_stopped()}")
        try:
            conn = server.connect()
            try:
                server.version = str(query(conn, server.flavor.version_query)[0][0])
                server.version_full = str(query(conn, "SELECT VERSION()")[0][0])
            finally:
                conn.close()
        except Exception as exc:  # not up yet
            last = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return False
        return True

    if not poll(answers, timeout_s, interval_s=0.5):
        raise DbexpError(f"{server.build.spec} did not accept queries within {timeout_s:.0f} s "
                         f"(last error: {last}; log: {server.why_stopped()})")
    server.ready_s = time.monotonic() - server.started_at


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
              "dbexp.cpuset": config.cpuset or "", "dbexp.owner": str(os.getpid())}  # the process that started it
    kwargs: dict[str, Any] = {}
    if config.cpuset:
        kwargs["cpuset_cpus"] = config.cpuset
    if config.memory:
        kwargs["mem_limit"] = config.memory
        kwargs["memswap_limit"] = config.memory
    settings, environment, under = config.settings, flavor.environment(), None
    if config.under:  # valgrind's (dbexp.servers.valgrind): the server starts natively, its folder mounted
        from dbexp.servers.valgrind import Valgrind, counting_settings, image_path

        settings = {**counting_settings(flavor, image, config.settings), **config.settings}
        under = Valgrind.for_server(config.under, flavor, flavor.command(port, settings))
        environment.update(under.environment(image_path(image.ref)))
        labels["dbexp.under"] = config.under
    started = time.monotonic()
    try:
        container = run_container(image.ref, flavor.command(port, settings), environment, labels,
                                  name=name, volumes=under.volumes() if under else None, shm_size="256m", **kwargs)
    except BaseException:
        if under is not None:
            under.close()
        raise
    server = Server(config, build, flavor, image, port, container=container, started_at=started, under=under)
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
        remove(container)
    return len(found)
