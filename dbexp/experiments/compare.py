"""This run beside the published one: where a reader's hardware agrees with the book's and where not.

A point is matched across the two by what it is (server spec, how it ran, the chapter's
parameters, the workload's script, threads, seconds and table size), not by its key, so that runs measured before a change of
method or baseline still find their counterpart. Per matched point: the ratio of this run's value
to the published one's (geometric means, Welch interval on the logs: the machines are not paired).
"""

from __future__ import annotations

import json

import pandas as pd

from dbexp.errors import DbexpError
from dbexp.experiments import stats
from dbexp.results.provenance import hardware_label


def _point(row) -> tuple[str, str]:
    """(match key, readable label) of a run's point."""
    p = row["point"] if isinstance(row["point"], dict) else json.loads(row["point"])
    params = p.get("params", p.get("labels")) or {}
    server = p.get("server", {})
    workload = p.get("workload") or {}
    what = {"spec": server.get("spec"), "mode": server.get("mode", "container"), "params": params,
            "sample": p.get("sample", True),
            **{k: workload.get(k) for k in ("script", "threads", "duration_s", "tables", "table_size")}}
    label = " ".join([str(row["series_name"]), *(f"{k}={v}" for k, v in params.items() if v not in (None, "")),
                      *([workload["script"]] if workload.get("script") else [])])
    if what["mode"] != "container":
        label += f" ({what['mode']})"
    if not what["sample"]:
        label += " (by hand)"
    return json.dumps(what, sort_keys=True, default=str), label


def _keyed(wide: pd.DataFrame) -> pd.DataFrame:
    keys = [_point(r) for _, r in wide.iterrows()]
    return wide.assign(match=[k for k, _ in keys], label=[lbl for _, lbl in keys])


PUBLISHED_PAGE = ("This page shows the published run. Rerun the chapter on your machine (`dbexp book --only "
                  "{chapter}`, or papermill with the parameters the README lists) "
                  "and this section shows your results beside it, point by point.")
NO_MATCH = ("No point of this run matches a published one (same servers, parameters and workload, scale "
            "included), so there is nothing to set beside it.")


def beside_published(res, value: str = "qps", root=None) -> tuple[pd.DataFrame, str]:
    """This run beside the published data/, point by point, and a sentence saying what it shows.

    The table has a row per point measured in both: this run's ``value`` over the published one's,
    with its interval (columns label, ratio_qps, ci_low, ci_high, pairs: runs here, this and
    published: the machines, named). It is empty when ``res`` is the published run (loaded from
    data/, or just published there) or when nothing matches."""
    from dbexp.experiments.chapter import published

    if res.source != "this run" or res.wide.empty:
        return pd.DataFrame(), PUBLISHED_PAGE.format(chapter=res.experiment)
    try:
        pub = published(res.experiment, root)
    except DbexpError:
        return pd.DataFrame(), NO_MATCH  # nothing published for this chapter yet
    if set(res.wide["run_id"]) & set(pub.wide["run_id"]):
        return pd.DataFrame(), PUBLISHED_PAGE.format(chapter=res.experiment)  # this run was just published: it is the published run
    mine, theirs = _keyed(res.wide), _keyed(pub.wide)
    rows = []
    for match, g in mine.groupby("match", sort=False):
        other = theirs[theirs["match"] == match]
        if other.empty or value not in g or value not in other:
            continue
        r, lo, hi = stats.unpaired_ratio_ci(g[value].dropna(), other[value].dropna())
        rows.append({"label": g["label"].iloc[0], "ratio_qps": r, "ci_low": lo, "ci_high": hi,
                     "pairs": len(g), "this": hardware_label(res.host), "published": hardware_label(pub.host)})
    table = pd.DataFrame(rows)
    if table.empty:
        return table, NO_MATCH
    near = ((table["ci_low"] >= 0.95) & (table["ci_high"] <= 1.05)).sum()
    return table, (f"This run on {table['this'].iloc[0]} beside the published one on "
                   f"{table['published'].iloc[0]}: {len(table)} points measured on both; on {near} of them the "
                   "whole interval lies within 5% of the published value.")
