"""The gtid chapter's claims table (verdicts.ClaimRow): each source's number and the conditions it
was measured under (dbexp/experiments/ledger.py, recomputed from the source's own figures), this
lab's conditions, what these runs measured with its interval, and the verdict, computed per version
where the source's number holds for some versions only.

Every row names the ledger entries it tests (claims.yaml) and its witness, an observation stored with the
runs it judges, checked per server before that server's verdict stands (verdicts.witnessed):

- GTIDs (:func:`gtid_witness`): each *binlog + GTID* run's ``gtid_executed`` grew by one GTID per commit, and
  each *binlog* run's by none;
- per-operation costs, besides: the turns (dbexp.experiments.rotation.describe): every turn ended with its
  server quiet before the next began, nothing ran outside a server's own turns, and its switches and bytes per
  query were counted inside them;
- the binlog (:func:`binlog_witness`): the *binlog* runs' binlog grew at every commit, the *binlog off* runs'
  ``log_bin`` read back OFF;
- performance_schema (:func:`ps_witness`): read back OFF in the *binlog, P_S off* runs and ON in the
  *binlog* runs, before each window.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from dbexp.catalog.versions import version_key
from dbexp.chapters.gtid.analysis import family, gap_changes, main_runs, pick, ratios, tidy, versions, windows
from dbexp.chapters.gtid.engines.innodb import of_series
from dbexp.experiments import ledger as src
from dbexp.experiments import paired, rotation, stats, verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import CALLAGHAN_GTID, KERNELMAKER_REGRESSION

NM = verdicts.NOT_MEASURED


# --- witnesses: what the runs stored that shows each claim's mechanism happened in them --------------------

GTID_TOLERANCE = 0.01  # GTIDs per commit within 1% of 1 (the GTID runs) and none (the binlog runs)


def _checks(g: pd.DataFrame) -> list[dict]:
    """The starting-state checks stored with each run of ``g`` ({check: {"ok", "seen"}}; {} where none)."""
    col = g["precondition"] if "precondition" in g else pd.Series([None] * len(g), index=g.index)
    return [(json.loads(v) if isinstance(v, str) else v) or {} for v in col]


def _read_back(g: pd.DataFrame, check: str) -> tuple[int, int]:
    """(runs of ``g`` whose starting-state check ``check`` held, runs of ``g``)."""
    return sum(bool(c.get(check, {}).get("ok")) for c in _checks(g)), len(g)


def _configs(g: pd.DataFrame, *configs: str) -> pd.DataFrame:
    return g[g["config"].astype(str).isin(configs)] if len(g) else g


def gtid_witness(g: pd.DataFrame) -> verdicts.Witness:
    """GTIDs assigned in one server's runs ``g``: ``gtid_executed`` grew by one GTID per commit (within
    GTID_TOLERANCE) in every *binlog + GTID* run and by none in every *binlog* run; runs stored before the
    count have only gtid_mode read back at the window's start, which does not show a GTID assigned."""
    on, off = _configs(g, "binlog + GTID"), _configs(g, "binlog")
    if on.empty or off.empty:
        return verdicts.witness(False, "no *binlog + GTID* or no *binlog* runs")
    x = on["gtids_per_commit"] if "gtids_per_commit" in on else pd.Series(float("nan"), index=on.index)
    y = off["gtids_per_commit"] if "gtids_per_commit" in off else pd.Series(float("nan"), index=off.index)
    if x.isna().all():
        k, n = _read_back(on, "gtid_mode ON")
        return verdicts.witness(False, f"no count of the GTIDs assigned stored with these runs (gtid_executed before "
                                       f"and after each), only gtid_mode read back ON in {k} of {n} *binlog + GTID* "
                                       "runs")
    ok = (x.notna().all() and y.notna().all() and ((x - 1).abs() <= GTID_TOLERANCE).all()
          and (y.abs() <= GTID_TOLERANCE).all())
    return verdicts.witness(ok, f"gtid_executed grew by {_range(x.min(), x.max())} GTIDs per commit in "
                                f"{x.notna().sum()} *binlog + GTID* runs, by {_range(y.min(), y.max())} in "
                                f"{y.notna().sum()} *binlog* runs")


def turn_witness(g: pd.DataFrame) -> verdicts.Witness:
    """One at a time, per-operation figures counted in each server's own turns, in the runs ``g``: every run's
    turns held (rotation.held: every turn ended with its server quiet, no statement outside its own turns), said
    in a few words (the page's method section says what the turns show at length: rotation.describe)."""
    if g.empty:
        return verdicts.witness(False, "turns: no runs")
    n = rotation.numbers(g)
    ok = bool(rotation.held(g).all())
    if not n["stored"]:
        return verdicts.witness(False, f"turns: {n['old']} runs stored no turn records (their per-operation figures "
                                       "span the whole run, every client at once at its start and end)")
    return verdicts.witness(ok, f"turns held in {n['held']} of {len(g)} runs ({n['quiet']:,} of {n['turns']:,} turns "
                                f"ended quiet, {n['outside']} statements outside a server's own turns)")


def per_op_witness(g: pd.DataFrame) -> verdicts.Witness:
    """A per-operation cost of GTIDs, in one server's runs ``g``: GTIDs assigned and the turns' witness."""
    a, b = gtid_witness(g), turn_witness(_configs(g, "binlog + GTID", "binlog"))
    return verdicts.witness(a.ok and b.ok, f"{a.what}; {b.what}")


def binlog_witness(g: pd.DataFrame) -> verdicts.Witness:
    """The binlog on and off in one or more servers' runs ``g``: the *binlog* runs' binlog grew at their
    commits (SHOW BINARY LOGS before and after), and the *binlog off* runs had log_bin read back OFF."""
    on, off = _configs(g, "binlog"), _configs(g, "binlog off")
    x = on["binlog_bytes_per_commit"] if "binlog_bytes_per_commit" in on else pd.Series(float("nan"), index=on.index)
    k, n = _read_back(off, "log_bin OFF")
    ok = len(on) > 0 and n > 0 and x.notna().all() and (x > 0).all() and k == n
    written = (f"{_span(x.min(), x.max())} binlog bytes per commit in {x.notna().sum()} of {len(on)} *binlog* runs"
               if x.notna().any() else f"no binlog bytes stored for {len(on)} *binlog* runs")
    return verdicts.witness(ok, f"{written}; log_bin read back OFF in {k} of {n} *binlog off* runs")


def ps_witness(g: pd.DataFrame) -> verdicts.Witness:
    """performance_schema off and on in one or more servers' runs ``g``: read back OFF in every *binlog, P_S
    off* run and ON in every *binlog* run at the window's start."""
    k_off, n_off = _read_back(_configs(g, "binlog, P_S off"), "performance_schema OFF")
    k_on, n_on = _read_back(_configs(g, "binlog"), "performance_schema ON")
    return verdicts.witness(n_off > 0 and n_on > 0 and k_off == n_off and k_on == n_on,
                            f"performance_schema read back OFF in {k_off} of {n_off} *binlog, P_S off* runs and ON "
                            f"in {k_on} of {n_on} *binlog* runs")


def baseline_witness(g: pd.DataFrame) -> verdicts.Witness:
    """The regression source's baseline (binlog and performance_schema on) in the *binlog* runs of ``g``: their
    binlog grew at their commits, performance_schema read back ON."""
    on = _configs(g, "binlog")
    x = on["binlog_bytes_per_commit"] if "binlog_bytes_per_commit" in on else pd.Series(float("nan"), index=on.index)
    k, n = _read_back(on, "performance_schema ON")
    ok = n > 0 and x.notna().all() and (x > 0).all() and k == n
    written = (f"{_span(x.min(), x.max())} binlog bytes per commit in {x.notna().sum()} of {n}"
               if x.notna().any() else f"no binlog bytes stored for {n}")
    return verdicts.witness(ok, f"the baseline: {written} *binlog* runs, performance_schema read back ON in {k} of {n}")


def _runs_of(res: Results, tests=None, servers=None) -> pd.DataFrame:
    """The runs at the scale's length (of ``tests`` and ``servers``, where given)."""
    w = main_runs(tidy(res))
    if len(w) and tests is not None:
        w = w[w["test"].isin(tests)]
    if len(w) and servers is not None:
        w = w[w["series_name"].isin(servers)]
    return w


def _witnesses(res: Results, names, make, tests=None) -> dict[str, verdicts.Witness]:
    """``make(runs)`` per server of ``names``, over its runs (of ``tests``)."""
    return {name: make(_runs_of(res, tests, [name])) for name in names}


def _row_witness(found: dict[str, verdicts.Witness]) -> verdicts.Witness | None:
    """A row's witness from its servers' (named by version where there are several)."""
    if len(found) == 1:
        return next(iter(found.values()))
    return verdicts.witnesses({_version(k): w for k, w in found.items()})


def _version(name: str) -> str:
    return name.split(" ", 1)[-1]


def per_version(found: dict[str, str]) -> str:
    """Verdicts by server as one cell: the verdict where every server gave it, else each verdict once, after the
    servers that gave it ('5.7.22, 8.0.15: not testable here (...); 9.7.4: agrees')."""
    if not found:
        return NM
    if len(set(found.values())) == 1:
        return next(iter(found.values()))
    by: dict[str, list[str]] = {}
    for name, v in found.items():
        by.setdefault(v, []).append(_version(name))
    return "; ".join(f"{', '.join(names)}: {v}" for v, names in by.items())


def _clients(threads) -> str:
    """[1] -> '1 client thread', [1, 2] -> '1 or 2 client threads'."""
    return " or ".join(str(t) for t in threads) + f" client thread{'s' if list(threads) != [1] else ''}"


def conditions(res: Results) -> str:
    """This lab's conditions for every row of the claims table, from the runs (said once, above the table)."""
    w = tidy(res)
    d = windows(res)
    if not d["n"]:
        return "no runs at this scale"
    names = ", ".join(_version(n) for n in versions(main_runs(w)))
    m = main_runs(w)
    turns = (f"taking one server CPU in turns of {m['slice_s'].max():g} s, one at a time"
             if "slice_s" in m and m["slice_s"].fillna(0).max() > 0 else "sharing one server CPU at once")
    instances = int(m["instance"].nunique()) if "instance" in m and m["instance"].notna().any() else 1
    return (f"MySQL {names}; {_clients(d['threads'])} per server, five servers (one per configuration) {turns}; "
            f"{instances} independently started set{'s' if instances > 1 else ''} of them; 1 table of "
            f"{d['table_size']:,} rows; {d['repeats']} windows of {d['duration_s']:g} s per point; "
            "innodb_flush_log_at_trx_commit = 2, sync_binlog = 0; prepared statements (--db-ps-mode=auto)")


def _cells(g: pd.DataFrame, label=lambda x: f"{_version(x.series_name)} {x.test} {x.threads}t", invert=False) -> str:
    out = []
    for x in g.itertuples():
        r, lo, hi = (1 / x.ratio, 1 / x.ci_high, 1 / x.ci_low) if invert else (x.ratio, x.ci_low, x.ci_high)
        out.append(f"{label(x)} {paired.cell(r, lo, hi)}")
    return "; ".join(out) if out else NM


# what this lab's conditions differ in from each source's, said beside every agreement (verdicts.under_other_conditions)
OTHER_GTID = "one server CPU, 100,000 rows and runs of seconds, against the source's 8 cores, 50M rows and 900 s"
OTHER_REGRESSION = "1 client on one server CPU, against the source's 8 threads on 8 cores"


def _magnitude(x, low: float, high: float, invert: bool = False, other: str = OTHER_GTID) -> str:
    r, lo, hi = (1 / x.ratio, 1 / x.ci_high, 1 / x.ci_low) if invert else (x.ratio, x.ci_low, x.ci_high)
    return verdicts.under_other_conditions(verdicts.magnitude(lo, hi, low, high, point=r, n=int(x.pairs)), other)


def _by_version(g: pd.DataFrame, verdict, witness=None) -> str:
    """verdict(row) for every row, each gated by its server's witness (``witness(name)``, where given: a
    verdict whose witness failed is not measured), combined per server and thread count (verdicts.combine over
    the tests), then per_version (thread counts named where there are several)."""
    several = g["threads"].nunique() > 1

    def gated(x) -> str:
        return verdicts.witnessed(verdict(x), witness(x.series_name)) if witness else verdict(x)

    found = {(f"{name} {t}t" if several else name): verdicts.combine(gated(x) for x in gv.itertuples())
             for (name, t), gv in sorted(g.groupby(["series_name", "threads"]),
                                          key=lambda kv: (version_key(kv[0][0]), kv[0][1]))}
    return per_version(found)


def _by_threads(g: pd.DataFrame, verdict, witness: verdicts.Witness | None = None, gate: bool = False) -> str:
    """verdict(row) per thread count, named where there are several; with ``gate``, each gated by ``witness``."""
    found = {f"{x.threads}t": verdicts.witnessed(verdict(x), witness) if gate else verdict(x)
             for x in g.sort_values("threads").itertuples()}
    if len(set(found.values())) == 1:
        return next(iter(found.values()))
    return "; ".join(f"{k}: {v}" for k, v in found.items())


def predates_source(name: str) -> str | None:
    """The verdict for a GTID source's claim on a server whose series lacks what every version the source
    measured has (each commit's GTID written to mysql.gtid_executed), else None: testable."""
    if of_series(name).gtid_table_per_commit():
        return None
    return verdicts.not_testable(f"the source measured {src.GTID_RANGE}, which write each commit's GTID to "
                                 "mysql.gtid_executed (from 8.0.17); this version does not")


def _span(lo: float, hi: float) -> str:
    """Whole numbers from ``lo`` to ``hi`` ('643', '640 to 652')."""
    a, b = f"{lo:,.0f}", f"{hi:,.0f}"
    return a if a == b else f"{a} to {b}"


def _range(lo: float, hi: float) -> str:
    return f"{lo:.3f}" if abs(hi - lo) < 5e-4 else f"{lo:.3f} to {hi:.3f}"


def gtid_rows(res: Results, r: pd.DataFrame) -> list[verdicts.ClaimRow]:
    rows = []
    tput = r[(r["comparison"] == "GTIDs") & (r["value"] == "throughput")] if len(r) else r
    one = tput[tput["threads"] == 1] if len(tput) else tput
    names = sorted(tput["series_name"].unique(), key=version_key) if len(tput) else []
    # (the 48-core and 24-core servers' claims, 16 and 40 clients on many cores, are the ledger's not testable
    # entries, listed once under the table)
    # the 8-core server's summary: 1 client, the row this lab resembles
    early = [_version(n) for n in names if predates_source(n)]
    for tests, what, lid in ((("insert",), "insert", "gtid-8-core-insert"),
                             (("update-index",), "update-index", "gtid-8-core-update-index"),
                             (("update-non-index", "update-inlist", "write-only"), "the other write tests",
                              "gtid-8-core-other-writes")):
        g = one[one["test"].isin(tests)] if len(one) else one
        printed = src.EIGHT_TPUT_PRINTED[tests[0]]
        low, high = src.EIGHT_TPUT[tests[0]]
        found = _witnesses(res, sorted(g["series_name"].unique(), key=version_key) if len(g) else [], gtid_witness,
                           tests)
        rows.append(verdicts.ClaimRow(
            CALLAGHAN_GTID.cite(f"On the 8-core server with 1 client, GTIDs cost {what} {printed} throughput"
                                if "less" in printed else
                                f"On the 8-core server with 1 client, {what} does {printed} throughput with GTIDs "
                                "(a result the source calls odd)"),
            f"GTID / no GTID {low:.3f} to {high:.3f} ({printed}, read to the percent). {src.EIGHT.conditions}",
            "1 client" + (f"; {' and '.join(early)} predate the per-commit GTID table writes of every version the "
                          "source measured" if early else ""),
            "GTID / no GTID throughput, 1 client: " + _cells(g),
            _by_version(g, lambda x, low=low, high=high: predates_source(x.series_name) or _magnitude(x, low, high),
                        lambda name, found=found: found[name])
            if len(g) else NM, ids=(lid,), witness=_row_witness(found)))
    # vmstat / iostat per operation on insert (9.5.0 on the 8-core server)
    specs = (("cpu/o", "server CPU/o", "more CPU per operation", "vmstat's CPU time of the whole machine",
              "the server container's CPU time (cgroup) per query between the marks", "cpu"),
             ("cs/o", ("voluntary cs/o", "all cs/o"), "more context switches per operation",
              "vmstat's count: every switch on the machine, client and kernel threads included",
              "the server's threads' switches per query in its own turns: voluntary ones (a thread waited), and all "
              "of them (voluntary and involuntary)", "context-switches"),
             ("wKB/o", "write() KB/o", "more KB written to storage per operation",
              "iostat's KB written to the device",
              "the server's processes' write() bytes per query in its own turns (the device is shared by the five "
              "servers, so its own counters cannot say whose writes they are); binlog bytes per commit beside them",
              "kb-written"))
    for key, labels, claim, theirs, ours, lid in specs:
        x = src.INSERT_X[key]
        low, high = src.about_x(x["8-core"])
        rows.append(_per_op_row(
            res, r, "insert", key, labels, low, high,
            CALLAGHAN_GTID.cite(f"On insert, GTIDs cost {claim}: {x['8-core']:.2f}X on the 8-core server"),
            f"{x['8-core']:.2f}X (9.5.0, {theirs}; 24-core {x['24-core']:.2f}X, 48-core {x['48-core']:.2f}X). "
            f"{src.EIGHT.conditions}", f"1 client; {ours}", f"gtid-insert-{lid}"))
    # the same per-operation readings on update-index, where the 8-core server found GTIDs faster
    for key, labels, claim, theirs, ours, lid in specs:
        low, high = src.UPDATE_INDEX_X[key]
        printed = src.UPDATE_INDEX_PRINTED[key]
        rows.append(_per_op_row(
            res, r, "update-index", key, labels, low, high,
            CALLAGHAN_GTID.cite(f"On update-index, GTIDs lower the {NOUNS[key]}: {printed} on the 8-core server"),
            f"GTID / no GTID {low:.3f} to {high:.3f} ({printed}, read to the percent; 9.5.0, {theirs}). "
            f"{src.EIGHT.conditions}", f"1 client; {ours}", f"gtid-update-index-{lid}"))
    rows.append(per_op_costs_row(res, r))
    rows.append(defaults_row(res))
    return rows


def _per_op_row(res: Results, r: pd.DataFrame, test: str, key: str, labels, low: float, high: float, claim: str,
                theirs: str, ours: str, lid: str) -> verdicts.ClaimRow:
    """One per-operation reading of GTIDs' cost on ``test`` (1 client) against the source's range [low, high],
    per version, each version's verdict gated by its witness (per_op_witness); a version that predates the
    source's per-commit GTID table is not testable."""
    labels = (labels,) if isinstance(labels, str) else labels
    g = r[(r["comparison"] == "GTIDs") & (r["test"] == test) & (r["threads"] == 1)
          & (r["value"].isin(labels))] if len(r) else r
    found = _witnesses(res, sorted(g["series_name"].unique(), key=version_key) if len(g) else [], per_op_witness,
                       (test,))

    def verdict(name: str, gv: pd.DataFrame) -> str:
        if predates_source(name):
            return predates_source(name)
        out = []
        for label in labels:
            gl = gv[gv["value"] == label]
            v = (verdicts.combine(verdicts.witnessed(_magnitude(y, low, high), found[name]) for y in gl.itertuples())
                 if len(gl) else NM)
            out.append(v if len(labels) == 1 else f"{label.removesuffix(' cs/o')}: {v}")
        return "; ".join(out)

    measured = "; ".join(f"{label} {_cells(g[g['value'] == label], lambda y: _version(y.series_name))}"
                         for label in labels)
    if key == "wKB/o" and len(r):
        bb = r[(r["comparison"] == "GTIDs") & (r["value"] == "binlog bytes per commit") & (r["test"] == test)
               & (r["threads"] == 1)]
        if len(bb):
            measured += "; binlog bytes per commit " + _cells(bb, lambda y: _version(y.series_name))
    verdict_by = {name: verdict(name, gv) for name, gv in sorted(g.groupby("series_name"), key=lambda kv: kv[0])}
    return verdicts.ClaimRow(claim, theirs, ours, f"GTID / no GTID on {test}, 1 client: " + measured,
                             per_version(verdict_by), ids=(lid,), witness=_row_witness(found))


def regression_rows(res: Results, r: pd.DataFrame) -> list[verdicts.ClaimRow]:
    rows = []
    gc = gap_changes(res)
    w = tidy(res)
    old, new = (pick(main_runs(w), f) if len(w) else None for f in ("5.7", "8.0"))
    pair = gc[(gc["base"] == old) & (gc["new"] == new)] if len(gc) and old and new else pd.DataFrame()
    within = "update-non-index, 1 client" + (
        f"; {_version(new)} has no innodb_log_writer_threads option: its log writer threads always run"
        if new and not of_series(new).has_log_writer_threads_option() else "")
    ours = (f"{within}; the gap between versions (sweeps of their own): a Welch interval over the windows; a ratio "
            "within a version: an interval at the instance level")
    unx = ("update-non-index",)
    both = [n for n in (old, new) if n]
    # the headline: 8.0 / 5.7 at the baseline (binlog and performance_schema on)
    g0 = src.gap()
    base_w = _all(_witnesses(res, both, baseline_witness, unx))
    if len(pair):
        base = pair.drop_duplicates("threads")
        measured = "; ".join(f"{_version(new)} / {_version(old)} at *binlog*, {x.threads}t: "
                             f"{paired.cell(x.gap, x.gap_low, x.gap_high)} ({x.gap - 1:+.1%})" for x in base.itertuples())
        verdict = _by_threads(base, lambda x: verdicts.under_other_conditions(verdicts.magnitude(
            x.gap_low, x.gap_high, g0, g0, point=x.gap, n=int(min(x.windows_base, x.windows_new))), OTHER_REGRESSION),
            base_w, gate=True)
    else:
        measured, verdict = NM, NM
    rows.append(verdicts.ClaimRow(
        KERNELMAKER_REGRESSION.cite(f"On oltp_update_non_index, MySQL 8.0 does {-src.PRINTED['gap']:.1%} less "
                                    "throughput than 5.7"),
        f"8.0 / 5.7 = {g0:.3f} ({g0 - 1:+.1%}: 47,509 / 69,818 TPS). {src.REGRESSION_CONDITIONS}",
        ours, measured, verdict, ids=("regression-gap",), witness=base_w))
    # the binlog's cost in each version: TPS with the binlog off over with it on
    for config, factor, what, comparison, make, lid in (
            ("binlog off", "skip-log-bin", "the binlog off", "the binlog", binlog_witness, "binlog-gains-both-versions"),
            ("binlog, P_S off", "performance_schema=0", "performance_schema off", "performance_schema off", ps_witness,
             "performance-schema-gains-more-in-8-0")):
        g = r[(r["comparison"] == comparison) & (r["value"] == "throughput") & (r["test"] == "update-non-index")] \
            if len(r) else r
        invert = comparison == "the binlog"  # its ratio is binlog / binlog off
        gains = {fam: src.gain(factor, fam) for fam in src.REGRESSION_VERSIONS}
        printed = ", ".join(f"{fam} {gains[fam] - 1:+.1%}" for fam in gains)
        found = _witnesses(res, sorted(g["series_name"].unique(), key=version_key) if len(g) else [], make, unx)

        def verdict(x, factor=factor, invert=invert) -> str:
            theirs = src.gain(factor, x.series_name)
            if theirs is None:
                return verdicts.not_testable(f"the source measured 5.7.44 and 8.0.45 only, not {family(x.series_name)}")
            return _magnitude(x, theirs, theirs, invert, OTHER_REGRESSION)

        def witness_of(name, found=found):
            return found[name]

        moved = pair[pair["config"] == config] if len(pair) else pair
        rows.append(verdicts.ClaimRow(
            KERNELMAKER_REGRESSION.cite(f"Changed alone from the baseline, {what} gains throughput in both versions: "
                                        + (f"5.7 {src.PRINTED['binlog_gain_5.7']:+.0%}, 8.0 "
                                           f"{src.PRINTED['binlog_gain_8.0']:+.0%} (the binlog costs CPU at every "
                                           "commit, unsynced)" if invert else "more in 8.0 than in 5.7")),
            f"{what} / baseline TPS: {printed} (its independent-ablation table; 5.7 "
            f"{src.ABLATION_TPS[factor][0]:,} / {src.ABLATION_TPS['baseline'][0]:,}, 8.0 "
            f"{src.ABLATION_TPS[factor][1]:,} / {src.ABLATION_TPS['baseline'][1]:,}). {src.REGRESSION_CONDITIONS}",
            within,
            f"{config} / binlog throughput on update-non-index: " + _cells(g, lambda x: f"{_version(x.series_name)} "
                                                                           f"{x.threads}t", invert=invert),
            (_by_version(g, verdict, witness_of) if invert else
             _more_in_8(g, verdict, moved, witness_of, _all({n: found[n] for n in both if n in found})))
            if len(g) else NM, ids=(lid,), witness=_row_witness(found)))
        if invert:  # the source's reading of the two gains: 8.0's binlog path costs more per event
            pw = _all({n: found[n] for n in both if n in found})
            rows.append(verdicts.ClaimRow(
                KERNELMAKER_REGRESSION.cite("8.0 gains more than 5.7 from turning the binlog off: its binlog path "
                                            "costs more per event"),
                f"8.0's gain over 5.7's: {src.gain(factor, '8.0') / src.gain(factor, '5.7'):.3f} (its independent-"
                f"ablation table). {src.REGRESSION_CONDITIONS}",
                ours + "; the two gains compared by the interval of their ratio (8.0's over 5.7's, standard errors added)",
                "; ".join(f"{x.threads}t: {_version(new)}'s gain over {_version(old)}'s "
                          f"{paired.cell(x.ratio, x.ci_low, x.ci_high)}" for x in moved.itertuples())
                or NM,
                _by_threads(moved, lambda x: verdicts.interval(x.ci_low, x.ci_high, "above"), pw, gate=True)
                if len(moved) else NM, ids=("binlog-8-0-gains-more",), witness=pw))
    # how much of the gap each factor is, measured alone (the source's attribution, in points)
    for config, factor, claim, make, lid in (
            ("binlog off", "skip-log-bin", f"The binary log is {src.PRINTED['binlog_pp']} points of 8.0's "
                                           f"{-100 * src.PRINTED['gap']:.1f}-point gap, measured alone (the largest "
                                           "of the source's factors)", binlog_witness, "binlog-points"),
            ("binlog, P_S off", "performance_schema=0", "performance_schema is "
                                                        f"{src.PRINTED['pfs_pp']} points of 8.0's gap, measured alone",
             ps_witness, "performance-schema-points")):
        c = src.gap_change(factor)
        # every newer version's gap to 5.7 (the source's is 8.0's; 9.x's judged against it, so said)
        g = gc[(gc["base"] == old) & (gc["config"] == config)] if len(gc) and old else pd.DataFrame()
        g = g.sort_values(["new", "threads"], key=lambda col: col.map(version_key) if col.name == "new" else col) \
            if len(g) else g
        measured = "; ".join(
            f"{x.threads}t: {_version(x.new)} / {_version(old)} {x.gap:.3f} with *binlog*, {x.gap_with:.3f} with "
            f"{x.change}; the gap moves by {paired.cell(x.ratio, x.ci_low, x.ci_high)} ({x.points:+.1f} points)"
            for x in g.itertuples()) if len(g) else NM
        involved = sorted({old, *g["new"]}, key=version_key) if len(g) else []
        found = _witnesses(res, involved, make, unx)

        def judge(x, c=c) -> str:
            other = OTHER_REGRESSION + ("" if family(x.new) == "8.0" else
                                        f"; {_version(x.new)} here against the source's 8.0.45")
            return verdicts.under_other_conditions(verdicts.magnitude(
                x.ci_low, x.ci_high, c, c, point=x.ratio, n=int(min(x.windows_base, x.windows_new))), other)

        judged = per_version({name: _by_threads(gv, judge, _all({n: found[n] for n in (old, name)}), gate=True)
                              for name, gv in g.groupby("new", sort=False)}) \
            if len(g) else NM
        rows.append(verdicts.ClaimRow(
            KERNELMAKER_REGRESSION.cite(claim),
            f"8.0 / 5.7 from {g0:.3f} to {src.gap(factor):.3f} with {factor}: the gap moves by {c:.3f} "
            f"({src.gap_points(factor):+.1f} points from its TPS; it prints the rounded gaps' difference). "
            f"{src.REGRESSION_CONDITIONS}",
            ours + "; the change in the gap is 8.0's ratio (configuration / *binlog*) over 5.7's, standard errors added",
            measured, judged, ids=(lid,), witness=_row_witness(found) if found else None))
    return rows


def _all(found: dict[str, verdicts.Witness]) -> verdicts.Witness | None:
    """The witness of a verdict that reads several servers at once (a gap between versions, a ratio of their
    ratios): held only where every server's held (verdicts.witnesses holds where any did)."""
    if not found:
        return None
    if len(found) == 1:
        return next(iter(found.values()))
    return verdicts.witness(all(w.ok for w in found.values()),
                            "; ".join(f"{_version(k)}: {w.what}" for k, w in found.items()))


NOUNS = {"cpu/o": "CPU per operation", "cs/o": "context switches per operation", "wKB/o": "KB written per operation"}


def _more_in_8(g: pd.DataFrame, gains, moved: pd.DataFrame, witness_of, both: verdicts.Witness | None) -> str:
    """"Gains in both versions, more in 8.0 than in 5.7": the comparison first, by the interval of the
    ratio of the two gains (``moved``: gap_changes' rows for the configuration, 8.0's window ratios over
    5.7's, per thread count: above 1, 8.0 gains more), gated by ``both`` (the two versions' witnesses, each
    held), then whether each version gains (``gains`` per row, as _by_version gives it, each gated by its
    version's witness, ``witness_of(name)``)."""
    fams = {family(n): n for n in g["series_name"]}
    if "5.7" not in fams or "8.0" not in fams or moved.empty:
        return _by_version(g, gains, witness_of)
    found = {f"{x.threads}t": verdicts.witnessed(verdicts.interval(x.ci_low, x.ci_high, "above"), both)
             for x in moved.itertuples()}
    more = (next(iter(found.values())) if len(set(found.values())) == 1
            else "; ".join(f"{k}: {v}" for k, v in found.items()))
    each = _by_version(g, lambda x: (gains(x) if gains(x).startswith("not testable")
                                     else verdicts.interval(x.ci_low, x.ci_high, "above")), witness_of)
    return (f"more in {_version(fams['8.0'])} than in {_version(fams['5.7'])}: {more}; "
            f"a gain in each version: {each}")


# --- the rows issue 44 added: claims of the sources' passages the first ledger left out -------------------------

PER_OP = {"server CPU/o": "CPU", "all cs/o": "context switches", "write() KB/o": "write() KB"}


def per_op_costs_row(res: Results, r: pd.DataFrame) -> verdicts.ClaimRow:
    """GTIDs raise the CPU, context switches and bytes written per operation (the GTID source's summary, every
    write test): per version whose series writes each commit's GTID to its table, each of the three per-operation
    ratios (GTID / no GTID) on every test, judged above 1 (verdicts.interval), combined over the tests, each gated
    by the version's witness (per_op_witness); older versions not testable."""
    g = r[(r["comparison"] == "GTIDs") & (r["threads"] == 1) & r["value"].isin(PER_OP)] if len(r) else r
    names = sorted(g["series_name"].unique(), key=version_key) if len(g) else []
    found = {name: per_op_witness(_runs_of(res, None, [name])) for name in names}

    def verdict(name: str, gv: pd.DataFrame) -> str:
        if predates_source(name):
            return predates_source(name)
        return "; ".join(f"{PER_OP[value]}: " + verdicts.combine(
            verdicts.witnessed(_rises(x, OTHER_GTID), found[name])
            for x in gv[gv["value"] == value].itertuples()) for value in PER_OP if (gv["value"] == value).any())

    measured = "; ".join(f"{_version(name)}: " + ", ".join(
        f"{PER_OP[value]} {stats_range(gv[gv['value'] == value])}" for value in PER_OP if (gv["value"] == value).any())
        for name, gv in sorted(g.groupby("series_name"), key=lambda kv: version_key(kv[0]))) if len(g) else NM
    return verdicts.ClaimRow(
        CALLAGHAN_GTID.cite("GTIDs bring significant increases in CPU, context switches and KB written to storage "
                            "per operation, against the same version without them"),
        f"1.10X to 1.45X on insert (9.5.0; 8, 24 and 48 cores), decreases of about 3% on update-index (8-core). "
        f"{src.EIGHT.conditions}",
        "1 client; every write test; the server's CPU per query, its threads' switches and its processes' write() "
        "bytes per query in its own turns",
        "GTID / no GTID over the write tests, least to most: " + measured,
        per_version({name: verdict(name, gv) for name, gv in
                     sorted(g.groupby("series_name"), key=lambda kv: version_key(kv[0]))}) if len(g) else NM,
        ids=("gtid-raises-per-op-costs",), witness=_row_witness(found) if found else None)


def _rises(x, other: str) -> str:
    """A ratio claimed above 1 with no size (its row ``x``: ratio, ci_low, ci_high, pairs), judged on the log
    scale by verdicts.direction, an agreement under this lab's ``other`` conditions."""
    return _sign(float(np.log(x.ci_low)) if x.ci_low > 0 else float("nan"),
                 float(np.log(x.ci_high)) if x.ci_high > 0 else float("nan"), other)


def _sign(lo: float, hi: float, other: str) -> str:
    """An effect claimed above 0 with no size, by its interval [lo, hi]: verdicts.direction where the interval
    excludes 0 (an agreement under this lab's ``other`` conditions), else verdicts.interval's one wording of an
    interval that spans 0 (the same for every point a row combines)."""
    if lo > 0 or hi < 0:
        return verdicts.under_other_conditions(verdicts.direction(lo, hi), other)
    return verdicts.interval(lo, hi, "above", reference=0.0)


def stats_range(g: pd.DataFrame) -> str:
    """Ratios' least and largest with their intervals ('1.012 [0.99, 1.03] to 1.100 [1.05, 1.15]')."""
    lo, hi = g.loc[g["ratio"].idxmin()], g.loc[g["ratio"].idxmax()]
    a, b = (f"{paired.cell(x.ratio, x.ci_low, x.ci_high)} ({x.test})" for x in (lo, hi))
    return a if lo.name == hi.name else f"{a} to {b}"


DEFAULTS = ("default_gtid_mode_on", "default_enforce_gtid_consistency_on")
GTID_DEFAULT_FROM = (9, 5, 0)  # the source: "ON by default in MySQL 9.5.0 and ... OFF by default in earlier releases"


def defaults_witness(g: pd.DataFrame) -> verdicts.Witness:
    """The binary's own defaults read in one version's runs ``g`` (its options probe, run in each server's
    container): in every run, the same for both options."""
    have = g[[c for c in DEFAULTS if c in g]].dropna() if all(c in g for c in DEFAULTS) else pd.DataFrame()
    if have.empty:
        return verdicts.witness(False, f"no default read with these {len(g)} runs")
    one = have.drop_duplicates()
    on = ["ON" if v else "OFF" for v in one.iloc[0]]
    return verdicts.witness(len(have) == len(g) and len(one) == 1,
                            f"gtid_mode {on[0]}, enforce_gtid_consistency {on[1]} by the binary's own defaults "
                            f"(mysqld --no-defaults --verbose --help) in {len(have)} of {len(g)} runs"
                            + ("" if len(one) == 1 else f", {len(one)} different readings"))


def defaults_row(res: Results) -> verdicts.ClaimRow:
    """gtid_mode and enforce_gtid_consistency ON by default from 9.5.0, OFF before: each version's binary's own
    defaults, read with its runs."""
    w = _runs_of(res)
    names = versions(w)
    found = {name: defaults_witness(w[w["series_name"] == name]) for name in names}

    def verdict(name: str) -> str:
        g = w[w["series_name"] == name]
        if not found[name].ok:
            return verdicts.witnessed(verdicts.holds(False), found[name])
        on = bool(g[DEFAULTS[0]].iloc[0]) and bool(g[DEFAULTS[1]].iloc[0])
        off = not bool(g[DEFAULTS[0]].iloc[0]) and not bool(g[DEFAULTS[1]].iloc[0])
        expected = version_key(name) >= GTID_DEFAULT_FROM
        return verdicts.holds(on if expected else off, f"{'OFF' if expected else 'ON'} by default in {_version(name)}")

    return verdicts.ClaimRow(
        CALLAGHAN_GTID.cite("gtid_mode and enforce_gtid_consistency are ON by default in MySQL 9.5.0 and were OFF "
                            "by default in earlier releases"),
        "9.5.0 against 8.0.44, 8.4.7 and 9.4.0: SHOW GLOBAL VARIABLES of each release, compared with diff",
        "each version's binary asked for its own defaults, no option file read, in its servers' containers",
        "; ".join(f"{_version(n)}: {found[n].what.split(' by ')[0]}" if found[n].ok else f"{_version(n)}: not read"
                  for n in names) or NM,
        per_version({name: verdict(name) for name in names}),
        ids=("gtid-on-by-default-in-9-5",), witness=_row_witness(found) if found else None)


def binlog_cpu_row(res: Results, r: pd.DataFrame) -> verdicts.ClaimRow:
    """Even unsynced (sync_binlog = 0), the binlog adds CPU at every commit: the server's CPU per query with the
    binlog over without, per version on update-non-index, judged above 1, gated by binlog_witness."""
    g = r[(r["comparison"] == "the binlog") & (r["value"] == "server CPU/o") & (r["test"] == "update-non-index")
          & (r["threads"] == 1)] if len(r) else r
    names = sorted(g["series_name"].unique(), key=version_key) if len(g) else []
    found = _witnesses(res, names, binlog_witness, ("update-non-index",))
    allt = r[(r["comparison"] == "the binlog") & (r["value"] == "server CPU/o") & (r["threads"] == 1)] if len(r) else r
    return verdicts.ClaimRow(
        KERNELMAKER_REGRESSION.cite("Even with sync_binlog = 0, the binlog adds CPU at every commit (event "
                                    "formatting, the table map, memory allocation)"),
        f"a mechanism, from profiles: turning the binlog off gains 67% (5.7) and 86% (8.0) on a commit-bound test. "
        f"{src.REGRESSION_CONDITIONS}",
        "update-non-index, 1 client; the server container's CPU per query, binlog / binlog off (sync_binlog = 0 in "
        "both)",
        "binlog / binlog off CPU per query: " + _cells(g, lambda x: _version(x.series_name))
        + (f"; over every write test {stats_range(allt)}" if len(allt) else ""),
        _by_version(g, lambda x: _rises(x, OTHER_REGRESSION), lambda name: found[name])
        if len(g) else NM, ids=("binlog-cpu-per-commit",), witness=_row_witness(found) if found else None)


EVENT_COLUMNS = {"binlog_table_map_events_per_commit": "table map", "binlog_rows_events_per_commit": "rows",
                 "binlog_anonymous_gtid_events_per_commit": "anonymous GTID", "binlog_gtid_events_per_commit": "GTID",
                 "binlog_query_events_per_commit": "query (BEGIN)"}
ONE_PER_COMMIT = 0.01  # "one per commit": within 1% of 1 over the events read


def events_witness(g: pd.DataFrame) -> verdicts.Witness:
    """The binlog's events read back after the windows of one version's *binlog* runs ``g``: how many commits
    were counted in how many runs."""
    on = _configs(g, "binlog")
    n = on["binlog_events_read_commits"] if "binlog_events_read_commits" in on else pd.Series(float("nan"),
                                                                                                index=on.index)
    ok = len(on) > 0 and n.notna().all() and (n > 0).all()
    return verdicts.witness(ok, f"the binlog's events read back after {int(n.notna().sum())} of {len(on)} *binlog* "
                                f"windows, {int(n.fillna(0).sum()):,} commits counted" if n.notna().any()
                            else f"no binlog events read with these {len(on)} *binlog* runs")


def binlog_events_row(res: Results) -> verdicts.ClaimRow:
    """Every transaction generates binlog events of its own, a table map built for it at commit: per version, the
    *binlog* runs on update-non-index wrote one table map and one rows event per commit (within ONE_PER_COMMIT),
    read back from the binlog after each window (verdicts.holds), gated by events_witness."""
    w = _runs_of(res, ("update-non-index",))
    on = _configs(w, "binlog")
    names = versions(on)
    found = {name: events_witness(w[w["series_name"] == name]) for name in names}

    def medians(name: str) -> dict[str, float]:
        g = on[on["series_name"] == name]
        return {c: float(g[c].median()) for c in (*EVENT_COLUMNS, "binlog_events_per_commit") if c in g}

    def verdict(name: str) -> str:
        m = medians(name)
        ok = all(abs(m.get(c, float("nan")) - 1) <= ONE_PER_COMMIT for c in ("binlog_table_map_events_per_commit",
                                                                            "binlog_rows_events_per_commit"))
        return verdicts.witnessed(verdicts.holds(ok, "not one table map and one rows event per commit"), found[name])

    def said(name: str) -> str:
        m = medians(name)
        if not m or m.get("binlog_events_per_commit") != m.get("binlog_events_per_commit"):
            return f"{_version(name)}: not read"
        return (f"{_version(name)}: {m['binlog_events_per_commit']:.2f} events per commit ("
                + ", ".join(f"{label} {m[c]:.2f}" for c, label in EVENT_COLUMNS.items() if c in m and m[c] > 0) + ")")

    return verdicts.ClaimRow(
        KERNELMAKER_REGRESSION.cite("The workload is commit-bound and every transaction generates its binlog event, "
                                    "a Table_map built for it"),
        f"a mechanism (its reading of the binlog path's CPU). {src.REGRESSION_CONDITIONS}",
        "update-non-index, 1 client, *binlog* servers; the events of the window's transactions read back with SHOW "
        "BINLOG EVENTS (medians over the windows)",
        "; ".join(said(n) for n in names) or NM,
        per_version({name: verdict(name) for name in names}),
        ids=("binlog-events-per-commit",), witness=_row_witness(found) if found else None)


VERSION_VALUES = {"qps_common": "throughput", "cpu_per_op_common_us": "CPU/o", "cs_per_op": "cs/o",
                  "wchar_kb_per_op": "write() KB/o"}
TRACKED = ("binlog", "binlog + GTID")  # the GTID source's -nogtid and -gtid configurations


def version_changes(res: Results) -> pd.DataFrame:
    """Each newer version against the one before it, per test and configuration of TRACKED: the log ratio of
    the windows' geometric means of every value of VERSION_VALUES (columns new, old, test, config, and per value
    its log ratio), the versions' own sweeps unpaired."""
    w = _runs_of(res)
    w = _configs(w[w["threads"] == 1], *TRACKED) if len(w) else w
    names = versions(w)
    rows = []
    for old, new in zip(names, names[1:]):
        for (test, config), g in w.groupby(["test", "config"], observed=True):
            a, b = g[g["series_name"] == new], g[g["series_name"] == old]
            if a.empty or b.empty:
                continue
            row = {"new": new, "old": old, "test": test, "config": str(config)}
            for col, label in VERSION_VALUES.items():
                x, y = (a[col] if col in a else pd.Series(dtype=float)), (b[col] if col in b else pd.Series(dtype=float))
                x, y = x[x > 0], y[y > 0]
                row[label] = float(np.log(x).mean() - np.log(y).mean()) if len(x) and len(y) else float("nan")
            rows.append(row)
    return pd.DataFrame(rows)


def _correlation(x: pd.Series, y: pd.Series) -> tuple[float, float, float, int]:
    """Pearson's r of x and y with its 95% interval (Fisher's z, scipy), and the points; NaN below 4 points."""
    from scipy import stats as sps

    keep = x.notna() & y.notna()
    n = int(keep.sum())
    if n < 4 or x[keep].nunique() < 2 or y[keep].nunique() < 2:  # no spread: no correlation to speak of
        return float("nan"), float("nan"), float("nan"), n
    res = sps.pearsonr(x[keep], y[keep])
    ci = res.confidence_interval(0.95)
    return float(res.statistic), float(ci.low), float(ci.high), n


def tracks_row(res: Results) -> verdicts.ClaimRow:
    """Where a newer version loses throughput, its CPU, context switches and bytes written per operation grow:
    over every test and configuration of TRACKED, each consecutive pair of versions, the correlation of the log
    throughput change with each per-operation change, judged below 0 (verdicts.interval on Pearson's r, reference
    0), gated by the turns' witness of every version (the per-operation figures counted in each server's own
    turns)."""
    vc = version_changes(res)
    names = sorted(set(vc["new"]) | set(vc["old"]), key=version_key) if len(vc) else []
    found = {name: turn_witness(_configs(_runs_of(res, None, [name]), *TRACKED)) for name in names}
    both = _all(found)
    parts, judged = [], []
    for label in ("CPU/o", "cs/o", "write() KB/o"):
        rr, lo, hi, n = _correlation(vc["throughput"], vc[label]) if len(vc) else (float("nan"),) * 3 + (0,)
        parts.append(f"{label}: r = {rr:+.2f} [{lo:+.2f}, {hi:+.2f}] over {n} points" if n >= 4 else f"{label}: {NM}")
        judged.append(f"{label}: " + verdicts.witnessed(_sign(-hi, -lo, OTHER_GTID), both))
    pairs = ", ".join(dict.fromkeys(f"{_version(x.new)} / {_version(x.old)}" for x in vc.itertuples())) if len(vc) else ""
    return verdicts.ClaimRow(
        CALLAGHAN_GTID.cite("Performance regressions are correlated with increases in CPU, context switches and KB "
                            "written to storage per transaction"),
        "a correlation seen over the write tests of 8.0.44 to 9.5.0 on three servers (vmstat and iostat per "
        "operation), no number given",
        f"each version over the one before ({pairs}), every write test, *binlog* and *binlog + GTID*: the change in "
        "log throughput against the change in each per-operation figure (Pearson's r, Fisher's 95% interval; one "
        "server at a time on one CPU, its throughput in its turns is close to the inverse of its CPU per query, so "
        "that reading nearly follows; the switches and bytes do not)",
        "; ".join(parts) if len(vc) else NM,
        "; ".join(judged) if len(vc) else NM, ids=("regressions-track-per-transaction-cost",), witness=both)


BIG_TRANSACTIONS = ("insert", "update-inlist")  # the tests the source names as having larger transactions


def larger_trx_row(res: Results) -> verdicts.ClaimRow:
    """Regressions larger on insert and update-inlist, the tests the source says have larger transactions: the
    newest version over the one before it at *binlog*, the mean log throughput change on those two tests minus
    the mean on the other write tests, Welch-style (each test's windows unpaired, variances added, Satterthwaite
    degrees of freedom), judged below 0; the witness: each test's binlog bytes per commit (its transaction's
    size) stored with the runs."""
    w = _runs_of(res)
    w = _configs(w[w["threads"] == 1], "binlog") if len(w) else w
    names = versions(w)
    if len(names) < 2:
        return verdicts.ClaimRow(
            CALLAGHAN_GTID.cite("Regressions might be larger for insert and update-inlist, whose transactions are "
                                "larger than the other write tests'"), "no number given", "", NM, NM,
            ids=("larger-transactions-larger-regressions",), witness=None)
    old, new = names[-2], names[-1]
    est, var, dof_terms = {}, {}, []
    for test, g in w.groupby("test"):
        a, b = (np.log(g.loc[g["series_name"] == n, "qps_common"].dropna()) for n in (new, old))
        if len(a) < 2 or len(b) < 2:
            continue
        est[test] = float(a.mean() - b.mean())
        var[test] = (float(a.var(ddof=1)) / len(a), len(a) - 1, float(b.var(ddof=1)) / len(b), len(b) - 1)
    big = [t for t in BIG_TRANSACTIONS if t in est]
    rest = [t for t in est if t not in BIG_TRANSACTIONS]
    size = w.groupby("test")["binlog_bytes_per_commit"].median() if "binlog_bytes_per_commit" in w else pd.Series()
    wit = verdicts.witness(len(size.dropna()) == len(est) and len(est) > 0,
                           "binlog bytes per commit (the transaction's size) at *binlog*: "
                           + ", ".join(f"{t} {size[t]:,.0f}" for t in size.dropna().sort_values(ascending=False).index))
    if not big or not rest:
        return verdicts.ClaimRow(
            CALLAGHAN_GTID.cite("Regressions might be larger for insert and update-inlist, whose transactions are "
                                "larger than the other write tests'"), "no number given", "", NM, NM,
            ids=("larger-transactions-larger-regressions",), witness=wit)
    d = np.mean([est[t] for t in big]) - np.mean([est[t] for t in rest])
    terms = [(v / len(big) ** 2, df) for t in big for v, df in (var[t][:2], var[t][2:])] + \
            [(v / len(rest) ** 2, df) for t in rest for v, df in (var[t][:2], var[t][2:])]
    se = float(np.sqrt(sum(v for v, _ in terms)))
    dof = stats.satterthwaite(terms)
    half = stats.t_quantile(0.95, dof) * se if dof == dof else float("nan")
    lo, hi = d - half, d + half
    return verdicts.ClaimRow(
        CALLAGHAN_GTID.cite("Regressions might be larger for insert and update-inlist, whose transactions are "
                            "larger than the other write tests'"),
        "no number given; 8.0.44 to 9.5.0 on 8, 24 and 48 cores",
        f"{_version(new)} over {_version(old)} at *binlog*, 1 client: the mean change in log throughput on "
        f"{' and '.join(big)} minus the mean on {', '.join(rest)} (each test's windows unpaired, Welch-Satterthwaite)",
        "per test " + ", ".join(f"{t} {np.exp(est[t]):.3f}" for t in est)
        + f"; {' and '.join(big)} over the rest: {paired.cell(float(np.exp(d)), float(np.exp(lo)), float(np.exp(hi)))}",
        verdicts.witnessed(_sign(-hi, -lo, OTHER_GTID), wit),
        ids=("larger-transactions-larger-regressions",), witness=wit)


def claims(res: Results) -> pd.DataFrame:
    r = ratios(res)
    return verdicts.table(gtid_rows(res, r) + regression_rows(res, r)
                          + [binlog_cpu_row(res, r), binlog_events_row(res), tracks_row(res), larger_trx_row(res)])
