"""The numbers of the page's findings, rendered by ``notebooks/mvcc_chains/findings.md.j2``.

Each estimate per version is handed over as the tables print it (:func:`analysis.interval`), so the
text and the tables show the same figures."""

from __future__ import annotations

from dbexp.book import prose
from dbexp.chapters.mvcc_chains.analysis import READERS, at_largest_v, excess_at, interval, per_version
from dbexp.chapters.mvcc_chains.tables import ordered, largest_v_rows
from dbexp.experiments.chapter import Results

WRITER_GROWTH = 1.5  # the writer "grew" where an update at the largest V took more than this times the smallest's


def _estimates(table, **extra) -> list[dict]:
    """One entry per row: its server, variant and estimate with interval (and ``extra`` columns)."""
    return [{"server": r["series_name"], "variant": r["variant"], "interval": interval(r),
             **{k: r[c] for k, c in extra.items()}} for _, r in table.iterrows()]


def numbers(res: Results) -> dict:
    """What the findings say, as numbers and labels (``enough``: False where the results are too few)."""
    pv = per_version(res)
    t = at_largest_v(res)
    if pv.empty or t.empty:
        return {"enough": False}
    out: dict = {"enough": True}
    undo = pv[(pv["store"] == "undo") & (pv["reader"] == "old")]
    fresh = pv[(pv["store"] == "undo") & (pv["reader"] == "fresh")]
    out["undo_old"] = _estimates(undo)
    out["undo_fresh"] = {"low": fresh["ns_per_version"].min(), "high": fresh["ns_per_version"].max(),
                         "flat": int(((fresh["ci_low"] <= 0) & (fresh["ci_high"] >= 0)).sum()), "n": len(fresh)}
    ex = excess_at(res, 10)
    out["below"] = _estimates(ex[ex["ci_high"] < 0])
    steeper = []
    for _, r in ex[ex["store"] == "undo"].iterrows():
        fit = pv[(pv["series_name"] == r["series_name"]) & (pv["variant"] == r["variant"])
                 & pv["reader"].str.contains(" - ")]
        if len(fit) and r["ci_low"] > fit["ci_high"].iloc[0]:
            steeper.append({"server": r["series_name"], "variant": r["variant"], "at10": interval(r),
                            "fitted": interval(fit.iloc[0])})
    out["steeper"] = steeper
    at10 = ex[(ex["store"] == "undo") | (ex["variant"] == "col v, ff 70")]
    out["at10"] = {"n": len(at10), "resolved": _estimates(at10[at10["ci_low"] > 0])}
    heap = pv[(pv["store"] == "heap") & pv["reader"].isin(READERS)]
    out["heap"] = None
    if len(heap):
        def span(column: str, reader: str) -> dict:
            g = heap[(heap["reader"] == reader) & heap["variant"].str.startswith(f"col {column}")]["ns_per_version"]
            return {"low": g.min(), "high": g.max()}
        out["heap"] = {"vmax": int(heap["vmax"].max()),
                       **{f"{c}_{reader}": span(c, reader) for c in ("v", "k") for reader in READERS}}
    t = ordered(t)
    heap_t = t[t["version_store"] == "heap"]
    out["vmax"] = int(t["versions"].iloc[0])
    out["buffers"] = [{"server": r["series_name"], "variant": r["short"], "old": r["old_buffers"],
                       "fresh": r["fresh_buffers"]} for _, r in heap_t.iterrows()]
    lv = largest_v_rows(res)
    out["writer"] = None
    if "writer_us" in lv and lv["writer_us"].notna().any():
        grow = lv[lv["writer_us"] > WRITER_GROWTH * lv["writer_us_first"]]
        out["writer"] = {"growth": WRITER_GROWTH, "grew": [
            {"server": r["series_name"], "variant": r["short"], "first": r["writer_us_first"], "last": r["writer_us"]}
            for _, r in grow.iterrows()]}
    return out


def findings(res: Results) -> str:
    """The chapter's findings, every number computed from these results: a Markdown list, one line
    per finding (the template's paragraphs)."""
    return "\n".join(prose.render("mvcc_chains", "findings", **numbers(res)).split("\n\n"))
