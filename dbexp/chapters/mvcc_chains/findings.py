"""The numbers of the page's findings, rendered by ``notebooks/mvcc_chains/findings.md.j2``: InnoDB's
old reader per version, the first versions against the fit, PostgreSQL's fresh reader on a HOT chain,
a HOT against a non-HOT update, and what the collectors held and when they reclaimed it.

Each estimate per version is handed over as the tables print it (:func:`analysis.interval`), so the
text and the tables show the same figures."""

from __future__ import annotations

import pandas as pd

from dbexp.book import prose
from dbexp.chapters.mvcc_chains.analysis import (at_largest_v, collector_passes, column_against_column, excess_at,
                                                 first_versions, interval, lookups, mechanics, per_version)
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
    out["steps"] = steps_held(res)
    return out


def steps_held(res: Results) -> dict | None:
    """The step-by-step claims (claims.PAGE_CLAIMS, BLOB_CLAIMS) as the probe runs show them: how many were observed,
    how many held in every run that tested them, and the ledger ids of those that did not (None without probe runs)."""
    from dbexp.chapters.mvcc_chains.claims import BLOB_CLAIMS, PAGE_CLAIMS
    from dbexp.experiments import steps

    m = mechanics(res)
    if m.empty:
        return None
    m = m.reset_index(drop=True)
    rows = list(m.itertuples())
    seen, failed, runs = 0, [], 0
    for c in (steps.StepClaim(*x) for x in PAGE_CLAIMS + BLOB_CLAIMS):
        if c.needs not in m:
            continue
        tested = [r for r in rows if m.at[r.Index, c.needs] == m.at[r.Index, c.needs]
                  and (c.only is None or c.only(r))]
        if not tested:
            continue
        seen += 1
        runs += len(tested)
        if not all(bool(c.holds(r)) for r in tested):
            failed.append(c.id)
    return {"n": seen, "held": seen - len(failed), "failed": failed, "runs": len(rows),
            "servers": int(m["series_name"].nunique())}


def headline(res: Results) -> str:
    """The page's answer in two sentences, from the data: on the runs' CPU, what each newer version costs InnoDB's
    old reader beyond a fresh one (the median server's excess per version with its 95% interval, and the range over
    the servers), what a HOT chain of 10 costs PostgreSQL's fresh reader where its lookups were witnessed as index
    probes (else that it is not measured), and what the collectors held ('' without estimates)."""
    from dbexp.experiments.chapter import cpu_models

    n = numbers(res)
    if not n.get("enough") or not n.get("undo"):
        return ""
    undo = per_version(res)
    undo = undo[(undo["store"] == "undo") & (undo["reader"] == "old - fresh")].sort_values("ns_per_version")
    mid = undo.iloc[len(undo) // 2]
    text = (f"On an {cpu_models(res.runs)}, each newer version costs InnoDB's reader with an old snapshot "
            f"{interval(mid)} ns per read more than a fresh reader ({mid['series_name']}, {mid['variant']}; "
            f"{n['undo']['low']['interval'].split()[0]} to {n['undo']['high']['interval'].split()[0]} ns over "
            f"{n['undo']['n']} servers and columns, 95% intervals)")
    if n.get("hot"):
        hot = n["hot"]
        span = (hot["low"]["interval"] if hot["n"] == 1 else
                f"{hot['low']['interval']} to {hot['high']['interval']}")
        text += (f", while on a HOT chain of {HOT_V} PostgreSQL's fresh reader pays {span} ns per version more than "
                 "the old one.")
    else:
        text += (f"; PostgreSQL's fresh reader on a HOT chain is not measured in these runs (their lookups were not "
                 "shown to be index probes).")
    held = n.get("held")
    if held:
        text += (f" With the snapshot open, the collectors kept at least half of the old versions in {held['held']} of "
                 f"{held['variants']} variants, and reclaimed them once it ended.")
    return text


def findings(res: Results) -> str:
    """The chapter's findings, every number computed from these results: a Markdown list, one line
    per finding (the template's paragraphs)."""
    return "\n".join(prose.render("mvcc_chains", "findings", **numbers(res)).split("\n\n"))
