"""Make sure a build's image exists: build offline images from their recipe, pull official ones."""

from __future__ import annotations

import contextlib
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import docker.errors

from dbexp.catalog import Build
from dbexp.engine import LABEL, client
from dbexp.errors import DbexpError
from dbexp.images import binaries, pull
from dbexp.images.base import HASH_LABEL, base_hash, base_ref, ensure_base
from dbexp.images.recipes import digest, recipe_dir
from dbexp.paths import project_root

ARTIFACT_LABEL = "dbexp.artifact-sha256"
ARTIFACT_NAME_LABEL = "dbexp.artifact"
# A recipe's step that fails for a reason it can name prints one line starting with this; the build's
# error is that line (not Docker's "returned a non-zero code").
BUILD_ERROR_MARK = "dbexp-build-error: "
THROWAWAY_STAGES = ("unpack", "extension")  # build stages whose last image is removed after a build (others are
# kept as layer cache for the next build, e.g. postgres' locale stage; with nocache all are removed)
# The build context's folder for an extension's files (docker/postgres/install-extension.sh): its source folder
# (SOURCE_DIR, a copy of the catalog's extension_source) and a downloaded headers archive (a wheel); empty when
# the build has none (the recipe copies it either way)
EXTENSION_DIR = "extension"
SOURCE_DIR = "source"


@dataclass(frozen=True)
class ImageInfo:
    ref: str
    id: str
    digest: str  # RepoDigests[0] for official images, else the image id
    source: str  # official | offline
    recipe_hash: str  # "" for official images
    size: int  # bytes
    artifact: str = ""  # offline: where its server came from, e.g. "debian:mysql-server-core=9.7.4-2"
    artifact_sha256: str = ""  # offline: the SHA256 of that download (a jar, an npm tarball, the .deb)


def archive_name(build: Build) -> str:
    """The file name the recipe's SERVER_ARCHIVE build argument names ("" for Debian builds)."""
    art = build.artifact
    if art is None or art.in_image:
        return ""
    return art.member or binaries.download_name(build)


def build_args(build: Build) -> dict[str, str]:
    """The same names for every recipe: BASE_IMAGE, SERVER_VERSION, and SERVER_ARCHIVE (a file in the
    build context) or SERVER_PACKAGE (a Debian package installed inside the image)."""
    art = build.artifact
    assert art is not None
    args = {"BASE_IMAGE": base_ref(build.base), "SERVER_VERSION": build.version}
    ext = build.extension
    if ext is not None:  # an extension (docker/postgres/install-extension.sh): a pinned Debian package of its
        # module, or its source folder compiled against pinned server headers (a Debian package or a wheel)
        args |= {"EXTENSION_SUITE": "" if ext.registry == "pypi" else ext.suite or build.base,
                 "EXTENSION_PACKAGE": ext.package, "EXTENSION_VERSION": ext.version, "EXTENSION_SHA256": ext.sha256}
        if ext.registry == "pypi":
            args |= {"EXTENSION_ARCHIVE": f"{EXTENSION_DIR}/{ext.file}", "EXTENSION_MEMBER": ext.member}
    if build.extension_source:  # (a server compiled from source compiles it against its own headers: no extension)
        args |= {"EXTENSION_SOURCE": f"{EXTENSION_DIR}/{SOURCE_DIR}"}
    args |= dict(build.args)
    if art.registry == "debian-source":  # docker/postgres-source: the source package, its .dsc and tarball pinned
        return args | {"SERVER_PACKAGE": art.package, "SERVER_PACKAGE_VERSION": art.version,
                       "SERVER_PACKAGE_SHA256": art.sha256, "SERVER_SOURCE_SHA256": art.source_sha256,
                       "SERVER_PACKAGE_SUITE": art.suite or build.base}
    if art.registry == "debian":
        pin = {"SERVER_PACKAGE_VERSION": art.version, "SERVER_PACKAGE_SHA256": art.sha256} if art.version else {}
        suite = {"SERVER_PACKAGE_SUITE": art.suite} if art.suite else {}  # a suite the base lacks (experimental)
        return args | {"SERVER_PACKAGE": art.package} | pin | suite
    return args | {"SERVER_ARCHIVE": archive_name(build)}


def artifact_name(build: Build) -> str:
    """The artifact as the image's label records it: registry:package, =version where pinned; an
    extension's after a ' + '."""
    art = build.artifact
    assert art is not None
    name = f"{art.registry}:{art.package}" + (f"={art.version}" if art.version else "")
    ext = build.extension
    return name + (f" + {ext.registry}:{ext.package}={ext.version}" if ext is not None else "")


def recipe_hash(build: Build, artifact_sha: str) -> str:
    """sha256 over the recipe folder, the artifact's sha256, the build arguments and the base recipe."""
    art = build.artifact
    assert art is not None
    extra = {f"arg:{k}": v for k, v in build_args(build).items()}
    extra |= {"artifact": f"{art.registry}:{art.package}", "artifact_sha256": artifact_sha,
              "base": base_hash(build.base)}
    if build.extension_source:  # the extension's source files count as the recipe's
        extra["extension_source"] = digest(extension_source_dir(build))
    return digest(recipe_dir(build.recipe), extra)


def extension_source_dir(build: Build) -> Path:
    """The repository folder holding a build's extension source (catalog ``extension_source``)."""
    path = project_root() / build.extension_source
    if not path.is_dir():
        raise DbexpError(f"{build.spec}: its extension source folder {build.extension_source} is not in "
                         f"{project_root()}: run from a checkout of the repository")
    return path


def _info(ref: str, attrs: dict, source: str) -> ImageInfo:
    labels = attrs["Config"].get("Labels") or {}
    digests = attrs.get("RepoDigests") or []
    official = source == "official"
    return ImageInfo(ref=ref, id=attrs["Id"], digest=digests[0] if official and digests else attrs["Id"],
                     source=source, recipe_hash="" if official else labels.get(HASH_LABEL, ""),
                     size=int(attrs.get("Size", 0)),
                     artifact="" if official else labels.get(ARTIFACT_NAME_LABEL, ""),
                     artifact_sha256="" if official else labels.get(ARTIFACT_LABEL, ""))


def offline_state(build: Build) -> tuple[str, dict | None]:
    """("present" | "stale" | "buildable", image attributes or None) without downloading anything."""
    attrs = pull.local_attrs(build.image)
    if attrs is None:
        return "buildable", None
    labels = attrs["Config"].get("Labels") or {}
    sha = binaries.cached_sha256(build)
    if sha is None:  # registry releases are immutable: the sha the image was built from still holds
        sha = labels.get(ARTIFACT_LABEL, "")
    return ("present" if labels.get(HASH_LABEL) == recipe_hash(build, sha) else "stale"), attrs


def ensure(build: Build, force: bool = False) -> ImageInfo:
    """The image of a build, built or pulled only when missing (or, offline, when its recipe changed).

    ``force`` rebuilds an offline image from scratch (no layer cache); it does not re-pull official ones.
    """
    if build.source == "official":
        return _info(build.image, pull.pull(build.image), "official")
    state, attrs = offline_state(build)
    if state == "present" and attrs is not None and not force:
        return _info(build.image, attrs, "offline")
    with binaries.lock(build.image):  # another process may be building it right now
        state, attrs = offline_state(build)
        if state == "present" and attrs is not None and not force:
            return _info(build.image, attrs, "offline")
        if state == "stale":
            print(f"dbexp: {build.image} is stale (its recipe or binaries changed): rebuilding",
                  file=sys.stderr)
        return _build(build, old_id=attrs["Id"] if attrs else None, nocache=force)


def _context(build: Build, work: Path) -> tuple[Path, str]:
    """Assemble the build context (the recipe folder plus the server archive); returns (path, sha)."""
    ctx = work / "context"
    shutil.copytree(recipe_dir(build.recipe), ctx)
    ext_dir = ctx / EXTENSION_DIR
    ext_dir.mkdir(exist_ok=True)
    if build.extension_source:
        shutil.copytree(extension_source_dir(build), ext_dir / SOURCE_DIR)
    if build.extension is not None and build.extension.registry == "pypi":  # headers in a wheel, fetched here
        wheel = binaries.fetch_wheel(build.extension)
        shutil.copy2(wheel, ext_dir / build.extension.file)
    sha = build.artifact.sha256 if build.artifact is not None else ""  # a Debian pin's .deb (a source's .dsc)
    if build.artifact is not None and not build.artifact.in_image:
        got = binaries.fetch(build)
        sha = got.sha256
        target = ctx / archive_name(build)
        try:
            target.hardlink_to(got.archive)
        except OSError:
            shutil.copy2(got.archive, target)
    return ctx, sha


def _build(build: Build, old_id: str | None, nocache: bool = False) -> ImageInfo:
    ensure_base(suite=build.base)
    started = time.monotonic()
    art = build.artifact
    assert art is not None
    with tempfile.TemporaryDirectory(prefix="dbexp-build-") as tmp:
        ctx, sha = _context(build, Path(tmp))
        wanted = recipe_hash(build, sha)
        labels = {LABEL: "1", "dbexp.flavor": build.flavor, "dbexp.version": build.version,
                  "dbexp.source": "offline", HASH_LABEL: wanted, ARTIFACT_LABEL: sha,
                  ARTIFACT_NAME_LABEL: artifact_name(build)}
        print(f"dbexp: building {build.image} from docker/{build.recipe} (recipe {wanted[:12]})",
              file=sys.stderr)
        leftovers = _run_build(build, ctx, labels, nocache)
    attrs = pull.local_attrs(build.image)
    if attrs is None:
        raise DbexpError(f"building {build.image} finished but the image is not present")
    for image_id in leftovers + ([old_id] if old_id and old_id != attrs["Id"] else []):
        with contextlib.suppress(docker.errors.APIError):  # still used by a container: leave it
            client().images.remove(image_id, noprune=False)
    print(f"dbexp: built {build.image} in {time.monotonic() - started:.0f} s, "
          f"{attrs['Size'] / 1e6:.0f} MB", file=sys.stderr)
    return _info(build.image, attrs, "offline")


_STEP = re.compile(r"^Step (\d+)/(\d+) : (.*)$")
_SHOWN = ("FROM", "RUN", "COPY", "ADD")  # steps worth a progress line; the rest is metadata
_FROM = re.compile(r"^FROM\s+\S+(?:\s+AS\s+(\S+))?", re.I)
_ID = re.compile(r"^ ---> ([0-9a-f]{12})$")


class _Progress:
    """Follows the build output: a stderr line per step, the last image of each throwaway stage."""

    def __init__(self, throwaway: tuple[str, ...] | None) -> None:
        self.throwaway = throwaway  # None: every named stage
        self.tail: list[str] = []
        self.stage = self.last_id = self.step = self.error = ""
        self.leftovers: list[str] = []

    def feed(self, text: str) -> None:
        for line in text.splitlines():
            self.tail = (self.tail + [line])[-40:]
            if BUILD_ERROR_MARK in line:  # (a step's stderr comes with colour codes around it)
                self.error = re.sub(r"\x1b\[[0-9;]*m", "", line.split(BUILD_ERROR_MARK, 1)[1]).strip()
            step = _STEP.match(line)
            if step:
                self.step = f"step {step.group(1)}/{step.group(2)}"
                if step.group(3).split(" ", 1)[0].upper() in _SHOWN:
                    print(f"  [{step.group(1)}/{step.group(2)}] {step.group(3)[:100]}", file=sys.stderr)
                origin = _FROM.match(step.group(3))
                if origin:
                    drop = self.throwaway is None or self.stage in self.throwaway
                    if self.stage and self.last_id and drop:
                        self.leftovers.append(self.last_id)
                    self.stage = (origin.group(1) or "").lower()
            found = _ID.match(line)
            if found:
                self.last_id = found.group(1)


def _run_build(build: Build, ctx: Path, labels: dict[str, str], nocache: bool) -> list[str]:
    """Run the build through the engine's API; returns leftover images of throwaway stages."""
    progress = _Progress(None if nocache else THROWAWAY_STAGES)
    try:
        for chunk in client().api.build(path=str(ctx), tag=build.image, buildargs=build_args(build),
                                        labels=labels, network_mode="host", rm=True, forcerm=True,
                                        pull=False, nocache=nocache, decode=True):
            if "error" in chunk:
                print("\n".join(progress.tail[-20:]), file=sys.stderr)
                why = progress.error or chunk["error"].strip().splitlines()[-1]
                raise DbexpError(f"building {build.image} failed at {progress.step or 'the start'}: {why}")
            progress.feed(chunk.get("stream", ""))
    except docker.errors.APIError as exc:
        raise DbexpError(f"building {build.image} failed: {pull.first_line(exc)}") from None
    return progress.leftovers
