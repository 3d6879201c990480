"""Reach the Docker engine (:func:`client`); start one, on request, where none answers (:func:`start`).

``DOCKER_HOST`` is honoured (docker.from_env), so the servers can live on a
bigger remote machine. A getter never installs or starts anything: :func:`client` raises, saying
how to start an engine, and only :func:`start` (``dbexp engine``, which ``make engine`` runs)
installs Debian's ``docker.io`` where ``scripts/setup-host.sh`` did not, and starts ``dockerd``.
Only a local engine is installed or started.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import docker
from docker.errors import DockerException

from dbexp.errors import DbexpError
from dbexp import process
from dbexp.process import Child
from dbexp.waits import poll

DOCKERD_LOG = Path("/var/log/dbexp-dockerd.log")
LABEL = "dbexp"  # every container and image the lab makes carries this label


def is_local() -> bool:
    """True when the engine runs on this host (its /proc and cgroups are ours to read)."""
    host = os.environ.get("DOCKER_HOST", "")
    return host == "" or host.startswith("unix://")


def _ping() -> docker.DockerClient | None:
    try:
        c = docker.from_env(timeout=120)
        c.ping()
        return c
    except DockerException:
        return None


def _debian_with_root() -> bool:
    return os.geteuid() == 0 and Path("/etc/debian_version").exists() and shutil.which("apt-get") is not None


def _install_and_start_dockerd() -> None:
    if shutil.which("dockerd") is None:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        process.run(["apt-get", "update", "-q"], check=True, env=env, stdout=subprocess.DEVNULL)
        process.run(["apt-get", "install", "-y", "-q", "docker.io"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    with open(DOCKERD_LOG, "ab") as log:  # a daemon that outlives the lab: not tied to this process
        Child(["dockerd"], tie=False, group=True, stdout=log, stderr=log)


def _no_engine() -> str:
    if not is_local():
        return (f"no Docker engine answers at DOCKER_HOST={os.environ['DOCKER_HOST']}; "
                "start it there or unset DOCKER_HOST to use a local engine")
    return "no Docker engine answers; start one with `dbexp engine` (or `make engine`), or set DOCKER_HOST"


@functools.lru_cache(maxsize=1)
def client() -> docker.DockerClient:
    """A client for a running engine; a one-line DbexpError saying how to start one where none answers."""
    c = _ping()
    if c is None:
        raise DbexpError(_no_engine())
    return c


def start() -> docker.DockerClient:
    """A client for a running engine, installing and starting a local one where none answers and this
    host allows it (Debian as root): the explicit start, ``dbexp engine``."""
    c = _ping()
    if c is not None:
        return c
    if not is_local():
        raise DbexpError(_no_engine())
    if not _debian_with_root():
        raise DbexpError("no Docker engine answers; install and start one "
                         "(https://docs.docker.com/engine/install/) or set DOCKER_HOST")
    _install_and_start_dockerd()
    c = poll(_ping, 60, interval_s=1)
    if c is None:
        raise DbexpError(f"started dockerd but it did not answer within 60 s; see {DOCKERD_LOG}")
    client.cache_clear()
    return c
