"""The numbers of the page's findings, rendered by ``notebooks/vector_isolation/findings.md.j2``: per engine, how
often the repeated answer changed at each writer and setting (one reader; another reader between), how the
changed answers changed (cut short or replaced, rows the snapshot could not see inside the first answer's
radius), the controls, what the changed trials lost, the writer's pace, and the cost of the search."""

from __future__ import annotations

import numpy as np

from dbexp.book import prose
from dbexp.chapters.vector_isolation.analysis import changed_rates, costs, lost_rows, rate_ci
from dbexp.chapters.vector_isolation.engines.postgres import Pgvector
from dbexp.experiments.chapter import Results


def _rate(c: int, n: int) -> dict:
    r, lo, hi = rate_ci(c, n)
    return {"count": int(c), "n": int(n), "rate": r, "lo": lo, "hi": hi}


def _line(r) -> dict:
    """One setting under one writer: its rate and how its changed answers changed."""
    return {"setting": r["setting"], "writer": r["writer_label"], **_rate(r["set_changed"], r["transactions"]),
            "shorter": int(r["changed_shorter"]), "replaced": int(r["changed_replaced"]),
            "replaced_visible": int(r["replaced_visible"]),
            "head_kept": int(r["head_kept"]) if r["head_recorded"] else None,
            "crowded": int(r["crowded"]), "unseen": int(r["unseen_inside"]), "recorded": int(r["unseen_recorded"]),
            "between": bool(r["reader_between"])}


def numbers(res: Results) -> dict:
    """What the findings say, as numbers and labels (``enough``: False where there are no reader runs)."""
    t = changed_rates(res)
    if t.empty:
        return {"enough": False}
    engines = []
    lost = lost_rows(res).set_index("engine")
    cost = costs(res)
    for engine, g in t.groupby("engine", sort=False):
        idx = g[~g["exact"].astype(bool)]
        written = idx[idx["writer"] != "none"]
        ctl = g[g["exact"].astype(bool) | (g["writer"] == "none")]
        c = cost[cost["engine"] == engine]
        rates = written["writes_per_s"].dropna()
        engines.append({
            "engine": engine,
            "lines": [_line(r) for _, r in written.sort_values(["reader_between", "writer", "k", "ef_search",
                                                                  "iterative"], kind="stable").iterrows()],
            "controls": _rate(int(ctl["set_changed"].sum()), int(ctl["transactions"].sum())),
            "order_only": int(written["order_only"].sum()),
            "leaked": int(written["leaked"].sum()),
            "lost": {k: int(lost.loc[engine, k]) for k in ("lost", "lost_visible", "lost_in_exact")}
            if engine in lost.index else None,
            "plan_changed": int(written["plan_changed"].sum()),
            "pace": (float(rates.min()), float(rates.max())) if len(rates) else None,
            "recall": (float(c["recall"].min()), float(c["recall"].max())) if len(c) and c["recall"].notna().any()
            else None,
            "qps": (float(c["qps_mean"].min()), float(c["qps_mean"].max())) if len(c) else None,
            "inserts_per_s": float(c["inserts_mean"].iloc[0]) if len(c) and "inserts_mean" in c
            and np.isfinite(c["inserts_mean"].iloc[0]) else None,
        })
    return {"enough": True, "engines": engines}


def findings(res: Results) -> str:
    """The chapter's findings, every number computed from these results: a Markdown list."""
    return "\n".join(prose.render("vector_isolation", "findings", **numbers(res)).split("\n\n"))


def _pooled(g) -> dict:
    s = _rate(int(g["set_changed"].sum()), int(g["transactions"].sum()))
    return s | {"shorter": int(g["changed_shorter"].sum()), "replaced": int(g["changed_replaced"].sum())}


def headline(res: Results) -> str:
    """The page's answer in two sentences: with rows written around a trial's query between its two searches, at a
    candidate list as short as k, how often each engine's second answer was another set (pgvector with its
    iterative scan off and on; MariaDB with one reader and with another reader between), and how they changed."""
    t = changed_rates(res)
    if t.empty or "near" not in set(t["writer"]):
        return ""
    near = t[(t["writer"] == "near") & ~t["exact"].astype(bool) & (t["k"] == t["ef_search"])]
    k = int(near["k"].min()) if len(near) else 0
    near = near[near["k"] == k]
    pg, maria = near[near["index"] == Pgvector.label], near[near["index"] != Pgvector.label]
    cell = lambda r: f"{r['rate']:.0%} [{r['lo']:.0%}, {r['hi']:.0%}] of {r['n']:,}"
    parts = []
    off = pg[(pg["iterative"] == "off") & ~pg["reader_between"].astype(bool)]
    on = pg[(pg["iterative"] != "off") & ~pg["reader_between"].astype(bool)]
    if len(off):
        o = _pooled(off)
        parts.append(f"pgvector's answer changed in {cell(o)} trials with its iterative scan off ({o['shorter']} cut "
                     f"short, {o['replaced']} replaced)" + (f" and {cell(_pooled(on))} with it on" if len(on) else ""))
    one, two = maria[~maria["reader_between"].astype(bool)], maria[maria["reader_between"].astype(bool)]
    if len(one):
        m = _pooled(one)
        parts.append(f"MariaDB's in {cell(m)} with one reader" +
                     (f" and {cell(_pooled(two))} when another reader searched between" if len(two) else ""))
    if not parts:
        return ""
    return (f"A REPEATABLE READ transaction asked the same k-NN query twice (k = ef_search = {k}) while a writer "
            f"committed rows around it in between: " + "; ".join(parts) + " (exact 95% intervals over independent "
            "trials).")
