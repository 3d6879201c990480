"""The sources' claims this chapter can speak to, one verdicts.ClaimRow each: the source's number and
conditions, this lab's, what the runs measured (every reading where a definition or the runs can be
read two ways) and a verdict computed from the intervals: the spread of single runs, then each
flavor's version claims (its part)."""

from __future__ import annotations

import pandas as pd

from dbexp.chapters.calibration.analysis import (EPISODE_BUSY_PCT, LENGTH_FACTOR, _derived, _of_series, configuration,
                                                 length_checks, spread_table, version_ratio, version_repeats)
from dbexp.chapters.calibration.chapter import PARTS
from dbexp.chapters.calibration.engines import VersionClaim
from dbexp.book.prose import plural
from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import CALLAGHAN_24

# the source's practice: each microbenchmark run once per version, read-only ones for 600 s
SOURCE_RUN_S, SOURCE_WRITE_S = 600, 900
SOURCE_PRACTICE = (f"no figure; one run per version and test, {SOURCE_RUN_S} s (reads) or {SOURCE_WRITE_S} s (writes), "
                   "16 clients, 24 cores, 8 tables x 10M rows cached, MySQL 5.6.51 to 9.5.0")


qualified = verdicts.qualified_here  # a bare 'agrees' says under whose conditions: this lab's, never the source's


def _seconds(df: pd.DataFrame) -> float:
    return float(df["workload"].map(lambda x: x["duration_s"]).max())


def _spread_here(res: Results, n: int, versions: str = "") -> str:
    w = res.wide[res.wide["part"] == "spread"]
    rows = w["workload"].map(lambda x: x["table_size"]).max()
    return (f"{versions}{n} repeats of {_seconds(w):g} s per server, {int(w['threads'].max())} clients, the server "
            f"pinned to one CPU and sysbench to another, 1 table x {rows:,} rows cached")


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
    sp = spread_table(res)
    ps = sp[sp["script"] == "oltp_point_select"]
    n = int(sp["n"].max()) if len(sp) else 0
    claim = CALLAGHAN_24.cite("Versions are compared as relative QPS against a named base; below 1 there "
                              "might be a regression")
    ids = ("relative-qps-below-one",)
    if ps.empty:
        return verdicts.ClaimRow(claim, SOURCE_PRACTICE, "no point-select spread in these runs",
                                 verdicts.NOT_MEASURED, verdicts.NOT_MEASURED, ids=ids)
    worst = ps.loc[ps["cv"].idxmax()]
    episodes = int(ps["episodes"].sum())
    seconds = _seconds(res.wide[res.wide["part"] == "spread"])
    moves = stats.single_runs_spread(float(ps["cv"].median()))
    measured = (f"point-select CV, the median of {len(ps)} servers: {ps['cv'].median():.1%} over all repeats (worst "
                f"{worst['cv']:.1%}, {worst['flavor']} {worst['version'].split('-')[0]}); "
                + (f"{ps['cv_steady'].median():.1%} without the {plural(episodes, 'run')} of machine episodes (server CPU busy "
                   f"under {EPISODE_BUSY_PCT:g}%; worst {ps['cv_steady'].max():.1%})" if 0 < episodes < ps["n"].sum()
                   else f"every run had its server's CPU busy under {EPISODE_BUSY_PCT:g}%: the clients did not keep it "
                        "saturated, so this spread holds the client's side too" if episodes
                   else "no run fell in a machine episode")
                + f"; so here the ratio of two single {seconds:g} s runs moves by up to {moves:.1%} either way on its "
                  f"own (95%, 1.96 x sqrt(2) x the CV), {'more' if moves > verdicts.NEAR_BAND else 'less'} than the "
                  f"{verdicts.NEAR_BAND:.0%} a version comparison is read at: this lab reads ratios with their "
                  "intervals")
    verdict = verdicts.not_testable(f"the source's runs were {SOURCE_RUN_S} s (reads) or {SOURCE_WRITE_S} s (writes) "
                                    f"on 24 cores; these are {seconds:g} s on one server CPU, whose spread says "
                                    "nothing of the source's")
    spread = res.wide[(res.wide["part"] == "spread") & (res.wide["script"] == "oltp_point_select")]
    ok, what = _as_run(configuration(res, spread))
    return verdicts.ClaimRow(claim, SOURCE_PRACTICE, _spread_here(res, n), measured, verdict, ids=ids,
                             witness=verdicts.witness(ok, f"the spread's point selects, {what}"))


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
    rows = [single_runs_row(res)]
    for flavor, part in PARTS.parts.items():  # the parts in the order declared: MySQL's claims, then PostgreSQL's
        for c in part.claims:
            rows.append(version_row(res, flavor, c))
    return verdicts.table(rows)
