"""The chapter's own charts: seed 002's comparison drawn the way ann-benchmarks draws it (queries per second on a
log axis against recall@10, a line per algorithm and m through its ef_search values, each point with its 95%
intervals both ways), and the index builds beside it (seconds and megabytes per algorithm and m, with the
build's interval over runs)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dbexp.book import charts
from dbexp.chapters.vector_isolation import ann_analysis as ann
from dbexp.experiments.chapter import Results


def _series(df: pd.DataFrame) -> list[str]:
    """'pgvector halfvec, PostgreSQL 17.10' from the algorithm and the server it ran on ('MariaDB 11.8.9' where the
    server's name says it all)."""
    return [f"{a}, {s.split(' on ')[-1]}" if " on " in s else s for a, s in zip(df["algorithm"], df["server"])]


def recall_qps(res: Results) -> alt.FacetChart | None:
    c = ann.curves(res)
    if c.empty:
        return None
    c = c.assign(series=_series(c), m_label=[f"m = {m}" for m in c["m"]])
    tips = ["series", "m", "ef", alt.Tooltip("recall:Q", format=".3f"), alt.Tooltip("qps:Q", format=",.0f"),
            alt.Tooltip("qps_low:Q", format=",.0f"), alt.Tooltip("qps_high:Q", format=",.0f"), "runs"]
    base = alt.Chart(c).encode(color=alt.Color("series:N", title=None, legend=charts.legend()))
    x = alt.X("recall:Q", title="recall@10 (mean of the queries)", scale=alt.Scale(zero=False))
    y = alt.Y("qps:Q", title="queries per second, one client (log axis)",
              scale=alt.Scale(type="log", zero=False, nice=False), axis=alt.Axis(format=",~r"))
    lines = base.mark_line(strokeWidth=1.5).encode(x=x, y=y, order="ef:Q", detail="m:N")
    points = base.mark_point(filled=True, size=40).encode(x=x, y=y, shape=alt.Shape("m_label:N", title=None,
                                                                                      legend=charts.legend()),
                                                          tooltip=tips)
    up = base.mark_rule().encode(x=x, y="qps_low:Q", y2="qps_high:Q")
    side = base.mark_rule().encode(x="recall_low:Q", x2="recall_high:Q", y=y)
    return (alt.layer(lines, up, side, points).properties(width=560, height=330)
            .properties(title=charts.titled("Queries per second against recall@10, as ann-benchmarks draws them", res,
                                            "a line per algorithm and m through its ef_search values; 95% intervals "
                                            "(QPS over runs, recall over queries)")))


def builds(res: Results) -> alt.HConcatChart | None:
    b = ann.builds(res)
    if b.empty:
        return None
    b = b.assign(series=_series(b), m_label=[f"m = {m}" for m in b["m"]])
    enc = dict(y=alt.Y("series:N", title=None, axis=alt.Axis(labelLimit=260)),
               color=alt.Color("series:N", legend=None), yOffset="m_label:N")
    tips = ["series", "m", alt.Tooltip("build_s:Q", format=".2f"), alt.Tooltip("index_mb:Q", format=".2f"),
            "each_run"]
    secs = alt.layer(
        alt.Chart(b).mark_rule().encode(x=alt.X("build_low:Q", title="build seconds, mean and 95% interval over runs"),
                                        x2="build_high:Q", **enc),
        alt.Chart(b).mark_point(filled=True, size=50).encode(x="build_s:Q", shape=alt.Shape(
            "m_label:N", title=None, legend=charts.legend()), tooltip=tips, **enc)).properties(width=300)
    size = alt.Chart(b).mark_bar().encode(x=alt.X("index_mb:Q", title="index MB"), tooltip=tips, **enc).properties(
        width=200)
    return alt.hconcat(secs, size).properties(title=charts.titled("The indexes behind the curves: build time and size "
                                                                  "per algorithm and m", res))
