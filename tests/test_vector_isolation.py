"""The vector_isolation chapter's engine parts against real servers: pgvector 0.8 in the lab's PostgreSQL 17
(Debian's module in the npm server) and MariaDB 11.8's vector index, on a small data set."""

from __future__ import annotations

import pytest

from dbexp.chapters.vector_isolation import dataset
from dbexp.chapters.vector_isolation.chapter import CHAPTER, PARTS
from dbexp.chapters.vector_isolation.engines import Search
from dbexp.chapters.vector_isolation.measure import VectorPoint, check_state, measure_point
from dbexp.errors import RetryableError
from dbexp.servers.lifecycle import running
from dbexp.servers.registry import flavor_of_spec

pytestmark = pytest.mark.docker

SHAPE = dataset.Shape(600, 8)


@pytest.fixture(scope="module", params=["postgres:17+pgvector@offline", "mariadb:11.8@offline"])
def prepared(request, engine):
    spec = request.param
    cfg = CHAPTER.server_config(spec, "1", PARTS.of(flavor_of_spec(spec)).start_settings())
    with running(cfg) as srv:
        part = PARTS.of(srv.flavor)
        rows = dataset.base_rows(SHAPE)
        facts = part.prepare(srv, rows, 8, 32)
        yield srv, part, rows, facts


def _point(writer: str, exact: bool = False) -> VectorPoint:
    return VectorPoint("readers", writer, 5 if writer != "none" else 0, 5, 20, "off", exact, 4, 0.05, 1.0,
                       SHAPE.rows, SHAPE.dims, 8, 32, 0, "0")


def test_the_pristine_table_passes_its_check_and_the_index_is_used(prepared):
    srv, part, rows, facts = prepared
    assert facts["index_build_s"] > 0 and facts["index_bytes"] > 0
    conn = part.connect(srv)
    try:
        st = check_state(part, conn, _point("none"), dataset.checksum(rows))
        assert st["rows"] == SHAPE.rows and st["index_valid"] == 1
        q = dataset.literal(dataset.draw(SHAPE.dims, 1, 9)[0])
        part.set_search(conn, Search(5, 20))
        assert part.plan(conn, q, Search(5, 20)) != "exact"
        approx = part.knn(conn, q, Search(5, 20))
        part.set_search(conn, Search(5, 20, exact=True))
        assert part.plan(conn, q, Search(5, 20, exact=True)) == "exact"
        assert len(approx) == 5 and len(set(approx) & set(part.knn(conn, q, Search(5, 20, exact=True)))) >= 3
    finally:
        conn.close()


def test_the_exact_answer_inside_a_reader_bypasses_the_index(prepared):
    """A reader whose session searches through the index asks the exact answer in the same transaction."""
    srv, part, rows, _ = prepared
    conn = part.connect(srv, autocommit=False)
    try:
        part.set_search(conn, Search(5, 20))
        conn.commit()
        part.begin_repeatable_read(conn)
        q = dataset.literal(dataset.draw(SHAPE.dims, 1, 11)[0])
        assert part.plan(conn, q, Search(5, 20)) != "exact"
        exact = part.knn(conn, q, Search(5, 20, exact=True))
        assert part.plan(conn, q, Search(5, 20, exact=True)) == "exact"
        d = ((rows - dataset.draw(SHAPE.dims, 1, 11)[0]) ** 2).sum(axis=1)
        assert exact == [int(i) + 1 for i in d.argsort()[:5]]  # the true nearest, computed here
        conn.commit()
    finally:
        conn.close()


def test_a_written_table_fails_the_check_until_restored(prepared):
    srv, part, rows, _ = prepared
    conn = part.connect(srv)
    try:
        part.insert(conn, SHAPE.rows + 1, dataset.literal(rows[0]))
        with pytest.raises(RetryableError, match="not the pristine data set"):
            check_state(part, conn, _point("none"), dataset.checksum(rows))
    finally:
        conn.close()
    part.restore(srv)
    conn = part.connect(srv)
    try:
        check_state(part, conn, _point("none"), dataset.checksum(rows))
    finally:
        conn.close()


def test_readers_under_inserts_never_see_a_row_their_snapshot_cannot(prepared):
    srv, part, rows, _ = prepared
    for exact in (True, False):
        got = measure_point(part, srv, _point("insert", exact), dataset.checksum(rows), dirty=True).measurements
        assert got["reader_transactions"][0] == 4 and got["precondition_ok"][0] == 1
        assert got["leaked"][0] == 0 and got["writes_between"][0] >= 5
        assert got["lost_visible"][0] == got["lost"][0]  # a row the second answer lost is still visible
        if exact:
            assert got["set_changed"][0] == 0  # the exact scan is the control: it never changes
