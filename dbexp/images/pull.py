"""Official images: present locally, pullable from a registry, pulled. Probes are cached per process.

Official refs name Docker Hub (``mysql:8.4`` is ``docker.io/library/mysql:8.4``). Where Docker Hub is
out of reach but a mirror of it is not, ``DBEXP_REGISTRY_MIRROR=HOST[:PORT][/PATH]`` makes the lab probe
and pull ``HOST[:PORT][/PATH]/library/mysql:8.4`` instead and tag the result ``mysql:8.4``, so that the
rest of the lab finds it under its official name. The mirror's name stays on the image too: its
RepoDigests entry is the digest that provenance records.
"""

from __future__ import annotations

import os
import re
import sys

import docker
import docker.errors
import requests
from docker.utils import parse_repository_tag

from dbexp.engine import client
from dbexp.errors import DbexpError

PROBE_TIMEOUT_S = 10
NO_REGISTRY = "no registry reachable"
MIRROR_ENV = "DBEXP_REGISTRY_MIRROR"
HUB_HOSTS = ("docker.io", "index.docker.io", "registry-1.docker.io")
_NOT_THERE = re.compile(r"manifest unknown|not found|does not exist|denied|unauthorized", re.I)
# HOST[:PORT][/PATH]: HOST a DNS name, an IPv4 address or a bracketed IPv6 one; PATH components as
# Docker spells repository components (lower case, digits, '.', '_', '-' inside).
_MIRROR = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                     r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)(?::(?P<port>[0-9]{1,5}))?"
                     r"(?P<path>(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)")

_probed: dict[str, tuple[bool, str]] = {}  # keyed by the ref probed (on the mirror, where one is set)
_registry_down: str | None = None  # why, once one probe failed for want of a registry


def mirror() -> str | None:
    """The registry mirror that $DBEXP_REGISTRY_MIRROR names (no trailing '/'), or None: Docker Hub."""
    raw = os.environ.get(MIRROR_ENV, "")
    if not raw:
        return None
    value = raw[:-1] if raw.endswith("/") else raw
    found = _MIRROR.fullmatch(value)
    # Docker reads a first component without '.', ':' or 'localhost' as a Docker Hub user, not a host.
    if (found is None or int(found["port"] or 0) > 65535
            or not (found["port"] or "." in found["host"] or found["host"] == "localhost"
                    or found["host"].startswith("["))):
        raise DbexpError(f"bad {MIRROR_ENV} {raw!r}: expected HOST[:PORT][/PATH] with no scheme and no "
                         "spaces, HOST a name with a dot, an IP address or localhost (or any name with a "
                         ":PORT), e.g. 127.0.0.1:5000 or mirror.example.com/dockerhub")
    return value


def mirror_ref(ref: str, mirror_: str) -> str:
    """Where a Docker Hub ``ref`` lives on ``mirror_``: mysql:8.4 -> MIRROR/library/mysql:8.4,
    user/repo:tag -> MIRROR/user/repo:tag. A ref that names another registry is returned unchanged."""
    first, sep, rest = ref.partition("/")
    if sep and first in HUB_HOSTS:
        return mirror_ref(rest, mirror_)
    if sep and ("." in first or ":" in first or first == "localhost"):
        return ref
    return f"{mirror_}/{ref if sep else 'library/' + ref}"


def source_ref(ref: str) -> str:
    """Where an official ``ref`` is probed and pulled from: itself, or its place on the mirror."""
    found = mirror()
    return ref if found is None else mirror_ref(ref, found)


def origin() -> str:
    """'' for Docker Hub, else ' from mirror M (DBEXP_REGISTRY_MIRROR)': for messages after 'pulled'."""
    found = mirror()
    return "" if found is None else f" from mirror {found} ({MIRROR_ENV})"


def forget_probes() -> None:
    """Forget every probe of this process (after the registry or the mirror setting changed)."""
    global _registry_down
    _probed.clear()
    _registry_down = None


def local_attrs(ref: str) -> dict | None:
    try:
        return client().images.get(ref).attrs
    except docker.errors.ImageNotFound:
        return None


def first_line(exc: Exception) -> str:
    text = getattr(exc, "explanation", None) or str(exc)
    return (str(text).strip().splitlines() or [type(exc).__name__])[0][:200]


def probe(ref: str) -> tuple[bool, str]:
    """(True, "") when the registry (or the mirror) has ``ref``; else (False, why). One registry
    failure decides all."""
    global _registry_down
    src = source_ref(ref)
    if src in _probed:
        return _probed[src]
    if _registry_down is not None:
        return False, NO_REGISTRY
    try:
        docker.from_env(timeout=PROBE_TIMEOUT_S).api.inspect_distribution(src)
        result = (True, "")
    except docker.errors.APIError as exc:
        why = first_line(exc)
        if _NOT_THERE.search(why):
            result = (False, f"not in the registry: {why}")
        else:
            _registry_down = why
            result = (False, NO_REGISTRY)
    except (requests.exceptions.RequestException, docker.errors.DockerException) as exc:
        _registry_down = first_line(exc)
        result = (False, NO_REGISTRY)
    _probed[src] = result
    return result


def registry_down_reason() -> str | None:
    """The error that showed no registry is reachable, if a probe in this process saw one."""
    return _registry_down


def available(ref: str) -> tuple[bool, str]:
    """Present locally, or pullable: (True, ""); else (False, why)."""
    if local_attrs(ref) is not None:
        return True, ""
    return probe(ref)


def pull(ref: str) -> dict:
    """Pull an official image (when not present; from the mirror where one is set, then tagged
    ``ref``) and return its attributes."""
    attrs = local_attrs(ref)
    if attrs is not None:
        return attrs
    ok, why = probe(ref)
    if not ok:
        detail = f": {_registry_down}" if why == NO_REGISTRY and _registry_down else ""
        hint = (f"check {MIRROR_ENV}" if mirror() else
                f"a machine that reaches Docker Hub (or a mirror of it: {MIRROR_ENV})")
        raise DbexpError(f"official image {ref} could not be pulled{origin()} ({why}{detail}); "
                         f"use an offline build (@offline) or {hint}")
    src = source_ref(ref)
    print(f"dbexp: pulling {ref}" + (f" from {src}" if src != ref else ""), file=sys.stderr)
    try:
        image = client().images.pull(src)
        if src != ref:
            image.tag(*parse_repository_tag(ref))
    except docker.errors.APIError as exc:
        raise DbexpError(f"official image {ref} could not be pulled{origin()}: {first_line(exc)}") from None
    attrs = local_attrs(ref)
    if attrs is None:
        raise DbexpError(f"pulling {ref} finished but the image is not present")
    return attrs
