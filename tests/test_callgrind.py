"""Counting instructions under callgrind, against real servers in real containers (valgrind from the host's
Debian package, mounted into them): one MySQL and one PostgreSQL version, a few hundred statements each.
What is asserted is the structure of a count and where its instructions went (the statement's entry
function holds them; the server entered its statement function once per statement the client sent),
never a speed."""

from __future__ import annotations

import math
import os

import pytest

from conftest import MYSQL, POSTGRES

EVENTS = 200  # point selects counted: the long pass less the short one
WARMUP = 50
ROWS = 1000


@pytest.fixture(scope="module", params=[MYSQL, POSTGRES])
def counted_server(request, engine):
    """A server of each flavor started for counting (natively, then restarted under valgrind by the first
    count), with a sysbench table loaded natively."""
    from dbexp.metrics import callgrind
    from dbexp.servers import ServerConfig, running
    from dbexp.servers.registry import flavor_of_spec
    from dbexp.workloads import Workload, sysbench

    spec = request.param
    config = callgrind.counted_config(
        ServerConfig(spec, cpuset="1", memory="2g", settings=flavor_of_spec(spec).comparable_settings()))
    workload = Workload("oltp_point_select", 1, table_size=ROWS, options=(("rand-seed", "1"),))
    with running(config) as server:
        sysbench.prepare(workload, server)
        yield server, workload
    assert not server.under.work.exists(), "the server's valgrind folder outlived it"


def _finite(value) -> bool:
    return value is not None and math.isfinite(value)


def test_a_count_of_point_selects_is_the_statement_path_per_statement(counted_server):
    from dbexp.experiments import counted

    server, workload = counted_server
    assert server.under.native, "a counted server starts natively"
    done = counted.count(server, workload, EVENTS, warmup=WARMUP)
    m = {k: v for k, (v, _) in done.measurements.items()}
    assert not server.under.native and m["valgrind_start_s"] > 0
    assert m["ops_counted"] == EVENTS and m["events_counted"] == EVENTS  # one point select per event
    # the server entered its statement function once per statement sysbench sent, no more
    assert m["statements_seen"] == m["statements_sent"] == EVENTS
    assert _finite(m["instructions_per_op"]) and m["instructions_per_op"] > 1000
    assert m["instructions_counted"] == m["instructions_per_op"] * EVENTS
    # collection is on only inside the entry function: it holds every counted instruction
    assert m["entry_share"] == pytest.approx(1.0, abs=1e-9)
    for name in ("d1_misses_per_op", "ll_misses_per_op", "branch_mispredicts_per_op", "data_reads_per_op"):
        assert _finite(m[name]) and m[name] >= 0, name
    assert m["branch_mispredicts_per_op"] < m["branches_per_op"] < m["instructions_per_op"]
    cap = server.flavor.capability("callgrind")
    inclusive = {r["name"]: r for r in done.counters if r["source"] == "callgrind_inclusive"}
    entry = [r for name, r in inclusive.items() if name.startswith(cap.entry.rstrip("*"))]
    assert len(entry) == 1, f"the entry function {cap.entry} among the top functions: {sorted(inclusive)[:10]}"
    assert entry[0]["delta"] == m["instructions_counted"]
    calls = {r["name"]: r["delta"] for r in done.counters if r["source"] == "callgrind_calls"}
    statement = [n for n in calls if n.startswith(cap.statement.rstrip("*"))]
    assert statement and calls[statement[0]] == EVENTS
    assert "--toggle-collect=" in done.command and "sysbench" in done.command


def test_a_chapters_own_statements_are_counted_per_call(counted_server):
    from dbexp.metrics import callgrind
    from dbexp.servers.sql import query

    server, workload = counted_server
    placeholder = "%s"

    def run(conn, i):
        query(conn, f"SELECT c FROM sbtest1 WHERE id = {placeholder}", (1 + i * 7 % ROWS,))

    done = callgrind.count_loop(server, run, 100, warmup=20, database=workload.database)
    m = {k: v for k, (v, _) in done.measurements.items()}
    assert m["ops_counted"] == 100 and m["statements_seen"] == m["statements_sent"] == 100
    assert _finite(m["instructions_per_op"]) and m["instructions_per_op"] > 1000
    assert m["entry_share"] == pytest.approx(1.0, abs=1e-9)
    assert not callgrind._outputs(server.under.out) == {}, "callgrind wrote its counts where this host reads them"


def test_a_counted_run_is_stored_with_its_provenance_and_leaves_nothing(store):
    from dbexp.experiments import counted
    from dbexp.servers import ServerConfig
    from dbexp.workloads import Workload

    point = counted.point(ServerConfig(POSTGRES, cpuset="1", memory="2g"),
                          Workload("oltp_point_select", 4, table_size=ROWS), "callgrind")
    assert point.server.settings["autovacuum"] == "off" and point.workload.threads == 1
    ids = counted.run(counted.Counted("count_test", events=100, warmup=20), [point], store, instances=1,
                      progress=False)
    assert len(ids) == 1
    run = store.runs("count_test").iloc[0]
    assert run["status"] == "ok" and run["server_kind"] == "container" and run["image_id"]
    assert "valgrind" in run["command"] and "--collect-atstart=no" in run["command"]
    wide = store.measurements_wide(store.runs("count_test"))
    assert wide["instructions_per_op"].iloc[0] > 1000 and wide["simulated_caches"].iloc[0] == 0
    assert "d1_misses_per_op" not in wide  # no cache simulation under "callgrind"
    table = counted.functions(store, ids[0], "inclusive", 5)
    assert len(table) == 5 and table["share"].iloc[0] == pytest.approx(1.0)
    assert counted.agreement(store, ids)["servers"].iloc[0] == 1
    # its server is gone (the module's other servers count with the caches simulated: callgrind-sim)
    from dbexp.engine import LABEL, client
    left = client().containers.list(all=True, sparse=True, filters={
        "label": [LABEL, f"dbexp.owner={os.getpid()}", "dbexp.under=callgrind"]})
    assert not left
