"""The numbers of the page's findings, rendered by ``notebooks/buffer_pins/findings.md.j2``: the thread's
benchmark (N held, a FIFO of one buffer) per version, its step past the array and its growth, beside our
two readings (pin N and release N; N held while 64 others are read), what one overflow probe costs on each
version (19~rc1's private refcount path differs), the array of 32 entries on raw time, and what real queries
hold."""

from __future__ import annotations

import numpy as np

from dbexp.book import prose
from dbexp.chapters.buffer_pins.analysis import (GROWTH, KIND_LABELS, STEP, THREAD_KIND, array_table, overflow_ns,
                                                 pin_table,
                                                 pooled_share, shape_table, source_ratio)
from dbexp.experiments.chapter import Results

PREVIEW = "19.0~rc1"  # the preview release whose bufmgr.c changed the private refcount path


def _span(t, col: str) -> dict:
    low, high = float(t[col].min()), float(t[col].max())
    lv, hv = t.loc[t[col].idxmin(), "version"], t.loc[t[col].idxmax(), "version"]
    return {"low": low, "high": high, "low_version": lv, "high_version": hv,
            "text": f"{low:.2f}x ({lv})" if lv == hv else f"{low:.2f}x ({lv}) to {high:.2f}x ({hv})"}


def _ci(r, lo, hi) -> str:
    return f"{r:.2f}" if np.isnan(lo) else f"{r:.2f} [{lo:.2f}, {hi:.2f}]"


def _curve(t, kind: str, cols) -> dict | None:
    g = t[(t["kind"] == kind) & (t["pattern"] == "random")].dropna(subset=list(cols))
    return {c: _span(g, c) for c in cols} if len(g) else None


def _v19(res: Results) -> dict | None:
    """What the operation's pin costs more with 8 held than with 7 (the overflow table's probe), ns: 19~rc1 against
    the released versions, random order, on the thread's benchmark (fifo), else on ours that holds N (hold)."""
    for kind in (THREAD_KIND, "hold"):
        o = overflow_ns(res, kind)
        if len(o) >= 2 and PREVIEW in set(o["version"]):
            break
    else:
        return None
    mine = o[o["version"] == PREVIEW].iloc[0]
    rest = o[o["version"] != PREVIEW]
    e = shape_table(res)
    e = e[(e["kind"] == kind) & (e["pattern"] == "random")].set_index("version")
    return {"kind": KIND_LABELS[kind], "ns": _ci(mine["ns"], mine["lo"], mine["hi"]), "low": float(rest["ns"].min()),
            "high": float(rest["ns"].max()), "low_version": rest.loc[rest["ns"].idxmin(), "version"],
            "high_version": rest.loc[rest["ns"].idxmax(), "version"], "below": bool(mine["hi"] < rest["lo"].min()),
            "edge": _ci(e.loc[PREVIEW, "edge"], e.loc[PREVIEW, "edge_lo"], e.loc[PREVIEW, "edge_hi"])
            if PREVIEW in e.index else ""}


def _array(res: Results) -> dict | None:
    t = array_table(res)
    if t.empty or not t["paired"].all():
        return None
    t = t[t["kind"] == THREAD_KIND]
    out = {}
    for build in ("32 direct", "32"):
        for pattern in ("random", "sequential"):
            g = t[(t["build"] == build) & (t["pattern"] == pattern)].set_index("n")
            if {1, 19, 100} <= set(g.index):
                out[f"{build.replace(' ', '_')}_{pattern}"] = {
                    n: {"text": g.loc[n, "ratio_text"], "below": bool(g.loc[n, "hi"] < 1), "above": bool(g.loc[n, "lo"] > 1)}
                    for n in (1, 19, 100)}
    return out or None


def numbers(res: Results) -> dict:
    t = shape_table(res)
    if t.empty:
        return {"enough": False}
    out: dict = {"enough": True, "versions": list(dict.fromkeys(t["version"])), "fifo": None, "fifo_ran": False,
                 "cycle": None,
                 "hold": None, "pins": None, "array": _array(res), "v19": _v19(res),
                 "source_step": source_ratio("random", STEP), "source_growth": source_ratio("random", GROWTH)}
    out["fifo"] = _curve(t, THREAD_KIND, ("step", "edge", "growth"))
    out["fifo_ran"] = bool((t["kind"] == THREAD_KIND).any())
    out["cycle"] = _curve(t, "cycle", ("step", "growth"))
    out["hold"] = _curve(t, "hold", ("edge", "growth"))
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


def headline(res: Results) -> str:
    """The page's answer in a sentence: the thread's benchmark's step past the 8-entry array and its growth to
    10,000 pins held, on the versions measured (random order), against the thread's."""
    n = numbers(res)
    if not n["enough"] or n["fifo"] is None:
        return ""
    f = n["fifo"]
    return (f"With the thread's benchmark (N pins held, one buffer pinned and released again), 11 held cost "
            f"{f['step']['low']:.2f}x to {f['step']['high']:.2f}x what 7 cost and 10,000 held "
            f"{f['growth']['low']:.2f}x to {f['growth']['high']:.2f}x what 1 cost on PostgreSQL "
            f"{n['versions'][0]} to {n['versions'][-1]}, against the thread's {n['source_step']:.2f}x and "
            f"{n['source_growth']:.2f}x (random order).")
