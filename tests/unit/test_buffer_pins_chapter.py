"""The buffer_pins chapter with no server: its design from the catalog's pinbench builds, its one-line
errors, the SQL of a timed call, the probe's script and its parsing of bpftrace's output, and the curve's
ratios and verdicts on constructed runs (its ledger against the source's text: test_ledgers.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dbexp.chapters import buffer_pins as bp
from dbexp.chapters.buffer_pins import analysis, pin_probe
from dbexp.chapters.buffer_pins.chapter import pinbench_builds, probed
from dbexp.chapters.buffer_pins.measure import CurvePoint, PinPoint, call_sql
from dbexp.errors import DbexpError
from dbexp.experiments.chapter import Cpus, Results


def test_the_servers_are_the_catalogs_pinbench_builds_oldest_first():
    builds = pinbench_builds()
    majors = [int(b.major) for b in builds]
    assert majors == sorted(majors) and len(majors) >= 5 and 19 in majors
    assert bp.DEFAULT_SERVERS == tuple(b.spec for b in builds)
    # the npm builds keep their symbols (pins counted there); Debian's 19 is stripped
    assert [probed(s) for s in bp.DEFAULT_SERVERS] == [m < 19 for m in majors]


def test_default_design_has_every_curve_and_pins_where_symbols_are():
    sc = bp.CHAPTER.scale("default")
    parts = bp.CHAPTER.design(sc, Cpus())
    curve, pins, array = parts
    # the two builds of one source whose arrays differ: both kinds in random order, both sides of 8 and of 32
    assert {p.server.spec for p in array.points} == set(sc.array_servers) and len(sc.array_servers) == 2
    assert {8, 9, 32, 33} <= set(array.points[0].params.ns)
    assert (curve.repeats, curve.instances) == (sc.repeats, sc.instances) and sc.instances >= 2
    kinds = {(p.server.spec, p.params.kind, p.params.pattern) for p in curve.points}
    # hold_cold in random order only: the cold walk makes the other blocks' order moot
    assert len(kinds) == len(sc.servers) * (3 * 2 + 1)
    assert all(p.params.ns == bp.NS for p in curve.points) and {8, 9} <= set(bp.NS)
    specs = {p.server.spec for p in pins.points}
    assert specs == {s for s in sc.servers if probed(s)}
    seq = [p.params for p in pins.points if p.params.shape == "seq_scan"]
    # read streams from 17 on: warm and cold at every eic; before, one warm run
    for p in pins.points:
        if p.params.shape == "seq_scan" and p.params.cold:
            assert p.params.executions == 1
    assert {(s.eic, s.cold) for s in seq} >= {(e, c) for e in sc.eics for c in (False, True)}
    assert all(p.server.settings["shared_buffers"] == "256MB" for p in curve.points + pins.points)


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(DbexpError, match="needs a build with the pinbench extension, not 'postgres:17@offline'"):
        bp.CHAPTER.adjust(bp.CHAPTER.scale("smoke", servers=["postgres:17@offline"]), "smoke", Cpus(), {})
    with pytest.raises(DbexpError, match="unknown curve kind 'warm'"):
        bp.CHAPTER.adjust(bp.CHAPTER.scale("smoke", kinds=["warm"]), "smoke", Cpus(), {})
    with pytest.raises(DbexpError, match="bad pattern 'zigzag'; valid are"):
        CurvePoint("cycle", "zigzag", (1,), 10, 1, 64, 0)
    with pytest.raises(DbexpError, match="unknown query shape 'hash_join'"):
        PinPoint("hash_join", 1, False, 1, 1000, "0")


def test_a_timed_call_names_its_function_and_arguments():
    p = CurvePoint("cycle", "random", (1, 100), 100_000, 3, 64, 256)
    assert call_sql(p, 100) == ("SELECT pinbench_cycle(%s::regclass, %s, %s, %s)", ("pinbench_blocks", 100, 1000, "random"))
    cold = CurvePoint("hold_cold", "random", (1,), 100_000, 3, 64, 256)
    assert call_sql(cold, 8)[1] == ("pinbench_blocks", 8, 64, 100_000 * 5 // 256, "random", False, 256)
    assert call_sql(CurvePoint("hold_lock", "sequential", (1,), 10, 1, 64, 0), 1)[1][5] is True
    assert p.blocks == 164


def test_the_probe_holds_in_one_backend_and_reads_bpftraces_maps(tmp_path):
    # a file that defines the unpin function under its 17-18 name stands in for the server binary
    text = pin_probe.SCRIPT.format(path="/x", backend=4242, offset=20, held_max=64, locks_max=16,
                                   other_locks="uprobe:/x:ConditionalLockBuffer", unpin="UnpinBufferNoOwner")
    assert text.count("/pid == 4242") == 5 and "(arg0 + 20)" in text
    lines = [json.dumps({"type": "attached_probes", "data": {"probes": 9}}),
             json.dumps({"type": "map", "data": {"@pins": 12}}), json.dumps({"type": "map", "data": {"@released": 12}}),
             json.dumps({"type": "map", "data": {"@lockcalls": 30}}),
             json.dumps({"type": "hist", "data": {"@held": [{"min": 1, "max": 1, "count": 9},
                                                            {"min": 2, "max": 2, "count": 3}]}}),
             json.dumps({"type": "hist", "data": {"@locks": [{"min": 0, "max": 0, "count": 2},
                                                             {"min": 16, "count": 10}]}})]
    c = pin_probe.counts(lines)
    assert (c.pins, c.released, c.lock_calls, c.unmatched) == (12, 12, 30, 0)
    assert c.held == {1: 9, 2: 3} and c.locks == {0: 2, 16: 10}


def _results(rows: list[dict], counters: pd.DataFrame | None = None) -> Results:
    """Constructed runs; each curve run's N as one round of calls in the series (as measure_curve keeps them)."""
    wide = pd.DataFrame(rows)
    series = pd.DataFrame([{"run_id": r["run_id"], "t": 0.0, "source": "pinbench", "name": k, "value": v}
                           for r in rows for k, v in r.items() if k.startswith(("ns_", "warm_"))],
                          columns=["run_id", "t", "source", "name", "value"])
    return Results("buffer_pins", wide, series, counters if counters is not None else pd.DataFrame(),
                   wide, "constructed")


def _curve_row(run: str, version: str, kind: str, pattern: str, instance: int, ns: dict[int, float]) -> dict:
    return {"run_id": run, "status": "ok", "spec": f"postgres:{version}+pinbench@offline", "version": version, "kind": kind, "pattern": pattern, "instance": instance,
            "shape": None, "ns": tuple(ns), **{f"ns_{n}": v for n, v in ns.items()}}


def test_the_curves_ratios_are_paired_within_runs_and_judged_against_the_sources_table():
    # two runs whose levels differ by 2x but whose 11/7 step is 1.5 in both: a paired ratio of exactly 1.5
    rows = [_curve_row("a", "17.10", "cycle", "random", 0, {1: 100, 7: 120, 11: 180, 10000: 300}),
            _curve_row("b", "17.10", "cycle", "random", 1, {1: 200, 7: 240, 11: 360, 10000: 600})]
    res = _results(rows)
    r, lo, hi, n = analysis.ratio(res, "17.10", "cycle", "random", analysis.STEP)
    assert (r, n) == (pytest.approx(1.5), 2) and lo == pytest.approx(1.5) and hi == pytest.approx(1.5)
    assert analysis.source_ratio("random", analysis.STEP) == pytest.approx(365.50 / 233.96)
    assert analysis.source_ratio("sequential", analysis.GROWTH) == pytest.approx(497.92 / 183.75)
    t = analysis.shape_table(res).iloc[0]
    assert t["growth"] == pytest.approx(3.0) and t["edge_pair"] == "8 -> 9" and np.isnan(t["edge"])
    row = bp.claims.claims(res).set_index(bp.claims.claims(res).index)
    step = row.iloc[0]
    assert "17.10 1.50 [1.50, 1.50]" in step["measured here"] and step["verdict"].startswith("agrees in direction, smaller")


def test_pin_histograms_pool_the_runs_and_judge_the_zero_to_two_claim():
    rows = [{"run_id": "p1", "status": "ok", "spec": "postgres:17.10+pinbench@offline", "version": "17.10", "kind": None, "shape": "point_select", "eic": 1,
             "cold": False, "pins_per_execution": 3.0, "others_le2_share": 1.0, "held_max": 1.0,
             "locked_pin_share": 1.0, "relocked_pin_share": 0.0, "blocks_read": 0.0, "executions": 100, "instance": 0}]
    counters = pd.DataFrame([{"run_id": "p1", "source": "held_at_pin", "name": "1", "before": 0, "after": 300, "delta": 300},
                             {"run_id": "p1", "source": "locks_per_pin", "name": "1", "before": 0, "after": 300,
                              "delta": 300}])
    res = _results(rows, counters)
    assert analysis.pooled_share(res, "held_at_pin", lambda v: v <= 3) == (300, 300)
    assert analysis.held_buckets(res).iloc[0]["held 1"] == "100.0%"
    text, verdict = bp.claims._zero_to_two(res)
    assert text.startswith("300 of 300 new pins") and verdict == "agrees (shapes and versions)"


def test_the_array_comparison_names_each_build_and_judges_32_over_8_where_only_32_keeps_every_pin():
    # the two builds' levels differ by 2x between runs; relative to each run's own N = 7 the 32-entry array
    # has no step at 19, the 8-entry one a 1.3x step
    rows = []
    for i, (entries, level, at19) in enumerate([(8, 100.0, 1.30), (8, 200.0, 1.31), (32, 100.0, 1.0), (32, 200.0, 1.01)]):
        rows.append({**_curve_row(f"r{i}", "18.6", "hold", "random", i % 2,
                                  {1: level, 7: level, 19: level * at19, 100: level * 1.4}),
                     "spec": f"postgres:18.6+pinbench-src{entries}@offline"})
    res = _results(rows)
    assert analysis.curve_runs(res).empty  # the array builds stay out of the released versions' curve
    t = analysis.array_table(res).set_index("n")
    assert (t.loc[19, "small"], t.loc[19, "big"]) == ("18.6, array 8", "18.6, array 32")
    assert t.loc[19, "ratio"] == pytest.approx((1.0 * 1.01) ** 0.5 / (1.30 * 1.31) ** 0.5, rel=0.01) and t.loc[19, "hi"] < 1
    assert t.loc[7, "ratio_text"] == "1 (the reference)" and t.loc[100, "ratio"] == pytest.approx(1.0)
    text, verdict = bp.claims._array(res)
    assert "N held: at 19, 0.77" in text and verdict.startswith("agrees")


def test_two_n_are_divided_within_a_round_so_a_level_that_moves_between_rounds_cancels():
    from dbexp.chapters.buffer_pins.measure import measure_curve  # noqa: F401 (the producer of these series)

    rows = [_curve_row("a", "17.10", "cycle", "random", 0, {7: 100.0, 11: 150.0})]
    res = _results(rows)
    # a second round at twice the level (the host slowed down), the same 1.5 step inside it
    extra = pd.DataFrame([{"run_id": "a", "t": 1.0, "source": "pinbench", "name": "ns_7", "value": 200.0},
                          {"run_id": "a", "t": 1.0, "source": "pinbench", "name": "ns_11", "value": 300.0}])
    res = Results(res.experiment, res.wide, pd.concat([res.series, extra]), res.counters, res.runs, res.source)
    r = analysis.round_ratios(res, "ns_11", "ns_7")
    assert r["ratio"].tolist() == [pytest.approx(1.5)]
