"""The numbers of the page's findings, rendered by ``notebooks/buffer_pins/findings.md.j2``: the curve's
step past the array and its growth per version (the source's benchmark, pin N and release N), what
holding N costs another read, and what real queries hold."""

from __future__ import annotations

from dbexp.book import prose
from dbexp.chapters.buffer_pins.analysis import (GROWTH, STEP, array_table, pin_table, pooled_share, shape_table,
                                                 source_ratio)
from dbexp.experiments.chapter import Results


def _span(t, col: str) -> dict:
    return {"low": float(t[col].min()), "high": float(t[col].max()),
            "low_version": t.loc[t[col].idxmin(), "version"], "high_version": t.loc[t[col].idxmax(), "version"]}


def numbers(res: Results) -> dict:
    t = shape_table(res)
    if t.empty:
        return {"enough": False}
    out: dict = {"enough": True, "versions": list(dict.fromkeys(t["version"])), "cycle": None, "hold": None,
                 "pins": None, "array": None}
    arr = array_table(res)
    if len(arr) and {1, 19, 100} <= set(arr[arr["kind"] == "hold"]["n"]):
        h = arr[arr["kind"] == "hold"].set_index("n")
        out["array"] = {n: {"text": h.loc[n, "ratio_text"], "below": bool(h.loc[n, "hi"] < 1),
                            "above": bool(h.loc[n, "lo"] > 1)} for n in (1, 19, 100)}
    cyc = t[(t["kind"] == "cycle") & (t["pattern"] == "random")].dropna(subset=["step", "growth"])
    if len(cyc):
        out["cycle"] = {"step": _span(cyc, "step"), "growth": _span(cyc, "growth"),
                        "source_step": source_ratio("random", STEP), "source_growth": source_ratio("random", GROWTH)}
    hold = t[(t["kind"] == "hold") & (t["pattern"] == "random")].dropna(subset=["edge", "growth"])
    if len(hold):
        out["hold"] = {"edge": _span(hold, "edge"), "growth": _span(hold, "growth")}
    k, n = pooled_share(res, "held_at_pin", lambda v: v <= 3)
    lk, ln = pooled_share(res, "locks_per_pin", lambda v: v >= 1)
    p = pin_table(res)
    if n:
        out["pins"] = {"share": k / n, "n": n, "locked": lk / ln if ln else float("nan"),
                       "shapes": len(p["label"].unique()), "most": int(p["held_max"].max()),
                       "most_label": p.loc[p["held_max"].idxmax(), "label"],
                       "most_version": p.loc[p["held_max"].idxmax(), "version"]}
    return out


def findings(res: Results) -> str:
    return prose.render("buffer_pins", "findings", **numbers(res))
