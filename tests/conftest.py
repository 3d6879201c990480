"""Shared fixtures: a Docker engine, a results store in a temp folder, and real servers; the marks
of the two suites that need no server: tests/unit/ (the code) and tests/published/ (the data)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # Ryuk's image cannot be pulled here

UNIT_DIR = Path(__file__).resolve().parent / "unit"
PUBLISHED_DIR = Path(__file__).resolve().parent / "published"
# their helper modules (unit_support, chart_panels, published_support) import by name from either suite
for _folder in (UNIT_DIR, PUBLISHED_DIR):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

PUBLISHED_CHANGED = "the published data changed"


# Test files that look at, or remove, every container the lab made (a test beside them on another
# pytest-xdist worker would see its containers counted or removed): `make test` runs them alone, after
# the rest (see the Makefile). A single test that counts everything on the server CPU carries the mark itself
# (@pytest.mark.alone).
# (the others count only the containers their own process started: labelled_containers)
ALONE = {"test_clean.py", "test_orphans.py"}
# Files whose tests may each go to any worker (no module-scoped server): the chapters' notebooks.
SPREAD = {"test_notebooks.py"}

# The work units (a file's group, or one test of SPREAD) that pytest-xdist sends out first, in this order; every other
# unit follows in the collection's order. The longest go first, so that the three workers end together: on the fresh
# clone of 788000a (AMD EPYC 2-CPU VM), where pytest-xdist still sorted its units by their count of tests, the chapters'
# smoke runs (one test each, 120 to 390 worker-seconds) went out last, 9.5 minutes into the run's 24. Within the long
# ones, the order keeps the users of uprobes and of valgrind apart (they wait for each other on a host:
# dbexp.servers.valgrind.PROBES_LOCK, held exclusively while a server runs under valgrind): the chapters and files
# that attach uprobes first (buffer_pins' smoke run counts under valgrind only in its last 35 s; group_commit probes
# about 60 and 130 s in), then readview, whose counted part holds the lock for about 280 s after about 90 s of timed
# and probed runs, and test_callgrind's (its servers under valgrind for its whole 145 s) only once readview's count
# has had time to end. In that make test, waits on the lock took buffer_pins' smoke run from 72 s (alone) to 299,
# group_commit's from about 145 to 229 (83 s of waits), test_commit_counters' twin probe from 48 s to 106.
_SMOKE = "test_notebooks.py::test_chapter_executes_at_smoke_scale[{}]"
FIRST = (_SMOKE.format("buffer_pins"), _SMOKE.format("group_commit"), "test_commit_counters.py",
         _SMOKE.format("readview"), "test_snapshot_probes.py", _SMOKE.format("versions"), "test_buffer_pins.py",
         _SMOKE.format("buffer_eviction"), _SMOKE.format("calibration"), "test_book_pipeline.py",
         _SMOKE.format("mvcc_chains"), _SMOKE.format("gtid"), _SMOKE.format("vector_isolation"),
         "test_published_charts_valid.py", "test_callgrind.py", "test_mysql97.py", "test_results.py",
         "test_servers.py", "test_readme_examples.py", "test_workloads.py")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's, which adds each test's group to its id
def pytest_collection_modifyitems(config, items):
    """Tests under tests/unit/ test code: no server, no engine, no network, no data/ (`pytest -m unit`,
    make unit). Tests under tests/published/ check what the committed data/ show (`pytest -m published`,
    make published): they need no server either, and fail only when data/ or what code makes of it changes.
    The others start real servers: those of ALONE are marked ``alone``; for pytest-xdist's loadgroup
    each other file is one group (its module-scoped servers start once), but SPREAD's tests go one by one;
    tests/published/ files are groups too (a page rendered once per file)."""
    for item in items:
        path = Path(str(item.path)).resolve()
        if path.is_relative_to(UNIT_DIR):
            item.add_marker(pytest.mark.unit)
        elif path.is_relative_to(PUBLISHED_DIR):
            item.add_marker(pytest.mark.published)
            item.add_marker(pytest.mark.xdist_group(path.name))  # a page rendered once per file (module fixtures)
        elif path.name in ALONE:
            item.add_marker(pytest.mark.alone)
        elif path.name not in SPREAD:
            item.add_marker(pytest.mark.xdist_group(path.name))
    # FIRST's units first, in its order; then the rest as collected (pytest_configure keeps pytest-xdist from
    # sorting the units again), the code's unit tests, a second or less each, last
    rank = {unit: i for i, unit in enumerate(FIRST)}

    def order(item) -> tuple[int, int]:
        path = Path(str(item.path)).resolve()
        unit = f"{path.name}::{item.name}" if path.name in SPREAD else path.name
        return rank.get(unit, len(FIRST)), 1 if path.is_relative_to(UNIT_DIR) else 0

    items.sort(key=order)


def pytest_configure(config):
    """pytest-xdist's loadgroup sends its units out in the collection's order (pytest_collection_modifyitems puts
    the longest first: FIRST), not sorted again by how many tests each holds (its --loadscope-reorder, on by
    default, sent the chapters' smoke runs, a test each, after every file's group)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def _what(item) -> str:
    """What a published check pins, for its failure: its docstring's first sentence, else its name."""
    doc = " ".join((getattr(item, "function", None).__doc__ or "").split("\n\n")[0].split())
    return doc or item.name.removeprefix("test_").replace("_", " ")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A published check that fails says "the published data changed: <what it checks>" in its summary
    line and in a section of its report, beside its assertion, so that a republication that finds
    something else reads as news about the data, not as a broken function (the code's own tests are
    under tests/unit/)."""
    outcome = yield
    rep = outcome.get_result()
    if not (rep.failed and call.when == "call" and item.get_closest_marker("published")):
        return
    head = (f"{PUBLISHED_CHANGED}: {_what(item)}\n(if data/ was republished on purpose, review the change and "
            f"update this check; if only code changed, the code changed what the committed data show)")
    if isinstance(rep.longrepr, str):
        rep.longrepr = f"{head}\n{rep.longrepr}"
        return
    crash = getattr(rep.longrepr, "reprcrash", None)
    if crash is not None:
        crash.message = f"{PUBLISHED_CHANGED}: {_what(item)}: {crash.message}"
    if hasattr(rep.longrepr, "addsection"):
        rep.longrepr.addsection(PUBLISHED_CHANGED, head)


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


def labelled_containers(mine: bool = True) -> list:
    """The lab's experiment containers: those this process started (``mine``: label dbexp.owner, so that
    a test on another pytest-xdist worker does not count here), or every one. Sparse: the list call alone,
    not an inspect per container, which fails when another worker removes one in between."""
    from dbexp.engine import LABEL, client
    labels = [LABEL, "dbexp.role=experiment"] + ([f"dbexp.owner={os.getpid()}"] if mine else [])
    return client().containers.list(all=True, filters={"label": labels}, sparse=True)


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


@contextlib.contextmanager
def scratch_table(server, name: str, columns: str):
    """A connection to ``server`` with an empty table ``name`` (``columns``: its SQL column list) made for
    one test and dropped after it (on MySQL and MariaDB in a database of its own, ``<name>_db``)."""
    from dbexp.servers.sql import query

    conn = server.connect()
    if server.flavor.name != "postgres":
        query(conn, f"CREATE DATABASE IF NOT EXISTS {name}_db")
        query(conn, f"USE {name}_db")
    try:
        query(conn, f"DROP TABLE IF EXISTS {name}")
        query(conn, f"CREATE TABLE {name} ({columns})")
        yield conn
    finally:
        query(conn, f"DROP TABLE IF EXISTS {name}")
        conn.close()


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


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """Under --dist loadgroup, a grouped test's id must carry its group (``...@test_file.py``), which is how
    pytest-xdist keeps a file on one worker; where it does not (pytest 9.2 with pytest-xdist 3.8), every worker
    would start each file's module-scoped servers: refuse to run rather than run at three times the cost."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    grouped = [i for i in session.items if i.get_closest_marker("xdist_group")]
    if grouped and "@" not in grouped[0].nodeid:
        raise pytest.UsageError(f"pytest-xdist's loadgroup did not take the xdist_group of {grouped[0].nodeid}: "
                                f"pytest {pytest.__version__} is not one it supports (pyproject.toml pins pytest<9.2)")
