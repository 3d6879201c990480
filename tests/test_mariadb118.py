"""MariaDB 11.8 from Debian sid (pinned, on dbexp/base:sid), against a real server: the book's baseline
is accepted and in effect, the version is the pinned one, and sysbench's point selects run.

Builds dbexp/base:sid and dbexp/mariadb:11.8.9 when missing (about half a minute on 2 cores)."""

from __future__ import annotations

import pytest

from dbexp import catalog, images
from dbexp.workloads import sysbench
from dbexp.workloads.sysbench import Workload

pytestmark = pytest.mark.docker

SPEC = "mariadb:11.8@offline"
BUILD = next(b for b in catalog.OFFLINE if b.flavor == "mariadb" and b.major == "11.8")
POINT_SELECTS = Workload("oltp_point_select", threads=4, duration_s=3, table_size=10000)


@pytest.fixture(scope="module")
def server(engine):
    from dbexp.servers import ServerConfig, running
    from dbexp.servers.registry import flavor_of_spec

    settings = flavor_of_spec(SPEC).comparable_settings()
    with running(ServerConfig(SPEC, cpuset="1", memory="2g", settings=settings)) as srv:
        yield srv


def test_the_pinned_version_runs_with_the_baseline(server):
    info = images.ensure(BUILD)
    assert info.artifact == "debian:mariadb-server-core=1:11.8.9+ds-4"
    assert info.artifact_sha256 == BUILD.artifact.sha256
    assert server.version.startswith("11.8.9-MariaDB")
    effective = server.effective_settings()
    for key, value in server.flavor.comparable_settings().items():
        name = key[len("skip_"):] if key.startswith("skip_") else key
        want = "OFF" if key.startswith("skip_") else value
        assert effective[name].lower() == want.lower(), (name, effective[name])
    # left as Debian ships it (the drift table shows it beside 10.11's utf8mb4_general_ci)
    assert effective["collation_server"] == "utf8mb4_uca1400_ai_ci"


def test_point_selects_run(server):
    sysbench.prepare(POINT_SELECTS, server)
    before = int(server.query("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'")[0][1])
    done = sysbench.run(POINT_SELECTS, server)
    after = int(server.query("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'")[0][1])
    summary = done.result.summary()
    assert summary["errors"] == 0 and summary["transactions"] == summary["reads"] > 1000
    assert after - before == summary["transactions"]
