"""The results store and sweeps: provenance, failed runs kept apart, resume, export."""

from __future__ import annotations

import json
import threading
import time

import pytest

from conftest import MYSQL, POSTGRES, assert_catalog_version, labelled_containers
from dbexp.catalog import parse_spec
from dbexp.errors import DbexpError
from dbexp.experiments.measure import Measured
from dbexp.images import resolve
from dbexp.experiments.sweep import Experiment, Point, Sweep
from dbexp.servers import ServerConfig
from dbexp.servers.sql import query
from dbexp.workloads import Workload

pytestmark = pytest.mark.docker

PROVENANCE = ["flavor", "spec", "version", "version_full", "source", "image", "image_id", "image_digest",
              "server_kind", "server_cpus", "server_cpus_observed", "client_cpus", "memory_limit",
              "config_requested", "settings_effective", "workload", "command", "host", "started_at",
              "ended_at", "repeat"]


def _point(**kw) -> Point:
    return Point(ServerConfig(POSTGRES, "1", settings={"max_connections": "50"}),
                 workload=Workload("oltp_point_select", 2, 2, 1, 2000), **kw)


def test_sweep_records_complete_provenance_and_resumes(store):
    sweep = Sweep(Experiment("t_sweep"), [_point()], repeats=2, store=store, steal_limit_pct=None)
    ids = sweep.run(progress=False)
    assert len(ids) == 2
    runs = store.runs("t_sweep")
    assert set(runs["status"]) == {"ok"} and sorted(runs["repeat"]) == [0, 1]
    row = runs.iloc[0]
    for col in PROVENANCE:
        assert row[col] is not None and row[col] == row[col], col
    assert_catalog_version(row["version"], resolve(parse_spec(POSTGRES)))
    assert row["server_cpus_observed"] == "1"
    assert json.loads(row["config_requested"]) == {"max_connections": "50"}
    assert json.loads(row["settings_effective"])["max_connections"] == "50"
    host = json.loads(row["host"])
    assert host["cpus"] >= 1 and host["cpu_model"] and host["kernel"] and host["engine_version"]
    assert "--mysql" not in row["command"] and "--pgsql-port=" in row["command"]
    m = store.table("measurements", ids)
    assert {"qps", "lat_p95_ms", "lat_p99_ms", "cpu_per_op_us", "cs_per_op"} <= set(m["name"])
    for run_id in ids:  # oltp_point_select: one statement per transaction, none failed
        got = m[m["run_id"] == run_id].set_index("name")["value"]
        assert got["queries"] == got["reads"] == got["transactions"] > 0 and got["errors"] == 0
        assert abs(got["qps"] * got["total_time_s"] / got["queries"] - 1) < 0.02
    assert len(store.table("series", ids)) > 0 and len(store.table("counters", ids)) > 0

    # resume: nothing left to do, nothing started
    again = Sweep(Experiment("t_sweep"), [_point()], repeats=2, store=store, steal_limit_pct=None)
    assert again.pending() == []
    assert sorted(again.run(progress=False)) == sorted(ids)
    # one more repeat runs only the missing one
    more = Sweep(Experiment("t_sweep"), [_point()], repeats=3, store=store, steal_limit_pct=None)
    assert [r for _, r in more.pending()] == [2]
    # force measures again, and the new run supersedes the old one: readers see one run per repeat
    forced = Sweep(Experiment("t_sweep"), [_point()], repeats=1, store=store, force=True, steal_limit_pct=None)
    assert len(forced.pending()) == 1
    new = forced.run(progress=False)
    everything = store.runs("t_sweep", status=None).set_index("run_id")
    old0 = next(i for i in ids if everything.loc[i, "repeat"] == 0)
    assert everything.loc[old0, "status"] == "superseded" and everything.loc[new[0], "status"] == "ok"
    assert sorted(store.runs("t_sweep")["repeat"]) == [0, 1]


def test_failed_runs_are_kept_apart(store):
    calls = {"n": 0}

    class Flaky(Experiment):
        def measure(self, server, point, state) -> Measured:
            calls["n"] += 1
            if calls["n"] == 2:
                raise RuntimeError("the server went away")
            return super().measure(server, point, state)

    sweep = Sweep(Flaky("t_fail"), [_point()], repeats=3, store=store, steal_limit_pct=None)
    with pytest.raises(DbexpError, match="1 run\\(s\\) of t_fail failed; first: .*the server went away"):
        sweep.run(progress=False)
    everything = store.runs("t_fail", status=None)
    assert sorted(everything["status"]) == ["failed", "ok", "ok"]
    failed = everything[everything["status"] == "failed"].iloc[0]
    assert "went away" in failed["error"]
    assert store.table("measurements", [failed["run_id"]]).empty  # no half results
    assert len(store.runs("t_fail")) == 2  # readers see only ok runs
    assert labelled_containers() == []
    # a rerun fills only the failed repeat
    again = Sweep(Experiment("t_fail"), [_point()], repeats=3, store=store, steal_limit_pct=None)
    assert [r for _, r in again.pending()] == [1]


class Interrupted(Experiment):
    """sysbench (ignoring errors, as a tolerant workload would) while another session holds its table
    locked for two seconds: with lock_wait_timeout at 1 s, every reader's statement then fails with a
    lock wait timeout, which sysbench counts as an error and retries (a reconnect would be counted too,
    but sysbench 1.0.20 crashes on one)."""

    def measure(self, server, point, state) -> Measured:
        conn = server.connect(point.workload.database)
        query(conn, "SET GLOBAL lock_wait_timeout = 1")  # sysbench's sessions start after this
        locked = threading.Event()

        def lock():
            time.sleep(0.5)
            query(conn, "LOCK TABLES sbtest1 WRITE")
            locked.set()
            time.sleep(2.0)
            query(conn, "UNLOCK TABLES")

        locker = threading.Thread(target=lock)
        locker.start()
        try:
            return super().measure(server, point, state)
        finally:
            locker.join()
            conn.close()
            assert locked.is_set()


def test_a_run_with_errors_is_failed_unless_tolerated(store):
    point = Point(ServerConfig(MYSQL, "1"), workload=Workload(
        "oltp_point_select", 2, 3, 1, 2000, options=(("mysql-ignore-errors", "all"),)))
    with pytest.raises(DbexpError, match=r"t_err failed; first: .*sysbench reported \d+ errors"):
        Sweep(Interrupted("t_err"), [point], repeats=1, store=store, steal_limit_pct=None).run(progress=False)
    failed = store.runs("t_err", status=None).iloc[0]
    assert failed["status"] == "failed" and "errors" in failed["error"]
    assert_catalog_version(failed["version"], resolve(parse_spec(MYSQL)))  # the failed run keeps its provenance

    class Tolerant(Interrupted):
        tolerates = ("errors",)

    ids = Sweep(Tolerant("t_err_ok"), [point], repeats=1, store=store, steal_limit_pct=None).run(progress=False)
    m = store.table("measurements", ids).set_index("name")["value"]
    # counted and kept with the run: with the table locked for 2 s and lock_wait_timeout at 1 s, each
    # of the 2 threads times out at most twice
    assert 0 < m["errors"] <= 4
    assert labelled_containers() == []


def test_interrupted_runs_become_failed(store):
    run_id = store.begin_run("t_int", "k", {}, 0)
    store.db.execute("UPDATE runs SET pid = 999999999 WHERE run_id = ?", [run_id])
    assert store.mark_interrupted() == 1
    row = store.runs("t_int", status=None).iloc[0]
    assert row["status"] == "failed" and row["error"].startswith("interrupted")


def test_discarded_runs_keep_their_data_and_reason_and_are_measured_again(store):
    done = store.begin_run("t_disc", "k", {}, 0)
    store.finish_run(done, {"flavor": "postgres"}, {"qps": (1.0, "1/s")}, [], [])
    assert ("k", 0) in store.done_keys("t_disc")
    assert store.discard([done], "other work ran on the host") == 1
    row = store.runs("t_disc", status=None).iloc[0]
    assert row["status"] == "discarded" and row["error"] == "other work ran on the host"
    assert store.done_keys("t_disc") == set() and store.runs("t_disc").empty
    assert len(store.table("measurements", [done])) == 1  # kept for the record
    assert store.discard([], "nothing") == 0


def test_export_and_load_round_trip(store, tmp_path):
    from dbexp.results import export, load
    ids = Sweep(Experiment("t_exp"), [_point()], repeats=1, store=store, steal_limit_pct=None).run(progress=False)
    export(store, "t_exp", ids, root=tmp_path)
    tables = load("t_exp", root=tmp_path)
    assert list(tables["runs"]["run_id"]) == ids
    assert set(tables["measurements"]["run_id"]) == set(ids)
    with pytest.raises(DbexpError, match="no published results for 't_none'"):
        load("t_none", root=tmp_path)


def test_a_measurement_missing_in_every_run_stays_a_column():
    import pandas as pd

    from dbexp.results.store import with_measurements

    m = pd.DataFrame({"run_id": ["a", "a", "b", "b"], "name": ["qps", "reclaim_s"] * 2,
                      "value": [1.0, None, 2.0, None], "unit": ["", "s"] * 2})
    wide = with_measurements(pd.DataFrame({"run_id": ["a", "b"]}), m)
    assert list(wide["qps"]) == [1.0, 2.0]
    assert wide["reclaim_s"].isna().all()
