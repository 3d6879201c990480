"""sysbench against real servers: parsing real output, per-operation metrics, concurrency."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dbexp.experiments.measure import measure
from dbexp.workloads import Workload, sysbench
from dbexp.workloads.parse import parse_run

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def pg_data(pg):
    wl = Workload("oltp_read_write", threads=2, duration_s=3, table_size=5000)
    prep = sysbench.prepare(wl, pg)
    assert prep["rows"] == 5000 and prep["prepare_s"] > 0
    return wl


def test_real_output_parses_completely(pg, pg_data):
    done = sysbench.run(pg_data, pg)
    res = parse_run(done.output)
    assert res.transactions > 0 and res.queries == res.reads + res.writes + res.others
    assert abs(res.qps - res.queries / res.total_time_s) / res.qps < 0.02
    assert len(res.series) >= 2 and res.series[0]["threads"] == 2  # the last interval may see a thread end
    assert sum(c for _, c in res.histogram) == res.events  # the histogram counts every event
    assert res.lat_min_ms <= res.percentile(95) <= res.percentile(99) <= res.lat_max_ms * 1.05
    assert done.client_cpu_s > 0


def test_write_workload_metrics_are_plausible(pg, pg_data):
    # one thread: two oltp_read_write threads on 5,000 rows can deadlock now and then, and sysbench
    # counts the deadlock it retries as an error (seen once in a fresh-clone run)
    m = measure(pg, replace(pg_data, threads=1)).measurements
    assert m["qps"][0] > 0 and m["errors"][0] == 0
    assert 0 < m["cpu_per_op_us"][0] < 10_000  # microseconds of server CPU per query
    assert m["cs_per_op"][0] > 0  # commits wait for the WAL flush
    assert m["wkb_per_op"][0] > 0  # ... and the WAL reaches the disk
    assert m["client_cpu_per_op_us"][0] > 0


def test_mysql_write_workload_metrics(my):
    wl = Workload("oltp_write_only", threads=2, duration_s=3, table_size=5000)
    sysbench.prepare(wl, my)
    got = measure(my, wl)
    m = got.measurements
    assert m["cs_per_op"][0] > 0 and m["wkb_per_op"][0] > 0 and m["cpu_per_op_us"][0] > 0
    deltas = {(c["source"], c["name"]): c["delta"] for c in got.counters}
    assert deltas[("status", "Com_commit")] > 0 or deltas[("status", "Com_update")] > 0
    names = {(src, name) for _, src, name, _ in got.series}
    assert ("sysbench", "qps") in names and ("server", "cpu_s/s") in names and ("counter", "Questions/s") in names


def test_two_workloads_run_concurrently(pg, pg_data):
    """A hot reader and a scanner at once: two sysbench processes, one result each."""
    reader = Workload("oltp_point_select", threads=1, duration_s=3, table_size=5000)
    scanner = Workload("select_random_ranges", threads=1, duration_s=3, table_size=5000)
    a, b = sysbench.start_run(reader, pg), sysbench.start_run(scanner, pg)
    ra, rb = sysbench.finish_run(a, reader), sysbench.finish_run(b, scanner)
    assert ra.result.qps > 0 and rb.result.qps > 0


def test_a_project_lua_script_runs(pg, pg_data):
    assert "point_select_isolation" in sysbench.project_scripts()
    wl = Workload("point_select_isolation", threads=1, duration_s=2, table_size=5000)
    done = sysbench.run(wl, pg)
    assert done.result.queries > 0


@pytest.mark.parametrize("spec", ["mariadb:10.11@offline"])
def test_every_flavor_reads_its_counters_and_garbage(spec, my, pg):
    """Each flavor's counters, sessions and version garbage, asked of a real server (MySQL and
    PostgreSQL from the shared fixtures; MariaDB, whose InnoDB metrics table differs, started here)."""
    from dbexp.servers import ServerConfig, running

    with running(ServerConfig(spec, cpuset="1", memory="2g")) as mariadb:
        for server in (my, pg, mariadb):
            server.ensure_database(server.flavor.default_db)
            conn = server.connect()
            try:
                snap = server.flavor.counters(conn, server.flavor.default_db)
                sources = {src for src, _ in snap}
                if server.flavor.version_store == "undo":
                    assert {"status", "innodb_metrics"} <= sources, (server.build.spec, sources)
                    assert ("innodb_metrics", "trx_rseg_history_len") in snap
                    g = server.flavor.garbage(conn, "none")
                    assert g["trx_id_counter"] >= g["purge_done_no"] and g["history_list_length"] >= 0
                else:
                    assert "pg_stat_database" in sources and ("pg_stat_bgwriter" in sources
                                                              or "pg_stat_checkpointer" in sources)
                seen = server.flavor.observe_sessions(conn)
                assert seen["sessions"] >= 1 and seen["open_write_trx"] >= 0
            finally:
                conn.close()
