"""The buffer_pins chapter with no server: its design from the catalog's pinbench builds, its one-line
errors, the SQL of a timed call, the probe's script and its parsing of bpftrace's output, the curve's
ratios, the array builds' windows and the verdicts with their witnesses on constructed runs (its ledger against
the source's text: test_ledgers.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dbexp.chapters import buffer_pins as bp
from dbexp.chapters.buffer_pins import analysis, pin_probe
from dbexp.chapters.buffer_pins.chapter import pinbench_builds, probed
from dbexp.chapters.buffer_pins.measure import (HASH_PATTERNS, HASH_WITNESS, KEPT, WITNESS, CurvePoint, HashPoint,
                                                PinPoint, cache_kib, call_sql, timed_ops)
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
    curve, pins, array, count = parts
    assert {type(p.params).__name__ for p in count.points} == {"CountedPoint", "CountedQuery"}
    # the builds of one source whose arrays differ (8, 8 with every function aligned to 64 bytes, 32, 32 with no
    # linear search), one group, and one window per curve in which every build is measured: both sides of 8 and of 32
    assert len(sc.array_servers) == 4 and any(s.endswith("src32direct@offline") for s in sc.array_servers)
    assert any(s.endswith("src8aligned@offline") for s in sc.array_servers)
    assert {p.server.spec for p in array.points} == set(sc.array_servers)
    assert {p.group for p in array.points} == {"buffer_pins array"}
    windows = {}
    for p in array.points:
        windows.setdefault(p.together, set()).add(p.server.spec)
        assert p.together == f"array {p.params.kind} {p.params.pattern}"
    assert set(windows) == {f"array {k} {pt}" for k, pt in bp.chapter.ARRAY_KINDS} and "array fifo random" in windows
    assert all(specs == set(sc.array_servers) for specs in windows.values())
    assert {8, 9, 19, 32, 33} <= set(array.points[0].params.ns)
    # a window's points are neighbours in the walk (the chapter's order is the lab's abba), so they form one batch
    from dbexp.experiments.sweep import batches
    walk = [(p, 0) for p in array.points]
    assert [len(b) for b in batches(walk)] == [4] * len(windows)
    assert (curve.repeats, curve.instances) == (sc.repeats, sc.instances) and sc.instances >= 2
    kinds = {(p.server.spec, p.params.kind, p.params.pattern) for p in curve.points if isinstance(p.params, CurvePoint)}
    # fifo (the thread's), cycle, hold, hold_lock in both orders; hold_cold in random order only
    assert len(kinds) == len(sc.servers) * (4 * 2 + 1)
    # the overflow table alone on every server, each key pattern, its hashes in turn within each run
    hashes = [p for p in curve.points if isinstance(p.params, HashPoint)]
    assert {(p.server.spec, p.params.pattern) for p in hashes} == {(s, pt) for s in sc.servers for pt in HASH_PATTERNS}
    assert all(p.params.ns == sc.hash_ns and p.params.stride == 1024 for p in hashes) and {8, 100} <= set(sc.hash_ns)
    assert {p.params.blocks for p in hashes} == {p.params.blocks for p in curve.points if isinstance(p.params, CurvePoint)}
    assert {(s, "fifo", "random") for s in sc.servers} <= kinds
    assert all(p.params.ns == bp.NS for p in curve.points if isinstance(p.params, CurvePoint)) and {8, 9} <= set(bp.NS)
    specs = {p.server.spec for p in pins.points}
    assert specs == {s for s in sc.servers if probed(s)}
    # the backend's own writes on every probed server, warm (the I/O starts the probe counts against the hits)
    flush = [p.params for p in pins.points if p.params.shape == "flush"]
    assert len(flush) == len(specs) and not any(f.cold for f in flush)
    seq = [p.params for p in pins.points if p.params.shape == "seq_scan"]
    # read streams from 17 on: warm and cold at every eic; before, one warm run
    for p in pins.points:
        if p.params.shape == "seq_scan" and p.params.cold:
            assert p.params.executions == 1
    assert {(s.eic, s.cold) for s in seq} >= {(e, c) for e in sc.eics for c in (False, True)}
    assert all(p.server.settings["shared_buffers"] == "256MB" for p in curve.points + pins.points + array.points)


def test_the_array_builds_are_named_by_size_and_layout():
    from dbexp.chapters.buffer_pins.chapter import array_builds, array_key

    assert [array_key(b.variant) for b in array_builds()] == [(8, ""), (8, "aligned"), (32, ""), (32, "direct")]
    assert [analysis.array_label(b.spec) for b in array_builds()] == ["8", "8 aligned", "32", "32 direct"]
    with pytest.raises(DbexpError, match="names no array size; valid are"):
        array_key("pinbench-srcX")
    with pytest.raises(ValueError, match="is not an array build"):
        analysis.array_label("postgres:17+pinbench@offline")


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
    assert call_sql(p, 100) == ("SELECT * FROM pinbench_cycle(%s::regclass, %s, %s, %s)",
                                ("pinbench_blocks", 100, 1000, "random"))
    fifo = CurvePoint("fifo", "sequential", (1, 100), 50_000, 3, 64, 0)
    assert call_sql(fifo, 100) == ("SELECT * FROM pinbench_fifo(%s::regclass, %s, %s, %s)",
                                   ("pinbench_blocks", 100, 50_000, "sequential"))
    cold = CurvePoint("hold_cold", "random", (1,), 100_000, 3, 64, 256)
    assert call_sql(cold, 8)[1] == ("pinbench_blocks", 8, 64, 100_000 * 5 // 256, "random", False, 256)
    assert call_sql(CurvePoint("hold_lock", "sequential", (1,), 10, 1, 64, 0), 1)[1][5] is True
    assert p.blocks == 164
    # the operations a call times, which the witness's repeats are a share of
    assert (timed_ops(p, 3), timed_ops(fifo, 7), timed_ops(cold, 1)) == (33_333 * 3, 50_000, 100_000 * 5 // 256)


def test_the_witness_columns_are_the_sql_functions_own():
    """What measure reads after the time is what pinbench--1.0.sql declares, in its order, for every function."""
    from pathlib import Path
    import re

    sql = (Path(bp.__file__).parent / "extension" / "pinbench--1.0.sql").read_text()
    for fn in ("pinbench_fifo", "pinbench_hold", "pinbench_cycle"):
        decl = sql[sql.index(f"CREATE FUNCTION {fn}("):]
        decl = decl[:decl.index("RETURNS record")]
        assert re.findall(r"OUT (\w+)", decl) == ["ns", *WITNESS], fn
    assert set(KEPT) == set(WITNESS)
    decl = sql[sql.index("CREATE FUNCTION pinbench_hash("):]
    assert re.findall(r"OUT (\w+)", decl[:decl.index("RETURNS record")]) == ["ns", *HASH_WITNESS]
    assert "CREATE FUNCTION pinbench_flush(rel regclass, first int8, n int4)" in sql


def test_the_cache_sizes_come_from_the_hosts_sysfs():
    sizes = cache_kib(0)
    assert sizes and all(k in ("l1d_kib", "l2_kib", "l3_kib") and v > 0 for k, v in sizes.items())


def test_the_probe_holds_in_one_backend_and_reads_bpftraces_maps(tmp_path):
    # a file that defines the unpin function under its 17-18 name stands in for the server binary
    text = pin_probe.SCRIPT.format(path="/x", backend=4242, offset=20, held_max=64, locks_max=16,
                                   other_locks="uprobe:/x:ConditionalLockBuffer", unpin="UnpinBufferNoOwner", slots=32)
    assert text.count("/pid == 4242") == 6 and "(arg0 + 20)" in text
    # a new pin's slot in an array of 32 indexed by buffer number, taken by a held one or not; StartBufferIO's reads
    # and writes apart (its second argument, forInput)
    assert "@slot[tid, $id % 32] > 0" in text and "uprobe:/x:StartBufferIO /pid == 4242/" in text
    assert "if ((uint8)arg1) { @io_in = count(); } else { @io_out = count(); }" in text
    lines = [json.dumps({"type": "attached_probes", "data": {"probes": 9}}),
             json.dumps({"type": "map", "data": {"@pins": 12}}), json.dumps({"type": "map", "data": {"@released": 12}}),
             json.dumps({"type": "map", "data": {"@lockcalls": 30}}), json.dumps({"type": "map", "data": {"@slot32": 2}}),
             json.dumps({"type": "map", "data": {"@io_in": 5}}),
             json.dumps({"type": "hist", "data": {"@held": [{"min": 1, "max": 1, "count": 9},
                                                            {"min": 2, "max": 2, "count": 3}]}}),
             json.dumps({"type": "hist", "data": {"@locks": [{"min": 0, "max": 0, "count": 2},
                                                             {"min": 16, "count": 10}]}})]
    c = pin_probe.counts(lines)
    assert (c.pins, c.released, c.lock_calls, c.unmatched) == (12, 12, 30, 0)
    assert c.held == {1: 9, 2: 3} and c.locks == {0: 2, 16: 10}
    assert (c.slot32, c.io_in, c.io_out) == (2, 5, 0)  # a map bpftrace never printed counted nothing


def _results(rows: list[dict], counters: pd.DataFrame | None = None) -> Results:
    """Constructed runs; each curve run's N as one round of calls in the series (as measure_curve keeps them)."""
    wide = pd.DataFrame(rows)
    series = pd.DataFrame([{"run_id": r["run_id"], "t": 0.0, "source": "pinbench", "name": k, "value": v}
                           for r in rows for k, v in r.items() if k.startswith(("ns_", "warm_"))],
                          columns=["run_id", "t", "source", "name", "value"])
    return Results("buffer_pins", wide, series, counters if counters is not None else pd.DataFrame(),
                   wide, "constructed")


def _curve_row(run: str, version: str, kind: str, pattern: str, instance: int, ns: dict[int, float],
               witness: bool = True, spec: str | None = None) -> dict:
    """A curve run; for a fifo run its loops' witness as measure keeps it (N held, one block in one buffer again)."""
    row = {"run_id": run, "status": "ok", "spec": spec or f"postgres:{version}+pinbench@offline", "version": version,
           "kind": kind, "pattern": pattern, "instance": instance, "shape": None, "ns": tuple(ns), "ops": 1000,
           "calls": 1, "loop_blocks": 64, **{f"ns_{n}": v for n, v in ns.items()}}
    if witness:
        for n in ns:
            row.update({f"w_held_buffers_{n}": float(n), f"w_touched_blocks_{n}": 1.0, f"w_touched_buffers_{n}": 1.0,
                        f"w_repeats_{n}": 0.999, f"w_moved_{n}": 0.0, f"w_held_slots32_{n}": float(min(n, 32)),
                        f"w_touched_in_held_slots32_{n}": 0.0})
    return row


def test_the_curves_ratios_are_paired_within_runs_and_judged_against_the_sources_table():
    # two runs whose levels differ by 2x but whose 11/7 step is 1.5 in both: a paired ratio of exactly 1.5
    rows = [_curve_row("a", "17.10", "fifo", "random", 0, {1: 100, 7: 120, 8: 150, 11: 180, 10000: 300}),
            _curve_row("b", "17.10", "fifo", "random", 1, {1: 200, 7: 240, 8: 300, 11: 360, 10000: 600})]
    res = _results(rows)
    r, lo, hi, n = analysis.ratio(res, "17.10", "fifo", "random", analysis.STEP)
    assert (r, n) == (pytest.approx(1.5), 2) and lo == pytest.approx(1.5) and hi == pytest.approx(1.5)
    assert analysis.source_ratio("random", analysis.STEP) == pytest.approx(365.50 / 233.96)
    assert analysis.source_ratio("sequential", analysis.GROWTH) == pytest.approx(497.92 / 183.75)
    t = analysis.shape_table(res).iloc[0]
    assert t["growth"] == pytest.approx(3.0) and t["edge_pair"] == "7 -> 8" and t["edge"] == pytest.approx(1.25)
    assert t["source_step"] == pytest.approx(365.50 / 233.96)
    step = bp.claims.claims(res).set_index("id").loc["step-past-array"]
    assert "17.10 1.50 [1.50, 1.50]" in step["measured here"] and step["verdict"].startswith("agrees in direction, smaller")
    assert step["witness_ok"] and "held N distinct buffers" in step["witness"]
    # what one overflow probe adds: 8 held minus 7, within each run
    o = analysis.overflow_ns(res).iloc[0]
    assert (o["version"], o["runs"]) == ("17.10", 2) and o["ns"] == pytest.approx(45.0)


def test_a_curve_whose_loops_did_not_hold_n_or_reuse_one_buffer_is_not_judged():
    # a fifo run that pinned 64 blocks in its loop (not the thread's one buffer): its verdict is withheld
    rows = [_curve_row(r, "17.10", "fifo", "random", i, {1: 100, 7: 120, 11: 180, 10000: 300}) for i, r in enumerate("ab")]
    rows[1]["w_touched_blocks_11"] = 64.0
    step = bp.claims.claims(_results(rows)).set_index("id").loc["step-past-array"]
    assert step["verdict"].startswith("not measured here (witness failed") and step["witness_ok"] is False
    # no fifo run at all: the cycle's numbers are shown, its walk of every block named, nothing judged
    rows = [_curve_row(r, "17.10", "cycle", "random", i, {1: 100, 7: 120, 11: 180, 10000: 300}, witness=False)
            for i, r in enumerate("ab")]
    step = bp.claims.claims(_results(rows)).set_index("id").loc["step-past-array"]
    assert step["measured here"].startswith("pin N, release N") and "not measured here (witness failed" in step["verdict"]
    assert step["witness"].startswith("no run of the thread") and "walk 1,000 distinct blocks at N = 1" in step["witness"]


def test_pin_histograms_pool_the_runs_and_judge_the_zero_to_two_claim():
    rows = [{"run_id": "p1", "status": "ok", "spec": "postgres:17.10+pinbench@offline", "version": "17.10", "kind": None,
             "shape": "point_select", "eic": 1, "cold": False, "pins_per_execution": 3.0, "others_le2_share": 1.0,
             "held_max": 1.0, "locked_pin_share": 1.0, "relocked_pin_share": 0.0, "blocks_read": 0.0,
             "executions": 100, "instance": 0, "pins": 300.0, "released": 300.0, "unmatched": 0.0, "lock_calls": 300.0}]
    counters = pd.DataFrame([{"run_id": "p1", "source": "held_at_pin", "name": "1", "before": 0, "after": 300, "delta": 300},
                             {"run_id": "p1", "source": "locks_per_pin", "name": "1", "before": 0, "after": 300,
                              "delta": 300}])
    res = _results(rows, counters)
    assert analysis.pooled_share(res, "held_at_pin", lambda v: v <= 3) == (300, 300)
    assert analysis.held_buckets(res).iloc[0]["held 1"] == "100.0%"
    text, verdict, w = bp.claims._zero_to_two(res)
    assert text.startswith("300 of 300 new pins") and verdict == "agrees (shapes and versions)"
    assert w.ok and "300 pins and 300 releases" in w.what
    # a run whose probe counted no release of its pins: the witness fails
    rows[0]["released"] = 0.0
    assert not bp.claims.pins_witness(_results(rows, counters)).ok


def _array_results(ratios: dict[str, dict[int, float]], windows: int = 2) -> Results:
    """Array runs measured in windows: per window one run per build, every N's time in two rounds, the level of
    each window (and of its second round) different, each build's time the 8-entry build's times its ratio."""
    rows, series = [], []
    for w in range(windows):
        for build, at in ratios.items():
            run = f"{build}-{w}"
            ns = {n: 100.0 * (w + 1) * r for n, r in at.items()}
            row = _curve_row(run, "18.6", "fifo", "random", w % 2, ns,
                             spec=f"postgres:18.6+pinbench-src{build.replace(' ', '')}@offline")
            row["window_start"] = 1000.0 + w
            row["w_held_slots32_19"] = 17.0 if build == "32 direct" else 19.0
            rows.append(row)
            for t in (0.0, 1.0):
                series += [{"run_id": run, "t": t, "source": "pinbench", "name": f"ns_{n}", "value": v * (1 + t)}
                           for n, v in ns.items()]
    return Results("buffer_pins", pd.DataFrame(rows), pd.DataFrame(series), pd.DataFrame(), pd.DataFrame(rows),
                   "constructed")


def test_the_array_builds_are_compared_on_raw_time_within_the_rounds_of_their_windows():
    res = _array_results({"8": {1: 1.0, 7: 1.0, 19: 1.3, 100: 1.4},
                          "32": {1: 1.1, 7: 1.1, 19: 1.1, 100: 1.5},
                          "32 direct": {1: 0.95, 7: 0.95, 19: 1.0, 100: 1.45}})
    assert analysis.curve_runs(res).empty  # the array builds stay out of the released versions' curve
    t = analysis.array_table(res).set_index(["build", "n"])
    assert t["paired"].all() and (t["units"] == 2).all()
    # raw time, not each build over its own N = 7: 32 over 8 is 1.1 at 1 held, not 1
    assert t.loc[("32", 1), "ratio"] == pytest.approx(1.1) and t.loc[("32 direct", 19), "ratio"] == pytest.approx(1.0 / 1.3)
    assert t.loc[("32 direct", 19), "ns_base"] == pytest.approx(130.0 * 1.5 * 1.5 / 1.5, rel=0.5)
    row = bp.claims.claims(res).set_index("id").loc["array-32"]
    assert row["measured here"].startswith("32 entries, no linear search over 8, raw time per operation, divided within")
    assert "at 19, 0.77" in row["measured here"] and "the stock 32 (searched linearly) at 19: 0.85" in row["measured here"]
    assert row["verdict"].startswith("agrees (direction only") and row["witness_ok"]
    assert "17 of the 19 held in the array's slots" in row["witness"]


def test_the_array_claim_is_not_judged_without_the_thread_build_or_a_window():
    stock = _array_results({"8": {1: 1.0, 19: 1.3}, "32": {1: 1.1, 19: 1.0}})
    row = bp.claims.claims(stock).set_index("id").loc["array-32"]
    assert row["measured here"].startswith("32 entries (linear search kept) over 8")
    assert row["verdict"].startswith("not measured here (witness failed: no build with 32 entries and no linear search")
    apart = _array_results({"8": {1: 1.0, 19: 1.3}, "32 direct": {1: 1.0, 19: 1.0}})
    apart.wide["window_start"] = float("nan")
    row = bp.claims.claims(apart).set_index("id").loc["array-32"]
    assert "unpaired" in row["measured here"] and "not called in turn in one window" in row["witness"]
    assert row["witness_ok"] is False and not row["verdict"].startswith(("agrees", "disagrees"))


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


def test_a_hash_point_names_its_patterns_and_the_blocks_its_keys_need():
    p = HashPoint("stride", (8, 100), 1000, 3)
    assert (p.blocks, p.stride) == (101, 1024)
    # on a server whose curves need more pages, the table is made once with them, whichever point comes first
    assert HashPoint("stride", (8, 100), 1000, 3, table_blocks=10064).blocks == 10064
    with pytest.raises(DbexpError, match="bad hash pattern 'zigzag'; valid are sequential, random or stride"):
        HashPoint("zigzag", (8,), 10, 1)
    with pytest.raises(DbexpError, match="hash_ns \\[5000\\]: each must be at least 1 and at most"):
        bp.CHAPTER.adjust(bp.CHAPTER.scale("smoke", hash_ns=[5000]), "smoke", Cpus(), {})


def _hash_results(version: str, tables: dict[str, dict], ratio: dict[tuple[str, int], float], runs: int = 2):
    """Runs of the overflow table alone: per pattern one run per instance, each N timed with both hashes in two
    rounds at levels that differ (the host's drift), murmur's time the identity's times ``ratio``; ``tables``: per
    pattern and hash the table's shape (size, grows, max_dib, mean_dib, fifo_dib), the same at every N."""
    rows, series = [], []
    for pattern, shape in tables.items():
        for i in range(runs):
            run = f"{pattern}-{i}"
            row = {"run_id": run, "status": "ok", "spec": f"postgres:{version}+pinbench@offline", "version": version,
                   "kind": None, "shape": None, "pattern": pattern, "stride": 1024, "instance": i}
            for (pt, n), r in ratio.items():
                if pt != pattern:
                    continue
                for h in ("identity", "murmur"):
                    row.update({f"w_{h}_{k}_{n}": v for k, v in shape[h].items()})
                for t in (0.0, 1.0):
                    base = 100.0 * (i + 1) * (1 + t)
                    series += [{"run_id": run, "t": t, "source": "pinbench", "name": f"identity_{n}", "value": base},
                               {"run_id": run, "t": t, "source": "pinbench", "name": f"murmur_{n}",
                                "value": base * r}]
            rows.append(row)
    wide = pd.DataFrame(rows)
    return Results("buffer_pins", wide, pd.DataFrame(series), pd.DataFrame(), wide, "constructed")


CLUMPED = {"identity": {"size": 512.0, "grows": 2.0, "max_dib": 99.0, "mean_dib": 49.5, "fifo_dib": 100.0},
           "murmur": {"size": 128.0, "grows": 0.0, "max_dib": 3.0, "mean_dib": 0.4, "fifo_dib": 0.0}}
SPREAD = {"identity": {"size": 128.0, "grows": 0.0, "max_dib": 0.0, "mean_dib": 0.0, "fifo_dib": 0.0},
          "murmur": {"size": 128.0, "grows": 0.0, "max_dib": 4.0, "mean_dib": 0.5, "fifo_dib": 1.0}}


def test_the_overflow_table_alone_divides_its_hashes_within_rounds_and_judges_the_threads_hash_claims():
    res = _hash_results("17.10", {"stride": CLUMPED, "sequential": SPREAD},
                        {("stride", 19): 0.25, ("stride", 100): 0.1, ("sequential", 19): 1.2, ("sequential", 100): 1.3})
    t = analysis.hash_table(res).set_index(["pattern", "n"])
    # a level that doubles between rounds and runs cancels: the ratio is exactly murmur's over the identity's
    assert t.loc[("stride", 100), "ratio"] == pytest.approx(0.1) and t.loc[("sequential", 19), "runs"] == 2
    assert t.loc[("stride", 100), "identity_grows"] == 2 and t.loc[("stride", 100), "identity_ns"] == pytest.approx(225)
    rows = bp.claims.claims(res).set_index("id")
    mix = rows.loc["hash-needs-mixing"]
    assert "17.10 19: 4.00 [4.00, 4.00], 100: 10.00 [10.00, 10.00]" in mix["measured here"]
    assert mix["verdict"].startswith("agrees (direction only") and mix["witness_ok"]
    assert "identity's entries sat 49.5 buckets from their own on average" in mix["witness"]
    mm = rows.loc["murmur-slower-sequential"]
    assert mm["verdict"].startswith("agrees (direction only") and "every held entry sat in its own bucket" in mm["witness"]
    grow = rows.loc["collisions-grow-table"]
    assert grow["verdict"] == "agrees" and "512 buckets after 2 growths, farthest 99" in grow["measured here"]
    # a growth that brought every entry near its bucket: the claim that growing need not end the collisions fails
    fixed = {"stride": {**CLUMPED, "identity": {**CLUMPED["identity"], "max_dib": 12.0}}}
    res = _hash_results("17.10", fixed, {("stride", 100): 0.5})
    assert bp.claims.claims(res).set_index("id").loc["collisions-grow-table", "verdict"].startswith("disagrees")
    # keys whose identity table is no worse than murmur's: the mixing claim's mechanism did not happen, not judged
    res = _hash_results("17.10", {"stride": SPREAD}, {("stride", 100): 0.5})
    row = bp.claims.claims(res).set_index("id").loc["hash-needs-mixing"]
    assert row["verdict"].startswith("not measured here (witness failed") and not row["witness_ok"]


def _pin_row(run: str, version: str, shape: str, cold: bool, **m) -> dict:
    return {"run_id": run, "status": "ok", "spec": f"postgres:{version}+pinbench@offline", "version": version,
            "kind": None, "shape": shape, "eic": 1, "cold": cold, "executions": 10, "instance": 0, "pins": 100.0,
            "released": 100.0, "unmatched": 0.0, "lock_calls": 100.0, "pins_per_execution": 10.0,
            "others_le2_share": 1.0, "held_max": 2.0, "locked_pin_share": 1.0, "relocked_pin_share": 0.0,
            "blocks_hit": 1000.0, "blocks_read": 0.0, "blocks_written": 0.0, "slot32_taken": 1.0,
            "io_starts_read": 0.0, "io_starts_write": 0.0, **m}


def test_the_io_starts_are_judged_on_hits_reads_and_writes_from_16_and_the_slots_against_three_percent():
    rows = [_pin_row("w", "17.10", "point_select", False),
            _pin_row("c", "17.10", "seq_scan", True, blocks_read=270.0, io_starts_read=270.0, blocks_hit=5.0),
            _pin_row("f", "17.10", "flush", False, blocks_written=80.0, io_starts_write=80.0),
            _pin_row("o", "15.18", "point_select", False, io_starts_read=3.0)]  # 15 keeps no resource owner
    counters = pd.DataFrame([{"run_id": r, "source": "held_at_pin", "name": "1", "before": 0, "after": 100, "delta": 100}
                             for r in "wco"])
    res = _results(rows, counters)
    io = analysis.io_summary(res)
    assert list(io["runs"]) == ["warm queries", "warm queries", "cold scans", "backend's writes"]
    claims = bp.claims.claims(res).set_index("id")
    hits = claims.loc["io-resowner-not-hits"]
    assert hits["verdict"] == "agrees" and "17.10: 0 I/O starts for 1,000 hits and 0 blocks read" in hits["measured here"]
    assert "15.18" not in hits["measured here"] and hits["witness_ok"]
    assert claims.loc["io-resowner-reads-writes", "verdict"] == "agrees"
    # a hit that started an I/O: disagrees
    rows[0]["io_starts_read"] = 5.0
    claims = bp.claims.claims(_results(rows, counters)).set_index("id")
    assert claims.loc["io-resowner-not-hits", "verdict"].startswith("disagrees (5 more I/O starts than blocks read)")
    # the slots: 3 taken of 300 new pins of the query shapes (the backend's writes are no query), under 3%
    slots = claims.loc["direct-slot-misses"]
    assert slots["measured here"].startswith("3 of 300 new pins found their slot")
    assert slots["verdict"] == "agrees in direction, smaller" and "1.0% [0.2%, 2.9%]" in slots["measured here"]


def test_a_share_prints_the_digits_that_tell_its_interval_apart():
    assert analysis.share_text(7221623, 7262377) == "99.44% [99.43%, 99.44%]"
    assert analysis.share_text(300, 300) == "all 300; 95% interval from 98.8%"
    assert analysis.share_text(0, 300) == "none of 300; 95% interval up to 1.2%"
    assert analysis.share_text(28988, 7262379) == "0.40% [0.39%, 0.40%]"


def test_sequential_order_is_judged_at_every_n_of_the_threads_table():
    rows = []
    for i in range(2):
        rows.append(_curve_row(f"r{i}", "17.10", "fifo", "random", i, {n: 100.0 + i for n in (1, 988, 10000)}))
        rows.append(_curve_row(f"s{i}", "17.10", "fifo", "sequential", i, {1: 94.0 + i, 988: 90.0 + i, 10000: 85.0 + i}))
    t = analysis.sequential_by_n(_results(rows)).set_index("n")
    assert t.loc[988, "source"] == pytest.approx(453.61 / 445.75) and t.loc[1, "ratio"] == pytest.approx(0.94, abs=0.01)
    row = bp.claims.claims(_results(rows)).set_index("id").loc["sequential-cheaper"]
    # below 1 at 988 where the thread's table has sequential dearer: that cell disagrees
    assert "988 (thread 1.02): 0.90" in row["measured here"] and "disagrees in 1 of 3" in row["verdict"]
    assert row["verdict"].endswith("(versions and N)")


def test_the_aligned_build_shows_no_degradation_where_its_interval_stays_under_three_percent():
    res = _array_results({"8": {1: 1.0, 19: 1.3, 100: 1.4}, "8 aligned": {1: 1.01, 19: 1.3, 100: 1.39},
                          "32 direct": {1: 1.0, 19: 1.0, 100: 1.4}})
    row = bp.claims.claims(res).set_index("id").loc["align-functions"]
    assert row["verdict"] == "agrees (N and orders)" and row["witness_ok"]
    assert row["measured here"].startswith("18.6 compiled with -falign-functions=64 over 18.6 as compiled by default")
    slower = _array_results({"8": {1: 1.0, 19: 1.3}, "8 aligned": {1: 1.1, 19: 1.3}})
    assert bp.claims.claims(slower).set_index("id").loc["align-functions", "verdict"] == (
        "agrees in 1 of 2 / disagrees (aligned over default above 1.03) in 1 of 2 (N and orders)")


def test_the_page_lists_the_tested_claims_and_leaves_the_rest_to_the_ledgers_table():
    rows = [_curve_row(r, "17.10", "fifo", "random", i, {1: 100, 7: 120, 11: 180, 10000: 300}) for i, r in enumerate("ab")]
    claims = bp.claims.claims(_results(rows))
    shown = bp.claims.tested(claims)
    statuses = {e["id"]: e["status"] for e in bp.claims.ledger()}
    assert set(shown["id"]) == {i for i, s in statuses.items() if s == "tested"}
    assert "not testable here" in set(statuses.values()) and len(shown) < len(claims)
