"""The pinbench images against a real server: the buffer_pins chapter's C extension, compiled in the image build
against Debian's postgresql-server-dev-17 headers, loads into the npm PostgreSQL 17.10 and its three functions
return positive, finite times; a bad pattern is the extension's one-line error. Builds
dbexp/postgres:17.10-pinbench when missing (about 40 s)."""

from __future__ import annotations

import math

import psycopg
import pytest

from conftest import assert_catalog_version
from dbexp.servers import ServerConfig, running

pytestmark = pytest.mark.docker

SPEC = "postgres:17+pinbench@offline"
ROWS = 20_000  # fillfactor 10: about 4,000 blocks (32 MB), well inside shared_buffers


@pytest.fixture(scope="module")
def pinbench(engine):
    with running(ServerConfig(SPEC, cpuset="1", memory="2g", settings={"shared_buffers": "128MB"})) as srv:
        conn = srv.connect()
        try:
            conn.execute("CREATE EXTENSION pinbench")
            conn.execute("CREATE TABLE t (id int, pad text) WITH (fillfactor=10)")
            conn.execute(f"INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, {ROWS}) g")
        finally:
            conn.close()
        yield srv


def _value(srv, sql: str) -> float:
    conn = srv.connect()
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def test_the_image_is_the_plain_server_with_the_extension(pinbench):
    assert pinbench.build.variant == "pinbench" and pinbench.image.ref == "dbexp/postgres:17.10-pinbench"
    assert_catalog_version(pinbench.version, pinbench.build)
    assert "postgresql-server-dev-17" in pinbench.image.artifact
    assert _value(pinbench, "SELECT extversion FROM pg_extension WHERE extname = 'pinbench'") == "1.0"


def test_the_three_functions_return_positive_finite_numbers(pinbench):
    blocks = _value(pinbench, "SELECT pinbench_prewarm('t')")
    assert blocks == _value(pinbench, "SELECT pg_relation_size('t') / current_setting('block_size')::int") > 1000
    for sql in ("SELECT pinbench_hold('t', 100, 64, 20000, 'random')",
                "SELECT pinbench_hold('t', 4, 64, 20000, 'sequential', true)",
                "SELECT pinbench_cycle('t', 11, 200, 'random')",
                "SELECT pinbench_cycle('t', 4, 200, 'sequential')"):
        ns = _value(pinbench, sql)
        assert isinstance(ns, float) and math.isfinite(ns) and 0 < ns < 1e6, (sql, ns)


def test_a_bad_pattern_is_the_extensions_one_line_error(pinbench):
    conn = pinbench.connect()
    try:
        with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
            conn.execute("SELECT pinbench_cycle('t', 4, 10, 'zigzag')")
    finally:
        conn.close()
    assert str(err.value).strip() == "pattern \"zigzag\" is not valid; valid are 'sequential' and 'random'"
