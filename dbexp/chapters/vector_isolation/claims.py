"""The claims table: every entry of the chapter's ledger (claims.yaml), each tested one with its verdict
computed from the trials as stored (verdict rules: dbexp.experiments.verdicts), and its witness: what the
stored trials show about HOW the answers changed, so that a verdict stands only where the runs exercised the
mechanism the claim is about.

The post's mechanism (seed 000, line 1870) is a neighbour list rewritten in place, so that the second search
no longer reaches a row that is still visible: an answer *replaced* (as many rows, others in place of the
lost ones) whose lost rows the same snapshot still sees. An answer *cut short* (fewer than k rows) is another
mechanism: rows the snapshot cannot see took places in the search's bounded candidate list and were dropped
after it (pgvector's hnsw.ef_search with its iterative scan off: src/hnswscan.c ends the scan when the list
is spent). Trials are independent (each its own query; each starts from the state the writes before it left),
so counts carry exact binomial intervals over trials."""

from __future__ import annotations

import pandas as pd

from dbexp.chapters.vector_isolation.analysis import (NEW_ROW_WRITERS, difference_ci, mechanism_columns, rate_ci,
                                                      runs, summarize, trials)
from dbexp.chapters.vector_isolation.engines.mariadb import MariaDBVector
from dbexp.chapters.vector_isolation.engines.postgres import Pgvector
from dbexp.experiments import claims_ledger, verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import KERNELMAKER_PGVECTOR_RR as POST


def ledger() -> tuple[dict, ...]:
    """The chapter's ledger (claims.yaml), checked (dbexp.experiments.claims_ledger)."""
    return claims_ledger.ledger("vector_isolation")


def _pct(c: int, n: int) -> str:
    r, lo, hi = rate_ci(c, n)
    return f"{c} of {n:,} ({r:.1%} [{lo:.1%}, {hi:.1%}])" if n else "none run"


def _how(s: dict) -> str:
    """How the changed answers of a summary changed, in words."""
    if not s["set_changed"]:
        return "none changed"
    return (f"{s['changed_shorter']} cut short, {s['changed_replaced']} replaced "
            f"({s['replaced_visible']} with every lost row still visible)")


HERE = "below"  # the conditions, said once under the table


def conditions(res: Results) -> str:
    """This lab's conditions for every tested claim, said once (the table's 'here' column points to it)."""
    w = runs(res)
    readers = w[w["kind"] == "readers"] if len(w) else w
    if readers.empty:
        return ""
    r = readers.iloc[0]
    n_inst = int(w["instance"].nunique())
    written = readers[readers["writer"] != "none"]
    gaps = sorted(int(g) for g in written["gap_writes"].unique())
    rates = sorted(float(x) for x in written["rate"].dropna().unique())
    pace = (f"at a pace of {' or '.join(f'{x:g}' for x in rates)} rows/s on every engine" if rates
            else "as fast as it went (not paced)")
    return (f"Here, for every tested claim: {int(r['rows']):,} vectors of {int(r['dims'])} dimensions, HNSW "
            f"m = {int(r['m'])}; {int(r['transactions'])} REPEATABLE READ trials per point, each its own transaction "
            f"and query vector, on each of {n_inst} independently started server{'s' if n_inst != 1 else ''} per "
            f"engine; one writer connection committing {' or '.join(map(str, gaps))} rows between a trial's two "
            f"searches, one row per transaction, {pace}; the server on one CPU, the clients on the other.")


def _select(t: pd.DataFrame, index: str | None = None, writers=NEW_ROW_WRITERS, exact: bool = False,
            between: bool = False) -> pd.DataFrame:
    keep = (t["exact"].astype(bool) == exact) & (t["reader_between"].astype(bool) == between)
    if writers is not None:
        keep &= t["writer"].isin(writers)
    if index is not None:
        keep &= t["index"] == index
    return t[keep]


def _engines(t: pd.DataFrame):
    return [(engine, g) for engine, g in t.groupby("engine", sort=False)]


def _post_mechanism(s: dict) -> verdicts.Witness:
    """Whether the trials show the post's mechanism: an answer replaced with its lost rows still visible (a row
    the second search no longer reached), as against answers cut short by rows the snapshot could not see."""
    if not s["transactions"]:
        return verdicts.witness(False, "no trial under a writer of new rows")
    if not s["set_changed"]:
        return verdicts.witness(False, f"no answer changed in {s['transactions']:,} trials")
    crowd = (f", {s['crowded']} of them with as many rows the snapshot could not see inside the first answer's "
             "radius as they lost" if s["unseen_recorded"] else "")
    if s["replaced_visible"]:
        return verdicts.witness(True, f"{s['replaced_visible']} of {s['set_changed']} changed answers kept k rows "
                                      f"with every lost row still visible (the search no longer reached it); "
                                      f"{s['changed_shorter']} were cut short{crowd}")
    return verdicts.witness(False, f"none of the {s['set_changed']} changed answers kept k rows with its lost rows "
                                   f"visible: {s['changed_shorter']} were cut short{crowd} (a bounded candidate "
                                   "list spent on rows the snapshot cannot see, not a neighbour list rewritten in "
                                   "place)")


def _per_engine(t: pd.DataFrame, judge, witness) -> tuple[str, str, verdicts.Witness | None]:
    """Per engine: ``judge(summary) -> (text, verdict)``, ``witness(summary) -> Witness``; the verdicts gated by
    their witnesses, then combined."""
    parts, vs, ws = [], [], {}
    for engine, g in _engines(t):
        s = summarize(g)
        text, v = judge(s)
        w = witness(s)
        parts.append(f"{engine}: {text}")
        vs.append(verdicts.witnessed(v, w))
        ws[engine] = w
    return "; ".join(parts), verdicts.combine(vs), verdicts.witnesses(ws)


def _changes(s: dict) -> str:
    return f"{_pct(s['set_changed'], s['transactions'])} changed ({_how(s)})"


def _pages(t: pd.DataFrame) -> tuple[str, str, verdicts.Witness]:
    """insert-rewrites-lists: index pages written per trial against what appending the new rows can write."""
    shown = t.dropna(subset=["index_pages_written"])
    written = shown[shown["writer"].isin(NEW_ROW_WRITERS) & (shown["writes_between"] > 0)]
    idle = shown[shown["writer"] == "none"]
    if written.empty:
        return "not shown by these engines", verdicts.NOT_MEASURED, verdicts.witness(False, "no index page was read")
    # an insert appends its element and neighbour tuples on the insert page (or a new one) and may touch the
    # metapage: at most two pages a row and one more; pages beyond that are other nodes' pages rewritten
    bound = 2 * written["writes_between"] + 1
    beyond = int((written["index_pages_written"] > bound).sum())
    text = (f"index pages written while a trial's snapshot was open: {written['index_pages_written'].mean():.1f} "
            f"of {written['index_pages'].mean():.0f} on average ({written['writes_between'].mean():.1f} rows "
            f"inserted between the two searches); more pages than appending those rows can write (two a row and "
            f"the metapage) in {beyond} of {len(written)} trials; "
            f"{idle['index_pages_written'].mean():.1f} with no writer" if len(idle) else "")
    w = verdicts.witness(len(idle) > 0, f"the index's pages read with pageinspect after {len(written)} trials "
                                        f"under inserts and {len(idle)} with no writer (their LSNs against the WAL "
                                        "position taken when each snapshot began)")
    ok = beyond * 2 > len(written) and (idle["index_pages_written"].max() == 0 if len(idle) else False)
    return text, verdicts.holds(ok), w


def _graph_rows(t: pd.DataFrame) -> str:
    g = t.dropna(subset=["graph_rows_updated"])
    g = g[g["writer"].isin(NEW_ROW_WRITERS) & (g["writes_between"] > 0)]
    if g.empty:
        return ""
    per = g["graph_rows_updated"].sum() / g["writes_between"].sum()
    return (f"; MariaDB's writer rewrote {per:.1f} rows of the graph's own table per row inserted (its "
            "Handler_update: neighbour lists of nodes already in the graph), versioned by InnoDB")


def _beside(t: pd.DataFrame) -> dict | None:
    """The setting where pgvector's answer changed most often, one reader under a writer of new rows with its
    iterative scan off, that MariaDB ran too: both engines' counts and the difference's interval."""
    keys = ["setting", "writer_label"]
    one = _select(t)
    one = one[one["iterative"] == "off"]
    pg, maria = one[one["index"] == Pgvector.label], one[one["index"] == MariaDBVector.label]
    both = (pg.groupby(keys)["set_changed"].agg(["sum", "count"])
            .merge(maria.groupby(keys)["set_changed"].agg(["sum", "count"]), left_index=True, right_index=True,
                   suffixes=("", "_m")))
    if both.empty:
        return None
    both = both.assign(share=both["sum"] / both["count"]).sort_values("share", kind="stable")
    (setting, writer), r = both.index[-1], both.iloc[-1]
    d = difference_ci(int(r["sum"]), int(r["count"]), int(r["sum_m"]), int(r["count_m"]))
    at = lambda g: g[(g["setting"] == setting) & (g["writer_label"] == writer)]
    return {"setting": setting, "writer": writer, "pgvector": summarize(at(pg)), "maria": summarize(at(maria)),
            "d": d}


def _mariadb(t: pd.DataFrame) -> tuple[str, str, verdicts.Witness | None]:
    """mariadb-repeats: MariaDB with one reader at the settings where pgvector's answers changed most, the
    difference between them, and MariaDB with another reader searching between the writes and the second
    search."""
    maria = t[(t["index"] == MariaDBVector.label) & ~t["exact"].astype(bool) & t["writer"].isin(NEW_ROW_WRITERS)]
    if maria.empty:
        return "", verdicts.NOT_MEASURED, None
    apart = maria["reader_between"].astype(bool)
    one, between = summarize(maria[~apart]), summarize(maria[apart])
    side = _beside(t)
    parts = [f"one reader, every setting: {_changes(one)}"]
    if side:
        d, lo, hi = side["d"]
        parts.append(f"at {side['setting']}, {side['writer']}, where pgvector changed most often: pgvector "
                     f"{side['pgvector']['set_changed']} of {side['pgvector']['transactions']}, MariaDB "
                     f"{side['maria']['set_changed']} of {side['maria']['transactions']}, difference {d:+.1%} "
                     f"[{lo:+.1%}, {hi:+.1%}]")
    if between["transactions"]:
        parts.append(f"another reader searching between the writes and the second search: {_changes(between)}, "
                     f"{between['head_kept']} of them the first answer's head")
    text = "MariaDB: " + "; ".join(parts) + _graph_rows(maria)
    # the witness: the trigger of pgvector's changes (rows the snapshot could not see, inside the first
    # answer's radius, with neighbour lists rewritten) happened in MariaDB's own trials
    rec = one["unseen_recorded"] + between["unseen_recorded"]
    inside = one["unseen_inside"] + between["unseen_inside"]
    rewritten = maria["graph_rows_updated"].dropna()
    if not rec:
        w = verdicts.witness(False, "these runs did not record whether rows the snapshot could not see lay inside "
                                    "the first answer's radius, nor the graph rows the writer rewrote: MariaDB's "
                                    "answers were never shown to face what changed pgvector's")
    else:
        what = (f"rows the snapshot could not see lay inside the first answer's radius in {inside} of {rec} MariaDB "
                f"trials, and the writer rewrote graph rows in {int((rewritten > 0).sum())} of {len(rewritten)}")
        if between["transactions"]:
            what += (f"; with another reader between, {between['changed_shorter']} of {between['transactions']} "
                     f"answers came back cut short ({between['head_kept']} to the first answer's head), "
                     f"{between['crowded']} of them with at least as many such rows inside the radius as places "
                     "lost")
        w = verdicts.witness(inside > 0 and (rewritten > 0).any(), what)
    if between["set_changed"]:
        repeated = ("with one reader its answer repeated where pgvector's changed, but "
                    if not one["set_changed"] and side is not None and side["d"][1] > 0 else "")
        verdict = verdicts.disagrees(f"{repeated}its answer changed when another reader, with a newer snapshot, "
                                     "searched between: the graph the searches walk is one cache shared by every "
                                     "connection, not versioned per snapshot")
    elif one["set_changed"]:
        verdict = verdicts.disagrees()
    elif side is None or not side["d"][1] > 0:
        verdict = verdicts.not_resolved("MariaDB's answers repeated, but pgvector's did not change more often at "
                                        "the same settings: the difference's interval spans 0")
    else:
        verdict = verdicts.agrees(None if between["transactions"] else
                                  "one reader only: another reader between the searches was not run")
    return text, verdicts.witnessed(verdict, w), w


def _measure(entry_id: str, t: pd.DataFrame) -> tuple[str, str, verdicts.Witness | None]:
    """(what was measured, verdict, witness) for a tested ledger entry."""
    pg = _select(t, Pgvector.label)  # one reader, index scans, writers of new rows
    if entry_id == "pgvector-set-changes":
        return _per_engine(pg, lambda s: (_changes(s), verdicts.events(s["set_changed"], s["transactions"],
                                                                       rate_ci(0, s["transactions"])[2], "some")),
                           _post_mechanism)
    if entry_id == "lost-by-another-path":
        def judge(s):
            return (f"{s['changed_replaced']} of {s['transactions']:,} trials got as many rows with others in place "
                    f"of the lost ones, {s['replaced_true']} of them losing a row of the snapshot's exact k "
                    f"nearest; {s['changed_shorter']} more came back cut short (rows the snapshot cannot see had "
                    "taken places in the candidate list, a way the post does not name)",
                    verdicts.events(s["changed_replaced"], s["transactions"], rate_ci(0, s["transactions"])[2], "some"))

        def witness(s):
            if s["replaced_visible"]:
                return verdicts.witness(True, f"{s['replaced_visible']} replaced answers lost only rows the snapshot "
                                              f"still saw (the search walked another way; {s['replaced_true']} of "
                                              "them lost a row of its exact k nearest)")
            return verdicts.witness(False, f"no answer kept its length with its lost rows still visible "
                                           f"({s['changed_replaced']} replaced, {s['changed_shorter']} cut short)")
        return _per_engine(pg, judge, witness)
    if entry_id == "lost-rows-visible":
        def judge(s):
            if not s["lost"]:
                return "no row was lost", verdicts.not_resolved("no row was lost")
            return (f"{s['lost']} rows lost, {s['lost_visible']} of them still visible to the snapshot and "
                    f"{s['lost_in_exact']} among its exact k nearest ({s['lost_replaced']} lost from replaced "
                    f"answers, {s['lost_replaced_visible']} of them visible)",
                    verdicts.events(s["lost"] - s["lost_visible"], s["lost"], 1.0, "none"))

        def witness(s):
            if s["lost_replaced"]:
                return verdicts.witness(True, f"{s['lost_replaced']} rows were lost from answers that kept their "
                                              "length (the index no longer led to them), each looked up by id "
                                              "under the same snapshot")
            return verdicts.witness(False, f"every one of the {s['lost']} lost rows came from an answer cut short: "
                                           "the index still led to it, the bounded candidate list was spent on "
                                           "rows the snapshot could not see")
        return _per_engine(pg, judge, witness)
    if entry_id == "new-rows-rejected":
        def judge(s):
            return (f"{s['leaked']} rows the snapshot could not see returned, in {s['transactions']:,} trials",
                    verdicts.events(s["leaked"], s["transactions"], 1.0, "none"))

        def witness(s):
            if s["unseen_recorded"]:
                ok = s["crowded"] > 0
                return verdicts.witness(ok, f"in {s['crowded']} trials the answer was cut short by at least as "
                                            "many rows the snapshot could not see inside the first answer's radius "
                                            "as it lost: the search reached them and the heap check dropped them")
            ok = s["changed_shorter"] > 0
            return verdicts.witness(ok, f"{s['changed_shorter']} answers came back cut short under inserts with the "
                                        "iterative scan off: candidates the search reached were dropped by the heap "
                                        "check")
        return _per_engine(pg, judge, witness)
    if entry_id == "insert-rewrites-lists":
        text, verdict, w = _pages(_select(t, Pgvector.label, writers=None))
        return text + _graph_rows(t), verdicts.witnessed(verdict, w), w
    if entry_id == "mariadb-repeats":
        return _mariadb(t)
    if entry_id == "set-not-order":
        return _per_engine(pg, lambda s: (f"{s['set_changed']} trials got another set, {s['order_only']} the same "
                                          f"set in another order, of {s['transactions']:,} ({_how(s)})",
                                          verdicts.events(s["set_changed"], s["transactions"],
                                                          rate_ci(0, s["transactions"])[2], "some")),
                           _post_mechanism)
    if entry_id == "not-plan-change":
        def judge(s):
            text = (f"the plan (recorded after each search) changed in {s['plan_changed']} trials; the set changed "
                    f"in {s['set_changed']} ({_how(s)}); every recorded plan read the HNSW index")
            if not s["set_changed"]:
                return text, verdicts.not_resolved("no set changed")
            return text, verdicts.events(s["plan_changed"], s["set_changed"], 1.0, "none")
        return _per_engine(pg, judge, _post_mechanism)
    if entry_id == "btree-repeats":
        ctl = t[t["exact"].astype(bool) | (t["writer"] == "none")]

        def judge(s):
            return (_pct(s["set_changed"], s["transactions"]),
                    verdicts.events(s["set_changed"], s["transactions"], rate_ci(0, s["transactions"])[2], "none"))

        def witness_of(g: pd.DataFrame) -> verdicts.Witness:
            ex = g[g["exact"].astype(bool)]
            if ex.empty:
                return verdicts.witness(False, "no exact-scan trial under a writer")
            s = summarize(ex)
            inside = (f"; rows the snapshot could not see lay inside the first answer's radius in "
                      f"{s['unseen_inside']} of {s['unseen_recorded']}" if s["unseen_recorded"] else "")
            ok = bool((ex["writes_between"] > 0).all()) and (s["unseen_inside"] > 0 if s["unseen_recorded"] else True)
            return verdicts.witness(ok, f"the writer committed {s['writes_between']:.0f} rows between the two "
                                        f"searches of each of the {s['transactions']} exact-scan trials{inside}")
        parts, vs, ws = [], [], {}
        for engine, g in _engines(ctl):
            text, v = judge(summarize(g))
            w = witness_of(g)
            parts.append(f"{engine}: {text}")
            vs.append(verdicts.witnessed(v, w))
            ws[engine] = w
        return ("exact scan under the writer and index scan with no writer: " + "; ".join(parts),
                verdicts.combine(vs), verdicts.witnesses(ws))
    raise KeyError(f"no measurement for ledger entry {entry_id!r}")


def claims(res: Results) -> pd.DataFrame:
    t = mechanism_columns(trials(res)) if len(trials(res)) else trials(res)
    rows = []
    for e in ledger():
        w = None
        if e["status"] == "tested":
            measured, verdict, w = _measure(e["id"], t) if len(t) else ("", verdicts.NOT_MEASURED, None)
        elif e["status"] == "not testable here":
            measured, verdict = "", verdicts.not_testable(e.get("why", ""))
        else:
            measured, verdict = "", verdicts.not_measured(e["why"])
        rows.append(verdicts.ClaimRow(POST.cite(e["claim"], "post"), e["conditions"],
                                      HERE if e["status"] == "tested" else "", measured, verdict,
                                      ids=(e["id"],), witness=w))
    return verdicts.table(rows)
