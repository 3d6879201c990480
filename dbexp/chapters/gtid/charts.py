"""The gtid page's chart: what its findings quote, drawn as they quote it. Every comparison in one direction
(analysis.effects: what turning a feature off gains, off / on; the A/A control twin / binlog), each throughput
ratio with its 95% interval at the instance level, one panel per comparison on one shared log axis, the tests in
rows and the versions side by side within a row, the sources' own numbers as diamonds where they printed one."""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from dbexp.book import charts
from dbexp.chapters.gtid import analysis
from dbexp.chapters.gtid.configs import TESTS
from dbexp.experiments.chapter import Results

NUMBER = charts.NUMBER  # plain numbers on every axis (dbexp.book.charts)
TICKS = [0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5, 1.7, 2.0, 2.5, 3.0]


def domain(e: pd.DataFrame) -> list[float]:
    """The shared axis' ends: every interval and the sources' numbers inside it, a little room around them."""
    values = pd.concat([e["ci_low"], e["ci_high"], e["ratio"], e["source"]]).dropna()
    values = values[values > 0]
    lo, hi = (float(values.min()), float(values.max())) if len(values) else (1.0, 1.0)
    return [math.exp(math.log(min(lo, 1.0)) - 0.03), math.exp(math.log(max(hi, 1.0)) + 0.03)]


def effects_chart(res: Results) -> alt.FacetChart | None:
    """Every comparison's throughput ratio, off / on (analysis.effects), with its 95% interval: a panel per
    comparison, one log x axis shared by all (the same scale in every panel), a row per test, the versions
    side by side in it; the sources' numbers as hollow diamonds. None where there is no ratio."""
    e = analysis.effects(res)
    e = e[e["threads"] == 1] if len(e) else e
    if e.empty:
        return None
    order = [label for label, _ in analysis.EFFECTS.values() if label in set(e["effect"])]
    tests = [t for t in TESTS if t in set(e["test"])]
    versions = charts.server_order(e["series_name"].unique())
    e = e.assign(version=e["series_name"])
    scale = alt.Scale(type="log", domain=domain(e), nice=False)
    axis = alt.Axis(values=TICKS, format=NUMBER, labelFlush=False)
    title = "throughput ratio, off / on (log; the A/A control: twin / binlog)"

    def x(field: str) -> alt.X:
        return alt.X(f"{field}:Q", scale=scale, axis=axis, title=title)

    base = alt.Chart().encode(y=alt.Y("test:N", sort=tests, title=None, axis=alt.Axis(labelLimit=200)),
                              yOffset=alt.YOffset("version:N", sort=versions),
                              color=alt.Color("version:N", sort=versions, title=None,
                                              legend=alt.Legend(orient="top", labelLimit=0, columns=4)))
    tip = ["effect", "version", "test", alt.Tooltip("ratio:Q", format=".3f"), alt.Tooltip("ci_low:Q", format=".3f"),
           alt.Tooltip("ci_high:Q", format=".3f"), "pairs", "instances"]
    layer = alt.layer(
        alt.Chart().mark_rule(strokeDash=[4, 4], color="gray").encode(x=alt.datum(1.0)),
        base.mark_rule(strokeWidth=2).encode(x=x("ci_low"), x2="ci_high:Q"),
        base.mark_point(filled=True, size=50).encode(x=x("ratio"), tooltip=tip),
        base.transform_filter("isValid(datum.source)").mark_point(shape="diamond", filled=False, size=90,
                                                                  strokeWidth=1.5)
        .encode(x=x("source"),
                tooltip=["effect", "version", "test", alt.Tooltip("source:Q", format=".3f", title="the source")]),
        data=e).properties(width=560, height=alt.Step(7))
    return layer.facet(row=alt.Row("effect:N", sort=order, title=None, header=alt.Header(
        labelAngle=0, labelOrient="top", labelAnchor="start", labelFontWeight="bold", labelLimit=600)),
        spacing=6).resolve_scale(x="shared").properties(title=charts.titled(
            "Throughput, each feature off over on (95% intervals; diamonds: the sources)",
            res))
