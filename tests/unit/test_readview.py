"""The readview chapter's design, engine parts, copy cost and probe parsing, with no server (what its
published data/ show is checked in tests/published/test_published_readview.py)."""

from __future__ import annotations

import numpy as np
import pytest

from dbexp.chapters import readview
from dbexp.errors import DbexpError


def test_readview_design_blocks_by_h_and_probes_where_a_symbol_is_exported():
    from dbexp.experiments.chapter import Cpus

    sc = readview.CHAPTER.scale("default")
    points = readview.CHAPTER.design(sc, Cpus("1", "0"))[0].points  # the timed part (the counted one: its own test)
    assert readview.CHAPTER.order == "shuffled"
    assert {p.block for p in points} == {f"H={h}" for h in sc.holders}
    maria = [p for p in points if p.server.spec.startswith("mariadb")]
    # MariaDB exports no view function: its probe runs are the server-side loop, on a server per H
    assert maria and any(p.params.probe for p in maria)
    assert {p.group for p in maria} == {f"readview {spec} H={h}" for h in sc.holders
                                        for spec in ("mariadb:10.11@offline", "mariadb:11.8@offline")}
    # MySQL 9.7 and MariaDB 11.8 beside the older ones; PostgreSQL 18 left out at default scale (the budget)
    specs = {p.server.spec for p in points}
    assert {"mysql:9.7@offline", "mariadb:11.8@offline"} <= specs and "postgres:18@offline" not in specs
    assert "postgres:18@offline" in readview.CHAPTER.scale("full").servers
    assert len({p.group for p in points if p.server.spec.startswith("mysql:8.0")}) == 1
    pg = [p for p in points if p.server.spec.startswith("postgres")]
    assert {p.params.mode for p in pg} == {"none", "prepared", "idle", "visibility", "mechanics"}
    assert pg[0].server.settings["max_prepared_transactions"] == str(max(sc.holders) + 10)
    # idle sessions are timed at the snapshot only, at 1,000
    idle = [p for p in pg if p.params.mode == "idle"]
    assert idle and all(p.params.probe for p in idle) and {p.params.holders for p in idle} == {1000}
    # the double latch at the largest H only, on the engines that have a trx-sys mutex
    latch = [p for p in points if p.params.trx_stmts]
    assert latch and all(p.server.spec.startswith(("mysql", "mariadb")) for p in latch)
    assert {p.params.holders for p in latch} == {max(sc.holders)}
    # three H above 0: two segments to test a straight line
    assert len([h for h in sc.holders if h]) >= 3
    assert len({p.key("readview") for p in points}) == len(points)


def test_each_engine_part_knows_what_its_views_copy_and_how_it_holds_transactions():
    from dbexp.chapters.readview.chapter import of_run, of_spec
    from dbexp.chapters.readview.engines import innodb, mariadb, postgres

    my, maria = of_spec("mysql:8.0@offline"), of_spec("mariadb:10.11@offline")
    pg12, pg14 = of_spec("postgres:12@offline"), of_spec("postgres:14@offline")
    assert type(my) is innodb.Views and type(maria) is mariadb.MariaDBViews and type(pg12) is postgres.Snapshots
    assert my.symbol == "_ZN4MVCC9view_openERP8ReadViewP5trx_t" and maria.symbol is None
    assert my.registry_shrinks and not maria.registry_shrinks and pg12.registry_shrinks
    assert (my.bytes_per_holder, maria.bytes_per_holder, pg12.bytes_per_holder, pg14.bytes_per_holder) == (8, 8, 12, 4)
    assert (pg12.family, pg14.family) == postgres.Snapshots.FAMILIES
    assert of_run("postgres", "18.4").family == postgres.Snapshots.FROM_14
    assert my.settings(100) == {"performance-schema-instrument": "wait/synch/mutex/innodb/trx_sys%=ON"}
    assert maria.settings(100) == {**my.settings(100), "performance_schema": "ON"}
    assert pg12.settings(100) == {"max_prepared_transactions": "110"}
    assert my.double_latch and not pg12.double_latch and pg12.idle_sessions and not my.idle_sessions
    assert my.latch_counters is not None and pg12.latch_counters is None
    # the double latch is counted on the global trx-sys mutex in every version (9.7's others apart)
    assert my.view_latch == maria.view_latch == innodb.VIEW_LATCH == "trx_sys_mutex" and pg12.view_latch is None
    assert of_spec("mysql:9.7@offline").symbol == my.symbol
    # where a snapshot records the completion count it was built at (checked on the lab's builds)
    offsets = {v: of_run("postgres", v).completion_count_offset
               for v in ("12.22", "13.23", "14.23", "15.18", "16.14", "17.10", "18.4")}
    assert offsets == {"12.22": None, "13.23": None, "14.23": 112, "15.18": 112, "16.14": 112, "17.10": 112,
                       "18.4": 96}
    assert my.completion_count_offset is None and maria.completion_count_offset is None


def test_the_copy_cost_leaves_the_call_out():
    """A slope over sizes: the call around each copy (hundreds of ns) goes to the intercept."""
    from dbexp.chapters.readview.chapter import copy_cost

    per_byte, call = copy_cost(repeats=50)
    # no speed is asserted (a loaded host copies slower: 0.36 ns per byte seen beside an image build); a
    # bigger copy costs more, and the fit keeps the call out of the slope
    assert np.isfinite(per_byte) and np.isfinite(call) and per_byte > 0


def test_split_probe_output_is_parsed_into_rebuilds_and_reuses():
    from dbexp.chapters.readview import chapter, snapshot_probe

    lines = ['{"type": "attached_probes", "data": {"probes": 5}}',
             '{"type": "map", "data": {"@calls": 200}}', '{"type": "map", "data": {"@ns": 2000000}}',
             '{"type": "map", "data": {"@reused_calls": 800}}', '{"type": "map", "data": {"@reused_ns": 1200000}}',
             '{"type": "map", "data": {"@out_calls": 10}}', '{"type": "map", "data": {"@out_ns": 5000000}}',
             '{"type": "map", "data": {"@count_min": 1000}}', '{"type": "map", "data": {"@count_max": 1190}}',
             '{"type": "hist", "data": {"@hist": [{"min": 8192, "max": 16383, "count": 200}]}}',
             '{"type": "hist", "data": {"@reused_hist": [{"min": 1024, "max": 2047, "count": 800}]}}']
    s = snapshot_probe.parse(lines)
    assert (s.rebuilt.calls, s.reused.calls, s.calls, s.counter_span) == (200, 800, 1010, 190)
    assert s.rebuilt_share == 0.2 and s.rebuilt.mean_ns == 10000 and s.reused.mean_ns == 1500
    m = chapter.view_measurements(s)
    assert m["view_calls"][0] == 1010 and m["view_rebuilt_share"][0] == 0.2
    assert m["view_ns_mean"][0] == 3200 and m["view_rebuilt_ns_mean"][0] == 10000
    assert m["view_ns_p50"][0] < 2048 < m["view_ns_p90"][0]  # the two histograms added
    assert m["view_counter_span"][0] == 190
    assert "uptr(arg0 + 112)" in snapshot_probe.script("/bin/postgres", "GetSnapshotData", 112)


def test_the_latch_leaves_out_runs_whose_prepared_transactions_were_not_there():
    import importlib

    import pandas as pd

    from dbexp.experiments.chapter import Results

    rc = importlib.import_module("dbexp.chapters.readview.claims")
    wide = pd.DataFrame({"series_name": ["mysql 9.7.4"] * 3 + ["mariadb 11.8.9"],
                         "holders": [10_000, 10_000, 0, 10_000], "mode": ["prepared", "prepared", "none", "prepared"],
                         "observed_prepared": [0.0, 10_000.0, 0.0, 0.0]})
    res = Results(experiment="readview", wide=wide, series=pd.DataFrame(), counters=pd.DataFrame(),
                  runs=pd.DataFrame(), source="constructed")
    kept, dropped = rc._held(res, {"mysql 9.7.4"})
    # the run at H = 10,000 that saw none is left out; the H = 0 run and the other server's are kept
    assert list(dropped.index) == [0] and list(kept.wide.index) == [1, 2, 3]
    kept, dropped = rc._held(res, set())
    assert dropped.empty and kept is res


def test_holding_sessions_leaves_a_subclass_s_other_holdings_alone(monkeypatch):
    """HolderPool.hold replaces only its sessions: readview's Holdings.close() also rolls back its prepared
    transactions, and hold() used to call it, so the first point on every server ran with none held (7
    published runs)."""
    from dbexp.workloads import sessions

    class Held:
        def __init__(self, server, n, mode):
            self.n, self.mode = n, mode

        def open(self):
            return self

        def close(self):
            pass

    monkeypatch.setattr(sessions, "HeldSessions", Held)
    closed = []

    class Pool(sessions.HolderPool):
        def close(self):
            closed.append("everything")
            super().close()

    pool = Pool(server=None)
    pool.hold(0, "idle")
    pool.hold(5, "active")
    assert closed == [] and pool.held.n == 5
    pool.close()
    assert closed == ["everything"] and pool.held is None


def _probe_results(view_ns: dict[int, list[float]], observed: dict[int, list[float]] | None = None):
    """Results of made-up probe runs of one InnoDB server (MySQL 8.0.15): at each H, one run per repeat with
    the given mean time per view call; ``observed``: the prepared transactions the server listed after each
    run (H by default)."""
    import pandas as pd

    from dbexp.experiments.chapter import Results

    rows = []
    for h, times in view_ns.items():
        for rep, t in enumerate(times):
            seen = (observed or {}).get(h, [h] * len(times))[rep]
            rows.append({"run_id": f"r{h}-{rep}", "repeat": rep, "flavor": "mysql", "version": "8.0.15",
                         "series_name": "mysql 8.0.15", "holders": h, "mode": "prepared" if h else "none",
                         "readers": 2, "trx_stmts": 0, "probe": True, "workload": {"duration_s": 2, "options": {}},
                         "server_cpu_s": 1.0, "reads": 1000.0, "total_time_s": 2.0, "view_calls": 1000.0,
                         "view_ns_mean": t, "observed_prepared": float(seen), "observed_sessions": 1.0,
                         "copy_slope_ns_per_byte": 0.05, "copy_call_ns": 300.0, "instance": rep % 2,
                         "server_cpus": "1"})
    wide = pd.DataFrame(rows)
    return Results("readview", wide, pd.DataFrame(), pd.DataFrame(), wide[["run_id"]], "this run")


def test_the_bend_is_paired_within_each_repeat():
    """Both segments go through a repeat's run at the middle H: their difference is taken per repeat (a t
    interval over the repeats' differences), not as two independent samples. A drift of the middle run
    that moves both segments' slopes in opposite directions cancels in the pairs."""
    from dbexp.experiments import stats

    mid = [1000 * 0.5 + d for d in (-120.0, 0.0, 150.0)]  # the middle H's runs drift apart
    res = _probe_results({0: [100.0] * 3, 1: [100.5] * 3, 1000: [100 + m for m in mid],
                          10000: [100 + 5000 + 0.5 * 9000 / 10 + d for d in (1.0, -2.0, 0.5)]})
    seg = readview.segments(res).iloc[0]
    piv = readview.tidy(res).pivot_table(index="repeat", columns="holders", values="view_ns_mean")
    low = (piv[1000] - piv[1]) / 999
    high = (piv[10000] - piv[1000]) / 9000
    assert (seg["difference"], seg["diff_low"], seg["diff_high"]) == stats.mean_ci(high - low)
    welch = stats.difference_ci(high, low)
    assert (seg["diff_high"] - seg["diff_low"]) != (welch[2] - welch[1])


def test_grows_linearly_needs_the_line_not_the_growth_alone():
    from dbexp.experiments import verdicts

    # a narrow bend: a line
    assert verdicts.grows_linearly((1.0, 0.8, 1.2), (0.1, -0.2, 0.3), 3).startswith("agrees (it grows, and the bend")
    # it grows, the bend's interval many times the slope: not resolved, never "agrees"
    v = verdicts.grows_linearly((0.63, 0.46, 0.79), (-0.09, -1.06, 0.88), 3)
    assert v.startswith("not resolved (it grows, resolved above 0, but the line is not") and "56 instead of 3" in v
    v = verdicts.grows_linearly((0.55, 0.40, 0.71), (0.33, -0.22, 0.89), 3)
    assert v.startswith("not resolved") and "the bend measured is itself beyond" in v
    # one repeat: no interval on the bend
    assert verdicts.grows_linearly((1.0, 0.8, 1.2), (0.1, float("nan"), float("nan"))).startswith("not resolved")
    # a resolved bend: concave or convex
    assert verdicts.grows_linearly((1.0, 0.8, 1.2), (-0.5, -0.7, -0.3)).startswith("disagrees (it grows, but concave")
    assert verdicts.grows_linearly((1.0, 0.8, 1.2), (0.5, 0.3, 0.7)).startswith("disagrees (it grows, but convex")
    # no growth resolved: the growth's verdict
    assert verdicts.grows_linearly((0.1, -0.1, 0.3), (0.0, -0.1, 0.1)).startswith("not resolved")


def test_a_view_s_witness_fails_where_the_server_did_not_list_its_holders():
    """The linear and copy rows judge only where every probe run counted calls of the view function and the
    server listed the H prepared transactions after it; a run that lost its holders fails the witness, and
    the verdict says so instead of agreeing."""
    from dbexp.chapters.readview.claims import copy_row, linear_row
    from dbexp.experiments import verdicts

    times = {0: [7000.0] * 3, 1: [7000.5] * 3, 1000: [7500.0, 7510.0, 7490.0], 10000: [12500.0, 12520.0, 12480.0]}
    good = _probe_results(times)
    row = linear_row(good, readview.tidy(good))
    assert row.ids == ("view-cost-linear",) and row.witness.ok
    assert "MVCC::view_open called 1.00 times per read in 12 of 12 probe runs" in row.witness.what
    assert verdicts.judged(verdicts.witnessed(row.verdict, row.witness))
    lost = _probe_results(times, {10000: [10000, 0, 10000]})
    for make in (linear_row, copy_row):
        row = make(lost, readview.tidy(lost))
        assert not row.witness.ok and "listing the H prepared transactions after 11 of 12" in row.witness.what
        assert row.verdict.startswith("not measured here (witness failed: "), row.verdict
        assert not verdicts.table([row])["witness_ok"].iloc[0]


def test_the_mariadb_repeats_name_the_instances_they_ran_on():
    from dbexp.chapters.readview.claims import _on_servers

    assert _on_servers({"repeats": 3, "instances": [0, 0, 1]}) == (
        "on instances 0, 0 and 1 in run order, 2 servers (a server of its own per instance and H)")
    assert _on_servers({"repeats": 2, "instances": [1, 1]}).startswith("on instance 1 alone, back to back")
    assert _on_servers({"repeats": 3, "instances": [], "servers": 1}) == "back to back on one server"


def _visibility_results(extra: dict[int, list[float]], ordered: bool = True, chapter_family="mysql"):
    """Results of made-up visibility runs of one server: at each H, one run per repeat with the given ns per row
    the check adds; ``ordered``: whether the old rows' writer, the holders and the new rows' writer were listed in
    that order."""
    import pandas as pd

    from dbexp.experiments.chapter import Results

    flavor, version = ("mysql", "8.0.15") if chapter_family == "mysql" else ("postgres", "14.23")
    rows = []
    for h, xs in extra.items():
        for rep, x in enumerate(xs):
            rows.append({"run_id": f"v{h}-{rep}", "sweep_id": "s", "repeat": rep, "flavor": flavor, "version": version,
                         "series_name": f"{flavor} {version}", "holders": h, "mode": "visibility", "readers": 2,
                         "trx_stmts": 0, "probe": False, "workload": {"duration_s": 1, "options": {}},
                         "server_cpu_s": None, "reads": None, "total_time_s": None, "vis_extra_ns_per_row": x,
                         "vis_old_ns_per_row": 50.0, "vis_rows": 4000.0, "vis_scans": 200.0, "vis_sums_ok": 200.0,
                         "vis_held": float(h), "vis_ids_ordered": float(ordered), "server_cpus": "1",
                         "observed_prepared": float(h), "instance": 0})
    wide = pd.DataFrame(rows)
    return Results("readview", wide, pd.DataFrame(), pd.DataFrame(), wide[["run_id"]], "this run")


def test_the_visibility_check_is_judged_by_its_growth_between_two_h_with_its_witness():
    """The binary-search claim agrees where the check's cost per row grows from the smaller H to the larger
    (paired within repeat), and only where the runs stored their rows where the claim needs them (the old rows'
    writer older than every holder, the new rows' younger): a run with them out of order fails the witness."""
    from dbexp.chapters.readview.claims import pg_visibility_row, visibility_row
    from dbexp.experiments import verdicts

    res = _visibility_results({1000: [20.0, 21.0, 19.5], 10000: [27.0, 28.5, 27.5]})
    g = readview.visibility_growth(res).iloc[0]
    assert (g["low_h"], g["high_h"], g["repeats"]) == (1000, 10000, 3) and g["low"] > 0
    row = visibility_row(res, readview.tidy(res))
    assert row.ids == ("binary-search-visibility",) and row.witness.ok
    assert row.verdict.startswith("agrees") and "per row" in row.measured
    # PostgreSQL's extension reads only PostgreSQL's runs: none here
    assert pg_visibility_row(res, readview.tidy(res)).verdict.startswith(verdicts.NOT_MEASURED)
    bad = _visibility_results({1000: [20.0, 21.0, 19.5], 10000: [27.0, 28.5, 27.5]}, ordered=False)
    row = visibility_row(bad, readview.tidy(bad))
    assert not row.witness.ok and row.verdict.startswith("not measured here (witness failed: ")
    # the visibility runs are no readers' runs: no throughput, CPU or probe table reads them
    assert readview.analysis.throughput(res).empty and readview.by_h(res, "cpu_per_read_us").empty


def _mechanics_results(counts: dict):
    import pandas as pd

    from dbexp.experiments.chapter import Results

    base = {"run_id": "m0", "sweep_id": "s", "repeat": 0, "flavor": "mysql", "version": "8.0.15",
            "series_name": "mysql 8.0.15", "holders": 0, "mode": "mechanics", "readers": 2, "trx_stmts": 0,
            "probe": False, "workload": {"duration_s": 1, "options": {}}, "server_cpus": "1"}
    wide = pd.DataFrame([{**base, **{f"mech_{k}": float(v) for k, v in counts.items()}}])
    return Results("readview", wide, pd.DataFrame(), pd.DataFrame(), wide[["run_id"]], "this run")


def test_when_the_snapshot_and_the_id_are_taken_is_counted_and_the_control_is_the_witness():
    from dbexp.chapters.readview.claims import snapshot_row, writers_row, xid_row
    from dbexp.chapters.readview.mechanics import COUNTS

    full = dict.fromkeys(COUNTS, 8)
    seen = {**full, "control_seen": 0, "snapshot_read": 0, "writer_listed": 0, "only_writers_listed": 0}
    res = _mechanics_results(seen)
    row = snapshot_row(res)
    assert row.witness.ok and row.verdict.startswith("disagrees (a plain BEGIN takes no snapshot")
    assert "seen by that read in 8 of 8 trials; with the snapshot taken at BEGIN, in 0 of 8" in row.measured
    assert xid_row(res).verdict.startswith("disagrees (the id is taken at the transaction's first write")
    assert writers_row(res).verdict == "agrees" and writers_row(res).witness.ok
    # a control that saw the row too: the trial cannot tell BEGIN from the first read, so no verdict stands
    blind = _mechanics_results({**seen, "control_seen": 8})
    assert snapshot_row(blind).verdict.startswith("not measured here (witness failed: ")
    # no mechanics runs: not measured
    assert snapshot_row(_visibility_results({1000: [1.0]})).verdict.startswith("not measured at this scale")


def test_the_default_design_adds_visibility_and_mechanics_runs_to_the_blocks():
    from dbexp.experiments.chapter import Cpus

    sc = readview.CHAPTER.scale("default")
    points = [p for part in readview.CHAPTER.design(sc, Cpus("1", "0")) for p in part.points]
    vis = [p for p in points if p.params.mode == "visibility"]
    mech = [p for p in points if p.params.mode == "mechanics"]
    assert {p.params.holders for p in vis} == set(sc.visibility) == {1000, 10000}
    assert {p.server.spec for p in vis} == {p.server.spec for p in mech} == set(sc.servers)
    assert all(p.block == f"H={p.params.holders}" and p.workload.duration_s == sc.visibility_s for p in vis)
    assert all(p.params.holders == 0 and p.block == "H=0" for p in mech)
    assert not readview.CHAPTER.timed(mech[0]) and readview.CHAPTER.timed(vis[0])
    with pytest.raises(DbexpError, match="bad visibility H 5"):
        readview.CHAPTER.design(readview.CHAPTER.scale("default", visibility=[5]), Cpus("1", "0"))


def test_no_code_cell_of_the_page_shows_its_code():
    """Every code cell of the notebook hides its input (remove-input, remove-cell, or the parameters cell, which
    the book removes): a reader sees outputs, never code (issue 45)."""
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / "readview.ipynb").read_text())
    shown = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
             and not {"remove-input", "remove-cell", "parameters"} & set(c.get("metadata", {}).get("tags", []))]
    assert not shown, f"code cells shown on the page: {shown}"
