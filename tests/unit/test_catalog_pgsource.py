"""The catalog's PostgreSQL 18.6 builds compiled from Debian's source package (docker/postgres-source), with
bufmgr.c's REFCOUNT_ARRAY_ENTRIES at 8 and at 32 for the buffer_pins chapter: specs, pins, build arguments, the
build context, the recipe hash and the recipe's patch step, with no engine, no download and no compiler."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from dbexp import catalog, process
from dbexp.catalog import PREVIEW, lookup, offline_series, parse_spec
from dbexp.errors import DbexpError
from dbexp.images import binaries, recipes
from dbexp.images import build as image_build
from dbexp.paths import project_root

SHA = re.compile(r"^[0-9a-f]{64}$")
SIZES = (8, 32)


def _source_build(entries: int) -> catalog.Build:
    found = lookup(parse_spec(f"postgres:18.6+pinbench-src{entries}@offline"))
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("entries", SIZES)
def test_each_array_size_is_one_pinned_source_build_of_18_6(entries):
    b = _source_build(entries)
    assert (b.flavor, b.version, b.major, b.source) == ("postgres", "18.6", "18", "offline")
    assert (b.recipe, b.base, b.variant) == ("postgres-source", "sid", f"pinbench-src{entries}")
    assert b.image == f"dbexp/postgres:18.6-pinbench-src{entries}"
    assert b.spec == f"postgres:18.6+pinbench-src{entries}@offline"
    assert lookup(parse_spec(f"postgres:18+pinbench-src{entries}@offline")) == [b]
    art = b.artifact
    assert (art.registry, art.package, art.version, art.suite) == ("debian-source", "postgresql-18", "18.6-3", "sid")
    assert SHA.match(art.sha256) and SHA.match(art.source_sha256) and art.sha256 != art.source_sha256
    assert art.in_image and b.extension is None  # compiled against its own headers, in the same build
    assert b.extension_source == "dbexp/chapters/buffer_pins/extension"
    assert dict(b.args) == {"REFCOUNT_ARRAY_ENTRIES": str(entries)}


def test_the_two_builds_differ_only_in_the_array_size():
    eight, thirty_two = (_source_build(n) for n in SIZES)
    assert eight.artifact == thirty_two.artifact
    a8, a32 = image_build.build_args(eight), image_build.build_args(thirty_two)
    assert {k for k in a8 if a8[k] != a32[k]} == {"REFCOUNT_ARRAY_ENTRIES"}
    assert (a8["REFCOUNT_ARRAY_ENTRIES"], a32["REFCOUNT_ARRAY_ENTRIES"]) == ("8", "32")
    assert a8["SERVER_PACKAGE"] == "postgresql-18" and a8["SERVER_PACKAGE_VERSION"] == "18.6-3"
    assert a8["SERVER_PACKAGE_SHA256"] == eight.artifact.sha256  # the .dsc's
    assert a8["SERVER_SOURCE_SHA256"] == eight.artifact.source_sha256  # the .orig.tar.bz2's
    assert a8["SERVER_PACKAGE_SUITE"] == "sid" and a8["BASE_IMAGE"] == "dbexp/base:sid"
    assert a8["EXTENSION_SOURCE"] == f"{image_build.EXTENSION_DIR}/{image_build.SOURCE_DIR}"
    assert not any(k in a8 for k in ("SERVER_ARCHIVE", "EXTENSION_PACKAGE", "EXTENSION_SUITE"))
    assert image_build.archive_name(eight) == ""
    assert image_build.artifact_name(eight) == "debian-source:postgresql-18=18.6-3"
    sha = eight.artifact.sha256
    assert image_build.recipe_hash(eight, sha) != image_build.recipe_hash(thirty_two, sha)


def test_they_are_previews_that_join_no_chapters_list():
    builds = [_source_build(n) for n in SIZES]
    assert all(b in PREVIEW and b in catalog.ALL and b not in catalog.OFFLINE for b in builds)
    assert not any("+" in s for s in offline_series())
    with pytest.raises(DbexpError, match=r"exists only as postgres:18\.6\+pinbench-src8@offline"):
        lookup(parse_spec("postgres:18.6@offline"))  # no plain 18.6: a spec names the array size
    assert all(b.recipe != "postgres-source" for b in lookup(parse_spec("postgres:18@offline")))
    from dbexp.chapters.buffer_pins.chapter import VARIANT
    assert all(b.variant != VARIANT for b in builds)  # the chapter's pinbench list (npm servers, 19~rc1)


def test_an_unknown_array_size_names_the_builds_that_exist():
    with pytest.raises(DbexpError, match=r"postgres:18\+pinbench-src32"):
        lookup(parse_spec("postgres:18.6+pinbench-src16@offline"))


def test_nothing_is_downloaded_on_the_host(tmp_path, monkeypatch):
    b = _source_build(32)
    assert binaries.cached_sha256(b) == b.artifact.sha256
    with pytest.raises(DbexpError, match="inside the image"):
        binaries.fetch(b)
    with pytest.raises(DbexpError, match="bare runs"):
        binaries.server_home(b)

    def no_fetch(*_):
        raise AssertionError("the host fetched something")

    monkeypatch.setattr(binaries, "fetch", no_fetch)
    monkeypatch.setattr(binaries, "fetch_wheel", no_fetch)
    ctx, sha = image_build._context(b, tmp_path / "work")
    assert sha == b.artifact.sha256
    assert (ctx / image_build.EXTENSION_DIR / image_build.SOURCE_DIR / "pinbench.c").read_bytes() == (
        project_root() / b.extension_source / "pinbench.c").read_bytes()
    assert (ctx / "Dockerfile").is_file() and (ctx / "build-server.sh").is_file()
    assert not (ctx / "docker-entrypoint.sh").is_symlink()  # copied as a file into the context


def test_the_recipe_follows_the_contract_and_shares_the_compiled_tree():
    folder = recipes.recipe_dir("postgres-source")
    dockerfile = (folder / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["docker-entrypoint.sh"]' in dockerfile and 'CMD ["postgres"]' in dockerfile
    assert "VOLUME /var/lib/postgresql/data" in dockerfile and "PATH=/opt/postgres/bin:" in dockerfile
    assert "LANG=en_US.utf8" in dockerfile and "PGDATA=/var/lib/postgresql/data" in dockerfile
    shared = recipes.recipe_dir("postgres") / "docker-entrypoint.sh"
    assert (folder / "docker-entrypoint.sh").resolve() == shared.resolve()
    assert "LABEL dbexp.refcount-array-entries=${REFCOUNT_ARRAY_ENTRIES}" in dockerfile
    # the array size is declared only after the source is fetched and compiled: both builds share that layer
    assert dockerfile.index("build-server.sh fetch") < dockerfile.index("ARG REFCOUNT_ARRAY_ENTRIES")
    script = (folder / "build-server.sh").read_text()
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    assert code.index("sha256sum") < code.index("tar -xf")  # the pins are checked before anything is unpacked
    assert "install-strip" not in code and not re.search(r"(^|\s)strip\s", code)
    assert "make -s -C contrib install" in code and "--prefix=$PREFIX" in code and "PREFIX=/opt/postgres" in code


def _patch_step(tmp_path: Path, bufmgr: str | None, entries: str) -> subprocess.CompletedProcess:
    tree = tmp_path / "tree"
    f = tree / "src/backend/storage/buffer/bufmgr.c"
    f.parent.mkdir(parents=True)
    if bufmgr is not None:
        f.write_text(bufmgr)
    script = recipes.recipe_dir("postgres-source") / "build-server.sh"
    return process.run(["sh", str(script), "install", entries], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "PG_SOURCE_TREE": str(tree)})


@pytest.mark.parametrize("bufmgr, entries, why", [
    ("/* nothing */\n", "32", "0 times, not once"),
    ("#define REFCOUNT_ARRAY_ENTRIES 8\n#define REFCOUNT_ARRAY_ENTRIES 8\n", "32", "2 times, not once"),
    ("#define REFCOUNT_ARRAY_ENTRIES  8\n", "32", "0 times, not once"),  # not exactly the line
    ("#define REFCOUNT_ARRAY_ENTRIES 8\n", "x2", "positive integer"),
    ("#define REFCOUNT_ARRAY_ENTRIES 8\n", "0", "positive integer"),
])
def test_the_patch_step_fails_in_one_line_unless_the_define_is_there_exactly_once(tmp_path, bufmgr, entries, why):
    proc = _patch_step(tmp_path, bufmgr, entries)
    assert proc.returncode != 0
    lines = [line for line in proc.stdout.splitlines() if line.startswith(image_build.BUILD_ERROR_MARK)]
    assert len(lines) == 1 and why in lines[0], proc.stdout + proc.stderr
