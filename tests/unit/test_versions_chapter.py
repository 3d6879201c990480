"""The versions chapter without servers: its design (a flavor's versions in one window, the twin and
own defaults beside them), its bad input refused in one line, its analysis on synthetic windows, its
tests' scripts, and a page that renders before anything is published."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

from dbexp.chapters import versions
from dbexp.chapters.versions import CHAPTER
from dbexp.chapters.versions.regression import SOURCE_CONFIGS, STEPS, configurations
from dbexp.chapters.versions.chapter import EDGES_S, MYSQL, reference_loop, turn_options, window_s
from dbexp.errors import DbexpError
from dbexp.experiments.chapter import Cpus, Results
from dbexp.workloads.sysbench import LUA_DIR

pytestmark = pytest.mark.unit


def test_default_design_interleaves_four_instances_of_every_server_in_random_windows():
    sc = CHAPTER.adjust(CHAPTER.scale("default"), "default", Cpus(), {})
    _, main, ablation, profile = CHAPTER.design(sc, Cpus())
    windows = {}
    for p in main.points:
        windows.setdefault(p.together, []).append(p)
    mysql = windows["MySQL point-query i0"]
    assert [(p.server.spec, p.params.role) for p in mysql] == [
        ("mysql:5.7@offline", "baseline"), ("mysql:5.7@offline", "twin"), ("mysql:8.0@offline", "baseline"),
        ("mysql:9.7@offline", "baseline")]
    assert len({p.server.key() for p in mysql}) == len(mysql)  # a server each
    # four instances: four windows per test and flavor, each on servers of its own, all in one group
    copies = [windows[f"MySQL point-query i{i}"] for i in range(4)]
    assert len({p.server.key() for ps in copies for p in ps}) == 16
    assert {p.params.instance for ps in copies for p in ps} == {0, 1, 2, 3}
    assert {p.group for p in main.points if p.group.endswith("MySQL")} == {"versions MySQL"}
    # the same servers run every test of their instance
    assert {p.server.key() for p in windows["MySQL scan i2"]} == {p.server.key() for p in copies[2]}
    assert main.repeats == 2 and main.instances == 1 and CHAPTER.order == "shuffled"
    assert all(p.block == p.together for p in main.points)  # a window is one block of the random walk
    assert len(windows["Postgres scan i0"]) == 5 and len(windows["MariaDB insert i3"]) == 3
    assert len(windows) == 3 * len(sc.tests) * 4
    # one server working at a time; scan's statements (0.3 to 1 s) in slices of 2 s (test_scans_take_turns_...)
    assert {p.params.slice_s for p in main.points if p.params.test != "scan"} == {0.25}
    # at least 8 s of each server's own turns per test over the 4 instances; the long tests three times that
    for ps in windows.values():
        p = ps[0]
        assert p.params.turns_s * main.repeats * 4 >= 8.0
        assert p.workload.duration_s >= len(ps) * p.params.turns_s
    assert windows["MySQL update-nonindex i0"][0].params.turns_s == pytest.approx(3 * sc.active_s)
    assert sc.table_size >= 1_000_000 and set(sc.tests) <= set(versions.TESTS)
    settings = {(p.server.spec, p.params.role): p.server.settings for p in mysql}
    assert {s["innodb_adaptive_hash_index"] for s in (settings[(spec, "baseline")] for spec in MYSQL)} == {"OFF"}
    assert {s["innodb_buffer_pool_size"] for s in settings.values()} == {"1024M"}
    assert settings[("mysql:9.7@offline", "baseline")]["innodb_log_writer_threads"] == "ON"
    assert "innodb_log_writer_threads" not in settings[("mysql:8.0@offline", "baseline")]  # always on in 8.0.15
    windows = {}
    for p in ablation.points:  # one window per configuration and instance, the three MySQL versions in it
        windows.setdefault(p.together, []).append(p.server.spec)
    assert len(windows) == len(sc.ablation_configs) * sc.ablation_instances
    assert all(sorted(v) == sorted(MYSQL) for v in windows.values())
    # configurations that differ only in what a running server takes share their servers
    groups = {}
    for p in ablation.points:
        groups.setdefault(p.group, set()).add(p.params.config)
    assert groups["versions ablation source baseline"] == {"source baseline", "writer threads off", "prepared statements",
                                                           "flush_log_at_trx_commit=0"}
    assert groups["versions ablation steps 1-3"] == {"steps 1-3", "steps 1-4", "steps 1-5"}
    for p in ablation.points:  # one server per version and instance in a group, whichever configuration's window
        assert {q.server.key() for q in ablation.points if q.group == p.group and q.server.spec == p.server.spec
                and q.params.instance == p.params.instance} == {p.server.key()}
    assert {p.together for p in profile.points} == {"profile MySQL point-query", "profile MySQL update-nonindex"}
    assert {p.params.role for p in profile.points} == {"profile"}


def test_a_window_holds_every_servers_turns_and_the_host_speed_is_timed():
    assert window_s(1.1, 4) == 6 and window_s(0.5, 3) == 3  # the edges (leads, starts) and the turns, whole seconds
    # taking turns, each turn's gap too (TURN_GAP_S): 1.1 s of 0.25 s slices is 5 turns, 4 servers 4 x 1.5 s + edges
    assert window_s(1.1, 4, 0.25) == 8 and window_s(3.3, 5, 0.25) == 24
    took = reference_loop(None, repeats=1)
    assert took > 0
    assert SOURCE_CONFIGS == ("source baseline",) + tuple(c for c in configurations() if c != "source baseline")[:len(STEPS)] \
        + ("P_S off", "binlog off", "prepared statements", "flush_log_at_trx_commit=0")


def test_the_full_scale_runs_every_test_and_configuration():
    sc = CHAPTER.adjust(CHAPTER.scale("full"), "full", Cpus(), {})
    assert set(sc.tests) == set(versions.TESTS) and len(versions.TESTS) == 32
    assert set(sc.ablation_configs) == set(configurations()) and sc.instances >= 4


def _ablation_point(config: str, spec: str):
    sc = CHAPTER.adjust(CHAPTER.scale("full"), "full", Cpus(), {})
    return next(p for p in CHAPTER.design(sc, Cpus())[2].points if p.params.config == config and p.server.spec == spec)


def test_the_ablation_starts_from_the_sources_baseline_and_takes_its_steps_in_its_order():
    base = _ablation_point("source baseline", "mysql:9.7@offline")
    assert base.server.settings["log_bin"] and "skip_log_bin" not in base.server.settings
    assert dict(base.params.switched) == {"innodb_log_writer_threads": "ON", "innodb_flush_log_at_trx_commit": "2"}
    assert "innodb_log_writer_threads" not in base.server.settings  # switched before each window instead
    assert base.server.settings["innodb_adaptive_hash_index"] == "OFF"
    assert dict(base.workload.options)["db-ps-mode"] == "disable"  # the source's text protocol
    assert dict(_ablation_point("source baseline", "mysql:8.0@offline").params.switched) == {
        "innodb_flush_log_at_trx_commit": "2"}  # 8.0.15 has no such option: it always runs them
    last = _ablation_point("steps 1-5", "mysql:9.7@offline")
    assert last.server.settings["skip_log_bin"] == "ON" and "log_bin" not in last.server.settings
    assert last.server.settings["performance_schema"] == "OFF"
    assert dict(last.params.switched) == {"innodb_log_writer_threads": "OFF", "innodb_flush_log_at_trx_commit": "0"}
    assert dict(last.workload.options)["db-ps-mode"] == "auto"
    alone = _ablation_point("latin1", "mysql:8.0@offline")
    assert alone.server.settings["log_bin"] and alone.server.settings["character_set_server"] == "latin1"
    assert configurations()["steps 1-3"] == ("writer threads off", "P_S off", "binlog off")


def test_the_ablations_gap_is_paired_by_window_and_its_moves_against_the_baseline():
    rng = np.random.default_rng(2)
    rows = []
    for config, gap in (("source baseline", 0.7), ("steps 1-2", 0.8), ("doublewrite off", 0.7),
                        ("flush_log_at_trx_commit=0", 0.75)):
        drift = 1 + 0.2 * rng.standard_normal(5)
        for name, q in (("mysql 5.7.22", 1000.0), ("mysql 8.0.15", 1000 * gap)):
            for repeat, d in enumerate(drift):
                # doublewrite: changes nothing; the flush: the baseline's servers, switched before each window
                asked = {} if config in ("doublewrite off", "flush_log_at_trx_commit=0") else {"changed": config}
                flush = "0" if config == "flush_log_at_trx_commit=0" else "2"
                rows.append({"series_name": name, "flavor": "mysql", "test": "update-nonindex", "role": "ablation",
                             "length": 1, "config": config, "repeat": repeat, "qps_common": q * d,
                             "config_requested": {} if config == "source baseline" else asked,
                             "switched": [["innodb_flush_log_at_trx_commit", flush]],
                             "workload": {"duration_s": 4, "options": {}}})
    res = Results("versions", pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "this run")
    ab = versions.ablation(res).set_index("config")
    assert list(ab.index) == ["source baseline", "steps 1-2", "flush_log_at_trx_commit=0", "doublewrite off"]
    assert ab.loc["source baseline", "gap"] == pytest.approx(0.7)
    assert ab.loc["source baseline", "gap_high"] - ab.loc["source baseline", "gap_low"] == pytest.approx(0, abs=1e-9)
    assert ab.loc["steps 1-2", "kind"] == "step 2" and ab.loc["doublewrite off", "kind"] == "alone"
    assert ab.loc["steps 1-2", "moves"] == pytest.approx(0.8 / 0.7)
    assert ab.loc["steps 1-2", "points"] == pytest.approx(10.0)
    assert list(ab["unchanged"]) == [False, False, False, True]  # the A/A control; the switched flush is a change
    assert list(ab["shared"]) == [False, False, True, True]  # started as the baseline's servers were
    # where the runs name their server starts, those tell: doublewrite's own servers, the flush on the baseline's
    starts = {"source baseline": "aaaaaaaaaaaa", "flush_log_at_trx_commit=0": "aaaaaaaaaaaa", "steps 1-2": "bbbbbbbbbbbb",
              "doublewrite off": "cccccccccccc"}
    w = pd.DataFrame(rows).assign(server_instance=lambda d: d["config"].map(starts) + d["series_name"].str[-2:])
    res = Results("versions", w, pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "this run")
    assert list(versions.ablation(res)["shared"]) == [False, False, True, False]


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(DbexpError, match="bad check_repeats 3: the run-length check runs in the main windows' "
                                         r"repeats, expected 0 to the repeats \(1\)"):
        CHAPTER.adjust(CHAPTER.scale("smoke", check_servers=["mysql:5.7@offline", "mysql:8.0@offline"],
                                     check_repeats=3), "smoke", Cpus(), {})
    with pytest.raises(DbexpError, match="unknown test 'point-queries'; valid are"):
        CHAPTER.adjust(CHAPTER.scale("smoke", tests=["point-queries"]), "smoke", Cpus(), {})
    with pytest.raises(DbexpError, match="bad ablation server 'postgres:18@offline'"):
        CHAPTER.adjust(CHAPTER.scale("smoke", servers=["postgres:18@offline"], ablation_servers=["postgres:18@offline"],
                                     ablation_repeats=2), "smoke", Cpus(), {})


def test_a_switched_setting_reads_back_as_set_in_the_servers_words():
    from dbexp.servers.options import same_setting  # what the precondition compares with

    assert same_setting("1", "ON") and same_setting("0", "OFF") and same_setting("2", "2")
    assert not same_setting("1", "OFF") and not same_setting("2", "0")


def test_every_statement_of_the_lua_script_is_declared_and_used():
    text = (LUA_DIR / "versions_tests.lua").read_text()
    shapes = set(re.findall(r'\["([a-z-]+)"\] = \{"', text))
    used = {dict(t.options)["statement"] for t in versions.TESTS.values() if t.script == "versions_tests"}
    assert used == shapes


def test_the_tests_are_the_harness_tests_with_their_sizes():
    t = versions.TESTS
    assert [n for n in t if n.startswith("random-points")] == [f"random-points.range={n}" for n in (10, 100, 1000)]
    assert dict(t["random-points.range=1000"].options) == {"statement": "random-points", "points": "1000"}
    assert dict(t["hot-points"].options)["points"] == "100" and "mid-table" in t["hot-points"].runs
    for name in ("points-covered-pk", "points-covered-si", "points-notcovered-pk", "points-notcovered-si"):
        assert dict(t[name].options)["points"] == "100"
    for kind in ("simple", "sum", "order", "distinct"):
        x = t[f"read-only-{kind}"]
        assert x.script == "oltp_read_only" and dict(x.options)["range_size"] == "1000"
        assert "point_selects" not in dict(x.options) and "skip_trx" not in dict(x.options)  # the stock transaction
        assert x.statements == {"select": 11, "begin": 1, "commit": 1}
    assert dict(t["read-only-count"].options) == {"statement": "read-only-count", "range_size": "1000"}
    text = (LUA_DIR / "versions_tests.lua").read_text()
    assert '"SELECT count(c) FROM sbtest1 WHERE id BETWEEN ? AND ?"' in text
    assert '"UPDATE sbtest1 SET c = ? WHERE id = 1"' in text and '"UPDATE sbtest1 SET c = ? WHERE id IN (%s)"' in text
    assert dict(t["update-inlist"].options)["points"] == "10"  # run.sh gives it no --random-points: its default
    assert set(versions.HEADLINE) <= set(t) and 12 <= len(versions.HEADLINE) <= 15
    assert {x.group for x in t.values()} == set(versions.GROUPS)


def _wide(qps: dict[str, list[float]], test: str = "point-query") -> pd.DataFrame:
    rows = []
    for server, values in qps.items():
        name, _, role = server.partition("|")
        for repeat, q in enumerate(values):
            rows.append({"series_name": name, "flavor": name.split()[0], "test": test, "role": role or "baseline",
                         "length": 1, "config": "", "repeat": repeat, "qps_common": q, "cpu_per_op_common_us": 1e6 / q,
                         "cs_per_op": 1.0, "vcs_per_op": 0.5, "pool_reads": 0.0, "run_id": f"{server}{repeat}",
                         "workload": {"duration_s": 4, "table_size": 1000}, "threads": 1, "servers_at_once": 3,
                         "common_s": 2.8})
    return pd.DataFrame(rows)


def test_ratios_are_paired_by_window_against_the_base_and_the_previous_version():
    rng = np.random.default_rng(1)
    drift = 1 + 0.2 * rng.standard_normal(6)  # the machine's speed, shared by every server of a window
    w = _wide({"mysql 5.7.22": list(1000 * drift), "mysql 5.7.22|twin": list(1000 * drift),
               "mysql 8.0.15": list(800 * drift), "mysql 9.7.4": list(760 * drift)})
    res = Results("versions", w, pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "this run")
    r = versions.ratios(res)
    q = r[r["value"] == "QPS"].set_index(["view", "server"])
    assert q.loc[("base", "mysql 8.0.15"), "ratio"] == pytest.approx(0.8)
    assert q.loc[("base", "mysql 8.0.15"), "half_width"] == pytest.approx(0, abs=1e-9)  # drift cancels in pairs
    assert q.loc[("previous", "mysql 9.7.4"), "ratio"] == pytest.approx(0.95)
    assert q.loc[("A/A control", "mysql 5.7.22 (twin)"), "ratio"] == pytest.approx(1.0)
    s = versions.summary(res, "base")
    assert set(s["server"]) == {"mysql 8.0.15", "mysql 9.7.4"} and (s["tests"] == 1).all()
    assert versions.resolution(res)["within"] == 3  # 8.0 against 5.7 (base and previous alike, once), 9.7 against both
    claims = versions.claims(res)
    assert "verdict" in claims.columns and claims["verdict"].str.len().min() > 0
    assert claims["id"].str.len().min() > 0  # every row names the ledger entries it tests


def test_the_page_renders_before_anything_is_published(tmp_path):
    res = CHAPTER.run("default", run=False, root=tmp_path)
    assert res.source == "no published results yet" and res.wide.empty
    assert "No results" in versions.sentence(res, "findings")
    assert all(v for v in versions.claims(res)["verdict"])


def test_the_regression_sources_step_gaps_follow_from_its_tps():
    from dbexp.experiments import ledger as source
    from dbexp.chapters.versions import regression

    for step, printed in enumerate(source.PRINTED_STEP_GAPS):
        assert round(source.step_gap(step) - 1, 3) == printed
    assert regression.source_gap("steps 1-3") == pytest.approx(109_044 / 128_140)
    assert regression.source_gap("binlog off") == pytest.approx(88_379 / 116_588)  # its independent table
    assert regression.source_gap("latin1") is None


def test_the_steps_are_not_testable_where_step_1_has_no_option_and_io_bound_claims_are_not_testable():
    from types import SimpleNamespace

    import pandas as pd

    import importlib

    vc = importlib.import_module("dbexp.chapters.versions.claims")

    wide = pd.DataFrame({"series_name": ["mysql 5.7.22", "mysql 8.0.15", "mysql 9.7.4"],
                         "settings_effective": ['{"innodb_buffer_pool_size": "1"}', '{"innodb_buffer_pool_size": "1"}',
                                                '{"innodb_log_writer_threads": "ON"}']})
    res = SimpleNamespace(wide=wide)
    ab = pd.DataFrame({"config": ["steps 1-5"] * 2, "old": ["mysql 5.7.22"] * 2,
                       "new": ["mysql 8.0.15", "mysql 9.7.4"], "gap": [0.76, 0.945], "gap_low": [0.75, 0.923],
                       "gap_high": [0.77, 0.968], "windows": [5, 5], "dof": [4, 4]})
    row = vc._steps_row(res, ab, "steps 1-5", 0.969, "claim", "source", "here", "steps-close-to-3-percent")
    # the claim is about 8.0's gap: 8.0.15 cannot take step 1; 9.7.4's gap is shown beside, not judged
    assert row.verdict.startswith("not testable here (step 1 turns innodb_log_writer_threads off")
    assert "9.7.4 / 5.7.22 0.945" in row.measured and "9.7.4" not in row.verdict
    assert row.ids == ("steps-close-to-3-percent",)
    assert vc._io_bound(None).startswith("not testable here (the source's runs were IO-bound")


def test_a_saved_data_directory_is_named_by_image_size_and_variant_in_safe_characters():
    from types import SimpleNamespace

    from dbexp.chapters.versions import datadir
    from dbexp.workloads.sysbench import Workload

    server = SimpleNamespace(image=SimpleNamespace(id="sha256:271b575dba47da97aaaa"),
                             build=SimpleNamespace(flavor="mariadb", spec="mariadb:11.8@offline"),
                             version="11.8.9-MariaDB-4 from Debian")
    wl = Workload("oltp_point_select", 1, 5, 1, 1_000_000)
    name = datadir.template_name(server, wl, "character_set_server=latin1")
    assert name == ("mariadb-11.8.9-MariaDB-4_from_Debian-271b575dba47da97-1x1000000-r1-"
                    "character_set_server_latin1.tar")
    with pytest.raises(DbexpError, match="no image id"):
        datadir.template_name(SimpleNamespace(**{**vars(server), "image": SimpleNamespace(id="")}), wl)


def test_the_counted_part_counts_every_test_of_a_server_on_one_start_of_two():
    sc = CHAPTER.adjust(CHAPTER.scale("default"), "default", Cpus(), {})
    part = CHAPTER.design(sc, Cpus())[0]
    assert part.repeats == 1 and part.instances == 1
    assert {p.server.spec for p in part.points} == set(sc.counted_servers) >= set(MYSQL) | {"postgres:12@offline",
                                                                                          "postgres:18@offline"}
    assert {"point-query", "update-nonindex"} <= set(sc.counted_tests)
    for spec in sc.counted_servers:  # two separately started servers, each a group that counts every test in order
        for start in (0, 1):
            ps = [p for p in part.points if p.server.spec == spec and p.params.instance == start]
            assert {p.group for p in ps} == {f"versions counted {spec} #{start}"}
            assert len({p.server.key() for p in ps}) == 1 and [p.params.test for p in ps] == list(sc.counted_tests)
        assert len({p.server.key() for p in part.points if p.server.spec == spec}) == 2
    # the walk: every start's tests in the scale's order (a read after a write would find the write's work)
    from dbexp.experiments.sweep import shuffled
    walk = shuffled(part.points, CHAPTER.name, 0)
    for group in {p.group for p in part.points}:
        assert [p.params.test for p in walk if p.group == group] == list(sc.counted_tests)
    p = part.points[0]
    assert p.server.under == "callgrind" and p.params.role == "counted" and p.params.events == sc.counted_events
    assert p.workload.threads == 1 and dict(p.workload.options)["rand-seed"] == "1"
    assert p.workload.table_size == (sc.counted_table_size or sc.table_size) and not p.together
    assert p.server.settings["innodb_adaptive_hash_index"] == "OFF"  # the main windows' baseline settings
    assert not CHAPTER.timed(p) and CHAPTER.timed(CHAPTER.design(sc, Cpus())[1].points[0])
    smoke = CHAPTER.adjust(CHAPTER.scale("smoke"), "smoke", Cpus(), {})
    assert smoke.counted_servers == ("postgres:12@offline",)  # MySQL's counts: tests/test_callgrind.py, readview
    small = CHAPTER.scale("smoke", counted_servers=[], counted_table_size=500, counted_sim=True)
    assert CHAPTER.design(small, Cpus())[0].points == []
    sim = CHAPTER.design(CHAPTER.scale("smoke", counted_table_size=500, counted_sim=True), Cpus())[0].points
    assert {p.server.under for p in sim} == {"callgrind-sim"} and {p.workload.table_size for p in sim} == {500}
    with pytest.raises(DbexpError, match="unknown test"):
        CHAPTER.adjust(CHAPTER.scale("smoke", counted_tests=["nope"]), "smoke", Cpus(), {})
    with pytest.raises(DbexpError, match="counted_events"):
        CHAPTER.adjust(CHAPTER.scale("smoke", counted_events=0), "smoke", Cpus(), {})


def _counted(counts: dict[tuple[str, str], list[float]], functions: dict[str, dict[str, float]] | None = None):
    """Counted runs (role 'counted'), one per server start: {(server, test): [count on start 1, start 2]}, and the
    counters of each server's runs: {server: {function label: inclusive instructions per statement}}."""
    rows, counters = [], []
    for (server, test), values in counts.items():
        for i, v in enumerate(values):
            rid = f"{server}-{test}-{i}"
            rows.append({"series_name": server, "flavor": server.split()[0], "test": test, "role": "counted",
                         "length": 1, "config": "callgrind", "repeat": i, "instance": i, "run_id": rid,
                         "point_key": f"{server}-{test}", "spec": server, "version": server.split()[1],
                         "server_instance": f"c{server}{i}", "workload": {"script": "x", "table_size": 1000},
                         "instructions_per_op": v, "valgrind_start_s": 20.0 if i == 0 else np.nan,
                         "counted_warm_s": 4.0, "count_ops_per_s": 1000.0, "count_s": 3.0, "ops_counted": 100.0,
                         "instructions_counted": 100.0 * v})
            for fn, per in (functions or {}).get(server, {}).items():
                counters.append({"run_id": rid, "source": "callgrind_inclusive", "name": fn, "before": 0.0,
                                 "after": per * 100, "delta": per * 100})
                counters.append({"run_id": rid, "source": "callgrind_calls", "name": fn, "before": 0.0,
                                 "after": 100.0, "delta": 100.0})
    return pd.DataFrame(rows), pd.DataFrame(counters)


def test_counts_agree_per_point_and_split_a_relative_qps_into_work_and_time_per_instruction():
    rng = np.random.default_rng(2)
    drift = 1 + 0.1 * rng.standard_normal(6)
    timed = _wide({"mysql 5.7.22": list(1000 * drift), "mysql 8.0.15": list(800 * drift),
                   "mysql 9.7.4": list(760 * drift)})
    c, counters = _counted({("mysql 5.7.22", "point-query"): [100_000, 100_100],
                            ("mysql 8.0.15", "point-query"): [120_000, 120_000],
                            ("mysql 9.7.4", "point-query"): [150_000, 153_000]},
                           {"mysql 5.7.22": {"do_command(THD*) (mysqld)": 100_000, "row_search_mvcc(unsigned char*) (mysqld)": 30_000},
                            "mysql 8.0.15": {"do_command(THD*) (mysqld)": 120_000, "row_search_mvcc(unsigned char*, int) (mysqld)": 31_000,
                                             "Query_expression::optimize(THD*) (mysqld)": 15_000},
                            "mysql 9.7.4": {"do_command(THD*) (mysqld)": 150_000}})
    res = Results("versions", pd.concat([timed, c], ignore_index=True), pd.DataFrame(), counters, pd.DataFrame(),
                  "this run")
    p = versions.counted_points(res).set_index("server")
    assert p.loc["mysql 5.7.22", "agree"] and p.loc["mysql 5.7.22", "spread"] == pytest.approx(100 / 100_050)
    assert not p.loc["mysql 9.7.4", "agree"]  # 2% apart: not read as a cost
    assert p.loc["mysql 8.0.15", "count_1"] == 120_000 and p.loc["mysql 8.0.15", "start_s"] == 20.0
    r = versions.instruction_ratios(res).set_index(["server", "against"])
    x = r.loc[("mysql 8.0.15", "mysql 5.7.22")]
    assert x["ratio"] == pytest.approx(120_000 / 100_050) and x["low"] == pytest.approx(120_000 / 100_100)
    assert x["qps"] == pytest.approx(0.8) and x["agree"]
    # the time per statement (1 / 0.8) is the work (1.2) times the time per instruction
    assert x["per_instruction"] * x["ratio"] == pytest.approx(1 / 0.8)
    assert r.loc[("mysql 9.7.4", "mysql 8.0.15"), "view"] == "previous" and not r.loc[("mysql 9.7.4", "mysql 8.0.15"), "agree"]
    assert len(r) == 3  # 8.0 / 5.7, 9.7 / 5.7, 9.7 / 8.0
    fm = versions.functions_moved(res)
    first = fm[(fm["server"] == "mysql 8.0.15")].set_index("function")
    assert first.index[0] == "do_command" and first.loc["do_command", "moved"] == pytest.approx(20_000)
    assert first.loc["row_search_mvcc", "moved"] == pytest.approx(1_000)  # one name across changed signatures
    # named in one version's stored top only (renamed, new, or below the other's): not ranked as a move
    assert "Query_expression::optimize" not in first.index
    text = versions.sentence(res, "counted")
    assert "3 points" in text and "2 of 3 agree" in text and "1.199x the instructions" in text
    assert "0.800x the QPS" in text and "9.7.4 over" not in text  # each flavor's largest move of counts that agree
    from dbexp.chapters.versions.counting import consecutive_table

    table = consecutive_table(res).set_index("test")  # each version over the one before it, the counts' '*' kept
    assert list(table.columns) == ["MySQL 8.0.15 / 5.7.22", "MySQL 9.7.4 / 8.0.15"]
    assert table.loc["point-query", "MySQL 8.0.15 / 5.7.22"] == "1.199 / 0.800"
    assert table.loc["point-query", "MySQL 9.7.4 / 8.0.15"] == "1.262 / 0.950*"
    found = versions.sentence(res, "findings")  # the findings split the regression: work, and time per instruction
    assert "8.0.15 / 5.7.22 executes 1.199x the instructions and does 0.800x" in found
    assert "9.7.4 / 8.0.15 executes" not in found  # its starts' counts do not agree
    # the counted runs are no window: the timed analysis does not see them
    assert set(versions.statements_check(res)["run_id"]) == set(timed["run_id"])
    assert len(versions.counted_pace(res)) == 3
    # the default's counted part at this pace: per MySQL start a native start, 20 s under valgrind, the warm-up
    # (4 s per 1,000 rows) at the default's rows and each test's count (3 s per 100 statements) at its events
    from dbexp.chapters.versions import counting
    from dbexp.chapters.versions.chapter import MYSQL as MYSQL_SPECS

    d = CHAPTER.scales["default"]
    per_start = 10 + 20 + 4 / 1000 * (d.counted_table_size or d.table_size) + len(d.counted_tests) * 3 / 100 * d.counted_events
    mysql = len([s for s in d.counted_servers if s in MYSQL_SPECS])
    assert counting.default_minutes(res) == pytest.approx(2 * mysql * per_start / 60)


def test_the_counted_section_says_so_where_nothing_was_counted(tmp_path):
    res = CHAPTER.run("default", run=False, root=tmp_path)
    assert versions.counted_points(res).empty and versions.instruction_ratios(res).empty
    assert "Not counted in these results" in versions.sentence(res, "counted")
    timed = Results("versions", _wide({"mysql 5.7.22": [1000.0, 1010.0], "mysql 8.0.15": [800.0, 790.0]}),
                    pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "this run")
    assert "Not counted in these results" in versions.sentence(timed, "counted")
    assert versions.functions_moved(timed).empty


def test_servers_named_without_counted_servers_count_only_those_of_them_the_scale_counts():
    overrides = {"servers": ["mysql:8.0@offline"]}
    sc = CHAPTER.adjust(CHAPTER.scale("smoke", **overrides), "smoke", Cpus(), overrides)
    assert sc.counted_servers == ()
    overrides = {"servers": ["postgres:12@offline"]}
    sc = CHAPTER.adjust(CHAPTER.scale("smoke", **overrides), "smoke", Cpus(), overrides)
    assert sc.counted_servers == ("postgres:12@offline",)
    assert CHAPTER.adjust(CHAPTER.scale("smoke"), "smoke", Cpus(), {}).counted_servers == \
        CHAPTER.scale("smoke").counted_servers


def test_scans_take_turns_of_long_slices_counted_to_quiet_and_the_other_windows_are_what_they_were():
    """Issue 47: at a million rows a scan statement takes 0.3 to 1 s, a slice of 0.1 s held one and its rate was the
    slice's. Scan's windows: slices of 2 s, 2 rounds (4 s of each server's slices), each turn counted to its
    server's quiet, a --time that holds 2 rounds with a 1 s tail a turn past two slices and the edges; their point
    keys are new (slice and window in the parameters). Every other window's parameters, and so its point key, are
    the scale's slice and window_s of its turns, as before."""
    sc = CHAPTER.adjust(CHAPTER.scale("default"), "default", Cpus(), {})
    _, main, _, profile = CHAPTER.design(sc, Cpus())
    windows = {}
    for p in main.points + profile.points:
        windows.setdefault(p.together, []).append(p)
    seconds = {}
    for label, ps in windows.items():
        p = ps[0]
        if p.params.test == "scan":
            assert (p.params.slice_s, p.params.turns_s) == (2.0, 4.0)
            seconds[len(ps)] = p.workload.duration_s
            assert p.workload.duration_s >= EDGES_S + 2 * 2.0 + 2 * len(ps) * (2.0 + 1.0)
        else:
            factor = sc.long_factor if p.params.test in sc.long_tests else 1
            assert p.params.slice_s == sc.slice_s and p.params.turns_s == pytest.approx(sc.active_s * factor)
            assert p.workload.duration_s == window_s(sc.active_s * factor, len(ps), sc.slice_s)
    assert seconds == {3: 24, 4: 30, 5: 36}  # MariaDB (2 versions and the twin), MySQL, PostgreSQL
    assert turn_options("scan", sc.table_size) == {"start_s": 1.8, "to_quiet": True, "quiet_timeout_s": 5.0,
                                                   "quiet_poll_s": 0.02}
    assert turn_options("point-query", sc.table_size) == {"start_s": 0.3}
    assert turn_options("scan", 100_000)["start_s"] == pytest.approx(0.45)  # shorter on a smaller table
    # scan's keys are not the windows' of 0.1 s slices (a resumed publication measures them again)
    old = [dataclasses.replace(p, params=dataclasses.replace(p.params, slice_s=0.1, turns_s=sc.active_s),
                               workload=dataclasses.replace(p.workload, duration_s=window_s(sc.active_s, 5)))
           for p in windows["Postgres scan i0"]]
    assert not {p.key("versions") for p in old} & {p.key("versions") for p in windows["Postgres scan i0"]}


def test_a_cpu_per_query_claim_is_judged_on_the_counts_where_the_starts_agree_the_time_beside():
    """Issue 48: hot-points' "CPU per query grows by 23% from 5.7 to 8.0" read from the instructions counted on
    separately started servers where they agree (1.230: agrees), the timed cpu/o (1.25 here) shown beside; where the
    starts disagree, the row stays the timed one and says so."""
    rng = np.random.default_rng(3)
    drift = 1 + 0.05 * rng.standard_normal(6)
    timed = _wide({"mysql 5.7.22": list(1000 * drift), "mysql 8.0.15": list(800 * drift)}, test="hot-points")
    c, counters = _counted({("mysql 5.7.22", "hot-points"): [100_000, 100_000],
                            ("mysql 8.0.15", "hot-points"): [123_000, 123_010]})
    res = Results("versions", pd.concat([timed, c], ignore_index=True), pd.DataFrame(), counters, pd.DataFrame(),
                  "this run")
    row = versions.claims(res).set_index("id").loc["hot-points-cpu-5-7-to-8-0"]
    assert row["verdict"].startswith("agrees") and "the work counted; the time here, cpu/o: " in row["verdict"]
    assert row["measured here"].startswith("instructions per statement 8.0.15/5.7.22 1.230")
    assert "cpu/o" in row["measured here"] and row["witness_ok"]
    c, counters = _counted({("mysql 5.7.22", "hot-points"): [100_000, 100_000],
                            ("mysql 8.0.15", "hot-points"): [123_000, 130_000]})
    res = Results("versions", pd.concat([timed, c], ignore_index=True), pd.DataFrame(), counters, pd.DataFrame(),
                  "this run")
    row = versions.claims(res).set_index("id").loc["hot-points-cpu-5-7-to-8-0"]
    assert "the starts' counts do not agree" in row["measured here"] and "the work counted" not in row["verdict"]


def test_the_insert_cpu_claim_counted_says_cpu_once_beside_its_context_switches():
    rng = np.random.default_rng(4)
    drift = 1 + 0.05 * rng.standard_normal(6)
    timed = _wide({"mysql 5.7.22": list(1000 * drift), "mysql 8.0.15": list(700 * drift)}, test="insert")
    c, counters = _counted({("mysql 5.7.22", "insert"): [100_000, 100_000], ("mysql 8.0.15", "insert"): [136_000, 136_000]})
    res = Results("versions", pd.concat([timed, c], ignore_index=True), pd.DataFrame(), counters, pd.DataFrame(),
                  "this run")
    row = versions.claims(res).set_index("id").loc["insert-cpu-5-7-to-8-0"]
    assert row["measured here"].startswith("instructions per statement 8.0.15/5.7.22 1.360")
    assert row["measured here"].count("cpu/o") == 1 and "; cs/o " in row["measured here"]
    assert row["verdict"].startswith("CPU per insert: agrees")
