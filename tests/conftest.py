"""Shared fixtures: a Docker engine, a results store in a temp folder, and real servers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # Ryuk's image cannot be pulled here

UNIT_DIR = Path(__file__).resolve().parent / "unit"


def pytest_collection_modifyitems(config, items):
    """Tests under tests/unit/ need no server, no engine and no network: `pytest -m unit` (make unit)."""
    for item in items:
        if Path(str(item.path)).resolve().is_relative_to(UNIT_DIR):
            item.add_marker(pytest.mark.unit)


MYSQL = os.environ.get("DBEXP_TEST_MYSQL", "mysql:8.0@offline")
POSTGRES = os.environ.get("DBEXP_TEST_POSTGRES", "postgres:16@offline")


def assert_catalog_version(version: str, build) -> None:
    """``version``, a server's own (SHOW server_version, SELECT VERSION()), is the catalog's for
    ``build``: exactly its version for an offline build; in the series an official image's tag names
    (postgres:16 runs some 16.x) for an official one."""
    if build.source == "offline":
        assert version == build.version, f"{build.spec} reports version {version}"
    else:
        assert version.startswith(f"{build.version}."), f"{build.spec} reports version {version}"


def labelled_containers() -> list:
    from dbexp.engine import LABEL, client
    return client().containers.list(all=True, filters={"label": [LABEL, "dbexp.role=experiment"]})


@pytest.fixture(scope="session")
def engine():
    from dbexp.engine import client
    return client()


@pytest.fixture()
def store(tmp_path):
    from dbexp.results import Store
    s = Store(tmp_path / "results.duckdb")
    yield s
    s.close()


@pytest.fixture(scope="module")
def pg(engine):
    from dbexp.servers import ServerConfig, running
    with running(ServerConfig(POSTGRES, cpuset="1", memory="2g")) as server:
        yield server


@pytest.fixture(scope="module")
def my(engine):
    from dbexp.servers import ServerConfig, running
    with running(ServerConfig(MYSQL, cpuset="1", memory="2g")) as server:
        yield server
