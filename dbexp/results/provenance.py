"""Host facts recorded with every run, and a short label charts put under their title."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from pathlib import Path

import dbexp
from dbexp.paths import project_root
from dbexp import process


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _mem_gib() -> float | None:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 1024 / 1024, 1)
    return None


def _cmd(*args: str) -> str | None:
    try:
        return process.run(args, capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def _thp() -> str | None:
    text = _read("/sys/kernel/mm/transparent_hugepage/enabled")
    if text and "[" in text:
        return text[text.index("[") + 1:text.index("]")]
    return text


def git_commit() -> str | None:
    root = project_root()
    sha = _cmd("git", "-C", str(root), "rev-parse", "HEAD")
    dirty = _cmd("git", "-C", str(root), "status", "--porcelain", "--untracked-files=no")
    return f"{sha}{'-dirty' if dirty else ''}" if sha else None


@functools.lru_cache(maxsize=1)
def host_facts() -> dict:
    """What a reader needs to judge where a number was measured."""
    from dbexp.engine import client, is_local

    try:
        engine_version = client().version().get("Version")
    except Exception:
        engine_version = None
    cpuinfo = _read("/proc/cpuinfo") or ""
    return {
        "hostname": platform.node(),
        "cpu_model": _cpu_model(),
        "cpus": os.cpu_count(),
        "memory_gib": _mem_gib(),
        "kernel": platform.release(),
        "os": (_cmd("sh", "-c", ". /etc/os-release && echo $PRETTY_NAME") or platform.platform()),
        "hypervisor": " hypervisor" in cpuinfo or "hypervisor" in cpuinfo.split(),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "smt": _read("/sys/devices/system/cpu/smt/active"),
        "thp": _thp(),
        "engine_version": engine_version,
        "engine_local": is_local(),
        "docker_host": os.environ.get("DOCKER_HOST") or "local",
        "sysbench": _cmd("sysbench", "--version"),
        "python": platform.python_version(),
        "dbexp": dbexp.__version__,
        "git_commit": git_commit(),
    }


def image_provenance(image) -> dict:
    """What a run records of its server's image (a dbexp.images.ImageInfo): its reference, id and
    digest (an official image's RepoDigests entry, an offline one's id), and for an offline build
    where its server came from: ``artifact`` (registry:package, with =version where a Debian package
    is pinned, e.g. ``debian:mysql-server-core=9.7.4-2``) and ``artifact_sha256`` (the downloaded
    jar's or npm tarball's, or the pinned .deb's). Both are '' for official images."""
    return {"image": image.ref, "image_id": image.id, "image_digest": image.digest,
            "artifact": image.artifact, "artifact_sha256": image.artifact_sha256}


def hardware_label(facts: dict | None = None) -> str:
    """E.g. '2 CPUs (AMD EPYC 9454P, VM), 23.4 GiB, Linux 6.18': for chart subtitles."""
    f = facts or host_facts()
    vm = ", VM" if f.get("hypervisor") else ""
    return f"{f['cpus']} CPUs ({f['cpu_model']}{vm}), {f['memory_gib']} GiB, Linux {f['kernel'].split('-')[0]}"
