"""The calibration page's chart of its own A/A: every single-run pair of a server against itself (a run on its
second instance over one on its first) against 1 +- 5%, and beside them this lab's 95% interval for the same
comparison, fitted on the flavor's other servers."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dbexp.book import charts
from dbexp.chapters.calibration.analysis import AA_BAND
from dbexp.experiments.chapter import Results


def aa_chart(pairs: pd.DataFrame, intervals: pd.DataFrame, res: Results) -> alt.Chart:
    """One row per server: its single-run A/A ratios (points) and the lab's interval for its second instance
    over its first (a bar), a dashed line at 1 and the shaded band 1 +- AA_BAND; a log x axis."""
    order = charts.server_order(pairs["server"].unique())
    y = alt.Y("server:N", title=None, sort=order, axis=alt.Axis(labelLimit=220))
    x = alt.X("ratio:Q", title="second instance / first (log): single runs (dots), the lab's 95% interval (bar)",
              scale=alt.Scale(type="log"), axis=alt.Axis(format=charts.NUMBER))
    band = alt.Chart(pd.DataFrame({"lo": [1 - AA_BAND], "hi": [1 + AA_BAND]})).mark_rect(
        color="#dddddd", opacity=0.6).encode(x="lo:Q", x2="hi:Q")
    one = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x="x:Q")
    layers = [band, one]
    if len(intervals):
        layers.append(alt.Chart(intervals[["server", "ratio", "low", "high"]]).mark_rule(
            strokeWidth=3, color="#4c78a8", opacity=0.5).encode(y=y, x=alt.X("low:Q", scale=alt.Scale(type="log")),
                                                                 x2="high:Q"))
    layers.append(alt.Chart(pairs[["server", "ratio"]]).mark_point(filled=True, size=50, color="#e45756").encode(
        y=y, x=x, tooltip=["server", alt.Tooltip("ratio:Q", format=".3f")]))
    return alt.layer(*layers).properties(width=480, title=charts.titled(
        f"A/A: one run against one on another start of the same server (grey: 1 ± {AA_BAND:.0%})", res))
