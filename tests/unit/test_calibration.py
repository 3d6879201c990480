"""The calibration chapter with no server: the flavors' parts (the series versions are compared
against, the sources' version claims with their numbers and conditions), the verdict helpers, the
ratios on constructed runs, the design's groups and its time at default scale (what its published
data/ show is checked in tests/published/test_published_calibration.py)."""

from __future__ import annotations

from dbexp.errors import DbexpError

import dataclasses

import pandas as pd
import pytest

from dbexp.chapters import calibration as cal
from dbexp.chapters.calibration.claims import qualified
from dbexp.chapters.calibration.chapter import PARTS
from dbexp.experiments import verdicts
from dbexp.experiments.chapter import Cpus, Results


def test_each_flavor_has_its_own_base_and_mariadb_not_mysqls_claims():
    assert {f: PARTS.part_for_name(f).base for f in ("mysql", "postgres", "mariadb")} == {
        "mysql": "5.7", "postgres": "12", "mariadb": "10.11"}
    assert PARTS.part_for_name("mariadb").claims == ()
    assert [len(PARTS.part_for_name(f).claims) for f in ("mysql", "postgres")] == [2, 1]


def test_the_sources_numbers_are_recomputed_from_their_text():
    qps, cpu = PARTS.part_for_name("mysql").claims
    assert cpu.figure == 1.23 and qps.figure == pytest.approx(1 / 1.23)
    assert "x 1/1.23 = 0.81" in qps.number and "+23%" in cpu.number
    for c in (qps, cpu):  # the source's versions, clients, cores and run length
        assert all(s in c.conditions for s in ("5.7.44", "8.0.44", "16 clients", "12 cores", "600 s"))
    pg, = PARTS.part_for_name("postgres").claims
    assert pg.figure is None and "IO-bound" in pg.untestable and "40 clients" in pg.conditions
    # each names the ledger entry its row tests (claims.yaml, tested there or not testable)
    from dbexp.experiments import claims_ledger

    ledger = {e["id"]: e["status"] for e in claims_ledger.ledger("calibration")}
    assert [c.ids for c in (qps, cpu, pg)] == [("point-5-7-to-8-0",), ("point-loss-is-cpu",), ("pg-point-similar",)]
    assert [ledger[c.ids[0]] for c in (qps, cpu, pg)] == ["tested", "tested", "not testable here"]


def test_against_tells_the_sources_number_apart_from_no_effect():
    assert verdicts.magnitude(0.943, 1.112, 1.23, 1.23).startswith("disagrees (smaller than claimed")  # spans 1, excludes +23%
    assert verdicts.magnitude(1.003, 1.130, 1.23, 1.23) == "agrees in direction, smaller"
    assert verdicts.magnitude(1.10, 1.30, 1.23, 1.23) == "agrees"
    assert verdicts.magnitude(0.861, 1.309, 0.813, 0.813).startswith("disagrees (smaller than claimed")
    assert verdicts.magnitude(0.80, 1.30, 0.813, 0.813).startswith("not resolved")
    assert qualified("agrees") == "agrees under this lab's conditions, not the source's"


def test_ratios_of_the_shared_design_pair_each_b_with_its_repeats_reference():
    rows = [{"part": "ratios", "variant": v, "flavor": "postgres", "version": "16.14", "sweep_id": "s", "repeat": r,
             "qps": 100.0 * f * (1 + 0.01 * r), "cpu_per_op_us": float("nan") if v == "hand" else 10.0 / f,
             "client_cpu_per_op_us": 5.0}
            for r in range(4) for v, f in (("reference", 1.0), ("hand", 1.0), ("bare", 0.98), ("unpinned", 1.6))]
    fake = Results("calibration", pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "test")
    rt = cal.ratio_table(fake).set_index("ratio")
    assert rt.loc[["harness", "container", "pinning"], "pairs"].tolist() == [4, 4, 4]
    assert rt.loc["pinning", "ratio_qps"] == pytest.approx(1 / 1.6)
    assert rt.loc["container", "ratio_qps"] == pytest.approx(1 / 0.98)
    cpu = cal.cpu_table(fake).set_index("ratio")
    assert cpu.loc["pinning", "ratio_cpu"] == pytest.approx(1.6) and "harness" not in cpu.index


def test_the_design_measures_the_ratios_beside_one_reference_and_checks_run_length():
    sc = cal.CHAPTER.scale("smoke")
    spread, ratios, sessions, settle, length = cal.CHAPTER.design(sc, Cpus())
    # the scan test beside the spread's workloads on every spread server (issue 44)
    assert len(spread.points) == (len(sc.workloads) + 1) * len(sc.servers) and spread.repeats == sc.repeats
    assert [p.params.variant for p in settle.points] == ["immediate", "settled"] and settle.repeats == sc.settle_repeats
    assert [p.params.variant for p in ratios.points] == ["reference", "hand", "bare", "unpinned"]
    assert [p.server_mode for p in ratios.points] == ["container", "container", "bare", "container"]
    assert [p.sample for p in ratios.points] == [True, False, True, True]
    assert [p.server.cpuset for p in ratios.points] == ["1", "1", "1", None]
    assert {p.group for p in ratios.points} == {"ratios postgres:16@offline"}
    assert [(p.params.sessions, p.sample) for p in sessions.points] == [(n, s) for n in sc.session_counts for s in (True, False)]
    assert sessions.points[0].server.settings["max_connections"] == str(max(sc.session_counts) + 100)
    # run length: smoke has no version claim with both its servers; postgres 16 checks its three ratios
    assert length.repeats == 1 and [p.params.variant for p in length.points] == list(cal.chapter.VARIANTS)
    assert {p.workload.duration_s for p in length.points} == {sc.length_factor * sc.ratio_duration_s}


def _part(parts, name):
    return next(p for p in parts if p.points and p.points[0].params.part == name)


def test_default_scale_checks_the_claims_servers_and_fits_its_budget():
    sc = cal.CHAPTER.scale("default")
    length = _part(cal.CHAPTER.design(sc, Cpus()), "length")
    checked = {(p.server.spec, p.params.variant) for p in length.points}
    assert {("mysql:5.7.22@offline", "reference"), ("postgres:12.22@offline", "reference"),
            ("postgres:18.4@offline", "reference"), ("mysql:8.0@offline", "reference"),
            ("mysql:8.0@offline", "unpinned"), ("postgres:16@offline", "hand")} <= checked
    assert ("mysql:8.0.15@offline", "reference") not in checked  # measured once, with the ratio server's runs
    assert {p.workload.duration_s for p in length.points} == {sc.length_factor * sc.duration_s} == {
        sc.length_factor * sc.ratio_duration_s}
    # at most 23 minutes by the estimate, which runs high: the publications of 2026-11-26 and 27 took 20.2 and 17.3
    # where it said 23.5 and 20.1 (0.86 of it): about 19 minutes with the scan test and the settle part (issue 44)
    assert cal.estimated_s(sc) <= 23 * 60


def test_cotenancy_windows_hold_the_server_and_n_neighbours_of_one_build():
    sc = cal.CHAPTER.adjust(cal.CHAPTER.scale("default"), "default", Cpus(), {})
    parts = cal.CHAPTER.design(sc, Cpus("1", "0"))
    co = _part(parts, "cotenancy")
    assert co.repeats == sc.cotenancy_repeats
    assert {p.group for p in co.points} == {"cotenancy"}  # the neighbours started once for every server
    assert len({p.server_key() for p in co.points}) == len(sc.cotenancy_servers) + max(sc.neighbours)
    for spec in sc.cotenancy_servers:
        mine = [p for p in co.points if p.params.variant == "subject" and p.server.spec == spec]
        mine = [p for p in co.points if p.together in {q.together for q in mine}]
        for n in sc.neighbours:
            window = [p for p in mine if p.params.neighbours == n]
            assert [p.params.variant for p in window] == ["subject"] + [f"neighbour {i + 1}" for i in range(n)]
            assert len({p.together for p in window}) == 1 and window[0].server.spec == spec
            assert {p.server.spec for p in window[1:]} <= {sc.neighbour_server}
            assert len({p.server_key() for p in window}) == n + 1  # every neighbour a server of its own
    spread = _part(parts, "spread")
    assert spread.instances == 2 and spread.repeats >= 2 * spread.instances


def test_bad_neighbour_counts_are_refused_in_one_line():
    with pytest.raises(DbexpError, match="bad neighbours -1"):
        cal.CHAPTER.adjust(cal.CHAPTER.scale("default", neighbours=[0, -1]), "default", Cpus(), {})


def test_variance_components_split_the_spread_between_instances_and_runs():
    rows = []
    for inst, level in ((0, 1000.0), (1, 1100.0)):
        for r, noise in enumerate((0.99, 1.01)):
            rows.append({"part": "spread", "script": "oltp_point_select", "flavor": "mysql", "version": "8.0.15",
                         "instance": inst, "repeat": 2 * r + inst, "qps": level * noise})
    res = Results("calibration", pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "test")
    vc = cal.analysis.variance_components(res)
    assert len(vc) == 1 and vc["runs"].iloc[0] == 4
    assert vc["between_instances_pct"].iloc[0] > 4 * vc["between_runs_pct"].iloc[0] > 0
    assert 90 < vc["instance_share_pct"].iloc[0] <= 100


def test_cotenancy_table_pairs_each_neighbour_count_with_the_server_alone_in_its_repeat():
    rows = []
    for rep in range(3):
        for n, cpu in ((0, 10.0), (2, 13.0)):
            rows.append({"part": "cotenancy", "variant": "subject", "flavor": "mysql", "version": "9.7.4",
                         "neighbours": n, "sweep_id": "s", "repeat": rep, "qps_common": 1000.0 / (1 + n),
                         "cpu_per_op_common_us": cpu * (1 + 0.01 * rep)})
    res = Results("calibration", pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "test")
    t = cal.analysis.cotenancy_table(res)
    two = t[t["neighbours"] == 2].iloc[0]
    assert two["cpu_ratio"] == pytest.approx(1.3) and two["pairs"] == 3
    assert two["qps_ratio"] == pytest.approx(1 / 3)


def test_a_version_claims_witness_holds_only_where_its_runs_ran_as_the_page_says():
    """The witness of a version claim reads back what its runs stored: the server's CPUs, its container, the
    servers under load beside it, its checked table, its reported version, per query what the server counted and,
    for a claim on CPU per query, where each CPU was read from. One run of another configuration fails it."""
    import pandas as pd

    from dbexp.chapters.calibration.claims import _version_witness
    from dbexp.experiments.chapter import Results

    qps, cpu = PARTS.part_for_name("mysql").claims
    runs = pd.DataFrame([{"run_id": f"r{i}", "flavor": "mysql", "version": v, "version_full": v, "server_cpus": "1",
                          "server_cpus_observed": "1", "client_cpus": "0", "server_kind": "container",
                          "active_servers": 1, "precondition_ok": True, "cpu_from_cgroup": 1.0,
                          "client_cpu_per_op_us": 20.0, "queries": 1000.0}
                         for i, v in enumerate(("5.7.22", "5.7.22", "8.0.15", "8.0.15"))])
    counters = pd.DataFrame([{"run_id": f"r{i}", "source": "status", "name": n, "delta": 1000.0}
                             for i in range(4) for n in ("Com_select", "Innodb_rows_read")])
    res = Results("calibration", runs, pd.DataFrame(), counters, runs[["run_id"]], "test")
    w = _version_witness(res, runs, cpu)
    assert w.ok and "per query the server counted 1.00 selects, 1.00 rows read" in w.what
    assert "the server's CPU read from its container's cgroup in 4 of 4" in w.what
    moved = runs.assign(server_cpus_observed=["1", "1", "0-1", "1"])  # one run's server not on its CPU
    assert not _version_witness(res, moved, qps).ok
    bare = runs.assign(cpu_from_cgroup=[1.0, 1.0, 1.0, 0.0])  # one server's CPU not read from its cgroup
    assert _version_witness(res, bare, qps).ok and not _version_witness(res, bare, cpu).ok


def _spread_runs(levels: dict[tuple[str, str], list[list[float]]], script: str = "oltp_point_select") -> list[dict]:
    """Made-up spread runs: per (flavor, version), per instance, its runs' QPS in run order."""
    rows = []
    for (flavor, version), instances in levels.items():
        for inst, qps in enumerate(instances):
            for r, q in enumerate(qps):
                rows.append({"run_id": f"{flavor}{version}{script}{inst}{r}", "part": "spread", "script": script,
                             "variant": None, "flavor": flavor, "version": version, "instance": inst,
                             "repeat": 2 * r + inst, "sweep_id": "s", "qps": q, "server_busy_pct": 99.0,
                             "started_at": pd.Timestamp("2026-12-01") + pd.Timedelta(seconds=10 * (2 * r + inst)),
                             "server_instance": f"{flavor}{version}-{inst}", "image_digest": f"sha:{flavor}{version}",
                             "workload": {"duration_s": 3, "table_size": 100000,
                                          "options": {"statement": "scan"} if script == "versions_tests" else {}}})
    return rows


def _res(rows) -> Results:
    return Results("calibration", pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "test")


def test_the_lab_s_own_a_a_reads_single_runs_as_the_source_reads_a_relative_qps():
    """One run on a server's second start over one on its first, each run in one pair: how often noise alone reads
    as a regression of 5% or more, with its exact interval (issue 44: calibration's own A/A is its tested claim)."""
    res = _res(_spread_runs({("mysql", "8.0.15"): [[1000.0, 1000.0], [900.0, 1010.0]],
                             ("postgres", "16.14"): [[1000.0, 980.0], [1020.0, 1000.0]]}))
    p = cal.aa_pairs(res)
    assert len(p) == 4 and p["apart"].all() and p["same_image"].all()
    s = cal.aa_summary(res)
    assert (s["n"], s["below"], s["above"]) == (4, 1, 0)
    assert s["below_ci"] == pytest.approx(cal.analysis.stats.proportion_ci(1, 4))
    # 1 of the 4 pairs beyond 5%, and its server's other pair within it: a single run's change that repeating removes
    assert (s["beyond"], s["gone"]) == (1, 1)


def test_the_a_a_intervals_are_fitted_on_the_other_servers_never_their_own():
    levels = {("postgres", v): [[1000.0 * (1 + 0.01 * k), 1010.0], [1005.0, 995.0 * (1 + 0.01 * k)]]
              for k, v in enumerate(("12.22", "14.23", "16.14", "18.4"))}
    ai = cal.aa_intervals(_res(_spread_runs(levels)))
    assert len(ai) == 4 and (ai["fitted_on"] == 3).all() and ai["holds"].all()
    assert (ai["low"] < ai["ratio"]).all() and (ai["ratio"] < ai["high"]).all()


def test_variance_components_are_pooled_per_flavor_with_their_degrees_of_freedom():
    """Issue 47: the between-instance variance pooled over a flavor's servers before it is truncated, with the
    Satterthwaite degrees of freedom of each level (stats.pooled_between)."""
    levels = {("postgres", v): [[1000.0, 1010.0], [1100.0, 1090.0]] for v in ("12.22", "16.14")}
    vc = cal.variance_components(_res(_spread_runs(levels))).iloc[0]
    assert (vc["servers"], vc["within_df"]) == (2, 4) and vc["between_df"] > 0
    assert vc["between_instances_pct"] > vc["between_runs_pct"] > 0 and vc["raw_pct"] > 0


def test_the_scan_test_s_variance_is_set_against_point_selects_with_an_f_interval():
    points = _spread_runs({("postgres", "16.14"): [[1000.0, 1010.0], [1005.0, 995.0]],
                           ("mysql", "8.0.15"): [[1000.0, 1010.0], [1005.0, 995.0]]})
    scans = _spread_runs({("postgres", "16.14"): [[50.0, 70.0], [40.0, 65.0]],
                          ("mysql", "8.0.15"): [[50.0, 51.0], [49.0, 50.0]]}, script="versions_tests")
    sv = cal.scan_variance(_res(points + scans)).set_index("flavor")
    assert sv.loc["postgres", "ratio"] > 1 and sv.loc["postgres", "low"] < sv.loc["postgres", "ratio"]
    assert sv.loc["mysql", "pg_ratio"] > 1  # PostgreSQL's scan against MySQL's
    assert sv.loc["postgres", "scan_df"] == 3 and sv.loc["postgres", "point_df"] == 3


def test_the_settle_part_sets_reads_after_a_wait_against_reads_at_once():
    rows = []
    for rep in range(4):
        for variant, q, backlog, wait in (("immediate", 1000.0 + 150 * (-1) ** rep, 4000.0, 0.0),
                                          ("settled", 1100.0 + 5 * (-1) ** rep, 50.0, 3.0)):
            rows.append({"part": "settle", "variant": variant, "flavor": "mysql", "version": "8.0.15", "sweep_id": "s",
                         "repeat": rep, "qps": q, "settle_backlog": backlog, "settle_wait_s": wait,
                         "settle_write_s": 2.0, "server_busy_pct": 99.0, "script": "oltp_point_select",
                         "workload": {"duration_s": 2, "table_size": 100000, "options": {}}})
    st = cal.settle_table(_res(rows)).iloc[0]
    assert st["ratio"] > 1 and st["immediate_cv"] > st["settled_cv"] and st["qps_ratio"] > 1
    assert (st["immediate_backlog"], st["settled_backlog"], st["wait_s"]) == (4000.0, 50.0, 3.0)


def test_default_scale_runs_the_scan_test_and_the_settle_part():
    sc = cal.CHAPTER.scale("default")
    parts = cal.CHAPTER.design(sc, Cpus())
    spread = _part(parts, "spread")
    scans = [p for p in spread.points if p.workload.script == "versions_tests"]
    assert {p.server.spec for p in scans} == set(sc.servers) and {p.workload.duration_s for p in scans} == {sc.scan_s}
    settle = _part(parts, "settle")
    assert {(p.server.spec, p.params.variant) for p in settle.points} == {
        (s, v) for s in sc.settle_servers for v in ("immediate", "settled")}


def test_no_code_cell_of_the_page_shows_its_code():
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / "calibration.ipynb").read_text())
    shown = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
             and not {"remove-input", "remove-cell", "parameters"} & set(c.get("metadata", {}).get("tags", []))]
    assert not shown, f"code cells shown on the page: {shown}"
