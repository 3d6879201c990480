"""The numbers of the page's findings, rendered by ``notebooks/vector_isolation/findings.md.j2`` in at most five
short lines: how often each engine's repeated answer changed under a writer near the query (pgvector with its
iterative scan off and on, MariaDB with one reader and with another reader between), what a writer did to the
index under the reader (pgvector's neighbour lists, a B-tree's entries) and whether a B-tree's answer repeated,
and seed 002's comparison: the best queries per second at a recall target, the builds and the sizes."""

from __future__ import annotations

import numpy as np

from dbexp.book import prose
from dbexp.chapters.vector_isolation import ann_analysis as ann
from dbexp.chapters.vector_isolation.analysis import changed_rates, rate_ci
from dbexp.chapters.vector_isolation.claims import MARIA, PG16, PG32, graph_trials, keyed_trials
from dbexp.chapters.vector_isolation.engines.postgres import Pgvector
from dbexp.experiments.chapter import Results

TARGET = 0.95  # the recall target the findings quote (the post's tables start there)


def _rate(c: int, n: int) -> dict:
    r, lo, hi = rate_ci(c, n)
    return {"count": int(c), "n": int(n), "rate": r, "lo": lo, "hi": hi}


def _pooled(g) -> dict:
    return _rate(int(g["set_changed"].sum()), int(g["transactions"].sum())) | {
        "shorter": int(g["changed_shorter"].sum()), "replaced": int(g["changed_replaced"].sum())}


def near_rates(res: Results) -> dict:
    """The main writer's trials (rows written around the query, k = ef_search, the smallest k): pgvector's with its
    iterative scan off and on, MariaDB's with one reader and with another reader between, pooled over servers."""
    t = changed_rates(res)
    if t.empty or "near" not in set(t["writer"]):
        return {}
    near = t[(t["writer"] == "near") & ~t["exact"].astype(bool) & (t["k"] == t["ef_search"])]
    if near.empty:
        return {}
    k = int(near["k"].min())
    near = near[near["k"] == k]
    pg = near["index"] == Pgvector.label
    one = ~near["reader_between"].astype(bool)
    off = near["iterative"] == "off"
    out = {"k": k}
    for name, g in (("pg_off", near[pg & off & one]), ("pg_on", near[pg & ~off & one]),
                    ("maria_one", near[~pg & one]), ("maria_between", near[~pg & ~one])):
        if len(g):
            out[name] = _pooled(g)
    return out


def structure(res: Results) -> dict:
    """What a writer did to the index under the reader: pgvector's neighbour lists (per row written), the B-tree's
    entries gone, its repeated answers, and another plan's answers."""
    out = {}
    g = graph_trials(res)
    if len(g):
        rows = float(g["writes_between"].sum())
        out["graph"] = {"rows": int(rows), "dropped_per_row": float(g["neighbours_dropped"].sum()) / rows,
                        "changed_per_row": float(g["lists_changed"].sum()) / rows, "trials": len(g)}
    t = keyed_trials(res)
    if len(t):
        shown = t.dropna(subset=["entries_removed"])
        out["btree"] = {"changed": _rate(int(t["set_changed"].sum()), len(t)),
                        "other": _rate(int(t["other_set_differs"].sum()), len(t)),
                        "gone": int(shown["entries_removed"].sum()) if len(shown) else None,
                        "added": int(shown["entries_added"].sum()) if len(shown) else None}
    return out


def comparison(res: Results) -> dict:
    """Seed 002's numbers at the findings' recall target: per pgvector server, MariaDB's best QPS over pgvector's
    (float32) and pgvector's build seconds over MariaDB's, with their intervals; the sizes at the middle m."""
    out = {}
    r = ann.ratios_at(res, MARIA, PG32, (TARGET,))
    if len(r) and "ratio" in r:
        r = r.dropna(subset=["ratio"])
        out["at"] = [{"other": x["other"], "ratio": x["ratio"], "lo": x["low"], "hi": x["high"],
                      "build": x["build_ratio"], "blo": x["build_low"], "bhi": x["build_high"],
                      "qps": x["qps"], "other_qps": x["other_qps"]} for _, x in r.iterrows()]
        out["target"] = TARGET
    sizes = ann.size_ratios(res, PG32, PG16)
    like = ann.size_ratios(res, PG16, MARIA)
    if len(sizes) and len(like):
        m = int(sorted(sizes["m"].unique())[len(sizes["m"].unique()) // 2])
        s, li = sizes[sizes["m"] == m], like[like["m"] == m]
        out["sizes"] = {"m": m, "float32": float(s["size_ratio"].mean()),
                        "like": float(li["size_ratio"].mean()) if len(li) else np.nan,
                        "halfvec_build": float(s["build_ratio"].mean())}
    return out


def numbers(res: Results) -> dict:
    """What the findings say, as numbers and labels (``enough``: False where there are no reader runs)."""
    near = near_rates(res)
    return {"enough": bool(near), "near": near, "structure": structure(res), "ann": comparison(res)}


def findings(res: Results) -> str:
    """The chapter's findings, every number computed from these results: a Markdown list of at most five lines."""
    return "\n".join(prose.render("vector_isolation", "findings", **numbers(res)).split("\n\n"))


def _cell(r: dict) -> str:
    return f"{r['rate']:.0%} [{r['lo']:.0%}, {r['hi']:.0%}] of {r['n']:,}"


def headline(res: Results) -> str:
    """The page's answer in two sentences: how often each engine's repeated answer was another set with rows written
    around the query, and MariaDB's queries per second against pgvector's at a recall target, with intervals."""
    near = near_rates(res)
    if not near:
        return ""
    parts = []
    if "pg_off" in near:
        o = near["pg_off"]
        parts.append(f"pgvector's answer changed in {_cell(o)} trials with its iterative scan off ({o['shorter']} cut "
                     f"short, {o['replaced']} replaced)" + (f" and {_cell(near['pg_on'])} with it on"
                                                            if "pg_on" in near else ""))
    if "maria_one" in near:
        parts.append(f"MariaDB's in {_cell(near['maria_one'])} with one reader" +
                     (f" and {_cell(near['maria_between'])} when another reader searched between"
                      if "maria_between" in near else ""))
    text = (f"A REPEATABLE READ transaction asked the same k-NN query twice (k = ef_search = {near['k']}) while a "
            "writer committed rows around it: " + "; ".join(parts) + " (exact 95% intervals over independent trials).")
    at = comparison(res).get("at")
    if at:
        x = max(at, key=lambda a: a["ratio"])
        text += (f" At recall@10 of at least {TARGET:.2f} MariaDB answered {x['ratio']:.2f}x [{x['lo']:.2f}, "
                 f"{x['hi']:.2f}] the queries per second of {x['other']} (float32).")
    return text
