"""Chart helpers every chapter uses: the hardware goes under every title."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dbexp.results.provenance import hardware_label


def measured_on(res, extra: str = "") -> str:
    """Subtitle naming where the data were measured (from the runs' own host facts)."""
    host = res.host if hasattr(res, "host") else res
    label = hardware_label(host) if host else "unknown host"
    return f"Measured on {label}" + (f"; {extra}" if extra else "")


def titled(title: str, res, extra: str = "") -> alt.TitleParams:
    return alt.TitleParams(title, subtitle=[measured_on(res, extra), f"results: {res.source}"],
                           anchor="start")


def repeats_strip(df: pd.DataFrame, x: str, y: str, color: str, column: str | None, title,
                  y_title: str) -> alt.Chart:
    """Every repeat as a dot and the median as a tick: the spread is the point."""
    cols = [c for c in dict.fromkeys([x, y, color, column, "repeat"]) if c]
    base = alt.Chart(df[cols])  # only what is drawn: the page embeds the chart's data
    dots = base.mark_circle(size=45, opacity=0.6).encode(
        x=alt.X(f"{x}:N", title=None, sort=None), y=alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(zero=False)),
        color=alt.Color(f"{color}:N", legend=None), tooltip=[x, y, "repeat"])
    ticks = base.mark_tick(color="black", thickness=2, size=18).encode(
        x=alt.X(f"{x}:N", sort=None), y=alt.Y(f"median({y}):Q"))
    layered = alt.layer(dots, ticks)
    if column:
        layered = layered.facet(column=alt.Column(f"{column}:N", title=None)).resolve_scale(y="independent")
    return layered.properties(title=title)


def ratio_ci(df: pd.DataFrame, y: str, title, x_title: str = "ratio of median QPS (A / B)") -> alt.Chart:
    """Ratios with their 95% intervals against the line of no difference."""
    base = alt.Chart(df)
    bars = base.mark_rule(strokeWidth=2).encode(
        y=alt.Y(f"{y}:N", title=None, axis=alt.Axis(labelLimit=320)),
        x=alt.X("ci_low:Q", title=x_title, scale=alt.Scale(zero=False)),
        x2="ci_high:Q")
    points = base.mark_point(filled=True, size=70).encode(
        y=f"{y}:N", x="ratio_qps:Q", tooltip=[y, alt.Tooltip("ratio_qps:Q", format=".3f"),
                                             alt.Tooltip("ci_low:Q", format=".3f"),
                                             alt.Tooltip("ci_high:Q", format=".3f"), "pairs"])
    one = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x="x:Q")
    return alt.layer(one, bars, points).properties(title=title, width=460)


def legend(title: str | None = None, dashes: bool = False) -> alt.Legend:
    """A legend under the chart, with room for full server names: a legend at the right of two
    facets runs past the width of a book page and is cut off. ``dashes``: draw line strokes, for
    a strokeDash encoding."""
    extra = ({"symbolType": "stroke", "symbolStrokeWidth": 2, "symbolSize": 300, "symbolStrokeColor": "black"}
             if dashes else {})  # the stroke colour: with a colour legend beside it, the samples are drawn blank
    return alt.Legend(title=title, orient="bottom", columns=2 if dashes else 4, labelLimit=400, **extra)


def lines(df: pd.DataFrame, x: str, y: str, color: str, title, x_title: str, y_title: str,
          column: str | None = None, symlog_x: bool = False, log_y: bool = False,
          band: tuple[str, str] | None = None) -> alt.Chart:
    """One line per ``color`` over ``x`` (symlog keeps x=0 on a log-like axis), optionally with a
    confidence band."""
    xs = alt.Scale(type="symlog") if symlog_x else alt.Scale()
    ys = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    cols = [c for c in dict.fromkeys([x, y, color, column, *(band or ())]) if c]
    base = alt.Chart(df[cols]).encode(x=alt.X(f"{x}:Q", title=x_title, scale=xs),
                                color=alt.Color(f"{color}:N", legend=legend()))
    layers = [base.mark_line(point=True).encode(
        y=alt.Y(f"{y}:Q", title=y_title, scale=ys),
        tooltip=[color, x, alt.Tooltip(f"{y}:Q", format=".3f")])]
    if band:
        layers.insert(0, base.mark_area(opacity=0.15).encode(y=f"{band[0]}:Q", y2=f"{band[1]}:Q"))
    chart = alt.layer(*layers).properties(width=300 if column else 480, height=260)
    if column:
        chart = chart.facet(column=alt.Column(f"{column}:N", title=column))
    return chart.properties(title=title)


def dashed_lines(df: pd.DataFrame, x: str, y: str, color: str, dash: str, title, x_title: str, y_title: str,
                 facet: str | None = None, log_x: bool = False, log_y: bool = False, tooltip=(),
                 width: int = 480, height: int = 260) -> alt.Chart:
    """Lines coloured by ``color`` and dashed by ``dash`` (e.g. server and reader), with both legends
    under the chart; ``facet``: one panel per value, two per row. The points are a layer of their own:
    on a line mark with points, the dash legend draws no line samples."""
    cols = [c for c in dict.fromkeys([x, y, color, dash, facet, *tooltip]) if c]
    base = alt.Chart().encode(
        x=alt.X(f"{x}:Q", title=x_title, scale=alt.Scale(type="log") if log_x else alt.Scale()),
        y=alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(type="log") if log_y else alt.Scale(zero=False)),
        color=alt.Color(f"{color}:N", legend=legend()))
    lines_ = base.mark_line().encode(strokeDash=alt.StrokeDash(f"{dash}:N", legend=legend(dash, dashes=True)))
    points = base.mark_circle(size=30).encode(tooltip=list(dict.fromkeys([color, dash, *tooltip, x, y])))
    chart = alt.layer(lines_, points, data=df[cols]).properties(width=width, height=height)
    if facet:
        chart = chart.facet(facet=alt.Facet(f"{facet}:N", title=None), columns=2)
    return chart.properties(title=title)


def beside_published(res, value: str = "qps") -> None:
    """Display this run beside the published one: a sentence naming both machines, then per matched
    point the ratio this run / published with its interval (nothing more when there is no match)."""
    from IPython.display import Markdown, display

    from dbexp.experiments import compare

    table, sentence = compare.beside_published(res, value)
    display(Markdown(sentence))
    if len(table):
        title = alt.TitleParams(f"{value}: this run / the published run, per point (1 = the same)", subtitle=[
            f"this run: {table['this'].iloc[0]}", f"published: {table['published'].iloc[0]}"], anchor="start")
        display(ratio_ci(table, "label", title, x_title=f"{value} here / {value} published (geometric means, "
                                                         "Welch 95% interval)"))
