"""Base images ``dbexp/base:<suite>``: debootstrap a minimal Debian suite and ``docker import`` it.

One recipe for every suite (docker/base/): ``base.conf`` (variant, packages) and ``trim.sh`` hold for
all of them; ``suites/<suite>.sh``, where one exists, runs after ``trim.sh`` for what only that suite
needs (sid: apt accepts its Release file past its Valid-Until date). A suite's recipe hash covers the
common files and its own hook only, so a change for sid rebuilds nothing made on bookworm.
``base.conf``'s SUITE is the default suite (bookworm), the base of every build that names no other.
"""

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
from dbexp.images.recipes import digest, recipe_dir, recipe_files
from dbexp import process

DEFAULT_SUITE = "bookworm"
HASH_LABEL = "dbexp.recipe-hash"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
HOST_SOURCES = Path("/etc/apt/sources.list.d/debian.sources")
HOST_SOURCES_LIST = Path("/etc/apt/sources.list")
_SUITE = re.compile(r"[a-z][a-z0-9-]*")


def base_ref(suite: str = DEFAULT_SUITE) -> str:
    """The image reference of a suite's base: dbexp/base:bookworm, dbexp/base:sid."""
    if not _SUITE.fullmatch(suite):
        raise DbexpError(f"bad Debian suite {suite!r}: expected a name such as bookworm, trixie or sid")
    return f"dbexp/base:{suite}"


BASE_REF = base_ref(DEFAULT_SUITE)


def _conf() -> dict[str, str]:
    out = {}
    for line in (recipe_dir("base") / "base.conf").read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#"):
            out[key.strip()] = value.strip()
    return out


def suite_hook(suite: str) -> Path | None:
    """``docker/base/suites/<suite>.sh`` when the suite needs more than the common recipe."""
    hook = recipe_dir("base") / "suites" / f"{suite}.sh"
    return hook if hook.is_file() else None


def base_hash(suite: str = DEFAULT_SUITE) -> str:
    """sha256 over the common recipe files and this suite's own hook (other suites' hooks left out)."""
    folder = recipe_dir("base")
    files = [f for f in recipe_files(folder) if f.parent == folder or f == suite_hook(suite)]
    return digest(folder, files=files)


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


def host_sources_for(suite: str) -> str:
    """The host's deb822 sources file when it names ``suite`` (then the image sees the same suites,
    updates and security, as the host), else '': debootstrap's one-line sources.list for the suite
    stays (a bookworm host's sources would point a sid image at bookworm)."""
    if not HOST_SOURCES.exists():
        return ""
    suites = re.findall(r"^Suites:\s*(.*)$", HOST_SOURCES.read_text(), re.M)
    return str(HOST_SOURCES) if any(suite in line.split() for line in suites) else ""


def current_base(suite: str = DEFAULT_SUITE) -> dict | None:
    """The suite's base image's attributes when it exists, else None."""
    try:
        return client().images.get(base_ref(suite)).attrs
    except docker.errors.ImageNotFound:
        return None


def _run(cmd: list[str], what: str) -> None:
    proc = process.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-15:])
        print(tail, file=sys.stderr)
        raise DbexpError(f"{what} failed (exit {proc.returncode}): "
                         f"{proc.stdout.strip().splitlines()[-1:] or ['no output']}")


def ensure_base(force: bool = False, suite: str = DEFAULT_SUITE) -> str:
    """Make ``dbexp/base:<suite>`` unless it exists with the same recipe hash; returns its id."""
    from dbexp.images.binaries import lock

    with lock(base_ref(suite)):
        return _ensure_base(force, suite)


def _ensure_base(force: bool, suite: str) -> str:
    ref, wanted = base_ref(suite), base_hash(suite)
    attrs = current_base(suite)
    if attrs and not force and (attrs["Config"].get("Labels") or {}).get(HASH_LABEL) == wanted:
        return attrs["Id"]
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        raise DbexpError(f"building {ref} needs root and debootstrap (apt-get install debootstrap); "
                         f"this process is uid {os.geteuid()}, debootstrap "
                         f"{'found' if shutil.which('debootstrap') else 'missing'}")
    conf, mirror = _conf(), host_mirror()
    started = time.monotonic()
    print(f"dbexp: building {ref}: debootstrap --variant={conf['VARIANT']} {suite} from {mirror}",
          file=sys.stderr)
    work = Path(tempfile.mkdtemp(prefix=f"dbexp-base-{suite}-", dir="/var/tmp"))
    try:
        rootfs, tarball = work / "rootfs", work / "rootfs.tar"
        cmd = ["debootstrap", f"--variant={conf['VARIANT']}"]
        if conf.get("INCLUDE"):
            cmd.append(f"--include={conf['INCLUDE']}")
        _run(cmd + [suite, str(rootfs), mirror], "debootstrap")
        _run(["sh", str(recipe_dir("base") / "trim.sh"), str(rootfs), host_sources_for(suite)], "trim.sh")
        hook = suite_hook(suite)
        if hook is not None:
            _run(["sh", str(hook), str(rootfs)], f"suites/{hook.name}")
        _run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tarball), "."], "tar")
        shutil.rmtree(rootfs)
        changes = [f"LABEL {LABEL}=1 dbexp.flavor=base dbexp.version={suite} "
                   f"dbexp.source=offline {HASH_LABEL}={wanted}",
                   "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8",
                   'CMD ["bash"]']
        repo, tag = ref.rsplit(":", 1)
        client().api.import_image_from_file(str(tarball), repository=repo, tag=tag, changes=changes)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    attrs = current_base(suite)
    if not attrs:
        raise DbexpError(f"docker import did not produce {ref}")
    print(f"dbexp: built {ref} in {time.monotonic() - started:.0f} s, "
          f"{attrs['Size'] / 1e6:.0f} MB", file=sys.stderr)
    return attrs["Id"]
