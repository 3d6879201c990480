"""Faceted charts checked against their data, as Vega lays them out: each panel draws exactly the rows
of the labels beside it, and a panel with no rows is empty and says so.

Vega-Lite builds a row x column grid from the combinations in the data, then sorts the cells by each
label's place in a sort list; a combination missing from the data gets a cell with no place, sorted
first, and every later cell slides along the grid under another panel's headers (vega-lite#8675).
buffer_eviction's PostgreSQL charts did this: 12.22's row was blank, 14.23 showed runs under
"UPDATE scan" and "pg_prewarm" that never ran on it, 17.10 filled four columns but ran two.
"""

from __future__ import annotations


import altair as alt
import pandas as pd
import pytest

from chart_panels import check
from dbexp.book import charts


# --- every faceting helper on a grid with holes and orders of its own ---------------------------------
SERVERS = ["postgres 9.6", "postgres 12.22", "postgres 17.10"]
VARIANTS = ["seq", "index", "update"]  # not alphabetical: the sort list places them
RAN = {"postgres 9.6": ["seq", "index"], "postgres 12.22": ["seq", "index", "update"], "postgres 17.10": ["index"]}


def holes() -> pd.DataFrame:
    rows = [{"server": s, "variant": v, "t": t, "y": 10 * i + j + t, "repeat": str(r), "from": 2, "to": 4,
             "phase": ph, "usage": u, "holds": h, "share": 0.1}
            for i, s in enumerate(SERVERS) for j, v in enumerate(RAN[s]) for r in (1, 2) for t in (1, 2, 3)
            for ph, u, h in [("before", t % 2, "hot" if r == 1 else "big")]]
    return pd.DataFrame(rows)


def assert_holes_say_not_run(chart) -> None:
    ran = {(s, v) for s, vs in RAN.items() for v in vs}
    for facet in check(chart):
        for p in facet.panels:
            assert bool(p.rows) == (p.labels in ran), p
            assert ("not run" in p.texts) == (p.labels not in ran), p


def test_shaded_series_panels_follow_their_labels():
    c = charts.shaded_series(holes(), "t", "y", "repeat", "server", "variant", ("from", "to"), "t", "s", "y",
                             column_order=VARIANTS)
    assert_holes_say_not_run(c)


def test_stacked_shares_panels_follow_their_labels():
    c = charts.stacked_shares(holes(), "phase", "share", "usage", "holds", "server", "variant", "t",
                              x_order=["before"], column_order=VARIANTS)
    assert_holes_say_not_run(c)


def test_dashed_lines_grid_panels_follow_their_labels():
    c = charts.dashed_lines(holes(), "t", "y", "repeat", "repeat", "t", "x", "y", row="server", column="variant",
                            column_order=VARIANTS)
    assert_holes_say_not_run(c)


def test_one_field_facets_follow_their_labels():
    df = holes()
    check(charts.dashed_lines(df, "t", "y", "repeat", "variant", "t", "x", "y", facet="server", columns=2))
    check(charts.lines(df[df["variant"] == "index"], "t", "y", "repeat", "t", "x", "y", column="server"))
    check(charts.repeats_strip(df, "server", "y", "repeat", "variant", "t", "y"))
    check(charts.per_measure(df.assign(m=df["variant"]), "t", "y", "m", {"seq": ("a", "y"), "index": ("b", "y")},
                             "repeat", "server", "t", "x"))


def test_the_check_finds_panels_under_wrong_labels():
    """The layout Vega-Lite gives a grid with holes when no cell fills them: the check must see it."""
    df = holes()
    bad = alt.Chart(df).mark_point().encode(x="t:Q", y="y:Q").facet(
        row=alt.Row("server:N", sort=SERVERS), column=alt.Column("variant:N", sort=VARIANTS))
    with pytest.raises(AssertionError, match="draws rows of|blank"):
        check(bad)
    encoded = alt.Chart(df).mark_point().encode(x="t:Q", y="y:Q", row=alt.Row("server:N", sort=SERVERS),
                                                column=alt.Column("variant:N", sort=VARIANTS))
    with pytest.raises(AssertionError, match="draws rows of|blank"):
        check(encoded)
    shared = alt.layer(alt.Chart().mark_point().encode(x="t:Q", y="y:Q"),
                       alt.Chart(pd.DataFrame({"x": [1]})).mark_rule().encode(x="x:Q"), data=df)
    with pytest.raises(AssertionError, match="data the facet does not split"):
        check(shared.facet(column=alt.Column("server:N")))
