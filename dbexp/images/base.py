"""The base image ``dbexp/base:bookworm``: debootstrap a minimal Debian and ``docker import`` it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import docker.errors

from dbexp.engine import LABEL, client
from dbexp.errors import DbexpError
from dbexp.images.recipes import digest, recipe_dir

BASE_REF = "dbexp/base:bookworm"
HASH_LABEL = "dbexp.recipe-hash"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
HOST_SOURCES = Path("/etc/apt/sources.list.d/debian.sources")
HOST_SOURCES_LIST = Path("/etc/apt/sources.list")


def _conf() -> dict[str, str]:
    out = {}
    for line in (recipe_dir("base") / "base.conf").read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#"):
            out[key.strip()] = value.strip()
    return out


def base_hash() -> str:
    return digest(recipe_dir("base"))


def host_mirror() -> str:
    """The Debian mirror the host's apt uses (deb822 first, then sources.list), else deb.debian.org."""
    if HOST_SOURCES.exists():
        for stanza in HOST_SOURCES.read_text().split("\n\n"):
            fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
            if "security" not in fields.get("Suites", "") and fields.get("URIs"):
                return fields["URIs"].split()[0]
    if HOST_SOURCES_LIST.exists():
        for line in HOST_SOURCES_LIST.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "deb" and "security" not in parts[2]:
                return next(p for p in parts[1:] if not p.startswith("["))
    return DEFAULT_MIRROR


def current_base() -> dict | None:
    """The base image's attributes when it exists, else None."""
    try:
        return client().images.get(BASE_REF).attrs
    except docker.errors.ImageNotFound:
        return None


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-15:])
        print(tail, file=sys.stderr)
        raise DbexpError(f"{what} failed (exit {proc.returncode}): "
                         f"{proc.stdout.strip().splitlines()[-1:] or ['no output']}")


def ensure_base(force: bool = False) -> str:
    """Make ``dbexp/base:bookworm`` unless it exists with the same recipe hash; returns its id."""
    from dbexp.images.binaries import lock

    with lock(BASE_REF):
        return _ensure_base(force)


def _ensure_base(force: bool) -> str:
    wanted = base_hash()
    attrs = current_base()
    if attrs and not force and (attrs["Config"].get("Labels") or {}).get(HASH_LABEL) == wanted:
        return attrs["Id"]
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        raise DbexpError(f"building {BASE_REF} needs root and debootstrap (apt-get install debootstrap); "
                         f"this process is uid {os.geteuid()}, debootstrap "
                         f"{'found' if shutil.which('debootstrap') else 'missing'}")
    conf, mirror = _conf(), host_mirror()
    started = time.monotonic()
    print(f"dbexp: building {BASE_REF}: debootstrap --variant={conf['VARIANT']} {conf['SUITE']} "
          f"from {mirror}", file=sys.stderr)
    work = Path(tempfile.mkdtemp(prefix="dbexp-base-", dir="/var/tmp"))
    try:
        rootfs, tarball = work / "rootfs", work / "rootfs.tar"
        cmd = ["debootstrap", f"--variant={conf['VARIANT']}"]
        if conf.get("INCLUDE"):
            cmd.append(f"--include={conf['INCLUDE']}")
        _run(cmd + [conf["SUITE"], str(rootfs), mirror], "debootstrap")
        sources = str(HOST_SOURCES) if HOST_SOURCES.exists() else ""
        _run(["sh", str(recipe_dir("base") / "trim.sh"), str(rootfs), sources], "trim.sh")
        _run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tarball), "."], "tar")
        shutil.rmtree(rootfs)
        changes = [f"LABEL {LABEL}=1 dbexp.flavor=base dbexp.version={conf['SUITE']} "
                   f"dbexp.source=offline {HASH_LABEL}={wanted}",
                   "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8",
                   'CMD ["bash"]']
        repo, tag = BASE_REF.rsplit(":", 1)
        client().api.import_image_from_file(str(tarball), repository=repo, tag=tag, changes=changes)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    attrs = current_base()
    if not attrs:
        raise DbexpError(f"docker import did not produce {BASE_REF}")
    print(f"dbexp: built {BASE_REF} in {time.monotonic() - started:.0f} s, "
          f"{attrs['Size'] / 1e6:.0f} MB", file=sys.stderr)
    return attrs["Id"]
