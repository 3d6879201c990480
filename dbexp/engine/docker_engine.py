"""Reach the Docker engine; start one on a Debian-like host where none answers.

``DOCKER_HOST`` is honoured (docker.from_env), so the servers can live on a
bigger remote machine. Only a local engine is installed or started here.
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
        subprocess.run(["apt-get", "update", "-q"], check=True, env=env, stdout=subprocess.DEVNULL)
        subprocess.run(["apt-get", "install", "-y", "-q", "docker.io"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    log = open(DOCKERD_LOG, "ab")
    subprocess.Popen(["dockerd"], stdout=log, stderr=log, start_new_session=True)


@functools.lru_cache(maxsize=1)
def client() -> docker.DockerClient:
    """A client for a running engine, starting a local one if this host allows it."""
    c = _ping()
    if c is not None:
        return c
    if not is_local():
        raise DbexpError(f"no Docker engine answers at DOCKER_HOST={os.environ['DOCKER_HOST']}; "
                         "start it there or unset DOCKER_HOST to use a local engine")
    if not _debian_with_root():
        raise DbexpError("no Docker engine answers; install and start one "
                         "(https://docs.docker.com/engine/install/) or set DOCKER_HOST")
    _install_and_start_dockerd()
    c = poll(_ping, 60, interval_s=1)
    if c is None:
        raise DbexpError(f"started dockerd but it did not answer within 60 s; see {DOCKERD_LOG}")
    return c
