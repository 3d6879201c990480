"""Tables the chapters show the same way: the settings that still differ between the servers compared."""

from __future__ import annotations

import pandas as pd
from IPython.display import Markdown, display

from dbexp.results import drift


def settings_drift(wide: pd.DataFrame) -> None:
    """Display, per flavor, the effective settings that differ between the servers a chapter compares
    (from each run's stored settings), and any setting that changed between runs of one server."""
    tables = drift.drift_by_flavor(wide)
    if not tables:
        display(Markdown("No performance setting differs between the servers compared here."))
    for title, table in tables.items():
        display(Markdown(f"**{title}**: {len(table)} setting{'s' if len(table) != 1 else ''} differ"))
        # the flavor is in the heading: versions alone keep eight servers within a page's width
        table = table.rename(columns=lambda c: c.removeprefix(f"{title} "))
        display(table.style.set_table_attributes('class="dataframe"'))
    moved = drift.unsteady(wide)
    if len(moved):
        display(Markdown("**Settings that changed between runs of the same server** (a problem: "
                         "nothing the chapter asked for changes them)"))
        display(moved.style.hide())


def baseline_note(wide: pd.DataFrame) -> str:
    """A sentence on whether the runs were started with their flavor's comparable baseline (runs
    published before the lab set one were not, and the drift table then shows what differed)."""
    from dbexp.servers.registry import flavor_class

    def has_baseline(row) -> bool:
        asked = row["config_requested"] if isinstance(row["config_requested"], dict) else {}
        wanted = flavor_class(row["flavor"])(str(row["version"])).comparable_settings()
        return all(k in asked for k in wanted)  # present: a chapter studying one sets its own value

    if wide.empty:
        return ""
    with_it = int(wide.apply(has_baseline, axis=1).sum())
    if with_it == len(wide):
        return "Every run here was started with its flavor's comparable baseline."
    return (f"{len(wide) - with_it} of {len(wide)} runs here were measured before the lab set a common "
            "baseline: they ran with each version's own defaults, and the table shows where those differed.")
