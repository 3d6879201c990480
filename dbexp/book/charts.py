"""Chart helpers every chapter uses: the hardware goes under every title."""

from __future__ import annotations

import re

import altair as alt
import pandas as pd

from dbexp.catalog.versions import version_key
from dbexp.results.provenance import hardware_label

# plain numbers on an axis, linear or log: no SI prefix (0.1, never "100m") and no exponent (5,000, never "5e+3")
NUMBER = ",.3~r"


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
    order = server_order(df[x].unique())  # servers by flavor, then version
    dots = base.mark_circle(size=45, opacity=0.6).encode(
        x=alt.X(f"{x}:N", title=None, sort=order), y=alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(zero=False)),
        color=alt.Color(f"{color}:N", legend=None), tooltip=[x, y, "repeat"])
    ticks = base.mark_tick(color="black", thickness=2, size=18).encode(
        x=alt.X(f"{x}:N", sort=order), y=alt.Y(f"median({y}):Q"))
    layered = alt.layer(dots, ticks)
    if column:
        layered = layered.facet(column=alt.Column(f"{column}:N", title=None)).resolve_scale(y="independent")
    return layered.properties(title=title)


def ratio_ci(df: pd.DataFrame, y: str, title, x_title: str = "ratio of median QPS (A / B)") -> alt.Chart:
    """Ratios with their 95% intervals against the line of no difference."""
    base = alt.Chart(df)
    order = server_order(df[y].unique())  # "mysql 8.0.15 / 5.7.22": flavor, then version numbers
    bars = base.mark_rule(strokeWidth=2).encode(
        y=alt.Y(f"{y}:N", title=None, axis=alt.Axis(labelLimit=320), sort=order),
        x=alt.X("ci_low:Q", title=x_title, scale=alt.Scale(zero=False)),
        x2="ci_high:Q")
    points = base.mark_point(filled=True, size=70).encode(
        y=alt.Y(f"{y}:N", sort=order), x="ratio_qps:Q", tooltip=[y, alt.Tooltip("ratio_qps:Q", format=".3f"),
                                             alt.Tooltip("ci_low:Q", format=".3f"),
                                             alt.Tooltip("ci_high:Q", format=".3f"), "pairs"])
    one = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x="x:Q")
    return alt.layer(one, bars, points).properties(title=title, width=400)


def server_order(names) -> list[str]:
    """Server names ("mysql 8.0.15") in a deliberate order: engines that keep versions the same way
    together (InnoDB's undo, then PostgreSQL's heap), flavors in the registry's order within them, then
    versions by number (5.7 before 8.0, 9.6 before 12), never alphabetically."""
    from dbexp.servers.registry import FLAVORS

    flavors = list(FLAVORS)
    stores = list(dict.fromkeys(cls.version_store for cls in FLAVORS.values()))

    def key(name: str):
        flavor, _, rest = str(name).partition(" ")
        cls = FLAVORS.get(flavor)
        # the version, then every number in the label ("mysql 5.7.22, insert, 1t" before ", 2t")
        numbers = tuple(int(n) for n in re.findall(r"\d+", rest))
        return (stores.index(cls.version_store) if cls else len(stores),
                flavors.index(flavor) if cls else len(flavors), flavor, version_key(rest), numbers, rest)

    return sorted(dict.fromkeys(names), key=key)


def measured_ticks(values, limit: int = 12) -> list | None:
    """Axis ticks at the values that were measured (the V or H of each point), when there are few
    enough to label; None lets the axis choose."""
    found = sorted({float(v) for v in pd.Series(values).dropna()})
    if not found or len(found) > limit:
        return None
    return [int(v) if v.is_integer() else v for v in found]


def legend(title: str | None = None, dashes: bool = False, lines: bool = False) -> alt.Legend:
    """A legend under the chart, with room for full server names: a legend at the right of two
    facets runs past the width of a book page and is cut off. ``dashes``: line samples in black, for a
    strokeDash encoding of its own; ``lines``: line samples in each colour, for a colour (and dash)
    encoding of lines, so a reader sees the very stroke drawn in the chart."""
    extra = {}
    if dashes or lines:
        # opaque samples: a chart's confidence band (a pale area of the same colour) must not fade them
        extra = {"symbolType": "stroke", "symbolStrokeWidth": 2.5, "symbolSize": 400, "symbolOpacity": 1}
    if dashes and not lines:
        extra["symbolStrokeColor"] = "black"  # with a colour legend beside it, the samples are drawn blank
    # a dash legend beside a colour legend stacks its entries: two columns of it ran past the page
    return alt.Legend(title=title, orient="bottom", direction="horizontal", columns=1 if dashes else 4,
                      labelLimit=400, **extra)


def _x_axis(x: str, title: str, ticks, log: bool, symlog: bool = False, fmt: str = ",~r") -> alt.X:
    scale = alt.Scale(type="symlog") if symlog else alt.Scale(type="log") if log else alt.Scale()
    if ticks is not None and log:
        ticks = [t for t in ticks if t > 0]  # no zero on a log axis
    axis = alt.Axis(values=ticks, format=fmt, labelOverlap="greedy", grid=True) if ticks else alt.Axis()
    return alt.X(f"{x}:Q", title=title, scale=scale, axis=axis)


NOT_RUN = "not run"  # what a panel of a grid says when its data hold no rows for its labels
_EMPTY_CELL = "_empty_cell"  # set on the one row the chart adds to each such panel, nowhere else


def grid(layer: alt.LayerChart, df: pd.DataFrame, row: alt.Row, column: alt.Column, *, width: float,
         height: float, empty: str = NOT_RUN, **facet) -> alt.FacetChart:
    """``layer`` (its data ``df``) in a ``row`` x ``column`` grid with a panel for every pair of a row
    and a column of ``df``, each drawing exactly the rows of its labels; a pair with no rows is a
    panel that says ``empty``.

    Vega-Lite makes a cell only for the pairs in the data, sorts the cells by each label's place in the
    row and column sort lists, and fills the grid with them in that order: a pair the data lack (a
    variant a server did not run) has no place, sorts first, and every panel after it slides under
    another panel's headers (vega-lite#8675). So the facet adds one row, flagged, for each missing
    pair (in the chart's transforms: the page's CSV of the chart's rows stays the data); the drawn
    layers leave it out (it would add "undefined" to their scales) and a text layer writes ``empty``
    where it is."""
    row_field, column_field = row.to_dict()["field"], column.to_dict()["field"]
    note = alt.Chart().mark_text(text=empty, color="gray", fontStyle="italic", fontSize=11).encode(
        x=alt.value(width / 2), y=alt.value(height / 2)).transform_filter(f"datum.{_EMPTY_CELL}")
    layer = layer.copy()
    layer.layer = [sub.transform_filter(f"!datum.{_EMPTY_CELL}") for sub in layer.layer] + [note]
    return layer.facet(row=row, column=column, **facet).transform_impute(
        impute=_EMPTY_CELL, key=column_field, keyvals=list(dict.fromkeys(df[column_field])),
        groupby=[row_field], value=True)


def lines(df: pd.DataFrame, x: str, y: str, color: str, title, x_title: str, y_title: str,
          column: str | None = None, symlog_x: bool = False, log_y: bool = False,
          band: tuple[str, str] | None = None, x_ticks="measured", color_order=None,
          column_order=None, width: int | None = None) -> alt.Chart:
    """One line per ``color`` over ``x`` (symlog keeps x=0 on a log-like axis), optionally with a
    confidence band. Ticks sit at the measured x values (``x_ticks``: "measured", a list, or None for
    the axis's own); servers keep :func:`server_order` unless ``color_order``/``column_order`` say.
    ``width`` is a panel's (default 300 with columns, 480 without): the page's column is about 630 px."""
    ys = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    cols = [c for c in dict.fromkeys([x, y, color, column, *(band or ())]) if c]
    ticks = measured_ticks(df[x]) if isinstance(x_ticks, str) else x_ticks
    base = alt.Chart(df[cols]).encode(
        x=_x_axis(x, x_title, ticks, log=False, symlog=symlog_x),
        color=alt.Color(f"{color}:N", legend=legend(lines=True),
                        sort=color_order or server_order(df[color].unique())))
    layers = [base.mark_line(point=True).encode(
        y=alt.Y(f"{y}:Q", title=y_title, scale=ys, axis=alt.Axis(format=NUMBER)),
        tooltip=[color, x, alt.Tooltip(f"{y}:Q", format=".3f")])]
    if band:
        layers.insert(0, base.mark_area(opacity=0.15).encode(y=f"{band[0]}:Q", y2=f"{band[1]}:Q"))
    chart = alt.layer(*layers).properties(width=width or (300 if column else 480), height=260)
    if column:
        chart = chart.facet(column=alt.Column(f"{column}:N", title=column,
                                              sort=column_order or server_order(df[column].unique())))
    return chart.properties(title=title)


def dashed_lines(df: pd.DataFrame, x: str, y: str, color: str, dash: str, title, x_title: str, y_title: str,
                 facet: str | None = None, log_x: bool = False, log_y: bool = False, tooltip=(),
                 width: int = 480, height: int = 260, *, row: str | None = None, column: str | None = None,
                 facet_order=None, row_order=None, column_order=None, color_order=None, dash_order=None,
                 colors=None, x_ticks="measured", x_format: str = ",~r", columns: int = 2,
                 header_width: int | None = None, spacing: int = 10) -> alt.Chart:
    """Lines coloured by ``color`` and dashed by ``dash`` (e.g. server and reader), with both legends
    under the chart, each showing line samples (one legend when ``color == dash``: the reader's colour
    and its dash together). Panels: ``facet`` (wrapped, ``columns`` per row) or a ``row`` x ``column``
    grid (a pair with no rows says so: :func:`grid`), each in the order given, else
    :func:`server_order` (servers by flavor, then version).
    ``colors``: a colour per ``color`` value, in ``color_order``. Ticks sit at the measured x values
    unless ``x_ticks`` says otherwise (``x_format``: a d3 format, "~s" for 10k in narrow panels). The points are a layer of their own: on a line mark with points,
    the dash legend draws no line samples."""
    cols = [c for c in dict.fromkeys([x, y, color, dash, facet, row, column, *tooltip]) if c]
    ticks = measured_ticks(df[x]) if isinstance(x_ticks, str) else x_ticks
    header_width = header_width or height
    color_sort = color_order or server_order(df[color].unique())
    color_scale = alt.Scale(domain=list(color_sort), range=list(colors)) if colors else alt.Scale()
    merged = color == dash
    base = alt.Chart().encode(
        x=_x_axis(x, x_title, ticks, log=log_x, fmt=x_format),
        y=alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(type="log") if log_y else alt.Scale(zero=False),
                axis=alt.Axis(format="~s", tickCount=5) if log_y else alt.Axis()),
        color=alt.Color(f"{color}:N", sort=color_sort, scale=color_scale,
                        legend=legend(color if merged else None, lines=True)))
    dash_sort = list((color_sort if merged else dash_order) or sorted(df[dash].unique()))
    # the first value solid, the others dashed; one legend when colour and dash show the same thing
    dash_scale = alt.Scale(domain=dash_sort, range=[[1, 0], [6, 3], [2, 2], [8, 3, 2, 3]][:len(dash_sort)]
                           if len(dash_sort) <= 4 else alt.Undefined)
    lines_ = base.mark_line(strokeWidth=2).encode(strokeDash=alt.StrokeDash(
        f"{dash}:N", sort=dash_sort, scale=dash_scale,
        legend=legend(color, lines=True) if merged else legend(dash, dashes=True)))
    points = base.mark_circle(size=30).encode(
        tooltip=list(dict.fromkeys([c for c in (row, column, facet) if c] + [color, dash, *tooltip, x, y])))
    chart = alt.layer(lines_, points, data=df[cols]).properties(width=width, height=height)
    if facet:
        chart = chart.facet(facet=alt.Facet(f"{facet}:N", title=None,
                                            sort=facet_order or server_order(df[facet].unique())),
                            columns=columns, spacing=spacing)
    elif row or column:
        enc = {}
        if row:
            # row labels written upwards, beside the panels: a page's width goes to the panels
            enc["row"] = alt.Row(f"{row}:N", title=None, sort=row_order or server_order(df[row].unique()),
                                 header=alt.Header(labelFontWeight="bold", labelLimit=header_width))
        if column:
            enc["column"] = alt.Column(f"{column}:N", title=None,
                                       sort=column_order or server_order(df[column].unique()),
                                       header=column_header(width))
        if row and column:  # a panel for every pair, in its place
            chart = grid(chart, df, enc["row"], enc["column"], width=width, height=height, spacing=spacing)
        else:
            chart = chart.facet(**enc, spacing=spacing)
    return chart.properties(title=title)


def column_header(width: int) -> alt.Header:
    """A column's label above its panels, bold; a long one ("index scan, then pg_prewarm") broken after
    its comma onto a second line rather than cut."""
    return alt.Header(labelFontWeight="bold", labelLimit=width + 40,
                      labelExpr="length(datum.label) > 20 && indexof(datum.label, ', ') > 0 ? "
                      "[slice(datum.label, 0, indexof(datum.label, ', ') + 1), "
                      "slice(datum.label, indexof(datum.label, ', ') + 2)] : datum.label")


def shaded_series(df: pd.DataFrame, x: str, y: str, color: str, row: str, column: str, window: tuple[str, str],
                  title, x_title: str, y_title: str, *, percent: bool = False, column_order=None,
                  width: int = 200, height: int = 110, color_title: str | None = None) -> alt.Chart:
    """Time series in a ``row`` x ``column`` grid of panels, one line per ``color`` (a few per panel:
    repeats), with the window between the columns ``window`` (start, end; one value per panel) shaded.
    A row and column pair with no rows is a panel that says so (:func:`grid`)."""
    cols = [c for c in dict.fromkeys([x, y, color, row, column, *window]) if c]
    base = alt.Chart()
    shade = base.mark_rect(opacity=0.12, color="#d95f02").encode(x=f"min({window[0]}):Q", x2=f"max({window[1]}):Q")
    axis = alt.Axis(format="%" if percent else "~s", tickCount=4)
    line = base.mark_line(strokeWidth=1.5, point=alt.OverlayMarkDef(size=12)).encode(
        x=alt.X(f"{x}:Q", title=x_title),
        y=alt.Y(f"{y}:Q", title=y_title, axis=axis, scale=alt.Scale(zero=percent)),
        color=alt.Color(f"{color}:N", legend=legend(color_title or color, lines=True)),
        tooltip=[row, column, color, x, alt.Tooltip(f"{y}:Q", format=".3f")])
    chart = alt.layer(shade, line, data=df[cols]).properties(width=width, height=height)
    return grid(
        chart, df,
        alt.Row(f"{row}:N", title=None, sort=server_order(df[row].unique()),
                header=alt.Header(labelFontWeight="bold", labelLimit=height)),
        alt.Column(f"{column}:N", title=None, sort=column_order or sorted(df[column].unique()),
                   header=column_header(width)),
        width=width, height=height, spacing=8).properties(title=title)


def stacked_shares(df: pd.DataFrame, x: str, y: str, color: str, shade: str, row: str, column: str, title, *,
                   x_order=None, column_order=None, color_title: str | None = None,
                   shade_title: str | None = None) -> alt.Chart:
    """Stacked bars of shares (``y``, 0 to 1) per ``x``, coloured by an ordinal ``color`` and
    lighter for the second value of ``shade``, in a ``row`` x ``column`` grid of small panels (a pair
    with no rows says so: :func:`grid`)."""
    shades = list(dict.fromkeys(df[shade]))
    bars = alt.Chart().mark_bar().encode(
        x=alt.X(f"{x}:N", sort=x_order, title=None),
        y=alt.Y(f"{y}:Q", title="share", axis=alt.Axis(format="%")),
        color=alt.Color(f"{color}:O", scale=alt.Scale(scheme="viridis"), legend=legend(color_title or color)),
        opacity=alt.Opacity(f"{shade}:N", sort=shades, scale=alt.Scale(range=[1.0, 0.45][:len(shades)]),
                            legend=legend(shade_title or shade)),
        tooltip=[row, column, x, shade, color, alt.Tooltip(f"{y}:Q", format=".1%")])
    return grid(alt.layer(bars, data=df).properties(width=110, height=110), df,
                alt.Row(f"{row}:N", title=None, sort=server_order(df[row].unique())),
                alt.Column(f"{column}:N", title=None, sort=column_order),
                width=110, height=110, spacing=8).properties(title=title)


def per_measure(df: pd.DataFrame, x: str, y: str, measure: str, measures: dict[str, tuple[str, str]],
                color: str, panel: str, title, x_title: str, *, color_title: str | None = None, color_order=None,
                width: int = 150, height: int = 150, columns: int = 4, tooltip=()) -> alt.VConcatChart:
    """One faceted chart per quantity, each with its own y axis and unit, stacked: quantities counted in
    different units (InnoDB's purge lag in transaction numbers, PostgreSQL's dead tuples) never share
    an axis. ``measures``: each value of ``measure`` to plot, in order, with its chart's title and its
    y axis title (with the unit).
    Panels (``panel``, e.g. the server) follow :func:`server_order`; lines are coloured by ``color``."""
    charts_ = []
    for name, (part_title, axis_title) in measures.items():
        part = df[df[measure] == name]
        if part.empty:
            continue
        cols = [c for c in dict.fromkeys([x, y, color, panel, measure, *tooltip]) if c]
        sort = color_order or sorted(part[color].unique())
        base = alt.Chart().encode(
            x=alt.X(f"{x}:Q", title=x_title),
            y=alt.Y(f"{y}:Q", title=axis_title, axis=alt.Axis(format="~s")),
            color=alt.Color(f"{color}:N", sort=list(sort), legend=legend(color_title or color, lines=True)))
        layer = alt.layer(base.mark_line(strokeWidth=2),
                          base.mark_circle(size=18).encode(tooltip=list(dict.fromkeys([panel, color, *tooltip,
                                                                                         x, y]))),
                          data=part[cols]).properties(width=width, height=height)
        charts_.append(layer.facet(facet=alt.Facet(f"{panel}:N", title=None,
                                                   sort=server_order(part[panel].unique())),
                                   columns=columns, spacing=10).properties(title=part_title))
    return alt.vconcat(*charts_).resolve_scale(color="independent").properties(title=title)


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


def shares_ci(df: pd.DataFrame, y: str, x: str, color: str, row: str, title, x_title: str, *,
              width: int = 300) -> alt.Chart:
    """Shares (0 to 1) with their 95% intervals (``ci_low``, ``ci_high``), one line per ``y`` label, coloured
    by ``color``, one panel per ``row`` (each panel lists only its own labels)."""
    tips = [row, y, color, alt.Tooltip(f"{x}:Q", format=".1%"), alt.Tooltip("ci_low:Q", format=".1%"),
            alt.Tooltip("ci_high:Q", format=".1%")]
    base = alt.Chart(df).encode(y=alt.Y(f"{y}:N", title=None, axis=alt.Axis(labelLimit=260)),
                                color=alt.Color(f"{color}:N", legend=legend()))
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_low:Q", title=x_title, axis=alt.Axis(format="%"), scale=alt.Scale(zero=True)),
        x2="ci_high:Q")
    points = base.mark_point(filled=True, size=60).encode(x=f"{x}:Q", tooltip=tips)
    return (alt.layer(bars, points).properties(width=width)
            .facet(row=alt.Row(f"{row}:N", title=None, header=alt.Header(
                labelAngle=0, labelOrient="top", labelAnchor="start", labelFontWeight="bold", labelLimit=600)))
            .resolve_scale(y="independent").properties(title=title))


def relative_ci(g: pd.DataFrame, order: list[str], title, x_title: str) -> alt.LayerChart:
    """One flavor's relative QPS (``ratio`` with ``ci_low``, ``ci_high``), one row per test in ``order``,
    one line per version (offset within the row), against the line of no difference: a log axis (a wide interval
    does not squeeze the others), the axis and the legend on top, where a reader of a tall chart starts."""
    base = alt.Chart(g).encode(y=alt.Y("test:N", sort=order, title=None), yOffset=alt.YOffset("version:N"),
                               color=alt.Color("version:N", title="version",
                                               legend=alt.Legend(orient="top", labelLimit=0, columns=4)))
    x = alt.X("ci_low:Q", scale=alt.Scale(type="log", zero=False, nice=False), title=x_title,
              axis=alt.Axis(orient="top", format=".2~f", values=[0.25, 0.5, 0.75, 1.0, 1.5, 2, 3, 4]))
    return alt.layer(
        alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x="x:Q"),
        base.mark_rule().encode(x=x, x2="ci_high:Q"),
        base.mark_point(filled=True).encode(x="ratio:Q", tooltip=["test", "version", alt.Tooltip("ratio:Q", format=".3f"),
                                                                   alt.Tooltip("ci_low:Q", format=".3f"),
                                                                   alt.Tooltip("ci_high:Q", format=".3f"), "pairs"]),
    ).properties(width=420, height=alt.Step(8), title=title)


def gaps_ci(pts: pd.DataFrame, source: pd.DataFrame, title, x_title: str) -> alt.LayerChart:
    """A gap per configuration (``gap`` with ``gap_low``, ``gap_high``; one line per ``version`` pair,
    configurations in their order in ``pts``) and the source's gap (``source``) as a diamond beside it."""
    order = list(dict.fromkeys(pts["config"]))
    enc = dict(y=alt.Y("config:N", sort=order, title=None),
               color=alt.Color("version:N", title="gap", legend=alt.Legend(orient="bottom", labelLimit=0)))
    return alt.layer(
        alt.Chart(pts).mark_rule().encode(x=alt.X("gap_low:Q", scale=alt.Scale(zero=False), title=x_title),
                                          x2="gap_high:Q", yOffset="version:N", **enc),
        alt.Chart(pts).mark_point(filled=True).encode(x="gap:Q", yOffset="version:N", **enc,
                                                      tooltip=["config", "version", alt.Tooltip("gap:Q", format=".3f"),
                                                               alt.Tooltip("gap_low:Q", format=".3f"),
                                                               alt.Tooltip("gap_high:Q", format=".3f")]),
        alt.Chart(source).mark_point(shape="diamond", size=70).encode(x="source:Q", **enc),
    ).properties(width=460, title=title)



def ratio_heatmap(df: pd.DataFrame, tests: list[str], groups, pairs: list[str], title, *,
                  domain: tuple[float, float] = (0.8, 1.25), legend_title: str = "QPS, newer / older") -> alt.FacetChart:
    """Ratios as one compact grid, the way the relative-QPS posts read them: a column per ``pair`` (in ``pairs``'
    order, e.g. each flavor's consecutive versions, its label's parts separated by " / " or "|" drawn on lines of
    their own) and a row per ``test`` (in ``tests``' order) under its ``group`` (in ``groups``' order), each cell
    colored by ``ratio`` on a log scale centered on 1 (clamped to ``domain``; its number is written in the cell),
    outlined where its 95% interval (``ci_low``, ``ci_high``) excludes 1. Legend and axis on top."""
    g = df.assign(excludes_1=(df["ci_low"] > 1) | (df["ci_high"] < 1))
    color = alt.Color("ratio:Q", title=legend_title,
                      scale=alt.Scale(type="log", domain=list(domain), domainMid=1, scheme="redblue", clamp=True),
                      legend=alt.Legend(orient="top", direction="horizontal", gradientLength=240, format=".2f",
                                        values=[domain[0], 0.9, 1.0, 1.1, domain[1]]))
    tip = ["test", "group", "pair", alt.Tooltip("ratio:Q", format=".3f"), alt.Tooltip("ci_low:Q", format=".3f"),
           alt.Tooltip("ci_high:Q", format=".3f")]
    base = alt.Chart(g).encode(
        x=alt.X("pair:N", sort=list(pairs), title=None,
                axis=alt.Axis(orient="top", labelAngle=0, labelFontSize=9, domain=False, ticks=False,
                              labelExpr="split(datum.label, '|')", labelLimit=0, offset=16)),
        y=alt.Y("test:N", sort=[t for t in tests if t in set(g["test"])], title=None,
                axis=alt.Axis(domain=False, ticks=False, labelFontSize=10)))
    cells = base.mark_rect().encode(
        color=color, tooltip=tip,
        stroke=alt.condition("datum.excludes_1", alt.value("black"), alt.value(None)),
        strokeWidth=alt.condition("datum.excludes_1", alt.value(1.5), alt.value(0)))
    text = base.mark_text(fontSize=9).encode(text=alt.Text("ratio:Q", format=".2f"), tooltip=tip)
    return alt.layer(cells, text).properties(width=alt.Step(50), height=alt.Step(14)).facet(
        row=alt.Row("group:N", sort=list(groups), title=None,
                    header=alt.Header(labelAngle=0, labelAlign="left", labelOrient="top", labelAnchor="start",
                                      labelFontSize=10, labelFontWeight="bold", labelPadding=2)),
        spacing=6, title=title,
    ).resolve_scale(y="independent")
