"""The group_commit page's charts that draw what its findings quote, with their 95% intervals: commits per durable
sync against client threads (the mean over the runs and its t interval per server, configuration and workload;
PostgreSQL 12, which counts no syncs of its own, from the probe runs' count), each server a little to the side of
the others at every thread count so that none hides another; and plain numbers on every axis."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from dbexp.book import charts
from dbexp.experiments.chapter import Results

from .analysis import over_repeats, probe_runs, throughput
from .chapter import CONFIG_NAMES

NUMBER = charts.NUMBER  # plain numbers on every axis (dbexp.book.charts)


def group_sizes(res: Results) -> pd.DataFrame:
    """Commits per durable sync per server, configuration, workload and threads: the mean over the runs with its
    t interval (analysis.over_repeats: ``group_size``, ``group_size_lo``, ``group_size_hi``, ``n``), from the
    servers' own counts; where a server counts no syncs (PostgreSQL 12), from its probe runs' count of syncs
    (``counted``: "probe runs")."""
    w = throughput(res)
    by = ["series_name", "flavor", "config", "workload", "threads"]
    own = w.dropna(subset=["group_size"]) if len(w) and "group_size" in w else w.iloc[0:0]
    out = over_repeats(own, by, ["group_size"]).assign(counted="the server's counts") if len(own) else pd.DataFrame()
    pr = probe_runs(res)
    if len(pr) and "probe_group_size" in pr:
        missing = pr[~pr["series_name"].isin(set(own["series_name"])) & pr["probe_group_size"].notna()]
        if len(missing):
            probed = over_repeats(missing.assign(group_size=missing["probe_group_size"]), by, ["group_size"])
            out = pd.concat([out, probed.assign(counted="probe runs")], ignore_index=True)
    return out


def dodged(df: pd.DataFrame, x: str, by: str, spread: float = 0.07) -> np.ndarray:
    """``x`` moved a little to the side per value of ``by`` on a log axis, so that two series with equal values
    are both seen."""
    order = charts.server_order(df[by].unique())
    k = {name: i - (len(order) - 1) / 2 for i, name in enumerate(order)}
    return df[x].astype(float).to_numpy() * np.exp(spread * df[by].map(k).astype(float).to_numpy())


def group_size(res: Results) -> alt.Chart | None:
    """Commits per durable sync against client threads, a panel per configuration: per server a line through the
    means, each with its 95% interval; the update workload solid, the insert workload dashed; probe-run counts
    (PostgreSQL 12) drawn as open points."""
    g = group_sizes(res)
    if g.empty:
        return None
    g = g.assign(x=dodged(g, "threads", "series_name"), workload=g["workload"].str.replace("_", " "),
                 low=g["group_size_lo"].fillna(g["group_size"]), high=g["group_size_hi"].fillna(g["group_size"]))
    order = charts.server_order(g["series_name"].unique())
    threads = sorted(g["threads"].unique().tolist())
    x = alt.X("x:Q", title="client threads (log)", scale=alt.Scale(type="log"),
              axis=alt.Axis(values=threads, format=",~r", labelAngle=0))
    y = alt.Y("group_size:Q", title="commits per sync (log)", scale=alt.Scale(type="log"),
              axis=alt.Axis(format=NUMBER, tickCount=6))
    color = alt.Color("series_name:N", sort=order, title=None, legend=alt.Legend(orient="bottom", columns=4))
    dash = alt.StrokeDash("workload:N", title=None, legend=alt.Legend(orient="top"),
                          scale=alt.Scale(domain=sorted(g["workload"].unique()), range=[[4, 3], [1, 0]][:g["workload"].nunique()]))
    shape = alt.Shape("counted:N", title=None, legend=alt.Legend(orient="top"),
                      scale=alt.Scale(domain=["the server's counts", "probe runs"], range=["circle", "square"]))
    tip = ["series_name", "config", "workload", "threads", "counted", "n", alt.Tooltip("group_size:Q", format=".1f"),
           alt.Tooltip("group_size_lo:Q", format=".1f"), alt.Tooltip("group_size_hi:Q", format=".1f")]
    base = alt.Chart().encode(x=x, color=color)
    layer = alt.layer(base.mark_line(strokeWidth=1.5).encode(y=y, strokeDash=dash, detail="workload:N"),
                      base.mark_rule(strokeWidth=2).encode(y="low:Q", y2="high:Q"),
                      base.mark_point(size=40, filled=True).encode(y=y, shape=shape, tooltip=tip),
                      data=g).properties(width=260, height=200)
    panels = [c for c in CONFIG_NAMES if c in set(g["config"])]
    return layer.facet(facet=alt.Facet("config:N", sort=panels, title=None), columns=2, spacing=12).properties(
        title=charts.titled("Commits per durable sync, the mean over the runs with its 95% interval", res))


def plain_y(chart, fmt: str = NUMBER):
    """``chart`` (charts.dashed_lines, faceted or not) with plain numbers on its y axis instead of SI prefixes."""
    inner = chart.spec if isinstance(chart, alt.FacetChart) else chart
    for layer in inner.layer:
        enc = layer.encoding
        if enc.y is not alt.Undefined:
            enc.y.axis = alt.Axis(format=fmt, tickCount=5)
    return chart

