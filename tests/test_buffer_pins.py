"""The buffer_pins chapter's runs against a real PostgreSQL 17 with pinbench: a curve run times every N and keeps
what its loops touched, a window of two servers calls them in turn, a pin run counts the pins of its own backend
only (a second connection reading at the same time is not counted) and its I/O starts (writes by the backend, none
for hits), the overflow table alone times both hashes in turn, and every query shape runs the plan its settings
force."""

from __future__ import annotations

import threading

import pytest

from dbexp.chapters.buffer_pins import queries
from dbexp.chapters.buffer_pins.measure import (CurvePoint, PinPoint, measure_curve, measure_curves_together,
                                                measure_pins)
from dbexp.metrics import tracing
from dbexp.servers import ServerConfig, running

pytestmark = pytest.mark.docker

SPEC = "postgres:17+pinbench@offline"
ROWS = 3000


@pytest.fixture(scope="module")
def server(engine):
    with running(ServerConfig(SPEC, cpuset="1", memory="2g", settings={"shared_buffers": "128MB"})) as srv:
        conn = srv.connect()
        try:
            conn.execute("CREATE EXTENSION pinbench")
            queries.make_sbtest(conn, ROWS)
            queries.make_block_table(conn, 200)
        finally:
            conn.close()
        yield srv


def test_a_curve_run_times_every_n(server):
    got = measure_curve(server, CurvePoint("hold", "random", (1, 8, 100), 5000, 3, 64, 0)).measurements
    for n in (1, 8, 100):
        assert 0 < got[f"ns_{n}"][0] < 1e6 and got[f"spread_{n}"][0] >= 0
        assert (got[f"w_held_buffers_{n}"][0], got[f"w_touched_blocks_{n}"][0], got[f"w_moved_{n}"][0]) == (n, 64, 0)


def test_the_threads_benchmark_keeps_its_witness_per_n(server):
    m = measure_curve(server, CurvePoint("fifo", "random", (1, 8, 100), 5000, 3, 64, 0))
    got = {k: v for k, (v, _) in m.measurements.items()}
    for n in (1, 8, 100):
        assert (got[f"w_held_buffers_{n}"], got[f"w_touched_blocks_{n}"], got[f"w_touched_buffers_{n}"]) == (n, 1, 1)
        assert got[f"w_repeats_{n}"] == pytest.approx(4999 / 5000) and got[f"w_moved_{n}"] == 0
    assert sorted({name for _, _, name, _ in m.series}) == ["ns_1", "ns_100", "ns_8"] and len(m.series) == 9


def test_a_window_calls_its_servers_in_turn(server):
    with running(ServerConfig(SPEC, cpuset="1", memory="2g", settings={"shared_buffers": "128MB"})) as other:
        conn = other.connect()
        try:
            conn.execute("CREATE EXTENSION pinbench")
            queries.make_block_table(conn, 200)
        finally:
            conn.close()
        p = CurvePoint("fifo", "sequential", (1, 19), 2000, 2, 64, 0)
        a, b = measure_curves_together([server, other], [p, p])
    for m in (a, b):
        got = {k: v for k, (v, _) in m.measurements.items()}
        assert got["active_servers"] == 1 and got["w_held_buffers_19"] == 19
        assert sorted((t, name) for t, _, name, _ in m.series) == [(0.0, "ns_1"), (0.0, "ns_19"), (1.0, "ns_1"),
                                                                     (1.0, "ns_19")]
    assert a.measurements["window_start"] == b.measurements["window_start"]


@pytest.mark.skipif(tracing.unavailable() is not None, reason="uprobes unavailable here")
def test_a_pin_run_counts_its_own_backend_only(server):
    stop = threading.Event()

    def other_reader():  # the same queries on another connection, all the while
        conn = server.connect()
        try:
            while not stop.is_set():
                conn.execute("SELECT c FROM sbtest1 WHERE id = 17").fetchall()
        finally:
            conn.close()

    t = threading.Thread(target=other_reader, daemon=True)
    t.start()
    try:
        m = measure_pins(server, PinPoint("point_select", 1, False, 40, ROWS, "0"))
    finally:
        stop.set()
        t.join(10)
    got = {k: v for k, (v, _) in m.measurements.items()}
    # an index descent and a heap page per execution: 2 to 4 pins each, never the other reader's thousands
    assert 2 <= got["pins_per_execution"] <= 4 and got["unmatched"] == 0
    assert got["others_le2_share"] == 1.0 and got["released"] == got["pins"]
    held = {int(c["name"]): c["delta"] for c in m.counters if c["source"] == "held_at_pin"}
    assert sum(held.values()) == got["pins"]


@pytest.mark.skipif(tracing.unavailable() is not None, reason="uprobes unavailable here")
def test_the_probe_counts_io_starts_for_writes_and_none_for_hits(server):
    """StartBufferIO counted by the pin probe: the backend's own writes start one I/O each, warm point selects
    (every block a hit) none; and each new pin's slot modulo 32 is checked against the buffers held."""
    conn = server.connect()
    try:
        conn.execute("SELECT pinbench_prewarm('sbtest1'::regclass)")
    finally:
        conn.close()
    got = {k: v for k, (v, _) in measure_pins(server, PinPoint("flush", 1, False, 5, ROWS, "0")).measurements.items()}
    assert got["blocks_written"] == 5 * queries.FLUSH_PAGES and got["io_starts_write"] == got["blocks_written"]
    warm = {k: v for k, (v, _) in measure_pins(server, PinPoint("point_select", 1, False, 40, ROWS, "0")).measurements.items()}
    assert warm["blocks_read"] == 0 and warm["io_starts_read"] == warm["io_starts_write"] == 0
    assert 0 <= warm["slot32_taken"] <= warm["pins"]


def test_the_overflow_table_alone_times_both_hashes_in_turn_within_each_round(server):
    from dbexp.chapters.buffer_pins.measure import HashPoint, measure_hash

    m = measure_hash(server, HashPoint("stride", (8, 100), 2000, 2))
    names = sorted({name for _, _, name, _ in m.series})
    assert names == ["identity_100", "identity_8", "murmur_100", "murmur_8"] and len(m.series) == 8
    got = {k: v for k, (v, _) in m.measurements.items()}
    assert got["w_identity_keys_100"] == got["w_murmur_keys_100"] == 101
    assert got["w_identity_mean_dib_100"] > got["w_murmur_mean_dib_100"]


@pytest.mark.parametrize("shape", sorted(queries.SHAPES))
def test_every_shape_runs_the_plan_it_forces(server, shape):
    s = queries.shape(shape)
    conn = server.connect()
    try:
        cur = conn.cursor()
        for name, value in s.settings:
            cur.execute(f"SET {name} = {value}")
        nodes, hit, read, written = queries.explained(cur, s, 1)
    finally:
        conn.close()
    assert s.plan in nodes and hit + read > 0
    assert written == (queries.FLUSH_PAGES if shape == "flush" else 0)
