"""The numbers of the page's findings, rendered by ``notebooks/mvcc_chains/findings.md.j2``: InnoDB's
old reader per version, the first versions against the fit, PostgreSQL's fresh reader on a HOT chain,
a HOT against a non-HOT update, and what the collectors held and when they reclaimed it.

Each estimate per version is handed over as the tables print it (:func:`analysis.interval`), so the
text and the tables show the same figures."""

from __future__ import annotations

import pandas as pd

from dbexp.book import prose
from dbexp.chapters.mvcc_chains.analysis import (at_largest_v, collector_passes, column_against_column, excess_at,
                                                 first_versions, interval, lookups, per_version)
from dbexp.chapters.mvcc_chains.claims import HELD_SHARE, HOT_V, HOT_VARIANT, hot_witnesses, non_hot_witnesses
from dbexp.experiments.chapter import Results


def _one(r) -> dict:
    return {"server": r["series_name"], "variant": r.get("variant", ""), "interval": interval(r)}


def _span(t: pd.DataFrame) -> dict:
    """The smallest and the largest estimate of ``t`` (each as the tables print it), how many there are
    and how many are resolved above 0."""
    t = t.dropna(subset=["ns_per_version"]).sort_values("ns_per_version")
    return {"low": _one(t.iloc[0]), "high": _one(t.iloc[-1]), "n": len(t),
            "above": int((t["ci_low"] > 0).sum())} if len(t) else None


def _median(t: pd.DataFrame, store: str) -> float | None:
    g = t[t["version_store"] == store]["held_snapshot"]
    return float(g.median()) if len(g) else None


def _unwitnessed(wit: dict) -> dict | None:
    """The servers whose witness failed and why (the witness's words up to its first colon, where all alike), or
    None where every witness held."""
    failed = {name: w for name, w in wit.items() if w is not None and not w.ok}
    if not failed:
        return None
    whys = {w.what.split(":")[0] for w in failed.values()}
    return {"servers": sorted(failed), "why": whys.pop() if len(whys) == 1 else None, "all": len(failed) == len(wit)}


def numbers(res: Results) -> dict:
    """What the findings say, as numbers and labels (``enough``: False where the results are too few)."""
    pv = per_version(res)
    t = at_largest_v(res)
    if pv.empty or t.empty or pv["ci_low"].isna().all():
        return {"enough": False}
    out: dict = {"enough": True, "hot_v": HOT_V}
    undo = pv[pv["store"] == "undo"]
    out["undo"] = _span(undo[undo["reader"] == "old - fresh"])
    fresh = undo[undo["reader"] == "fresh"]
    out["undo_fresh"] = {"flat": int(((fresh["ci_low"] <= 0) & (fresh["ci_high"] >= 0)).sum()), "n": len(fresh)}
    fv = first_versions(res)
    out["first"] = _span(fv[fv["store"] == "undo"]) if len(fv) else None
    ex = excess_at(res, HOT_V)
    hot = ex[(ex["store"] == "heap") & (ex["variant"] == HOT_VARIANT)] if len(ex) else ex
    # only the servers whose runs walked the chains as index probes (the claims' witness); the others said apart
    hw = hot_witnesses(res)
    out["hot_unwitnessed"] = _unwitnessed(hw)
    if len(hot):
        hot = hot[hot["series_name"].map(lambda name: hw.get(name) is not None and hw[name].ok)]
    out["hot"] = _span(hot)
    heap = pv[(pv["store"] == "heap") & (pv["variant"] == HOT_VARIANT)]
    fit = heap[heap["reader"] == "fresh - old"]["ns_per_version"]
    both = heap[heap["reader"].isin(["old", "fresh"])]["ns_per_version"]
    out["hot_fit"] = ({"low": fit.min(), "high": fit.max(), "reader_low": both.min(), "reader_high": both.max(),
                       "vmax": int(heap["vmax"].max())} if len(fit) else None)
    cmp = column_against_column(res)
    if len(cmp):  # which reader (and, where several, which fillfactor) each estimate is
        many = cmp[cmp["same_fillfactor"]]["ff_k"].nunique() > 1
        cmp = cmp.assign(variant=[f"{r} reader" + (f", ff {f}" if many and same else "") for r, f, same in
                                  zip(cmp["reader"], cmp["ff_k"], cmp["same_fillfactor"])])
    same = cmp[cmp["same_fillfactor"]] if len(cmp) else cmp
    nw = non_hot_witnesses(lookups(res), same) if len(same) else {}
    out["column_unwitnessed"] = _unwitnessed(nw)
    if len(same):
        same = same[same["series_name"].map(lambda name: nw.get(name) is not None and nw[name].ok)]
    out["column"] = {"clean": len(same) > 0, "ff": sorted({int(f) for f in same["ff_k"]}) if len(same) else [],
                     "span": _span(same if len(same) else cmp),
                     "pair": (sorted({int(f) for f in cmp["ff_k"]}), sorted({int(f) for f in cmp["ff_v"]}))
                     if len(cmp) else None} if len(cmp) else None
    cp = collector_passes(res)
    out["held"] = None
    if len(cp):
        # servers whose collector waited more than two polls before it ran, every run: a cadence of its own
        waits = cp.groupby("series_name").agg(low=("reclaim_s", "min"), high=("reclaim_s", "max"),
                                              n=("run_id", "count"), poll=("poll_s", "max"))
        slow = waits[waits["low"] > 2 * waits["poll"]]
        rest = cp[~cp["series_name"].isin(slow.index)]
        out["held"] = {
            "variants": len(t), "held": int((t["held_snapshot"] >= HELD_SHARE * t["commits"]).sum()),
            "control_max": float(t["held_control"].max()),
            "undo_held": _median(t, "undo"), "heap_held": _median(t, "heap"),
            "slow": [{"server": name, **r.to_dict()} for name, r in slow.iterrows()],
            "fast": {"low": rest["reclaim_s"].min(), "high": rest["reclaim_s"].max()} if len(rest) else None,
            "one_poll": int(cp["one_poll"].sum()), "runs": len(cp), "poll": float(cp["poll_s"].median())}
    return out


def findings(res: Results) -> str:
    """The chapter's findings, every number computed from these results: a Markdown list, one line
    per finding (the template's paragraphs)."""
    return "\n".join(prose.render("mvcc_chains", "findings", **numbers(res)).split("\n\n"))
