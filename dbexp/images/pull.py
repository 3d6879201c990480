"""Official images: present locally, pullable from a registry, pulled. Probes are cached per process."""

from __future__ import annotations

import re
import sys

import docker
import docker.errors
import requests

from dbexp.engine import client
from dbexp.errors import DbexpError

PROBE_TIMEOUT_S = 10
NO_REGISTRY = "no registry reachable"
_NOT_THERE = re.compile(r"manifest unknown|not found|does not exist|denied|unauthorized", re.I)

_probed: dict[str, tuple[bool, str]] = {}
_registry_down: str | None = None  # why, once one probe failed for want of a registry


def local_attrs(ref: str) -> dict | None:
    try:
        return client().images.get(ref).attrs
    except docker.errors.ImageNotFound:
        return None


def first_line(exc: Exception) -> str:
    text = getattr(exc, "explanation", None) or str(exc)
    return (str(text).strip().splitlines() or [type(exc).__name__])[0][:200]


def probe(ref: str) -> tuple[bool, str]:
    """(True, "") when the registry has ``ref``; else (False, why). One registry failure decides all."""
    global _registry_down
    if ref in _probed:
        return _probed[ref]
    if _registry_down is not None:
        return False, NO_REGISTRY
    try:
        docker.from_env(timeout=PROBE_TIMEOUT_S).api.inspect_distribution(ref)
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
    _probed[ref] = result
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
    """Pull an official image (when not present) and return its attributes."""
    attrs = local_attrs(ref)
    if attrs is not None:
        return attrs
    ok, why = probe(ref)
    if not ok:
        detail = f": {_registry_down}" if why == NO_REGISTRY and _registry_down else ""
        raise DbexpError(f"official image {ref} could not be pulled ({why}{detail}); "
                         "use an offline build (@offline) or a machine that reaches Docker Hub")
    repo, _, tag = ref.partition(":")
    print(f"dbexp: pulling {ref}", file=sys.stderr)
    try:
        client().images.pull(repo, tag=tag or "latest")
    except docker.errors.APIError as exc:
        raise DbexpError(f"official image {ref} could not be pulled: {first_line(exc)}") from None
    attrs = local_attrs(ref)
    if attrs is None:
        raise DbexpError(f"pulling {ref} finished but the image is not present")
    return attrs
