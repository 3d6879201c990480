"""The claims table: every entry of the chapter's ledger (claims.yaml), each tested one with its verdict
computed from the runs (verdict rules: dbexp.experiments.verdicts)."""

from __future__ import annotations

import pandas as pd

from dbexp.chapters.vector_isolation.analysis import changed_rates, difference_ci, lost_rows, rate_ci, runs
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


def _per_engine(t: pd.DataFrame, expect: str) -> tuple[str, str]:
    """'engine: c of n (rate [lo, hi])' per engine, and the verdicts combined."""
    parts, vs = [], []
    for engine, g in t.groupby("engine", sort=False):
        c, n = int(g["set_changed"].sum()), int(g["transactions"].sum())
        parts.append(f"{engine}: {_pct(c, n)}")
        vs.append(verdicts.events(c, n, rate_ci(c, n)[2], expect))
    return "; ".join(parts), verdicts.combine(vs)


def _beside(maria: pd.DataFrame, pg: pd.DataFrame) -> str:
    """At the setting where pgvector changed most often (and MariaDB ran it too): both shares and the
    interval of their difference."""
    keys = ["setting", "writer_label"]
    both = pg.groupby(keys)[["set_changed", "transactions"]].sum().merge(
        maria.groupby(keys)[["set_changed", "transactions"]].sum(), left_index=True, right_index=True,
        suffixes=("", "_m"))
    if both.empty:
        return ""
    both = both.assign(share=both["set_changed"] / both["transactions"]).sort_values("share")
    (setting, writer), r = both.index[-1], both.iloc[-1]
    d, lo, hi = difference_ci(int(r["set_changed"]), int(r["transactions"]), int(r["set_changed_m"]),
                              int(r["transactions_m"]))
    return (f"; at {setting}, {writer}, where pgvector changed most often: pgvector "
            f"{int(r['set_changed'])} of {int(r['transactions'])}, MariaDB {int(r['set_changed_m'])} of "
            f"{int(r['transactions_m'])}, difference {d:+.1%} [{lo:+.1%}, {hi:+.1%}]")


HERE = "below"  # the conditions, said once under the table


def conditions(res: Results) -> str:
    """This lab's conditions for every tested claim, said once (the table's 'here' column points to it)."""
    w = runs(res)
    readers = w[w["kind"] == "readers"] if len(w) else w
    if readers.empty:
        return ""
    r = readers.iloc[0]
    n_inst = int(w["instance"].nunique())
    gaps = sorted(int(g) for g in readers[readers["writer"] != "none"]["gap_writes"].unique())
    return (f"Here, for every tested claim: {int(r['rows']):,} vectors of {int(r['dims'])} dimensions, HNSW "
            f"m = {int(r['m'])}; {int(r['transactions'])} REPEATABLE READ reader transactions per point on each of "
            f"{n_inst} independently started server{'s' if n_inst != 1 else ''} per engine; one writer connection "
            f"committing {' or '.join(map(str, gaps))} rows between a reader's two queries ({r['gap_s']:g} s with "
            "no writer); the server on one CPU, the clients on the other.")


def _measure(entry_id: str, t: pd.DataFrame, lost: pd.DataFrame) -> tuple[str, str]:
    """(what was measured, verdict) for a tested ledger entry."""
    index = t[~t["exact"]]
    pg = index[index["index"] == Pgvector.label]
    written = pg[pg["writer"] == "insert"]
    if entry_id == "pgvector-set-changes":
        return _per_engine(written, "some")
    if entry_id == "mariadb-repeats":
        maria = index[(index["index"] == MariaDBVector.label) & (index["writer"] == "insert")]
        text, verdict = _per_engine(maria, "none")
        return text + _beside(maria, written), verdict
    if entry_id == "lost-rows-visible":
        parts, vs = [], []
        for _, r in lost.iterrows():
            parts.append(f"{r['engine']}: {int(r['lost'])} rows lost, {int(r['lost_visible'])} of them still "
                         f"visible to the snapshot, {int(r['lost_in_exact'])} among its true k nearest (its exact "
                         "answer)")
            if r["lost"]:
                vs.append(verdicts.events(int(r["lost"] - r["lost_visible"]), int(r["lost"]), 1.0, "none"))
        return "; ".join(parts), (verdicts.combine(vs) if vs else verdicts.not_resolved("no row was lost"))
    if entry_id == "new-rows-rejected":
        c, n = int(index["leaked"].sum()), int(index["transactions"].sum())
        return (f"{c} rows inserted after the snapshot returned, in {n:,} transactions of every engine and setting",
                verdicts.events(c, n, 1.0, "none"))
    if entry_id == "insert-rewrites-lists":
        shown = pg.dropna(subset=["index_pages_written"])
        if shown.empty:
            return "not shown by these engines", verdicts.NOT_MEASURED
        ins = shown[shown["writer"] == "insert"]
        idle = shown[shown["writer"] == "none"]
        text = (f"index pages written while a reader's snapshot was open: {ins['index_pages_written'].mean():.1f} "
                f"of {ins['index_pages'].mean():.0f} on average under inserts "
                f"({ins['writes_between'].mean():.1f} rows inserted between the two queries), "
                f"{idle['index_pages_written'].mean():.1f} with no writer")
        ok = ins["index_pages_written"].min() > 0 and (idle["index_pages_written"].max() == 0 if len(idle) else True)
        return text, verdicts.holds(ok)
    if entry_id == "lost-by-another-path":
        c, n = int(written["changed_replaced"].sum()), int(written["transactions"].sum())
        short = int(written["changed_shorter"].sum())
        return (f"pgvector: {c} of {n:,} transactions got as many rows with others in place of the lost ones (the "
                f"search reached other nodes); {short} more got a shorter answer (new rows the snapshot cannot see "
                "had taken places in the candidate list, a way the post does not name)",
                verdicts.events(c, n, rate_ci(c, n)[2], "some"))
    if entry_id == "set-not-order":
        c, n = int(written["set_changed"].sum()), int(written["transactions"].sum())
        o = int(written["order_only"].sum())
        return (f"pgvector: {c} transactions got another set, {o} the same set in another order, of {n:,}",
                verdicts.events(c, n, rate_ci(c, n)[2], "some"))
    if entry_id == "not-plan-change":
        c, p = int(written["set_changed"].sum()), int(written["plan_changed"].sum())
        share = float((written["rows_mean"] > 0).mean()) if len(written) else 0.0
        text = (f"pgvector: the plan (recorded after each query) changed in {p} transactions; the set changed in "
                f"{c}; every recorded plan read the HNSW index" if share else "no plan recorded")
        if not c:
            return text, verdicts.not_resolved("no set changed")
        return text, verdicts.events(p, c, 1.0, "none")
    if entry_id == "btree-repeats":
        ctl = t[(t["exact"]) | (t["writer"] == "none")]
        text, verdict = _per_engine(ctl, "none")
        return "exact scan under the writer and index scan with no writer: " + text, verdict
    raise KeyError(f"no measurement for ledger entry {entry_id!r}")


def claims(res: Results) -> pd.DataFrame:
    t = changed_rates(res)
    lost = lost_rows(res)
    rows = []
    for e in ledger():
        if e["status"] == "tested":
            measured, verdict = _measure(e["id"], t, lost) if len(t) else ("", verdicts.NOT_MEASURED)
        elif e["status"] == "not testable here":
            measured, verdict = "", verdicts.not_testable(e.get("why", ""))
        else:
            measured, verdict = "", verdicts.not_measured(e["why"])
        rows.append(verdicts.ClaimRow(POST.cite(e["claim"], "post"), e["conditions"],
                                      HERE if e["status"] == "tested" else "", measured, verdict))
    return verdicts.table(rows)
