"""Server binaries from package registries: download once into a cache, unpack for bare runs.

Cache: $DBEXP_CACHE, else $XDG_CACHE_HOME/dbexp, else ~/.cache/dbexp.
  artifacts/<registry>/<package>/<version>/   the download, its .sha256, the extracted member
  homes/<flavor>-<version>/                   a server unpacked to run as a bare process
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from dbexp.catalog import Artifact, Build
from dbexp.errors import DbexpError
from dbexp.images.recipes import recipe_dir
from dbexp.paths import cache_dir as cache_root
from dbexp import process

MAVEN_REPO = os.environ.get("DBEXP_MAVEN_REPO", "https://repo1.maven.org/maven2")
HOME_MARK = ".dbexp-home"


@dataclass(frozen=True)
class Fetched:
    build: Build
    download: Path  # the file the registry gave (a jar, an npm tarball)
    archive: Path  # the file the recipe consumes (the jar's member, or the download itself)
    sha256: str  # of the download


def _offline(build: Build) -> None:
    if build.source != "offline" or build.artifact is None:
        raise DbexpError(f"{build.spec} is not an offline build: only offline builds have registry "
                         "binaries (official images come from Docker Hub)")


def _coords(build: Build) -> tuple[str, str, str]:
    """(registry, package, version) of a build's artifact."""
    art = build.artifact
    assert art is not None
    if art.registry == "maven":
        group, artifact, version = art.package.split(":")
        return "maven", f"{group}/{artifact}", version
    if art.registry == "npm":
        name, _, version = art.package.rpartition("@")
        return "npm", name, version
    return art.registry, art.package, ""


def artifact_dir(build: Build) -> Path:
    registry, package, version = _coords(build)
    return cache_root() / "artifacts" / registry / package / (version or "any")


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def lock(name: str) -> contextlib.AbstractContextManager[None]:
    """A process-wide exclusive lock named ``name`` (e.g. an image reference) in the cache."""
    return _locked(cache_root() / "locks" / name.replace("/", "_").replace(":", "_"))


def download_name(build: Build) -> str:
    registry, package, version = _coords(build)
    if registry == "maven":
        return f"{package.split('/')[1]}-{version}.jar"
    return f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"  # what npm pack writes


def cached_sha256(build: Build) -> str | None:
    """The sha256 of a build's download when it is in the cache (never downloads)."""
    if build.source != "offline" or build.artifact is None or build.artifact.in_image:
        return (build.artifact.sha256 if build.artifact else "") if build.source == "offline" else None
    side = artifact_dir(build) / (download_name(build) + ".sha256")
    return side.read_text().split()[0] if side.exists() else None


def _maven(package: str, folder: Path) -> Path:
    """A jar from Maven Central: with mvn when installed (it honours ~/.m2 settings), else over HTTPS."""
    group, artifact, version = package.split(":")
    target = folder / f"{artifact}-{version}.jar"
    mvn = shutil.which("mvn")
    if mvn:
        proc = process.run([mvn, "-q", "-B", "dependency:copy", f"-Dartifact={package}",
                               f"-DoutputDirectory={folder}"], capture_output=True, text=True)
        if proc.returncode == 0 and target.exists():
            return target
        print(f"dbexp: mvn could not fetch {package}; trying {MAVEN_REPO}", file=sys.stderr)
    url = f"{MAVEN_REPO}/{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.jar"
    tmp = target.with_suffix(".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as resp, open(tmp, "wb") as out:
            shutil.copyfileobj(resp, out)
        with contextlib.suppress(urllib.error.URLError):
            with urllib.request.urlopen(url + ".sha1", timeout=30) as resp:
                want = resp.read().decode().split()[0]
            if hashlib.sha1(tmp.read_bytes()).hexdigest() != want:
                raise DbexpError(f"{url}: sha1 does not match the published {want}")
    except (urllib.error.URLError, OSError) as exc:
        tmp.unlink(missing_ok=True)
        raise DbexpError(f"could not download {package} from {url}: {exc}") from None
    tmp.rename(target)
    return target


def _npm(package: str, folder: Path) -> Path:
    """An npm package's tarball, as ``npm pack`` writes it (the registry is npm's configured one)."""
    npm = shutil.which("npm")
    if not npm:
        raise DbexpError(f"fetching {package} needs npm; install Node.js (apt-get install npm)")
    proc = process.run([npm, "pack", package, "--json", "--pack-destination", str(folder)],
                          capture_output=True, text=True, cwd=folder)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise DbexpError(f"npm pack {package} failed: {last}")
    return folder / json.loads(proc.stdout)[0]["filename"]


def fetch(build: Build) -> Fetched:
    """Download a build's binaries into the cache (once) and return where they are."""
    _offline(build)
    art = build.artifact
    assert art is not None
    if art.in_image:
        raise DbexpError(f"{build.spec} installs Debian's {art.package} inside the image: "
                         "there is nothing to download")
    folder = artifact_dir(build)
    download = folder / download_name(build)
    side = download.with_name(download.name + ".sha256")
    with _locked(folder):
        if not (download.exists() and side.exists()):
            print(f"dbexp: fetching {art.package} ({art.registry})", file=sys.stderr)
            got = _maven(art.package, folder) if art.registry == "maven" else _npm(art.package, folder)
            if got != download:
                got.rename(download)
            side.write_text(f"{_sha256(download)}  {download.name}\n")
        sha = side.read_text().split()[0]
        archive = download
        if art.member:
            archive = folder / art.member
            if not archive.exists():
                _extract_member(download, art.member, archive)
    return Fetched(build, download, archive, sha)


def fetch_wheel(art: Artifact) -> Path:
    """A pinned wheel from PyPI (server headers an extension is compiled against), downloaded once into the
    cache with pip (the index pip is configured for) and checked against the pin's SHA256 (the image build
    checks it again before unpacking it). The wheel's file name names the platform and Python it is for."""
    folder = cache_root() / "artifacts" / "pypi" / art.package / art.version
    target = folder / art.file
    with _locked(folder):
        if not target.exists():
            print(f"dbexp: fetching {art.file} (pypi)", file=sys.stderr)
            # name-version-python-abi-platform.whl: ask pip for exactly that wheel, whatever runs here
            _, _, python, abi, platform = art.file.removesuffix(".whl").split("-")
            cmd = [sys.executable, "-m", "pip", "download", f"{art.package}=={art.version}", "--no-deps",
                   "--only-binary=:all:", "--python-version", python.removeprefix("cp"), "--abi", abi,
                   "--implementation", python[:2], "--dest", str(folder), "--quiet", "--disable-pip-version-check"]
            for tag in platform.split("."):
                cmd += ["--platform", tag]
            proc = process.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0 or not target.exists():
                last = (proc.stderr.strip().splitlines() or [f"it did not write {art.file}"])[-1]
                raise DbexpError(f"pip download {art.package}=={art.version} failed: {last}")
        got = _sha256(target)
        if got != art.sha256:
            target.unlink()
            raise DbexpError(f"{art.file} has SHA256 {got}, not the pinned {art.sha256} (dbexp/catalog/catalog.py)")
    return target


def _extract_member(jar: Path, member: str, target: Path) -> None:
    with zipfile.ZipFile(jar) as zf:
        names = zf.namelist()
        if member not in names:
            raise DbexpError(f"{jar.name} has no member {member!r}; members: "
                             f"{', '.join(n for n in names if not n.endswith('/'))[:200]}")
        tmp = target.with_suffix(".part")
        with zf.open(member) as src, open(tmp, "wb") as out:
            shutil.copyfileobj(src, out)
        tmp.rename(target)


def server_home(build: Build, under: Path | None = None) -> Path:
    """A host folder with the server ready to run as a bare process (MySQL, PostgreSQL offline builds).

    MySQL: bin/mysqld (+ bundled OpenSSL) and share/; run it with --basedir=HOME.
    PostgreSQL: bin/{postgres,initdb,pg_ctl}, lib/ with its symlinks, share/; run as a non-root user.
    ``under`` picks the parent folder (default: the cache's homes/); a non-root user running the
    server must be able to reach it (a cache under /root is not reachable).
    """
    _offline(build)
    if build.artifact.in_image:
        raise DbexpError(f"{build.spec}: bare runs need a server archive to unpack; {build.flavor} "
                         f"{build.version} comes from a Debian package installed inside its image")
    got = fetch(build)
    parent = under or cache_root() / "homes"
    home = parent / f"{build.flavor}-{build.version}"
    mark = home / HOME_MARK
    if mark.exists() and mark.read_text().strip() == got.sha256:
        return home
    parent.mkdir(parents=True, exist_ok=True)
    with lock(f"home-{home.name}"):
        if mark.exists() and mark.read_text().strip() == got.sha256:
            return home
        tmp = Path(tempfile.mkdtemp(prefix=f".{home.name}-", dir=parent))
        try:
            unpack = recipe_dir(build.recipe) / "unpack.sh"
            proc = process.run(["sh", str(unpack), str(got.archive), str(tmp / "home")],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise DbexpError(f"unpacking {got.archive.name} for {build.spec} failed: "
                                 f"{(proc.stderr.strip().splitlines() or ['no output'])[-1]}")
            (tmp / "home" / HOME_MARK).write_text(got.sha256 + "\n")
            if home.exists():
                shutil.rmtree(home)
            (tmp / "home").rename(home)
            home.chmod(0o755)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return home
