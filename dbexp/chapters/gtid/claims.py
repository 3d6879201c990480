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

import pandas as pd

from dbexp.catalog.versions import version_key
from dbexp.chapters.gtid.analysis import family, gap_changes, main_runs, pick, ratios, tidy, versions, windows
from dbexp.chapters.gtid.engines.innodb import of_series
from dbexp.experiments import ledger as src
from dbexp.experiments import paired, rotation, verdicts
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
    """One at a time, per-operation figures counted in each server's own turns (rotation.describe), in the
    runs ``g``."""
    ok, what = rotation.describe(g)
    return verdicts.witness(ok, f"turns: {what}")


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
    """Verdicts by server as one cell: the verdict where every server gave it, else each server's."""
    if not found:
        return NM
    if len(set(found.values())) == 1:
        return next(iter(found.values()))
    return "; ".join(f"{_version(name)}: {v}" for name, v in found.items())


def _clients(threads) -> str:
    """[1] -> '1 client thread', [1, 2] -> '1 or 2 client threads'."""
    return " or ".join(str(t) for t in threads) + f" client thread{'s' if list(threads) != [1] else ''}"


def here(res: Results) -> str:
    """This lab's conditions, from the runs."""
    w = tidy(res)
    d = windows(res)
    if not d["n"]:
        return "no runs at this scale"
    names = ", ".join(_version(n) for n in versions(main_runs(w)))
    m = main_runs(w)
    turns = (f"taking one server CPU in turns of {m['slice_s'].max():g} s, one at a time"
             if "slice_s" in m and m["slice_s"].fillna(0).max() > 0 else "sharing one server CPU at once")
    instances = int(m["instance"].nunique()) if "instance" in m and m["instance"].notna().any() else 1
    return (f"{names}; {_clients(d['threads'])} per server, five servers (one per configuration) {turns}; "
            f"{instances} independently started set{'s' if instances > 1 else ''} of them; 1 table of "
            f"{d['table_size']:,} rows; {d['repeats']} windows of "
            f"{d['duration_s']:g} s per point ({d['common_s']:.1f} s between the marks); innodb_flush_log_at_trx_commit "
            f"= 2, sync_binlog = 0; --db-ps-mode=auto")


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
                                 f"mysql.gtid_executed; {_version(name)} does not")


def _span(lo: float, hi: float) -> str:
    """Whole numbers from ``lo`` to ``hi`` ('643', '640 to 652')."""
    a, b = f"{lo:,.0f}", f"{hi:,.0f}"
    return a if a == b else f"{a} to {b}"


def _range(lo: float, hi: float) -> str:
    return f"{lo:.3f}" if abs(hi - lo) < 5e-4 else f"{lo:.3f} to {hi:.3f}"


def gtid_rows(res: Results, r: pd.DataFrame, cond: str) -> list[verdicts.ClaimRow]:
    rows = []
    tput = r[(r["comparison"] == "GTIDs") & (r["value"] == "throughput")] if len(r) else r
    one = tput[tput["threads"] == 1] if len(tput) else tput
    # the 48-core server's summary: 40 clients, where GTIDs are assigned and recorded under contention
    threads = sorted(tput["threads"].unique()) if len(tput) else []
    names = sorted(tput["series_name"].unique(), key=version_key) if len(tput) else []
    assigned = _witnesses(res, names, gtid_witness)
    measured = "; ".join(f"{_version(n)}: {_range(g['ratio'].min(), g['ratio'].max())} over {len(g)} points"
                         for n, g in tput.groupby("series_name")) if len(tput) else NM
    rows.append(verdicts.ClaimRow(
        CALLAGHAN_GTID.cite("With gtid_mode and enforce_gtid_consistency ON, write-heavy tests typically get 5 to "
                            "10% less throughput with 40 clients on the 48-core server"),
        f"GTID / no GTID {src.FORTY_EIGHT_TPUT[0]:.2f} to {src.FORTY_EIGHT_TPUT[1]:.2f}; on insert, no GTID does "
        f"{src.INSERT_NOGTID_OVER_GTID['48-core']:.2f}X (9.5.0; 24-core, 16 clients: "
        f"{src.INSERT_NOGTID_OVER_GTID['24-core']:.2f}X). {src.FORTY_EIGHT.conditions}",
        cond, "GTID / no GTID throughput, " + measured,
        verdicts.not_testable(f"40 clients on 48 cores, where many sessions contend to assign and record GTIDs; "
                              f"here {_clients(threads)} per server, one server at a time on one server CPU")
        if len(tput) else NM, ids=("gtid-48-core-throughput",), witness=_row_witness(assigned)))
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
            cond + "; 1 client" + (f"; {' and '.join(early)} predate the per-commit GTID table writes of every "
                                   "version the source measured" if early else ""),
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
            f"{src.EIGHT.conditions}", f"{cond}; 1 client; {ours}", f"gtid-insert-{lid}"))
    # the same per-operation readings on update-index, where the 8-core server found GTIDs faster
    for key, labels, claim, theirs, ours, lid in specs:
        low, high = src.UPDATE_INDEX_X[key]
        printed = src.UPDATE_INDEX_PRINTED[key]
        rows.append(_per_op_row(
            res, r, "update-index", key, labels, low, high,
            CALLAGHAN_GTID.cite(f"On update-index, GTIDs lower the {NOUNS[key]}: {printed} on the 8-core server"),
            f"GTID / no GTID {low:.3f} to {high:.3f} ({printed}, read to the percent; 9.5.0, {theirs}). "
            f"{src.EIGHT.conditions}", f"{cond}; 1 client; {ours}", f"gtid-update-index-{lid}"))
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


def regression_rows(res: Results, r: pd.DataFrame, cond: str) -> list[verdicts.ClaimRow]:
    rows = []
    gc = gap_changes(res)
    w = tidy(res)
    old, new = (pick(main_runs(w), f) if len(w) else None for f in ("5.7", "8.0"))
    pair = gc[(gc["base"] == old) & (gc["new"] == new)] if len(gc) and old and new else pd.DataFrame()
    within = cond + (f"; {_version(new)} has no innodb_log_writer_threads option: its log writer threads always run"
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
            ("binlog off", "skip-log-bin", "The binary log is the largest single factor of 8.0's gap: "
                                           f"{src.PRINTED['binlog_pp']} of its {-100 * src.PRINTED['gap']:.1f} points, "
                                           "measured alone", binlog_witness, "binlog-largest-factor"),
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
        if factor == "skip-log-bin" and judged != NM:
            # "largest" ranks the source's factors: it needs each of them measured alone, and this chapter
            # measures two (the binlog and performance_schema)
            judged = (verdicts.not_measured(f"'largest' needs each of the source's {len(ABLATED)} factors changed "
                                            f"alone; this chapter changes {len(MEASURED_FACTORS)} of them: the binlog "
                                            "and performance_schema") + f"; its {src.PRINTED['binlog_pp']} points "
                      f"alone: {judged}")
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
ABLATED = [f for f in src.ABLATION_TPS if f != "baseline"]  # the source's factors, each changed alone
MEASURED_FACTORS = ("skip-log-bin", "performance_schema=0")  # those this chapter changes alone


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


def claims(res: Results) -> pd.DataFrame:
    r = ratios(res)
    cond = here(res)
    return verdicts.table(gtid_rows(res, r, cond) + regression_rows(res, r, cond))
