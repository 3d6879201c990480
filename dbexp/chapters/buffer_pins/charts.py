"""The buffer_pins page's charts that draw what its findings quote, each with its 95% intervals: the thread's
benchmark's ratios (11 held over 7, 8 over 7, 10,000 over 1) per version and order beside the thread's own, and the
overflow table alone (murmurhash32's time over the identity's per N held, per key pattern, on a log axis)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dbexp.book import charts
from dbexp.chapters.buffer_pins import analysis
from dbexp.experiments.chapter import Results

NUMBER = charts.NUMBER  # plain numbers on every axis (dbexp.book.charts)
THREAD = "thread (its table)"
RATIOS = (("step", analysis.STEP), ("edge", None), ("growth", analysis.GROWTH))  # None: the kind's own edge


def _label(pair: tuple[int, int], kind: str) -> str:
    return f"{pair[1]:,} / {pair[0]:,} {'pinned' if kind == 'cycle' else 'held'}"


def ratio_rows(res: Results) -> tuple[pd.DataFrame, str]:
    """The rows of :func:`curve_ratios`: per version, order and ratio (the thread's benchmark, else *pin N, release
    N* where none of it ran), the ratio with its interval; the thread's own where its table has both N. And the
    kind drawn."""
    t = analysis.shape_table(res)
    if t.empty:
        return pd.DataFrame(columns=["version", "pattern", "ratio", "value", "low", "high", "runs"]), ""
    kind = analysis.THREAD_KIND if (t["kind"] == analysis.THREAD_KIND).any() else "cycle"
    t = t[t["kind"] == kind]
    rows = []
    for name, pair in RATIOS:
        pair = pair or analysis.EDGES.get(kind, (7, 8))
        label = _label(pair, kind)
        for _, r in t.iterrows():
            if pd.isna(r[name]):
                continue
            rows.append({"version": r["version"], "pattern": r["pattern"], "ratio": label, "value": r[name],
                         "low": r[f"{name}_lo"], "high": r[f"{name}_hi"], "runs": r[f"{name}_runs"]})
        if kind == analysis.THREAD_KIND and all(n in analysis.SOURCE_NS["random"] for n in pair):
            rows += [{"version": THREAD, "pattern": p, "ratio": label, "value": analysis.source_ratio(p, pair),
                      "low": None, "high": None, "runs": 0} for p in sorted(set(t["pattern"]))]
    return pd.DataFrame(rows), kind


def curve_ratios(res: Results) -> alt.FacetChart | None:
    """The thread's benchmark's shape per version (a point and its 95% interval per order), one panel per ratio,
    the thread's own ratio as the last row of each panel."""
    df, kind = ratio_rows(res)
    if df.empty:
        return None
    order = [v for v in df["version"].unique() if v != THREAD] + ([THREAD] if THREAD in set(df["version"]) else [])
    y = alt.Y("version:N", sort=order, title=None, axis=alt.Axis(labelLimit=200))
    color = alt.Color("pattern:N", title="order", legend=alt.Legend(orient="top"))
    tip = ["version", "pattern", "ratio", alt.Tooltip("value:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
           alt.Tooltip("high:Q", format=".3f"), "runs"]
    base = alt.Chart().encode(y=y, yOffset=alt.YOffset("pattern:N"), color=color)
    layer = alt.layer(
        base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", title="ratio of times (95% interval)",
                                                     scale=alt.Scale(zero=False), axis=alt.Axis(format=NUMBER)),
                                             x2="high:Q"),
        base.mark_point(filled=True, size=50).encode(x="value:Q", shape=alt.condition(
            alt.datum.version == THREAD, alt.value("diamond"), alt.value("circle")), tooltip=tip),
        data=df).properties(width=190, height=alt.Step(9))
    label = analysis.KIND_LABELS[kind]
    labels = [_label(pair or analysis.EDGES.get(kind, (7, 8)), kind) for _, pair in RATIOS]
    return layer.facet(column=alt.Column("ratio:N", sort=labels, title=None,
                                         header=charts.column_header(190)), spacing=14).resolve_scale(
        x="independent").properties(title=charts.titled(
            f"{label}: time per operation at one N over another, per version (random and sequential order)", res))


def hash_ratios(res: Results) -> alt.FacetChart | None:
    """The overflow table alone: murmurhash32's time per pin and release over the identity's at each N held, per
    version, a panel per key pattern, on a log axis (below 1: the identity is slower)."""
    t = analysis.hash_table(res)
    if t.empty:
        return None
    df = t[["version", "pattern", "n", "ratio", "lo", "hi", "runs"]].copy()
    x = alt.X("n:Q", title="keys held (log)", scale=alt.Scale(type="log"),
              axis=alt.Axis(values=sorted(df["n"].unique().tolist()), format=",~r"))
    y = alt.Y("ratio:Q", title="murmurhash32 over identity (log)", scale=alt.Scale(type="log"),
              axis=alt.Axis(format=NUMBER, tickCount=6))
    color = alt.Color("version:N", title=None, sort=charts.server_order(df["version"].unique()),
                      legend=alt.Legend(orient="top", columns=6))
    tip = ["version", "pattern", "n", alt.Tooltip("ratio:Q", format=".3f"), alt.Tooltip("lo:Q", format=".3f"),
           alt.Tooltip("hi:Q", format=".3f"), "runs"]
    base = alt.Chart().encode(x=x, color=color)
    layer = alt.layer(
        alt.Chart().mark_rule(strokeDash=[4, 4], color="gray").encode(y=alt.datum(1.0)),
        base.mark_line(strokeWidth=1).encode(y=y),
        base.mark_rule(strokeWidth=2).encode(y="lo:Q", y2="hi:Q"),
        base.mark_point(filled=True, size=35).encode(y=y, tooltip=tip),
        data=df).properties(width=200, height=180)
    return layer.facet(column=alt.Column("pattern:N", sort=["sequential", "random", "stride"], title=None,
                                         header=charts.column_header(200)), spacing=12).properties(
        title=charts.titled("The overflow table alone: a pin and release of one more key with N held, murmurhash32 "
                            "over the identity (95% intervals)", res))
