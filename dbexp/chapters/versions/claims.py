"""The versions chapter's claims table (verdicts.ClaimRow): each source's direction or number for the
versions this lab runs, the conditions it was measured under, this lab's, what these runs measured
with its interval, the verdict, the ledger entries the row tests (claims.yaml's ids) and its witness: the
observation stored with the runs that shows the claim's mechanism happened in them. Where the source's
conditions differ from this lab's (16 to 40 clients on 24 to 48 cores against one client per server on one
shared CPU), an "agrees" says so.

The witnesses:
- a relative QPS or cpu/o: every run of both servers in the test ran what the test names (its script and
  options; per sysbench event the statements of each type and the rows read that its definition says, from the
  server's own counters: analysis.statements_check) with one server working at a time (its QPS and CPU taken
  between marks over its own turns);
- a cs/o: the context switches counted inside the server's own turns (a run whose queries fall partly outside
  them, where every client runs at once, counts co-tenancy with them);
- an ablation configuration: what it changes read back from every run of every server (the startup settings
  as the server reports them; the switched ones as the precondition read them before each window; the client's
  prepared statements as the server counted their executions), and the test's statements.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from dbexp.book.prose import plural
from dbexp.catalog.versions import version_key
from dbexp.chapters.versions.analysis import (ablation, main_runs, ratios, statements_check, summary, tidy,
                                              windows, _asked)
from dbexp.chapters.versions.regression import BASELINE, STEPS, step_name
from dbexp.chapters.versions.tests import TESTS
from dbexp.experiments import ledger
from dbexp.experiments import paired, stats, verdicts
from dbexp.experiments.counted import AGREE
from dbexp.experiments.chapter import Results, memo
from dbexp.experiments.sources import CALLAGHAN_24, CALLAGHAN_GTID, CALLAGHAN_PG, KERNELMAKER_REGRESSION

NM = verdicts.NOT_MEASURED
MYSQL_SOURCE = ("5.7.44 and 8.0.44 built from source; 16 clients on 2 sockets x 12 cores (Xeon Silver 4214R); 8 "
                "tables of 10M rows cached in InnoDB; one run of 600 s (reads) or 900 s (writes) per test")
PG_SOURCE = ("12.22 to 18.1 built from source; 40 clients on 48 cores (EPYC 9454P); 8 tables of 250M rows, "
             "IO-bound (hot-points is its one CPU-bound test); one run of 600 or 900 s per test")
OTHER = "16 to 40 clients on 24 to 48 cores there, one client per server on one server CPU here"
# the rows name their conditions; conditions() spells each out once, under the table
MYSQL_REF, PG_REF, REGRESSION_REF = "(A)", "(B)", "(C)"
MAIN_REF, ABLATION_REF = "(D)", "(E)"
IN_TURNS = 0.95  # a cs/o counted over a run counts the server's own turns where this share of its queries fell in them


def about_pct(pct: float) -> tuple[float, float]:
    """'grows by 23%' read to the percent: 1.225 to 1.235."""
    return 1 + (pct - 0.5) / 100, 1 + (pct + 0.5) / 100


REGRESSION_OTHER = "8 clients on 8 cores there, one client per server on one server CPU here"


def _gap_remains(x, g0: float) -> str:
    """The five steps did not close the gap to the source's: what remains, with its interval."""
    return verdicts.disagrees(f"after the steps a gap of {1 - x.gap:.1%} [{1 - x.gap_high:.1%}, "
                              f"{1 - x.gap_low:.1%}] remains, the source's {1 - g0:.1%}")


def qualified(verdict: str, other: str = OTHER, disagreement_too: bool = False) -> str:
    """An agreement under conditions that are not the source's, said so (and a disagreement too, where
    ``disagreement_too``: one the conditions may explain)."""
    return verdicts.under_other_conditions(verdict, other, disagreement_too)


def here(res: Results) -> str:
    d = windows(res)
    if not d["n"]:
        return "no runs at this scale"
    other = "".join(f" ({t}'s {v:g} s, each turn counted to its server's last statement's end)"
                    for t, v in d.get("other_slices", {}).items())
    shared = (f"the servers of a flavor ({d['at_once']} at most) taking one server CPU in turns of {d['slice_s']:g} s"
              f"{other}, one working at a time" if d.get("active", d["at_once"]) == 1 and d["at_once"] > 1 else
              f"the servers of a flavor ({d['at_once']} at most) sharing one server CPU")
    return (f"one client thread per server; {shared} in every window, on {plural(d.get('instances', 1), 'instance')} "
            f"alive together, their windows in a random order; 1 table of {d['table_size']:,} rows, cached, brought "
            f"back to its prepared rows before every window; {d['repeats']} windows per test, each server "
            f"{d.get('active_s', float('nan')):.1f} s of its own turns in one (median); commits relaxed; the "
            "adaptive hash index off; prepared statements")


# --- witnesses -------------------------------------------------------------------------------------------

def _short(name: str) -> str:
    return name.split(" ", 1)[1] if " " in name else name


def ran_witness(res: Results, test: str, servers, what: str = "QPS") -> verdicts.Witness:
    """Whether every main run of ``servers`` (names as the ``server`` column has them) in ``test`` ran what the
    test names, one server working at a time (analysis.statements_check; ``active_servers``)."""
    sc = statements_check(res)
    w = main_runs(tidy(res))
    names = list(servers)
    runs = w[(w["test"] == test) & w["server"].isin(names)] if len(w) else w
    if runs.empty:
        return verdicts.witness(False, f"no runs of {test} on {', '.join(map(_short, names))}")
    mine = sc[sc["run_id"].isin(runs["run_id"])] if len(sc) else sc
    bad = mine[~mine["ok"]] if len(mine) else mine
    alone = runs["active_servers"].fillna(0).eq(1) if "active_servers" in runs else pd.Series(False, index=runs.index)
    who = " and ".join(_short(n) for n in names)
    if len(bad):
        return verdicts.witness(False, f"{test} on {who}: {bad['what'].iloc[0]} ({len(bad)} of {len(mine)} runs)")
    if not alone.all():
        return verdicts.witness(False, f"{test} on {who}: {int((~alone).sum())} of {len(runs)} runs had more than "
                                       "one server working at once")
    return verdicts.witness(True, f"{test} ran as named on {who} ({len(runs)} runs, one server at a time, {what} "
                                  "between the marks over its own turns)")


def cs_witness(res: Results, test: str, servers) -> verdicts.Witness:
    """Whether the cs/o of ``servers`` in ``test`` counts their own turns: counted inside each server's turns
    (the runs say so: ``per_op_in_turns``), or else at the run's edges, which is the server's alone only where its
    queries fell (nearly) all inside its turns (the share of its statements between the marks over all it ran)."""
    w = main_runs(tidy(res))
    runs = w[(w["test"] == test) & w["server"].isin(list(servers))] if len(w) else w
    if runs.empty:
        return verdicts.witness(False, f"no runs of {test}")
    if "per_op_in_turns" in runs and runs["per_op_in_turns"].notna().any():
        inside = runs["per_op_in_turns"].fillna(0).eq(1)
        return verdicts.witness(bool(inside.all()), f"cs/o counted inside each server's own turns in "
                                                    f"{int(inside.sum())} of {len(runs)} runs")
    if "queries" not in runs or "active_s" not in runs:
        return verdicts.witness(False, f"no runs of {test} with their queries counted")
    share = (runs["qps_common"] * runs["active_s"] / runs["queries"]).clip(upper=1.0)
    ok = bool((share >= IN_TURNS).all())
    return verdicts.witness(ok, f"{share.median():.0%} of a run's queries fell inside its server's own turns "
                                f"(median of {len(runs)} runs; the rest ran with every client at once), so its "
                                f"cs/o, counted at the run's edges, {'is' if ok else 'is not'} the server's alone")


def both(*ws: verdicts.Witness) -> verdicts.Witness:
    """Several observations one verdict needs: held where all held, each one's words."""
    ws = [w for w in ws if w is not None]
    return verdicts.Witness("; ".join(dict.fromkeys(w.what for w in ws)), all(w.ok for w in ws))


# --- rows of the main windows --------------------------------------------------------------------------

def _pick(r: pd.DataFrame, old: tuple, new: tuple, value: str, tests, view: str = "base") -> pd.DataFrame:
    """Rows of ``r`` for a newer family over an older one (version tuples' first numbers)."""
    if r.empty:
        return r
    rows = np.flatnonzero(r["value"].eq(value) & r["test"].isin(tests) & r["view"].isin([view, "previous"]))
    # of those, the plain servers (no twin, no own defaults: no parenthesis) of the two families
    plain = np.array([not ("(" in s or "(" in a) and version_key(s)[:len(new)] == new
                      and version_key(a)[:len(old)] == old
                      for s, a in zip(r["server"].to_numpy()[rows], r["against"].to_numpy()[rows])], dtype=bool)
    return r.iloc[rows[plain]].drop_duplicates(["server", "against", "test", "value"])


def _cells(g: pd.DataFrame) -> str:
    return "; ".join(f"{x.test} {_short(x.server)}/{_short(x.against)} "
                     f"{paired.cell(x.ratio, x.ci_low, x.ci_high)}" for x in g.itertuples()) if len(g) else NM


def _row(res: Results, ids, cite, source: str, cond: str, g: pd.DataFrame, verdict, other: str = OTHER,
         value: str = "QPS") -> verdicts.ClaimRow:
    """One row over the tests of ``g`` (a comparison per test): each test's verdict gated by its witness (the
    runs of both its servers ran what the test names), then combined."""
    found = {f"{x.test} {_short(x.server)}/{_short(x.against)}": (verdict(x), ran_witness(res, x.test, (x.server, x.against), value))
             for x in g.itertuples()}
    v = verdicts.combine(verdicts.witnessed(v_, w) for v_, w in found.values()) if found else NM
    w = verdicts.witnesses({k: w for k, (_, w) in found.items()}) if found else verdicts.witness(
        False, "no runs of these tests at this scale")
    return verdicts.ClaimRow(cite, source, cond, _cells(g), qualified(v, other), ids=tuple(ids), witness=w)


def counted_pair(res: Results, old: tuple, new: tuple, test: str) -> dict | None:
    """The counted part's instruction ratio of a newer family's version over an older one's on ``test``
    (counting.instruction_ratios: the means of their starts; ``low`` and ``high`` the extremes of one start over
    another), or None where they were not both counted."""
    from dbexp.chapters.versions.counting import instruction_ratios

    ir = instruction_ratios(res)
    if ir.empty:
        return None
    rows = [x for x in ir.to_dict("records") if x["test"] == test and version_key(x["server"])[:len(new)] == new
            and version_key(x["against"])[:len(old)] == old]
    return rows[0] if rows else None


def _counted_cpu(res: Results, row: verdicts.ClaimRow, test: str, source: tuple[float, float]) -> verdicts.ClaimRow:
    """A claim of CPU per query, 8.0 over 5.7, with the work counted where both versions were counted on ``test``
    (issue 48): where their separately started servers' counts agree, the verdict is the count's (the instruction
    ratio against the source's growth; a count is the same on any x86-64 machine), the timed cpu/o (this machine's
    time per instruction too) shown beside it; elsewhere the row as timed."""
    c = counted_pair(res, (5, 7), (8, 0), test)
    if c is None:
        return row
    what = (f"instructions per statement {_short(c['server'])}/{_short(c['against'])} {c['ratio']:.3f} "
            f"[{c['low']:.3f}, {c['high']:.3f}] (counted: {c['instructions']:,.0f} against "
            f"{c['against_instructions']:,.0f}; the extremes of one start's count over another's)")
    here = (f"{row.here}; and counted under callgrind, one client, on two separately started servers each: where "
            f"their counts agree within {AGREE:.1%}, the verdict is the count's (the work), cpu/o beside it "
            f"(the time)")
    if not c["agree"]:
        return verdicts.ClaimRow(row.claim, row.source, here, f"{what}: the starts' counts do not agree; cpu/o "
                                 f"{row.measured}", row.verdict, ids=row.ids, witness=row.witness)
    v = verdicts.magnitude(c["low"], c["high"], *source, point=c["ratio"])
    w = verdicts.witness(True, f"{what}: each count's window held exactly the statements its client sent, the "
                               f"two starts within {AGREE:.1%}")
    return verdicts.ClaimRow(row.claim, row.source, here, f"{what}; cpu/o {row.measured}",
                             f"{qualified(v)} (the work counted; the time here, cpu/o: {row.verdict})",
                             ids=row.ids, witness=w)


def _direction(expect: str):
    def verdict(x) -> str:
        v = verdicts.interval(x.ci_low, x.ci_high, expect)
        return f"{verdicts.IN_DIRECTION} (no figure to test)" if v == verdicts.AGREES else v
    return verdict


def ablation_conditions(res: Results) -> str:
    return ("the ablation's windows: 5.7, 8.0 and 9.7 taking the server CPU in turns, one client each, 1 table of "
            f"{windows(res).get('table_size', 0):,} rows; from the source's baseline (binlog and performance_schema "
            "on, the adaptive hash index off, innodb_flush_log_at_trx_commit 2, sync_binlog 0, --db-ps-mode=disable)")


def conditions(res: Results) -> dict[str, str]:
    """Each set of conditions the claims table refers to, by its mark."""
    return {MYSQL_REF: f"the MySQL series (24 cores): {MYSQL_SOURCE}",
            PG_REF: f"the PostgreSQL series (48 cores): {PG_SOURCE}",
            REGRESSION_REF: f"the regression post: {ledger.REGRESSION_CONDITIONS}",
            MAIN_REF: f"here, the main windows: {here(res)}", ABLATION_REF: f"here, {ablation_conditions(res)}"}


# the PostgreSQL series ran 8 tables of 250M rows, IO-bound: its range and write numbers are a server's
# reading from storage, which a cached table of this lab's cannot test
IO_BOUND = ("the source's runs were IO-bound, 8 tables of 250M rows on 48 cores; here one cached table: its "
            "ratios include reading from storage, which these runs do not")


def _io_bound(x) -> str:
    return verdicts.not_testable(IO_BOUND)


def _number(low: float, high: float):
    return lambda x: verdicts.magnitude(x.ci_low, x.ci_high, low, high, point=x.ratio, n=int(x.pairs))


POINT = ("point-query", "random-points.range=10", "random-points.range=100", "random-points.range=1000", "hot-points",
         "points-covered-pk", "points-covered-si", "points-notcovered-pk", "points-notcovered-si")
WRITE = ("delete", "insert", "read-write.range=10", "read-write.range=100", "update-index", "update-inlist",
         "update-nonindex", "update-one", "update-zipf", "write-only")
AGG = ("read-only-count", "read-only-distinct", "read-only-order", "read-only-simple", "read-only-sum",
       "read-only.range=10", "read-only.range=100", "read-only.range=10000")
NOT_8_0_44 = ("8.0.15 is not the 8.0.44 the source ran (29 releases apart), and no 8.4 or 9.5 runs here: the "
              "source's steps 8.0.44 to 8.4.7 to 9.x cannot be taken")


def claims(res: Results) -> pd.DataFrame:
    """The claims table (Chapter.claims computes it once per results: the page shows it, and what moved since
    the last publication reads it again)."""
    return memo(res, "versions.claims_table", lambda: _claims(res))


def _claims(res: Results) -> pd.DataFrame:
    r = ratios(res)
    cond = f"the main windows {MAIN_REF}"
    w = tidy(res)
    tested = set(main_runs(w)["test"]) if len(w) else set()
    rows = []
    point = [t for t in POINT if t in tested]
    writes = [t for t in WRITE if t in tested]
    rows.append(_row(res, ["point-5-7-to-8-0"],
                     CALLAGHAN_24.cite("From MySQL 5.7 to 8.0 there are big regressions for all point-query tests"),
                     f"QPS 8.0 / 5.7 below 1 on every point test (no figure in the text). {MYSQL_REF}", cond,
                     _pick(r, (5, 7), (8, 0), "QPS", point), _direction("below")))
    for test, pct, what, lid in (("hot-points", 23, "hot-points", "hot-points-cpu-5-7-to-8-0"),
                                 ("scan", 15, "scan", "scan-cpu-5-7-to-8-0"),
                                 ("read-only-count", 15, "read-only-count", "read-only-count-cpu-5-7-to-8-0"),
                                 ("insert", 36, "insert (CPU per insert)", "insert-cpu-5-7-to-8-0")):
        lo, hi = about_pct(pct)
        row = _row(res, [lid], CALLAGHAN_24.cite(f"From MySQL 5.7 to 8.0, CPU per query grows by {pct}% on {what}"
                                                 + (" while context switch rates are stable" if test == "insert" else "")),
                   f"cpu/o 8.0 / 5.7 = {1 + pct / 100:.2f} ({lo:.3f} to {hi:.3f} read to the percent)"
                   + ("; cs/o about 1" if test == "insert" else "") + f"; vmstat's "
                   f"CPU of the whole host per query. {MYSQL_REF}",
                   cond + "; cpu/o is the server container's CPU per statement between the marks"
                   + ("; cs/o its context switches per statement, stable: the interval within 1 +- "
                      f"{verdicts.NEAR_BAND:.0%}" if test == "insert" else ""),
                   _pick(r, (5, 7), (8, 0), "cpu/o", [test]), _number(lo, hi), value="cpu/o")
        row = _counted_cpu(res, row, test, (lo, hi))
        cs = _pick(r, (5, 7), (8, 0), "cs/o", [test]) if test == "insert" else pd.DataFrame()
        if len(cs):  # the same sentence of the source: "... and context switch rates are stable"
            cw = verdicts.witnesses({f"{_short(x.server)}/{_short(x.against)}": cs_witness(res, test, (x.server, x.against))
                                     for x in cs.itertuples()})
            stable = verdicts.witnessed(verdicts.combine(verdicts.interval(x.ci_low, x.ci_high, "near")
                                                         for x in cs.itertuples()), cw)
            timed = row.measured if row.measured.startswith("instructions") else f"cpu/o {row.measured}"
            row = verdicts.ClaimRow(row.claim, row.source, row.here, f"{timed}; cs/o " + _cells(cs),
                                    f"CPU per insert: {row.verdict}; context switches stable: {qualified(stable)}",
                                    ids=row.ids, witness=both(row.witness, cw) if row.witness.ok and cw.ok else
                                    verdicts.Witness(f"cpu/o: {row.witness.what}; cs/o: {cw.what}", row.witness.ok))
        rows.append(row)
    rows.append(_row(res, ["writes-5-7-to-8-0"],
                     CALLAGHAN_24.cite("From MySQL 5.7 to 8.0 there are regressions for all write tests"),
                     f"QPS 8.0 / 5.7 below 1 on every write test (no figure in the text). {MYSQL_REF}", cond,
                     _pick(r, (5, 7), (8, 0), "QPS", writes), _direction("below")))
    g = _pick(r, (8, 0), (9,), "cpu/o", ["hot-points", "scan", "read-only-count"])
    rows.append(verdicts.ClaimRow(
        CALLAGHAN_24.cite("CPU per query is stable from MySQL 8.0 through 9.5 (hot-points, scan, read-only-count)"),
        f"cpu/o of 8.4.7, 9.4.0 and 9.5.0 about 8.0.44's. {MYSQL_REF}", cond, _cells(g),
        verdicts.not_testable("no registry ships 8.4 or 9.5 here; 9.7.4, measured beside, is newer than any "
                              "version the source ran"),
        ids=("hot-points-cpu-stable-after-8-0", "scan-cpu-stable-after-8-0", "read-only-count-cpu-stable-after-8-0")))
    rows.append(verdicts.ClaimRow(
        CALLAGHAN_24.cite("From MySQL 8.4 to 9.x there are regressions for 8 of 10 write tests"),
        f"QPS 9.x / 8.4 below 1 (no figure in the text). {MYSQL_REF}", cond, NM,
        verdicts.not_testable("MySQL 8.4 ships only as an official image, which this machine cannot pull"),
        ids=("writes-8-4-to-9-x",)))
    rows.append(_row(res, ["pg-hot-points-17"], CALLAGHAN_PG.cite("A large improvement for hot-points arrives in PostgreSQL 17"),
                     f"QPS 17 / 16 above 1 on hot-points, its one CPU-bound point test (no figure in the text). "
                     f"{PG_REF}", cond, _pick(r, (16,), (17,), "QPS", ["hot-points"], view="previous"),
                     _direction("above")))
    agg = [t for t in AGG if t in tested]
    g = _pick(r, (12,), (18,), "QPS", agg)
    rows.append(verdicts.ClaimRow(CALLAGHAN_PG.cite("QPS for range queries with aggregation is 1.05X to 1.25X larger in "
                                                    "PostgreSQL 18.1 than in 12.22"),
                                  f"QPS 18 / 12 from 1.05 to 1.25 per test. {PG_REF}", cond, _cells(g),
                                  verdicts.not_testable(IO_BOUND), ids=("pg-range-with-aggregation-gain",)))
    pg_writes = [t for t in ("read-write.range=10", "read-write.range=100", "update-zipf", "write-only") if t in tested]
    g = _pick(r, (12,), (18,), "cpu/o", pg_writes)
    rows.append(verdicts.ClaimRow(CALLAGHAN_PG.cite("CPU per operation is up by about 1.2X in PostgreSQL 16 to 18 on the "
                                                    "read-write, update-zipf and write-only tests"),
                                  f"cpu/o 18 / 12 about 1.2 (1.15 to 1.25 read to its digit). {PG_REF}", cond, _cells(g),
                                  verdicts.not_testable(IO_BOUND), ids=("pg-write-cpu",)))
    rows += more_main_rows(res, r, cond, tested, writes, agg)
    rows += regression_rows(res, r, cond)
    return verdicts.table(rows)


RANGE_NO_AGG = "range without aggregation"


def more_main_rows(res: Results, r: pd.DataFrame, cond: str, tested: set, writes: list, agg: list) -> list:
    """The MySQL series' other claims on the main windows: hot-points' context switches stable, range
    queries without aggregation about 15% slower and every range test with aggregation slower from 5.7
    to 8.0, and small losses of write tests from 8.0 to 9.x with one client (not testable here)."""
    rows = []
    g = pd.concat([_pick(r, (5, 7), (8, 0), "cs/o", ["hot-points"]), _pick(r, (8, 0), (9,), "cs/o", ["hot-points"])])
    found = {f"{_short(x.server)}/{_short(x.against)}": (verdicts.interval(x.ci_low, x.ci_high, "near"),
                                                         cs_witness(res, "hot-points", (x.server, x.against)))
             for x in g.itertuples()}
    w = verdicts.witnesses({k: w_ for k, (_, w_) in found.items()}) or verdicts.witness(False, "no runs of hot-points")
    v = verdicts.combine(verdicts.witnessed(v_, w_) for v_, w_ in found.values()) if found else NM
    rows.append(verdicts.ClaimRow(
        CALLAGHAN_24.cite("On hot-points, context switches per query hold steady across the versions: mutex "
                          "contention did not change"),
        f"cs/o about the same in every version on hot-points (no figure in the text). {MYSQL_REF}",
        cond + f"; stable: the interval within 1 +- {verdicts.NEAR_BAND:.0%}", _cells(g), qualified(v),
        ids=("hot-points-context-switches-stable",), witness=w))
    s = summary(res, "base")
    s = s[(s["group"].astype(str) == RANGE_NO_AGG) & s["server"].map(lambda n: version_key(n)[:2] == (8, 0))
          & ~s["server"].str.contains(r"\(", regex=True)] if len(s) else s
    lo, hi = about_pct(-15)
    x = s.iloc[0] if len(s) else None
    group_tests = [t for t, x in TESTS.items() if t in tested and x.group == RANGE_NO_AGG]
    if x is not None:
        ws = {t: ran_witness(res, t, (x["server"], x["against"])) for t in group_tests}
        wit = verdicts.Witness(verdicts.witnesses(ws).what, all(w_.ok for w_ in ws.values()))
        measured = (f"median of {int(x['tests'])} tests {_short(x['server'])}/{_short(x['against'])} "
                    f"{paired.cell(x['median'], x['median_low'], x['median_high'])}")
        verdict = qualified(verdicts.magnitude(x["median_low"], x["median_high"], lo, hi, point=x["median"]))
    else:
        wit, measured, verdict = verdicts.witness(False, "no runs of the group at this scale"), NM, NM
    rows.append(verdicts.ClaimRow(
        CALLAGHAN_24.cite("Range queries without aggregation lose about 15% of their throughput from "
                          "MySQL 5.7 to 8.0"),
        f"QPS 8.0 / 5.7 about 0.85 ({lo:.3f} to {hi:.3f} read to the percent) for the group. {MYSQL_REF}",
        cond + "; the group's median of its tests' ratios (the sources' summary), its interval with the tests' "
               "errors independent but for an offset per instance they share",
        measured, verdict, ids=("range-without-aggregation-5-7-to-8-0",), witness=wit))
    rows.append(_row(res, ["range-with-aggregation-5-7-to-8-0"],
                     CALLAGHAN_24.cite("Every range test with aggregation loses throughput from MySQL 5.7 to 8.0"),
                     f"QPS 8.0 / 5.7 below 1 on every range test with aggregation (no figure in the text). {MYSQL_REF}",
                     cond, _pick(r, (5, 7), (8, 0), "QPS", agg), _direction("below")))
    g = _pick(r, (8, 0), (9,), "QPS", writes)
    rows.append(verdicts.ClaimRow(
        CALLAGHAN_GTID.cite("With one client on 8 cores, many tests lose a little from 8.0 to 8.4 and again from 8.4 "
                            "to 9.x"),
        f"QPS below 1, a little, from 8.0.44 to 8.4.7 and from 8.4.7 to 9.x, with 1 client on 8 cores "
        f"(no figure in the text). {MYSQL_REF}",
        cond + "; 8.0.15 to 9.7.4 in one step here (no 8.4 or 9.5)", _cells(g), verdicts.not_testable(NOT_8_0_44),
        ids=("small-regressions-1-client",)))
    return rows


# --- the regression ablation's rows ---------------------------------------------------------------------

def _config_row(pair: pd.DataFrame, config: str):
    """The ablation row (of 5.7 and one newer version) for ``config``, or None where it was not measured."""
    y = pair[pair["config"] == config] if len(pair) else pair
    return y.iloc[0] if len(y) else None


def config_witness(res: Results, config: str, servers) -> verdicts.Witness:
    """Whether every run of ``config`` on ``servers`` ran what the configuration asks (analysis: the ablation's
    runs): each setting it changes from the source's baseline as the server reports it (a startup setting: the
    server's effective settings; a switched one: the precondition read back before the window), the client's
    protocol as the server counted it (prepared statements: an execution per statement), and update-nonindex's
    statements per event."""
    from dbexp.chapters.versions.chapter import PARTS, SWITCHED

    w = tidy(res)
    a = w[(w["role"] == "ablation")] if len(w) else w
    if a.empty or config not in set(a["config"]):
        return verdicts.witness(False, f"no ablation runs of {config} at this scale")
    asked = _asked(a)
    sc = statements_check(res)
    c = res.counters
    found = []
    for name in servers:
        runs = a[(a["config"] == config) & (a["series_name"] == name)]
        if runs.empty or (name, config) not in asked:
            return verdicts.witness(False, f"no ablation runs of {config} on {_short(name)}")
        want = json.loads(asked[name, config].ran)
        base = json.loads(asked[name, BASELINE].ran) if (name, BASELINE) in asked else {}
        changed = {k: v for k, v in want.items() if base.get(k) != v} if config != BASELINE else want
        part = PARTS.part_for_name(runs["flavor"].iloc[0])
        for k, v in changed.items():
            for x in runs.itertuples():
                if k in SWITCHED:
                    pre = x.precondition if isinstance(x.precondition, dict) else json.loads(x.precondition or "{}")
                    check = pre.get(f"{k} = {v}", {})
                    ok, seen = bool(check.get("ok")), check.get("seen")
                else:
                    eff = x.settings_effective if isinstance(x.settings_effective, dict) else json.loads(x.settings_effective or "{}")
                    ok, seen = part.reads_as(k, v, eff)
                if not ok:
                    return verdicts.witness(False, f"{config} on {_short(name)}: {k} read back as {seen!r}, asked {v!r}")
        client = json.loads(asked[name, config].client)
        mode = client.get("db-ps-mode")
        protocol = ""
        if mode and c is not None and len(c):
            status = c[(c["source"] == "status") & c["run_id"].isin(runs["run_id"])]
            if status.empty:
                return verdicts.witness(False, f"{config} on {_short(name)}: no status counters stored with its runs")
            ex = status[status["name"] == "Com_stmt_execute"].set_index("run_id")["delta"]
            # a counter that did not move is not stored: 0 executions where the run stored its status counters
            ex = ex.reindex(status["run_id"].unique()).fillna(0.0)
            per = (ex / runs.set_index("run_id")["transactions"]).dropna()
            prepared = mode != "disable"
            if not len(per) or not ((per >= 0.9).all() if prepared else (per <= 0.1).all()):
                return verdicts.witness(False, f"{config} on {_short(name)}: {per.median():.2f} prepared executions per "
                                               f"statement, the client asked {mode}")
            protocol = f"--db-ps-mode={mode} ({per.median():.2f} prepared executions per statement)"
        bad = sc[sc["run_id"].isin(runs["run_id"]) & ~sc["ok"]] if len(sc) else sc
        if len(bad):
            return verdicts.witness(False, f"{config} on {_short(name)}: {bad['what'].iloc[0]}")
        found.append(name)
    what = ", ".join(f"{k} {v}" for k, v in changed.items()) if config != BASELINE else "the source's baseline"
    if not changed and config != BASELINE:
        what = "nothing the servers report (the versions lack the option)"
    return verdicts.witness(True, f"{config}: {what} read back on {' and '.join(map(_short, found))} in every run"
                                  f"{'; ' + protocol if protocol else ''}; update-nonindex's statements as named")


def regression_rows(res: Results, r: pd.DataFrame, cond: str) -> list[verdicts.ClaimRow]:
    """The regression source's gap at its baseline and after its steps, and its largest factors measured alone,
    against the ablation's 8.0 / 5.7 (main windows' update-nonindex where the ablation did not run). Its steps
    are about 8.0's gap: 8.0.15 cannot take the first (it always runs its log writer threads), so each step's
    row is not testable here; 9.7.4's gap is shown beside, not judged."""
    ab = ablation(res)
    src = REGRESSION_REF
    pair = ab[ab["old"].map(lambda n: version_key(n)[:2] == (5, 7)) & ab["new"].map(lambda n: version_key(n)[:2] == (8, 0))] \
        if len(ab) else ab
    ours = f"the ablation's windows {ABLATION_REF}"
    step_ids = {2: "step-2-performance-schema", 3: "step-3-binlog", 4: "step-4-prepared-statements",
                len(STEPS): "steps-close-to-3-percent"}
    rows = []
    middle = [(k, step_name(k), f"With its first {k} steps taken ({', '.join(STEPS[:k])}), 8.0's gap is "
               f"{-ledger.PRINTED_STEP_GAPS[k]:.1%}") for k in range(2, len(STEPS))]
    for step, config, claim in ((0, BASELINE, f"On oltp_update_non_index, MySQL 8.0 does {-ledger.PRINTED_STEP_GAPS[0]:.1%} "
                                 "less throughput than 5.7"), *middle,
                                (len(STEPS), step_name(len(STEPS)), "Its five steps, each on top of the ones before (log "
                                 "writer threads off, performance_schema off, binlog off, prepared statements, "
                                 "innodb_flush_log_at_trx_commit 0), narrow 8.0's gap to "
                                 f"{-ledger.PRINTED_STEP_GAPS[-1]:.1%}")):
        g0 = ledger.step_gap(step)
        old, new = list(ledger.STEP_TPS.values())[step]
        x = _config_row(pair, config)
        if step:
            rows.append(_steps_row(res, ab, config, g0, KERNELMAKER_REGRESSION.cite(claim),
                                   f"8.0 / 5.7 = {g0:.3f} ({new:,} / {old:,} TPS). {src}", ours, step_ids[step]))
            continue
        if x is not None:
            measured = f"update-nonindex 8.0 / 5.7 {paired.cell(x.gap, x.gap_low, x.gap_high)} ({config})"
            verdict = verdicts.magnitude(x.gap_low, x.gap_high, g0, g0, point=x.gap, n=int(x.windows))
            here_cond, wit = ours, config_witness(res, config, (x.old, x.new))
        else:  # the main windows: the book's baseline (no binlog), the versions side by side
            g = _pick(r, (5, 7), (8, 0), "QPS", ["update-nonindex"])
            here_cond, measured = cond + "; the book's baseline (no binlog), not the source's (binlog on)", _cells(g)
            verdict = verdicts.combine(_number(g0, g0)(y) for y in g.itertuples()) if len(g) else NM
            wit = verdicts.witnesses([ran_witness(res, "update-nonindex", (y.server, y.against)) for y in g.itertuples()]) \
                or verdicts.witness(False, "no runs of update-nonindex at this scale")
        rows.append(verdicts.ClaimRow(KERNELMAKER_REGRESSION.cite(claim),
                                      f"8.0 / 5.7 = {g0:.3f} ({new:,} / {old:,} TPS). {src}", here_cond, measured,
                                      qualified(verdict, REGRESSION_OTHER), ids=("regression-gap",), witness=wit))
    for config, factor, claim, lid in (("binlog off", "skip-log-bin", "The binary log is the largest single factor of "
                                        f"8.0's gap: {ledger.PRINTED['binlog_pp']} of its 32.0 points, measured alone",
                                        "binlog-largest-factor"),
                                       ("P_S off", "performance_schema=0", "performance_schema is "
                                        f"{ledger.PRINTED['pfs_pp']} points of 8.0's gap, measured alone",
                                        "performance-schema-points"),
                                       ("flush_log_at_trx_commit=0", "flush_log_at_trx_commit=0", "8.0's redo log path "
                                        f"(innodb_flush_log_at_trx_commit 0 alone) is {ledger.gap_points('flush_log_at_trx_commit=0'):.1f} "
                                        "points of its gap", "redo-architecture-points"),
                                       ("prepared statements", "db-ps-mode=auto", "Parsing every statement sent as text is "
                                        f"{ledger.gap_points('db-ps-mode=auto'):.1f} points of 8.0's gap (prepared "
                                        "statements alone)", "parser-path-points")):
        c = ledger.gap_change(factor)
        x = _config_row(pair, config)
        measured = (f"8.0 / 5.7 {x.gap:.3f} with {config}; the gap moves by {paired.cell(x.moves, x.moves_low, x.moves_high)} "
                    f"({x.points:+.1f} points)") if x is not None else NM
        verdict = verdicts.magnitude(x.moves_low, x.moves_high, c, c, point=x.moves) if x is not None else NM
        aa = pair[pair["unchanged"].astype(bool)] if len(pair) and "unchanged" in pair else pair.iloc[:0]
        if x is not None and len(aa):  # what windows of another group do to the gap with nothing changed
            a = aa.iloc[0]
            band = abs(np.log(a.moves)) + max(abs(np.log(a.moves_high / a.moves)), abs(np.log(a.moves / a.moves_low)))
            where = "other windows on the baseline's servers" if a.get("shared", False) else "windows of another group"
            measured += f"; with nothing changed ({a.config}), {where} moved it by {paired.cell(a.moves, a.moves_low, a.moves_high)}"
            if abs(np.log(x.moves)) <= band:
                verdict = verdicts.not_resolved(f"with nothing changed, {where} moved the gap by "
                                                f"{a.moves:.3f}; this move is no larger")
        wit = both(config_witness(res, config, (x.old, x.new)), config_witness(res, BASELINE, (x.old, x.new))) \
            if x is not None else verdicts.witness(False, f"no ablation runs of {config} at this scale")
        rows.append(verdicts.ClaimRow(
            KERNELMAKER_REGRESSION.cite(claim),
            f"the gap moves by {c:.3f} ({ledger.gap_points(factor):+.1f} points from its TPS). {src}",
            ours, measured, qualified(verdict, REGRESSION_OTHER), ids=(lid,), witness=wit))
    rows += factor_rows(res, ab, pair, ours)
    return rows


def factor_rows(res: Results, ab: pd.DataFrame, pair: pd.DataFrame, ours: str) -> list[verdicts.ClaimRow]:
    """The regression source's other readings of its ablation: what the binlog off alone gains each
    version, prepared statements helping 8.0 more than 5.7, and a factor's worth depending on the order
    the steps take it in (performance_schema alone against performance_schema as step 2)."""
    src = REGRESSION_REF
    rows = []
    w = tidy(res)
    a = w[w["role"] == "ablation"] if len(w) else w
    gains, cells, wits = {}, [], {}
    for family in ("5.7", "8.0"):
        names = [n for n in a["series_name"].unique() if ".".join(map(str, version_key(n)[:2])) == family] if len(a) else []
        pct = ledger.PRINTED[f"binlog_gain_{family}"]
        lo, hi = ledger.about_pct(100 * pct)
        if not names:
            gains[family] = NM
            continue
        q = a[a["series_name"] == names[0]]
        r, rlo, rhi = stats.unpaired_ratio_ci(q.loc[q["config"] == "binlog off", "qps_common"],
                                              q.loc[q["config"] == BASELINE, "qps_common"])
        cells.append(f"{_short(names[0])} binlog off / baseline {paired.cell(r, rlo, rhi)} (the source's "
                     f"{ledger.gain('skip-log-bin', family):.3f})")
        wits[family] = both(config_witness(res, "binlog off", names[:1]), config_witness(res, BASELINE, names[:1]))
        # the binlog's ordered commit serialises the clients committing at once, a cost that one client per
        # server (here) does not meet and 8 (the source's) do: a disagreement may be the conditions
        gains[family] = verdicts.witnessed(qualified(verdicts.magnitude(rlo, rhi, lo, hi, point=r), REGRESSION_OTHER,
                                                     disagreement_too=True), wits[family])
    rows.append(verdicts.ClaimRow(
        KERNELMAKER_REGRESSION.cite(f"The binlog off alone gains {ledger.PRINTED['binlog_gain_5.7']:.0%} on 5.7 and "
                                    f"{ledger.PRINTED['binlog_gain_8.0']:.0%} on 8.0"),
        f"TPS binlog off / baseline = {ledger.gain('skip-log-bin', '5.7'):.3f} (5.7), "
        f"{ledger.gain('skip-log-bin', '8.0'):.3f} (8.0). {src}",
        ours + "; the two configurations' windows measured apart (Welch on the logs)", "; ".join(cells) or NM,
        "; ".join(f"{f}: {v}" for f, v in gains.items()) if len(set(gains.values())) > 1 else next(iter(gains.values())),
        ids=("binlog-gains-both-versions",),
        witness=verdicts.witnesses(wits) or verdicts.witness(False, "no ablation runs at this scale")))

    x = _config_row(pair, "prepared statements")
    wit = both(config_witness(res, "prepared statements", (x.old, x.new)), config_witness(res, BASELINE, (x.old, x.new))) \
        if x is not None else verdicts.witness(False, "no ablation runs of prepared statements at this scale")
    rows.append(verdicts.ClaimRow(
        KERNELMAKER_REGRESSION.cite("Prepared statements, parsed once, help 8.0 more than 5.7"),
        f"the gap moves above 1 with prepared statements alone (no figure in the text; its table's "
        f"{ledger.gap_change('db-ps-mode=auto'):.3f}). {src}", ours,
        f"8.0 / 5.7 with prepared statements over the baseline's {paired.cell(x.moves, x.moves_low, x.moves_high)}"
        if x is not None else NM,
        qualified(verdicts.DIRECTION_ONLY if verdicts.interval(x.moves_low, x.moves_high, "above") == "agrees"
                  else verdicts.interval(x.moves_low, x.moves_high, "above"), REGRESSION_OTHER) if x is not None else NM,
        ids=("prepared-statements-help-8-0-more",), witness=wit))
    claim = KERNELMAKER_REGRESSION.cite("A factor's worth depends on the order the steps take it in: "
                                        "performance_schema recovers 0.7 points as step 2, 2.3 alone")
    source = f"P_S off alone moves 8.0's gap more than as step 2, after step 1 (no interval there). {src}"
    cells, found, wits = [], {}, {}
    for new in (sorted(set(ab["new"]), key=version_key) if len(ab) else []):
        mine = ab[ab["new"] == new].set_index("config")
        if not {"P_S off", step_name(1), step_name(2)} <= set(mine.index):
            continue
        name = _short(new)
        alone, s1, s2 = mine.loc["P_S off"], mine.loc[step_name(1)], mine.loc[step_name(2)]
        step = stats.ratio_of_ratios((s2.gap, s2.gap_low, s2.gap_high, int(s2.dof)),
                                     (s1.gap, s1.gap_low, s1.gap_high, int(s1.dof)))
        more = stats.ratio_of_ratios((alone.moves, alone.moves_low, alone.moves_high, int(min(alone.dof, s1.dof))),
                                     (*step, int(min(s2.dof, s1.dof))))
        cells.append(f"{name}: alone {paired.cell(alone.moves, alone.moves_low, alone.moves_high)}, as step 2 "
                     f"{paired.cell(*step)}, alone over step 2 {paired.cell(*more)}")
        wits[name] = both(*(config_witness(res, c_, (alone.old, new)) for c_ in ("P_S off", step_name(1), step_name(2))))
        found[name] = (verdicts.not_testable(f"step 1 turns {STEP_1_OPTION} off; {name} has no such option, so its "
                                             "step 2 is performance_schema alone")
                       if not _has_option(res, new, STEP_1_OPTION)
                       else verdicts.witnessed(qualified(verdicts.interval(more[1], more[2], "above"), REGRESSION_OTHER),
                                               wits[name]))
    verdict = ("; ".join(f"{n}: {v}" for n, v in found.items()) if len(set(found.values())) > 1
               else next(iter(found.values()), NM))
    rows.append(verdicts.ClaimRow(claim, source, ours + "; each move a ratio of two gaps measured apart, their "
                                  "standard errors added", "; ".join(cells) or NM, verdict,
                                  ids=("attribution-depends-on-order",),
                                  witness=verdicts.witnesses(wits) or verdicts.witness(False, "no ablation runs at this scale")))
    return rows


STEP_1_OPTION = "innodb_log_writer_threads"  # the source's step 1 turns it off; a version without it cannot


def _has_option(res: Results, server: str, option: str) -> bool:
    """Whether the runs of ``server`` report ``option`` among their effective settings."""
    w = res.wide
    if "settings_effective" not in w or "series_name" not in w:
        return True
    runs = w.loc[w["series_name"] == server, "settings_effective"].dropna()
    return any(f'"{option}"' in str(v) for v in runs)


def _steps_row(res: Results, ab: pd.DataFrame, config: str, g0: float, cite: str, source: str,
               ours: str, lid: str) -> verdicts.ClaimRow:
    """One of the source's steps against 5.7. The claim is about 8.0's gap: not testable where 8.0 cannot take
    the first step (no innodb_log_writer_threads to turn off: 8.0 before 8.0.22 runs its log writer threads
    always), else the gap after the steps against the source's (an interval excluding the source's gap
    disagrees: the claim is how far the steps close it). A newer version than 8.0 (9.7) is shown beside, its
    gap not judged: the source measured 8.0."""
    g = ab[(ab["config"] == config) & ab["old"].map(lambda n: version_key(n)[:2] == (5, 7))] if len(ab) else ab
    cells, found, wits = [], {}, {}
    for x in (g.sort_values("new", key=lambda c: c.map(version_key)).itertuples() if len(g) else ()):
        name = _short(x.new)
        cells.append(f"update-nonindex {name} / {_short(x.old)} {paired.cell(x.gap, x.gap_low, x.gap_high)}"
                     f" ({config})")
        if version_key(x.new)[:2] != (8, 0):
            continue  # shown, not judged
        if not _has_option(res, x.new, STEP_1_OPTION):
            found[name] = verdicts.not_testable(f"step 1 turns {STEP_1_OPTION} off; {name} has no such option and "
                                                "always runs its log writer threads")
            wits[name] = verdicts.witness(False, f"{name} cannot take step 1: the steps are not judged")
            continue
        wits[name] = config_witness(res, config, (x.old, x.new))
        if x.gap_high < g0 or x.gap_low > g0:
            found[name] = verdicts.witnessed(_gap_remains(x, g0), wits[name])
        else:
            found[name] = verdicts.witnessed(qualified(verdicts.magnitude(x.gap_low, x.gap_high, g0, g0, point=x.gap,
                                                                          n=int(x.windows)), REGRESSION_OTHER), wits[name])
    verdict = ("; ".join(f"{n}: {v}" for n, v in found.items()) if len(set(found.values())) > 1
               else next(iter(found.values()), NM))
    return verdicts.ClaimRow(cite, source, ours + "; the claim is about 8.0's gap (9.7.4's shown, not judged)",
                             "; ".join(cells) or NM, verdict, ids=(lid,),
                             witness=verdicts.witnesses(wits) or verdicts.witness(False, f"no runs of {config} on 8.0"))
