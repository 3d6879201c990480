"""The readview page's charts that draw what its findings quote, each with its 95% intervals: the readers' reads
per second against H over none (a panel per engine, a point and an error bar per server and H, the servers
side by side at each H so that none hides another), the cost of a view per open transaction (a slope and its
interval per server, beside this host's copy of the ids), and a row's visibility check against H."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from dbexp.book import charts
from dbexp.chapters.readview import analysis
from dbexp.experiments.chapter import Results
from dbexp.servers.registry import FLAVORS, flavor_class

NUMBER = charts.NUMBER  # plain numbers on every axis (dbexp.book.charts)


def _dodged(df: pd.DataFrame, x: str, by: str, spread: float = 0.06) -> pd.Series:
    """``x`` moved a little to the side per value of ``by`` (on a log scale), so that two series with the same
    values at the same x are both seen; x = 0 (a symlog axis' start) moved on a linear step instead."""
    order = charts.server_order(df[by].unique())
    k = {name: i - (len(order) - 1) / 2 for i, name in enumerate(order)}
    off = df[by].map(k).astype(float)
    xs = df[x].astype(float)
    return np.where(xs > 0, xs * np.exp(spread * off), 0.15 * off)


def relative_reads(res: Results, colors: tuple[list[str], list[str]]) -> alt.Chart | None:
    """Reads per second at each H over none (prepared transactions; analysis.relative_qps: geometric means over
    the repeats, Welch 95% intervals), a panel per engine, a point and its interval per server and H."""
    rel = analysis.relative_qps(res)
    if rel.empty:
        return None
    rel = rel[rel["holding"] == "prepared"].copy()
    rel["engine"] = rel["flavor"].map(lambda f: flavor_class(f).title)  # the flavor's own name, a panel each
    rel["H"] = _dodged(rel, "holders", "server")
    domain, range_ = colors
    shown = [n for n in domain if n in set(rel["server"])]
    color = alt.Color("server:N", sort=shown, title=None,
                      scale=alt.Scale(domain=shown, range=[c for n, c in zip(*colors) if n in shown]),
                      legend=alt.Legend(orient="bottom", columns=4))
    x = alt.X("H:Q", title="H, open transactions (symlog)", scale=alt.Scale(type="symlog", constant=1),
              axis=alt.Axis(values=sorted(rel["holders"].unique().tolist()), format=",~r", labelAngle=0))
    y = alt.Y("relative:Q", title="reads/s over reads/s at H = 0 (log)", scale=alt.Scale(type="log"),
              axis=alt.Axis(format=NUMBER, tickCount=6))
    base = alt.Chart().encode(x=x, color=color)
    tip = ["server", "holders", alt.Tooltip("relative:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
           alt.Tooltip("high:Q", format=".3f")]
    layer = alt.layer(base.mark_line(strokeWidth=1.5).encode(y=y),
                      base.mark_rule(strokeWidth=2).encode(y="low:Q", y2="high:Q"),
                      base.mark_point(filled=True, size=45).encode(y=y, tooltip=tip),
                      data=rel).properties(width=175, height=220)
    order = [cls.title for cls in FLAVORS.values() if cls.title in set(rel["engine"])]
    return layer.facet(column=alt.Column("engine:N", sort=order, title=None, header=charts.column_header(175)),
                       spacing=12).properties(title=charts.titled(
                           "Reads/s with H transactions open, over none (95% Welch intervals)", res))


def view_costs(res: Results) -> alt.Chart | None:
    """What each open transaction adds to a view (analysis.view_slopes, the calls that build one: ns per view
    and prepared transaction, a t interval over the repeats), one row per server, beside the copy of its ids at
    this host's measured speed (a tick)."""
    vs = analysis.building(analysis.view_slopes(res))
    vs = vs[vs["holding"] == "prepared"] if len(vs) else vs
    if vs.empty:
        return None
    vs = vs.assign(label=[f"{r['server']} ({'per rebuild' if r['calls'] == analysis.CALLS['view_rebuilt_ns_mean'] else 'per view'})"
                          for _, r in vs.iterrows()])[["label", "slope", "low", "high", "predicted"]]
    order = charts.server_order(vs["label"])
    y = alt.Y("label:N", title=None, sort=order, axis=alt.Axis(labelLimit=260))
    x = alt.X("low:Q", title="ns per view and open transaction (95% interval)", axis=alt.Axis(format=NUMBER))
    tip = ["label", alt.Tooltip("slope:Q", format=".2f"), alt.Tooltip("low:Q", format=".2f"),
           alt.Tooltip("high:Q", format=".2f"), alt.Tooltip("predicted:Q", format=".3f")]
    base = alt.Chart(vs)
    layers = [base.mark_rule(strokeWidth=2).encode(y=y, x=x, x2="high:Q"),
              base.mark_point(filled=True, size=70).encode(y=y, x="slope:Q", tooltip=tip)]
    copy = vs.dropna(subset=["predicted"])
    if len(copy):
        layers.append(alt.Chart(copy).mark_tick(color="gray", thickness=2, size=16).encode(y=y, x="predicted:Q"))
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x="x:Q")
    return alt.layer(zero, *layers).properties(width=470, title=charts.titled(
        "Each open transaction's cost in a view (95% interval; grey tick: copying its id)", res))


def visibility_costs(res: Results) -> alt.Chart | None:
    """What a row's visibility check adds per row where its writer lies inside the view's range, against H
    (analysis.visibility: the mean over the runs, a t interval), a line per server."""
    v = analysis.visibility(res)
    if v.empty:
        return None
    panels = analysis.tidy(res).groupby("series_name")["panel"].first()  # the engine part's panel of each server
    v = v.assign(H=_dodged(v, "holders", "server"), engine=v["server"].map(panels))
    x = alt.X("H:Q", title="H, open transactions (log)", scale=alt.Scale(type="log"),
              axis=alt.Axis(values=sorted(v["holders"].unique().tolist()), format=",~r"))
    y = alt.Y("extra:Q", title="ns per row the check adds", axis=alt.Axis(format=NUMBER))
    color = alt.Color("server:N", sort=charts.server_order(v["server"].unique()), title=None,
                      legend=alt.Legend(orient="bottom", columns=4))
    base = alt.Chart().encode(x=x, color=color)
    tip = ["server", "holders", alt.Tooltip("extra:Q", format=".2f"), alt.Tooltip("low:Q", format=".2f"),
           alt.Tooltip("high:Q", format=".2f")]
    layer = alt.layer(base.mark_line(strokeWidth=1.5).encode(y=y),
                      base.mark_rule(strokeWidth=2).encode(y="low:Q", y2="high:Q"),
                      base.mark_point(filled=True, size=45).encode(y=y, tooltip=tip),
                      data=v).properties(width=300, height=220)
    return layer.facet(column=alt.Column("engine:N", title=None, header=charts.column_header(300)), spacing=12) \
        .properties(title=charts.titled("What a row's visibility check adds against the view's size (95% intervals)",
                                        res))

