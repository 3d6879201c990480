"""The sources' claims this chapter can speak to, one verdicts.ClaimRow each: the source's number and
conditions, this lab's, what the runs measured (every reading where a definition or the runs can be
read two ways) and a verdict computed from the intervals: the spread of single runs, then each
flavor's version claims (its part)."""

from __future__ import annotations

import math

import pandas as pd

from dbexp.chapters.calibration.analysis import (LENGTH_FACTOR, _derived, _of_series, aa_intervals, aa_summary,
                                                 configuration, length_checks, scan_variance, scan_witness,
                                                 settle_runs, settle_table, spread_table, version_ratio,
                                                 version_repeats)
from dbexp.chapters.calibration.chapter import PARTS
from dbexp.chapters.calibration.engines import VersionClaim
from dbexp.book.prose import plural
from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import CALLAGHAN_24, CALLAGHAN_PG

# the source's practice: each microbenchmark run once per version, read-only ones for 600 s
SOURCE_RUN_S, SOURCE_WRITE_S = 600, 900
SOURCE_PRACTICE = (f"no figure; one run per version and test, {SOURCE_RUN_S} s (reads) or {SOURCE_WRITE_S} s (writes), "
                   "16 clients, 24 cores, 8 tables x 10M rows cached, MySQL 5.6.51 to 9.5.0")


qualified = verdicts.qualified_here  # a bare 'agrees' says under whose conditions: this lab's, never the source's


def _seconds(df: pd.DataFrame) -> float:
    return float(df["workload"].map(lambda x: x["duration_s"]).max())


def conditions(res: Results) -> str:
    """What every row's runs share, said once above the claims table (issue 45): clients, pinning, the table."""
    w = res.wide[res.wide["part"] == "spread"]
    if w.empty:
        return ""
    rows = w["workload"].map(lambda x: x["table_size"]).max()
    return (f"{int(w['threads'].max())} clients, the server pinned to one CPU and sysbench to another, 1 table x "
            f"{rows:,} rows cached")


def _spread_here(res: Results, n: int, versions: str = "") -> str:
    w = res.wide[res.wide["part"] == "spread"]
    return f"{versions}{n} repeats of {_seconds(w):g} s per server"


def _as_run(c: dict) -> tuple[bool, str]:
    """Whether runs ran the configuration the page names (configuration()), and what they stored of it."""
    n = c["runs"]
    ok = n > 0 and c["pinned"] == c["container"] == c["alone"] == c["checked"] == c["reported"] == n
    return ok, (f"{n} runs: the server's CPUs read back as asked ({', '.join(c['cpus'])}) in {c['pinned']} of {n}, "
                f"sysbench on CPU {', '.join(c['client'])}, the server in its container in {c['container']}, the only "
                f"server under load in {c['alone']}, its table checked before {c['checked']}, its version as the "
                f"server reports it ({'; '.join(c['versions'])}) in {c['reported']}")


def _per_query(c: dict) -> str:
    """What the server counted per query, as words (its flavor's counts only)."""
    parts = [(k, words) for k, words in (("Com_select", "selects"), ("Innodb_rows_read", "rows read"),
                                         ("tup_fetched", "tuples fetched"), ("blks_hit", "buffer hits"),
                                         ("blks_read", "blocks read from outside shared buffers"))
             if c.get(f"per_query_{k}") == c.get(f"per_query_{k}")]
    return ", ".join(f"{c[f'per_query_{k}']:.{4 if k == 'blks_read' else 2}f} {words}" for k, words in parts)


def single_runs_row(res: Results) -> verdicts.ClaimRow:
    """The lab's own A/A, read as the source reads a relative QPS: one run of a server on one start against one
    run of the same server on another (aa_pairs); "below 1 may be noise" agrees once noise alone reads as a
    regression of NEAR_BAND or more (verdicts.events, some expected). The witness: each pair's two runs are two
    starts of one image, and every run ran as the page says (configuration)."""
    sp = spread_table(res)
    ps = sp[sp["script"] == "oltp_point_select"]
    claim = CALLAGHAN_24.cite("A relative QPS below 1 may be a regression, or may be noise")
    ids = ("relative-qps-below-one", "below-one-may-be-noise", "base-run-outlier")
    aa = aa_summary(res)
    if ps.empty or not aa.get("n"):
        why = "needs the spread's point selects on two instances of each server (one run on each, paired)"
        return verdicts.ClaimRow(claim, SOURCE_PRACTICE, verdicts.not_measured(why), verdicts.not_measured(why),
                                 verdicts.not_measured(why), ids=ids)
    n, band = aa["n"], aa["band"]
    seconds = _seconds(res.wide[res.wide["part"] == "spread"])
    lo_b, hi_b = aa["below_ci"]
    lo_a, hi_a = aa["above_ci"]
    moves = stats.single_runs_spread(float(ps["cv"].median()))
    measured = (f"{n} A/A pairs of single {seconds:g} s point-select runs ({aa['servers']} servers, each run on its own "
                f"start of the server against one on another): {aa['below']} of {n} read below {1 - band:.2f} "
                f"({lo_b:.0%} to {hi_b:.0%} of such pairs, exact 95% interval), {aa['above']} above {1 + band:.2f} "
                f"({lo_a:.0%} to {hi_a:.0%}); from {aa['min']:.3f} to {aa['max']:.3f}, a median "
                f"{100 * (math.exp(aa['median_gap']) - 1):.1f}% from 1; of the {aa['beyond']} pairs beyond "
                f"{band:.0%} either way, {aa['gone']} read within it on their repeat (the server's other pair); the "
                f"spread's median CV {ps['cv'].median():.1%} puts 95% of such ratios within {moves:.1%} of 1")
    verdict = verdicts.events(aa["below"], n, hi_b, "some")
    if verdict == verdicts.AGREES:
        verdict = verdicts.agrees(f"noise alone read as a regression of {band:.0%} or more in {aa['below']} of {n} "
                                  "A/A pairs of single runs")
    spread = res.wide[(res.wide["part"] == "spread") & (res.wide["script"] == "oltp_point_select")]
    ok, what = _as_run(configuration(res, spread))
    ok = ok and aa["apart"] == aa["same_image"] == n
    what = (f"each pair's two runs on two starts of one image in {aa['apart']} of {n} pairs (the same image digest in "
            f"{aa['same_image']}); the spread's point selects, {what}")
    return verdicts.ClaimRow(claim, SOURCE_PRACTICE, _spread_here(res, int(ps["n"].max()))
                             + "; a server's run on its second instance over its run on its first, in run order",
                             measured, qualified(verdicts.witnessed(verdict, verdicts.witness(ok, what))), ids=ids,
                             witness=verdicts.witness(ok, what))


def aa_interval_row(res: Results) -> verdicts.ClaimRow:
    """This lab's answer to that noise: its intervals hold 1 on A/A comparisons they were not fitted on (each
    server's second instance over its first, the variance components pooled over the flavor's other servers:
    aa_intervals); the share that hold, its exact interval against 95% (verdicts.reproduced)."""
    claim = ("Our extension: this lab reads a ratio by its 95% interval, whose variance components are pooled over "
             "other servers than the two compared; on A/A comparisons those intervals hold 1 about 95% of the time")
    ai = aa_intervals(res)
    ids = ("aa-intervals-hold",)
    source = "none: the source reads single runs (one per version), with no interval"
    if ai.empty:
        why = "needs two instances of at least two servers of a flavor in the spread"
        return verdicts.ClaimRow(claim, source, verdicts.not_measured(why), verdicts.not_measured(why),
                                 verdicts.not_measured(why), ids=ids)
    n, k = len(ai), int(ai["holds"].sum())
    lo, hi = stats.proportion_ci(k, n)
    missed = ai[~ai["holds"]]
    measured = (f"{k} of {n} servers' A/A intervals hold 1 ({lo:.0%} to {hi:.0%}, exact 95% interval)"
                + ("; " + ", ".join(f"{r['server']} {r['ratio']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"
                                    for _, r in missed.iterrows()) + (" does not" if len(missed) == 1 else " do not")
                   if len(missed) else "")
                + f"; degrees of freedom {ai['dof'].min():.1f} to {ai['dof'].max():.1f}")
    spread = res.wide[(res.wide["part"] == "spread") & (res.wide["script"] == "oltp_point_select")]
    ok, what = _as_run(configuration(res, spread))
    held_out = bool((ai["fitted_on"] >= 1).all())
    w = verdicts.witness(ok and held_out, f"each interval fitted on the flavor's other servers ({ai['fitted_on'].min()} "
                                          f"to {ai['fitted_on'].max()} of them), never its own; {what}")
    return verdicts.ClaimRow(claim, source, "the spread's point selects, each server's second instance over its first "
                             "(the mean of its runs there), the between-instance and within-instance variances pooled "
                             "over the flavor's other servers, a t quantile on their Satterthwaite degrees of freedom",
                             measured, verdicts.witnessed(verdicts.reproduced(lo, hi, 0.95), w), ids=ids, witness=w)


def scan_row(res: Results) -> verdicts.ClaimRow:
    """The scan test varies more from run to run than point selects, above all on PostgreSQL: per flavor the scan's
    variance of log QPS over point selects' (scan_variance, an F interval) above 1, and PostgreSQL's scan variance
    over each other flavor's above 1 (verdicts.interval). The witness: every scan read the whole table, by the
    server's own count of rows read per query."""
    claim = CALLAGHAN_PG.cite("The scan test can be prone to variance, especially on PostgreSQL")
    source = ("no figure; PostgreSQL 12.22 to 18.1, 40 clients on 48 cores, 8 tables of 250M rows read from storage "
              "(IO-bound), one 600 s run per version and test")
    ids = ("scan-prone-to-variance",)
    sv = scan_variance(res)
    if sv.empty:
        why = "needs the spread's scan runs (the scan test beside point selects on the same servers)"
        return verdicts.ClaimRow(claim, source, "\u2014", "\u2014", verdicts.not_measured(why), ids=ids,
                                 witness=verdicts.witness(False, "no such runs stored with these results"))
    seen = scan_witness(res)
    cells, found = [], []
    for _, r in sv.iterrows():
        cells.append(f"{r['flavor']} ({r['servers']} servers, {r['scan_runs']} runs): scan CV {r['scan_cv']:.1f}% "
                     f"({r['scan_df']} dof) against point selects' {r['point_cv']:.1f}% ({r['point_df']} dof), variance "
                     f"ratio {r['ratio']:.2f} [{r['low']:.2f}, {r['high']:.2f}]"
                     + (f"; PostgreSQL's scan variance over {r['flavor']}'s {r['pg_ratio']:.2f} [{r['pg_low']:.2f}, "
                        f"{r['pg_high']:.2f}]" if r["pg_ratio"] == r["pg_ratio"] else ""))
        found.append(verdicts.witnessed(verdicts.interval(r["low"], r["high"], "above"), seen))
        if r["pg_ratio"] == r["pg_ratio"]:
            found.append(verdicts.witnessed(verdicts.interval(r["pg_low"], r["pg_high"], "above"), seen))
    here = (f"the source's scan test (every row of the {int(_table_rows(res)):,}-row table read, none returned) run "
            f"{sv['scan_s'].max():g} s beside the spread's point selects on the same servers, cached, one server CPU; "
            "the variance of log QPS between runs of one server pooled over each flavor's servers, an F interval on "
            "each ratio of variances")
    return verdicts.ClaimRow(claim, source, here, "; ".join(cells), qualified(verdicts.combine(found)), ids=ids,
                             witness=seen)


def settle_row(res: Results) -> verdicts.ClaimRow:
    """Waiting after writes makes the reads that follow vary less: per settle server the immediate reads' variance
    of log QPS over the settled reads' (settle_table, an F interval) above 1 (verdicts.interval). The witness: the
    writes left a backlog at the immediate reads' start (the flavor's cleanup state) and the wait ran."""
    claim = CALLAGHAN_24.cite("Waiting some seconds after a write step reduces the variance of the steps that "
                              "follow", "the Insert Benchmark post")
    source = ("no figure; the wait grows with the table; the Insert Benchmark (1 client, 1 table, 8 cores), its "
              "read-write steps after l.i2")
    ids = ("settle-reduces-variance",)
    st = settle_table(res)
    if st.empty:
        why = "needs the settle part (reads right after a burst of writes, or after a wait)"
        return verdicts.ClaimRow(claim, source, "\u2014", "\u2014", verdicts.not_measured(why), ids=ids,
                                 witness=verdicts.witness(False, "no such runs stored with these results"))
    runs = settle_runs(res)
    found, cells, verdict = {}, [], []
    for _, r in st.iterrows():
        g = runs[(runs["flavor"] == r["flavor"]) & (runs["version"] == r["version"])]
        ok, what = _as_run(configuration(res, g))
        im = g[g["variant"] == "immediate"]
        backlog = _backlog_words(r["flavor"], r["immediate_backlog"], r["settled_backlog"])
        found[r["server"]] = verdicts.witness(
            ok and len(im) > 0 and (g["settle_wait_s"][g["variant"] == "settled"] > 0).all(),
            f"{backlog} (medians); {what}")
        cells.append(f"{r['server']} ({r['runs']} reads each side): CV {r['immediate_cv']:.1f}% right after the writes, "
                     f"{r['settled_cv']:.1f}% after {r['wait_s']:g} s; variance ratio {r['ratio']:.2f} "
                     f"[{r['low']:.2f}, {r['high']:.2f}]; settled over immediate QPS {r['qps_ratio']:.3f} "
                     f"[{r['qps_low']:.3f}, {r['qps_high']:.3f}]")
        verdict.append(verdicts.witnessed(verdicts.interval(r["low"], r["high"], "above"), found[r["server"]]))
    here = (f"{st['write_s'].max():g} s of oltp_write_only, then {st['read_s'].max():g} s of point selects read at once "
            f"or after {st['wait_s'].max():g} s, in ABBA order on one server start, one server CPU; the immediate "
            "reads' variance of log QPS over the settled reads', an F interval")
    return verdicts.ClaimRow(claim, source, here, "; ".join(cells), qualified(verdicts.combine(verdict)), ids=ids,
                             witness=_named_witness(found))


CACHED_READS = 0.01  # reads from storage per query a cached run stays under (one in a hundred queries)


def cached_row(res: Results) -> verdicts.ClaimRow:
    """A cached workload does no read IO: per spread run of point selects, the server's own count of reads from
    storage per query (its engine part's ``storage_reads``; a count that did not move is not stored: 0 where the run
    stored the server's counts), none of them at CACHED_READS or more (verdicts.events, none expected)."""
    claim = CALLAGHAN_24.cite("With the database cached there should be no read IO (and some write IO)")
    source = "no figure; sysbench with 8 tables of 10M rows cached by InnoDB, 16 clients, 24 cores"
    ids = ("cached-no-read-io",)
    w = res.wide
    w = w[(w["part"] == "spread") & (w["script"] == "oltp_point_select")] if len(w) else w
    if w.empty:
        why = "needs the spread's point selects"
        return verdicts.ClaimRow(claim, source, verdicts.not_measured(why), verdicts.not_measured(why),
                                 verdicts.not_measured(why), ids=ids)
    c = res.counters
    c = c[c["run_id"].isin(set(w["run_id"]))] if len(c) else c
    status = set(c.loc[c["source"].isin(["status", "pg_stat_database"]), "run_id"]) if len(c) else set()
    cells, over, n, seen = [], 0, 0, 0
    counted = [f for f in w["flavor"].unique() if PARTS.part_for_name(f).storage_reads[0]]
    for flavor, g in w[w["flavor"].isin(counted)].groupby("flavor", sort=False):
        name, words = PARTS.part_for_name(flavor).storage_reads
        mine = c[(c["name"] == name) & c["run_id"].isin(set(g["run_id"]))] if len(c) else c
        reads = mine.groupby("run_id")["delta"].sum().reindex(g["run_id"]).fillna(0.0).to_numpy()
        per = reads / pd.to_numeric(g["queries"], errors="coerce").to_numpy()
        over += int((per >= CACHED_READS).sum())
        n += len(g)
        seen += int(g["run_id"].isin(status).sum())
        cells.append(f"{flavor}: {words} per query {per.max():.4f} at most over {len(g)} runs")
    if not n:
        return verdicts.ClaimRow(claim, source, verdicts.NOT_MEASURED, verdicts.NOT_MEASURED, verdicts.NOT_MEASURED,
                                 ids=ids)
    spread = w[w["flavor"].isin(counted)]
    ok, what = _as_run(configuration(res, spread))
    wit = verdicts.witness(ok and seen == n, f"the server's own counts read around {seen} of {n} runs; {what}")
    verdict = verdicts.events(over, n, stats.proportion_ci(over, n)[1], "none")
    return verdicts.ClaimRow(
        claim, source, f"the spread's point selects on a {int(_table_rows(res)):,}-row table, each server's own count of "
        f"reads from storage per query; under {CACHED_READS:g} per query is no read IO (the write half is not read here: "
        "the spread runs no writes at this scale)", "; ".join(cells) + f"; {over} of {n} runs at {CACHED_READS:g} or more",
        qualified(verdicts.witnessed(verdict, wit)), ids=ids, witness=wit)


def _backlog_words(flavor: str, immediate: float, settled: float) -> str:
    """What the writes left as the reads began, in the flavor's words (its cleanup capability's state, as its engine
    part names it)."""
    what, fmt = PARTS.part_for_name(flavor).backlog
    return f"{what} {immediate:{fmt}} as the immediate reads began, {settled:{fmt}} as the settled ones did"


def _named_witness(found: dict[str, verdicts.Witness]) -> verdicts.Witness | None:
    return verdicts.witnesses(found)


def _table_rows(res: Results) -> float:
    return float(res.wide["workload"].map(lambda x: x["table_size"]).max())


def _version_witness(res: Results, runs: pd.DataFrame, c: VersionClaim) -> verdicts.Witness:
    """What the two versions' runs stored of the comparison they are: the configuration they ran (_as_run), what
    the server counted per query (point selects, one row each), and for a claim on CPU per query where each CPU
    was read from. For a claim this lab cannot test for want of the source's IO-bound reads, whether the runs
    read from storage: they held only where they did."""
    conf = configuration(res, runs)
    ok, what = _as_run(conf)
    what = f"{what}; per query the server counted {_per_query(conf)}"
    if c.value != "qps" or c.also:
        ok = ok and conf["cgroup"] == conf["client_cpu"] == conf["runs"]
        what += (f"; the server's CPU read from its container's cgroup in {conf['cgroup']} of {conf['runs']}, "
                 f"sysbench's from its own process in {conf['client_cpu']}")
    if c.untestable:
        read = conf.get("per_query_blks_read", float("nan"))
        io_bound = read == read and read >= 1
        return verdicts.witness(ok and io_bound, what + ("" if io_bound else
                                                         ": the reads were cached, where the source's were IO-bound"))
    return verdicts.witness(ok, what)


def _long(res: Results, flavor: str, value: str) -> pd.Series | None:
    """The run-length check of a flavor's version ratio (a length_checks row: the long runs' ratio, their
    seconds, the long ratio over the short runs' with its interval and where that lies against 1), or
    None: not measured."""
    checks = length_checks(res)
    if checks.empty:
        return None
    mine = checks[(checks["comparison"] == "versions") & (checks["value"] == value)
                  & checks["label"].str.startswith(flavor + " ")]
    if mine.empty or pd.isna(mine.iloc[0]["position"]):
        return None
    return mine.iloc[0]


def version_row(res: Results, flavor: str, c: VersionClaim) -> verdicts.ClaimRow:
    w = _derived(res)
    spread = w[(w["part"] == "spread") & (w["flavor"] == flavor) & (w["script"] == "oltp_point_select")]
    num, den = _of_series(spread, c.num), _of_series(spread, c.den)
    source = f"{c.number}; {c.conditions}"
    claim = c.source.cite(c.claim)
    untestable = verdicts.not_testable(c.untestable) if c.untestable else None
    if num.empty or den.empty:
        return verdicts.ClaimRow(claim, source, f"needs {c.needs}", f"{verdicts.NOT_MEASURED} (needs {c.needs})",
                                 untestable or verdicts.NOT_MEASURED, ids=c.ids)
    seen = _version_witness(res, pd.concat([num, den]), c)
    seconds = _seconds(spread)
    n = version_repeats(res, flavor, c.num, c.den)
    episodes = int(num["episode"].sum() + den["episode"].sum())
    measured, judged = [], []
    for value, words in [(c.value, c.measured)] + ([c.also] if c.also else []):
        cells, verdict_cells = [], []
        for steady in (False, True) if 0 < episodes < len(num) + len(den) else (False,):
            r, lo, hi = version_ratio(res, flavor, c.num, c.den, value=value, steady=steady)
            which = f"without the {plural(episodes, 'run')} of machine episodes" if steady else f"over all {n} repeats"
            cells.append(f"{r:.3f} [{lo:.3f}, {hi:.3f}] {which}")
            if c.figure is not None:
                k = version_repeats(res, flavor, c.num, c.den, steady=steady)
                found = verdicts.witnessed(verdicts.magnitude(lo, hi, c.figure, c.figure, point=r, n=k), seen)
                verdict_cells.append(f"{qualified(found)} {which.split(' (')[0]}")
        lc = _long(res, flavor, value)
        over = "" if lc is None else (f"{lc['over']:.3f} [{lc['over_low']:.3f}, {lc['over_high']:.3f}] times the "
                                      f"{seconds:g} s runs' ratio")
        if lc is not None and lc["position"] != "inside" and verdict_cells:
            verdict_cells.append(f"but the {lc['long_s']:g} s runs give {over}, {lc['position']} 1: run length may "
                                 "move the answer (one long run each)")
        cells.append(f"{LENGTH_FACTOR * seconds:g} s runs {verdicts.NOT_MEASURED}" if lc is None else
                     f"{lc['long']:.3f} from one {lc['long_s']:g} s run each ({over})")
        measured.append(f"{words}: " + ", ".join(cells))
        judged.append((words, verdict_cells))
    lc = _long(res, flavor, c.value)
    here = (_spread_here(res, n, f"{num['version'].iloc[0]} over {den['version'].iloc[0]}, oltp_point_select, ")
            + (f"; one run of each {lc['long_s']:g} s long, the run-length check (its ratio over the short runs', "
               "an interval that counts its own noise as one more run's)" if lc is not None else ""))
    if untestable:
        verdict = untestable
    elif len(judged) == 1 and len(judged[0][1]) == 1:
        verdict = judged[0][1][0].rsplit(" over all", 1)[0]
    else:
        verdict = "; ".join(f"{words}: " + ", ".join(cells) for words, cells in judged)
    return verdicts.ClaimRow(claim, source, here, "; ".join(measured), verdict, ids=c.ids, witness=seen)


def claims(res: Results) -> pd.DataFrame:
    rows = [single_runs_row(res), aa_interval_row(res), scan_row(res), settle_row(res), cached_row(res)]
    for flavor, part in PARTS.parts.items():  # the parts in the order declared: MySQL's claims, then PostgreSQL's
        for c in part.claims:
            rows.append(version_row(res, flavor, c))
    return verdicts.table(rows)
