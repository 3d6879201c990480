"""The buffer_eviction page's headline chart: what its first lines quote, the hot table's misses per hot query
during the scan, per server and variant, with the 95% t interval over the repeats and the chapter's line for a
hot set kept (claims.KEPT_MISSES); plain numbers on the axis."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dbexp.book import charts
from dbexp.experiments.chapter import Results

from .analysis import summary
from .chapter import VARIANT_NAMES
from .claims import KEPT_MISSES

NUMBER = charts.NUMBER  # plain numbers on every axis (dbexp.book.charts)


def misses_rows(res: Results) -> pd.DataFrame:
    """One row per server and variant: ``misses_per_q`` with ``misses_low`` and ``misses_high`` (the summary's),
    ``label`` (server, variant) in the page's order (servers by charts.server_order, variants by VARIANT_NAMES)."""
    sm = summary(res)
    if sm.empty or "misses_per_q" not in sm:
        return pd.DataFrame()
    servers = charts.server_order(sm["series_name"].unique())
    df = sm[["series_name", "variant", "misses_per_q", "misses_low", "misses_high", "repeats"]].copy()
    df["variant"] = df["variant"].astype(str)
    order = {v: i for i, v in enumerate(VARIANT_NAMES)}
    df = df.assign(_s=df["series_name"].map(servers.index), _v=df["variant"].map(lambda v: order.get(v, len(order))))
    df = df.sort_values(["_s", "_v"]).drop(columns=["_s", "_v"]).reset_index(drop=True)
    return df.assign(label=df["series_name"] + ", " + df["variant"])


def misses(res: Results, title) -> alt.LayerChart | None:
    """Misses per hot query during the scan, a point per server and variant with its interval (a line where the
    repeats give one), the rule of 'kept' dashed; None without such runs."""
    df = misses_rows(res)
    if df.empty:
        return None
    order = list(df["label"])
    y = alt.Y("label:N", title=None, sort=order, axis=alt.Axis(labelLimit=360))
    x_title = "misses per hot query (95% interval over the repeats)"
    base = alt.Chart(df)
    ci = base.mark_rule(strokeWidth=2).encode(y=y, x=alt.X("misses_low:Q", title=x_title,
                                                            axis=alt.Axis(format=NUMBER, orient="top")),
                                              x2="misses_high:Q", color=alt.Color("series_name:N", legend=None))
    tips = ["label", alt.Tooltip("misses_per_q:Q", format=".4f"), alt.Tooltip("misses_low:Q", format=".4f"),
            alt.Tooltip("misses_high:Q", format=".4f"), "repeats"]
    points = base.mark_point(filled=True, size=60).encode(
        y=y, x="misses_per_q:Q", color=alt.Color("series_name:N", legend=None), tooltip=tips)
    kept = alt.Chart(pd.DataFrame({"x": [KEPT_MISSES]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x="x:Q")
    return alt.layer(kept, ci, points).properties(title=title, width=520, height=alt.Step(14))
