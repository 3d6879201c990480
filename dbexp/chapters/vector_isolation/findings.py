"""The numbers of the page's findings, rendered by ``notebooks/vector_isolation/findings.md.j2``: per engine,
how often the repeated answer changed under inserts (the main sweep's range over settings, and all
settings pooled), the controls, what the changed transactions lost, and the cost of the search."""

from __future__ import annotations

from dbexp.book import prose
from dbexp.chapters.vector_isolation.analysis import changed_rates, costs, lost_rows, rate_ci
from dbexp.experiments.chapter import Results


def _rate(c: int, n: int) -> dict:
    r, lo, hi = rate_ci(c, n)
    return {"count": c, "n": n, "rate": r, "lo": lo, "hi": hi}


def numbers(res: Results) -> dict:
    """What the findings say, as numbers and labels (``enough``: False where there are no reader runs)."""
    t = changed_rates(res)
    if t.empty:
        return {"enough": False}
    engines = []
    lost = lost_rows(res).set_index("engine")
    cost = costs(res)
    for engine, g in t.groupby("engine", sort=False):
        idx = g[~g["exact"]]
        ins = idx[idx["writer"] == "insert"]
        worst = ins.sort_values("changed_rate").iloc[-1] if len(ins) else None
        best = ins.sort_values("changed_rate").iloc[0] if len(ins) else None
        ctl = g[g["exact"] | (g["writer"] == "none")]
        others = idx[~idx["writer"].isin(["insert", "none"])]
        c = cost[cost["engine"] == engine]
        engines.append({
            "engine": engine,
            "inserts": _rate(int(ins["set_changed"].sum()), int(ins["transactions"].sum())),
            "worst": {"setting": worst["setting"], "writer": worst["writer_label"],
                      **_rate(int(worst["set_changed"]), int(worst["transactions"]))} if worst is not None else None,
            "best": {"setting": best["setting"], "writer": best["writer_label"],
                     **_rate(int(best["set_changed"]), int(best["transactions"]))} if best is not None else None,
            "others": [{"writer": r["writer_label"], **_rate(int(r["set_changed"]), int(r["transactions"]))}
                       for _, r in others.iterrows()],
            "controls": _rate(int(ctl["set_changed"].sum()), int(ctl["transactions"].sum())),
            "shorter": int(ins["changed_shorter"].sum()), "replaced": int(ins["changed_replaced"].sum()),
            "iterative": _rate(int(ins[ins["iterative"] != "off"]["set_changed"].sum()),
                               int(ins[ins["iterative"] != "off"]["transactions"].sum())),
            "order_only": int(ins["order_only"].sum()),
            "leaked": int(idx["leaked"].sum()),
            "lost": {k: int(lost.loc[engine, k]) for k in ("lost", "lost_visible", "lost_in_exact")}
            if engine in lost.index else None,
            "plan_changed": int(idx["plan_changed"].sum()),
            "recall": (float(c["recall"].min()), float(c["recall"].max())) if len(c) and c["recall"].notna().any()
            else None,
            "qps": (float(c["qps_mean"].min()), float(c["qps_mean"].max())) if len(c) else None,
            "inserts_per_s": float(c["inserts_mean"].iloc[0]) if len(c) and "inserts_mean" in c else None,
        })
    return {"enough": True, "engines": engines}


def findings(res: Results) -> str:
    """The chapter's findings, every number computed from these results: a Markdown list."""
    return "\n".join(prose.render("vector_isolation", "findings", **numbers(res)).split("\n\n"))
