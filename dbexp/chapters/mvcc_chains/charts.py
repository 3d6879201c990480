"""The mvcc_chains page's chart of what its findings quote: the cost of one version to the reader the sources say
pays, in ns per read, each estimate with its 95% interval (a point and a bar per server and variant), one panel per
finding, each on its own axis: InnoDB's old reader over the fresh one (the slope over V, paired within each run),
PostgreSQL's fresh reader over the old one on a HOT chain of 10 on its page, and a non-HOT version of the indexed
column against a HOT one. A server whose runs' witness failed is drawn grey and said so: the findings do not count
it."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dbexp.book import charts
from dbexp.chapters.mvcc_chains import analysis, claims
from dbexp.experiments.chapter import Results

NUMBER = ",~f"  # plain numbers on every axis (1,000: no SI prefix, no exponent)
HELD, FAILED = "witness held", "witness failed: not counted"
PANELS = ("InnoDB: the old reader's excess over the fresh one, per newer version (fitted over V)",
          f"PostgreSQL: the fresh reader's excess over the old one, per version of a HOT chain of {claims.HOT_V} "
          "on its page",
          "PostgreSQL: a version of the indexed column k less one of v (no index), at one fillfactor")


def _ok(w) -> str:
    return HELD if w is None or w.ok else FAILED


def costs(res: Results) -> pd.DataFrame:
    """The estimates the findings quote, one row each: ``panel`` (PANELS), ``label`` (server and variant or reader),
    ``ns`` per version with ``low`` and ``high`` (95%), ``repeats`` and ``witness`` (HELD or FAILED)."""
    rows = []
    pv = analysis.per_version(res)
    if len(pv):
        undo = pv[(pv["store"] == "undo") & (pv["reader"] == "old - fresh")]
        runs = analysis.tidy(res)
        runs = runs[runs["snapshot"] & (runs["version_store"] == "undo")]
        wit = {name: claims.undo_witness(g) for name, g in runs.groupby("series_name")}
        rows += [{"panel": PANELS[0], "label": f"{r['series_name']} ({r['variant']})", "ns": r["ns_per_version"],
                  "low": r["ci_low"], "high": r["ci_high"], "repeats": int(r["repeats"]),
                  "witness": _ok(wit.get(r["series_name"]))} for _, r in undo.iterrows()]
    ex = analysis.excess_at(res, claims.HOT_V)
    hot = ex[(ex["store"] == "heap") & (ex["variant"] == claims.HOT_VARIANT)] if len(ex) else ex
    if len(hot):
        wit = claims.hot_witnesses(res)
        rows += [{"panel": PANELS[1], "label": r["series_name"], "ns": r["ns_per_version"], "low": r["ci_low"],
                  "high": r["ci_high"], "repeats": int(r["repeats"]), "witness": _ok(wit.get(r["series_name"]))}
                 for _, r in hot.iterrows()]
    cmp = analysis.column_against_column(res)
    same = cmp[cmp["same_fillfactor"]] if len(cmp) else cmp
    if len(same):
        wit = claims.non_hot_witnesses(analysis.lookups(res), same)
        rows += [{"panel": PANELS[2], "label": f"{r['series_name']} ({r['reader']} reader, ff {int(r['ff_k'])})",
                  "ns": r["ns_per_version"], "low": r["ci_low"], "high": r["ci_high"], "repeats": int(r["repeats"]),
                  "witness": _ok(wit.get(r["series_name"]))} for _, r in same.iterrows()]
    return pd.DataFrame(rows, columns=["panel", "label", "ns", "low", "high", "repeats", "witness"])


def costs_per_version(res: Results) -> alt.VConcatChart | None:
    """:func:`costs` drawn: a panel per finding, each on its own axis with a dashed line at 0, a point and its 95%
    interval per row, coloured by whether its witness held (None without estimates)."""
    t = costs(res)
    if t.empty:
        return None
    color = alt.Color("witness:N", title=None, scale=alt.Scale(domain=[HELD, FAILED], range=["#1f6fb4", "#9e9e9e"]),
                      legend=alt.Legend(orient="bottom"))
    tip = ["label", alt.Tooltip("ns:Q", format=",.0f"), alt.Tooltip("low:Q", format=",.0f"),
           alt.Tooltip("high:Q", format=",.0f"), "repeats", "witness"]
    panels = []
    for panel in PANELS:
        g = t[t["panel"] == panel]
        if g.empty:
            continue
        y = alt.Y("label:N", title=None, sort=list(g.sort_values("label")["label"]), axis=alt.Axis(labelLimit=260))
        x = alt.X("low:Q", title="ns per read and version (point, 95% interval)",
                  axis=alt.Axis(format=NUMBER))
        zero = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x="zero:Q")
        base = alt.Chart(g)
        panels.append(alt.layer(
            zero, base.mark_rule(strokeWidth=2).encode(y=y, x=x, x2="high:Q", color=color),
            base.mark_point(filled=True, size=60).encode(y=y, x="ns:Q", color=color, tooltip=tip),
        ).properties(width=430, height=max(40, 17 * len(g)), title=alt.TitleParams(panel, fontSize=12, anchor="start")))
    return alt.vconcat(*panels, spacing=14).properties(title=charts.titled(
        "What one version costs the reader the sources say pays (95% intervals over the repeats)", res))
