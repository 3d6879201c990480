"""The image layer: recipes hash stably, offline images build once and honour the image contract.

The docker-marked tests build dbexp/base:bookworm and dbexp/base:sid, dbexp/mysql:8.0.15 and
dbexp/postgres:16.14 when missing (about a minute and a half on 2 cores; tests/test_mysql97.py and
tests/test_mariadb118.py build the sid servers) and start each per the contract with host
networking on a free loopback port. Every container carries the label dbexp and is removed with
its volumes.
"""

from __future__ import annotations

import dataclasses
import os
import shutil

import pytest

from dbexp import catalog, images
from dbexp.catalog import parse_spec
from dbexp.engine import LABEL
from dbexp.errors import DbexpError
from dbexp.images import build as image_build
from dbexp.images import pull, recipes
from dbexp.servers.registry import flavor_for
from dbexp.servers.smoke import smoke


def _offline(flavor: str, version: str) -> catalog.Build:
    return next(b for b in catalog.OFFLINE if b.flavor == flavor and b.version == version)


@pytest.fixture(scope="module")
def engine():
    from dbexp.engine import client

    try:
        return client()
    except DbexpError as exc:
        pytest.skip(str(exc))


def _leftovers(engine) -> list:
    """This process's smoke containers (another pytest-xdist worker's may be running beside it)."""
    return engine.containers.list(all=True, filters={"label": [LABEL, "dbexp.role=smoke",
                                                               f"dbexp.owner={os.getpid()}"]})


# --- no engine needed --------------------------------------------------------------------------

def test_recipe_hash_follows_recipe_files_artifact_and_args(tmp_path, monkeypatch):
    shutil.copytree(recipes.recipes_root(), tmp_path / "docker")
    monkeypatch.setenv(recipes.RECIPES_ENV, str(tmp_path / "docker"))
    b57, b80 = _offline("mysql", "5.7.22"), _offline("mysql", "8.0.15")
    first = image_build.recipe_hash(b80, "abc")
    assert first == image_build.recipe_hash(b80, "abc")
    assert first != image_build.recipe_hash(b80, "abd")  # another artifact
    assert first != image_build.recipe_hash(b57, "abc")  # other build args
    (tmp_path / "docker" / "mysql" / "my.cnf").write_text("[mysqld]\n")
    assert first != image_build.recipe_hash(b80, "abc")  # a recipe file changed


def test_base_hash_is_per_suite(tmp_path, monkeypatch):
    """A suite's hook changes that suite's base (and the images on it) only."""
    shutil.copytree(recipes.recipes_root(), tmp_path / "docker")
    monkeypatch.setenv(recipes.RECIPES_ENV, str(tmp_path / "docker"))
    from dbexp.images import base
    bookworm, sid = base.base_hash("bookworm"), base.base_hash("sid")
    assert bookworm != sid
    (tmp_path / "docker" / "base" / "suites" / "sid.sh").write_text("#!/bin/sh\n")
    assert base.base_hash("bookworm") == bookworm and base.base_hash("sid") != sid
    b97 = _offline("mysql", "9.7.4")
    assert image_build.build_args(b97)["BASE_IMAGE"] == "dbexp/base:sid"
    assert image_build.recipe_hash(b97, b97.artifact.sha256) != image_build.recipe_hash(
        dataclasses.replace(b97, base="bookworm"), b97.artifact.sha256)


def test_debian_builds_are_pinned_to_a_version_and_its_deb():
    for build in (b for b in catalog.OFFLINE if b.base == "sid" and b.artifact.registry == "debian"):
        args = image_build.build_args(build)
        assert args["SERVER_PACKAGE_VERSION"] == build.artifact.version
        assert len(args["SERVER_PACKAGE_SHA256"]) == 64 == len(build.artifact.sha256)
        assert image_build.artifact_name(build).endswith(f"={build.artifact.version}")
        assert images.binaries.cached_sha256(build) == build.artifact.sha256  # recorded as the artifact's


def test_extensions_are_pinned_debian_packages_on_a_sid_base():
    """pgvector's modules need glibc 2.38 (bookworm has 2.36): the builds with Debian's module of an extension
    run on sid (those compiled from a source folder in the image build, pinbench: test_catalog_pinbench.py)."""
    with_ext = [b for b in catalog.OFFLINE if b.extension is not None and not b.extension_source]
    assert with_ext and all(b.variant and b.base == "sid" for b in with_ext)
    for build in with_ext:
        args = image_build.build_args(build)
        ext = build.extension
        assert (args["EXTENSION_PACKAGE"], args["EXTENSION_VERSION"]) == (ext.package, ext.version)
        assert len(args["EXTENSION_SHA256"]) == 64 and args["EXTENSION_SUITE"] in ("trixie", "sid")
        assert image_build.artifact_name(build).endswith(f" + debian:{ext.package}={ext.version}")
        plain = [b for b in catalog.OFFLINE if b.flavor == build.flavor and b.version == build.version
                 and not b.variant]
        assert plain and plain[0].image != build.image  # its own image beside the plain server's


def test_recipes_follow_the_contract():
    for name, cmd in (("mysql", "mysqld"), ("mysql-debian", "mysqld"), ("mariadb", "mysqld"),
                      ("postgres", "postgres")):
        dockerfile = (recipes.recipe_dir(name) / "Dockerfile").read_text()
        assert 'ENTRYPOINT ["docker-entrypoint.sh"]' in dockerfile
        assert f'CMD ["{cmd}"]' in dockerfile
        assert "VOLUME /var/lib/" in dockerfile
        assert (recipes.recipe_dir(name) / "docker-entrypoint.sh").stat().st_mode & 0o111


def test_unknown_recipe_names_the_known_ones():
    with pytest.raises(DbexpError, match="recipes: .*mysql"):
        recipes.recipe_dir("oracle")


def test_mariadb_has_no_bare_home():
    with pytest.raises(DbexpError, match="bare runs need a server archive to unpack"):
        images.server_home(_offline("mariadb", "10.11"))


# --- real Docker ---------------------------------------------------------------------------------

@pytest.mark.docker
@pytest.mark.parametrize("suite", ["bookworm", "sid"])
def test_base_image(engine, suite):
    from dbexp.images.base import base_hash

    images.ensure_base(suite=suite)
    labels = engine.images.get(images.base_ref(suite)).labels
    assert labels[LABEL] == "1" and labels["dbexp.recipe-hash"] == base_hash(suite)  # built from today's recipe
    assert labels["dbexp.version"] == suite


@pytest.mark.docker
@pytest.mark.parametrize("flavor,version,expect", [
    ("mysql", "8.0.15", "8.0.15"),
    ("postgres", "16.14", "PostgreSQL 16.14 "),
])
def test_offline_image_runs_per_contract(engine, capfd, flavor, version, expect):
    build = _offline(flavor, version)
    info = images.ensure(build)
    labels = engine.images.get(info.ref).labels
    assert labels["dbexp.flavor"] == flavor and labels["dbexp.version"] == version
    assert labels["dbexp.source"] == "offline" and labels["dbexp.recipe-hash"] == info.recipe_hash
    assert info.digest == info.id and info.size > 0

    capfd.readouterr()
    again = images.ensure(build)  # present with the same recipe hash: nothing is built
    assert again == info
    assert "building" not in capfd.readouterr().err

    sql = "SELECT @@innodb_buffer_pool_size" if flavor == "mysql" else "SHOW shared_buffers"
    extra = ["--innodb_buffer_pool_size=48M"] if flavor == "mysql" else ["-c", "shared_buffers=48MB"]
    try:
        result = smoke(info.ref, flavor_for(build), timeout_s=180, extra_args=extra, sql=sql)
    finally:
        assert not _leftovers(engine)
    assert result.version.startswith(expect)
    assert result.ready_lines == 1  # one start only: readiness shows once in the log
    assert result.answer in ("50331648", "48MB")  # the caller's option reached the server


@pytest.mark.docker
def test_postgres_describe_config_as_user_postgres(engine):
    info = images.ensure(_offline("postgres", "16.14"))
    container = engine.containers.run(info.ref, ["--describe-config"], entrypoint=["postgres"],
                                      user="postgres", detach=True, network_mode="none",
                                      labels={LABEL: "1", "dbexp.role": "smoke"})
    try:
        assert container.wait(timeout=60)["StatusCode"] == 0
        out = container.logs(stdout=True, stderr=False)
    finally:
        container.remove(force=True, v=True)  # v: the image declares PGDATA a volume
    names = {line.split("\t")[0] for line in out.decode().splitlines() if "\t" in line}
    assert {"shared_buffers", "work_mem", "max_connections"} <= names


@pytest.mark.docker
def test_resolve_names_every_source_tried(engine):
    if pull.available("mysql:8.4")[0]:
        pytest.skip("mysql:8.4 is present or pullable here")
    with pytest.raises(DbexpError) as err:
        images.resolve(parse_spec("mysql:8.4"))
    text = str(err.value)
    assert "\n" not in text
    assert "official image mysql:8.4 could not be pulled" in text
    assert "no offline build exists for mysql 8.4 (offline: mysql 5.7.22, 8.0.15, 9.7.4)" in text
    assert "no package registry reachable here ships MySQL 8.4" in text  # and why


@pytest.mark.docker
def test_resolve_falls_back_to_offline(engine):
    if pull.available("postgres:16")[0]:
        pytest.skip("postgres:16 is present or pullable here")
    assert images.resolve(parse_spec("postgres:16")).spec == "postgres:16.14@offline"
    assert images.resolve(parse_spec("mysql:8.0@offline")).spec == "mysql:8.0.15@offline"
    if not pull.available("mysql:9.7")[0]:
        assert images.resolve(parse_spec("mysql:9.7")).spec == "mysql:9.7.4@offline"


@pytest.mark.docker
def test_list_rows_covers_every_catalog_build(engine):
    rows = images.list_rows()
    assert [(r["flavor"], r["version"], r["source"]) for r in rows] == \
        [(b.flavor, b.version, b.source) for b in catalog.ALL]
    offline = {"present", "stale", "buildable"}
    official = {"present", "pullable", "not pullable here", "official-only, not pullable here"}
    for row in rows:
        assert row["status"] in (offline if row["source"] == "offline" else official), row
