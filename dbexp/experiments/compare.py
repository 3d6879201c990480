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


def beside_published(res, value: str = "qps", root=None) -> pd.DataFrame:
    """Per point measured both in ``res`` (a run on this machine) and in the published data/: this
    run's value over the published one's, with its interval; empty when ``res`` is the published
    run or nothing matches. Columns: label, ratio_qps, ci_low, ci_high, pairs (runs here), this,
    published (the machines, named)."""
    from dbexp.experiments.chapter import published

    if res.source != "this run" or res.wide.empty:
        return pd.DataFrame()
    try:
        pub = published(res.experiment, root)
    except DbexpError:
        return pd.DataFrame()  # nothing published for this chapter yet
    if set(res.wide["run_id"]) & set(pub.wide["run_id"]):
        return pd.DataFrame()  # this run was just published: it is the published run
    mine, theirs = _keyed(res.wide), _keyed(pub.wide)
    rows = []
    for match, g in mine.groupby("match", sort=False):
        other = theirs[theirs["match"] == match]
        if other.empty or value not in g or value not in other:
            continue
        r, lo, hi = stats.unpaired_ratio_ci(g[value].dropna(), other[value].dropna())
        rows.append({"label": g["label"].iloc[0], "ratio_qps": r, "ci_low": lo, "ci_high": hi,
                     "pairs": len(g), "this": hardware_label(res.host), "published": hardware_label(pub.host)})
    return pd.DataFrame(rows)


def _is_published(res) -> bool:
    """True when ``res``'s runs are the ones in data/ (a run that was just published)."""
    from dbexp.experiments.chapter import published

    try:
        return bool(set(res.wide["run_id"]) & set(published(res.experiment).wide["run_id"]))
    except DbexpError:
        return False


def beside_sentence(res, table: pd.DataFrame) -> str:
    """A sentence naming both machines and how many points agree within 5%, from the table."""
    if res.source != "this run" or _is_published(res):
        return ("This page shows the published run. Rerun the chapter on your machine (see its parameters) "
                "and this section shows your results beside it, point by point.")
    if table.empty:
        return ("No point of this run matches a published one (same servers, parameters and workload, "
                "scale included), so there is nothing to set beside it.")
    near = ((table["ci_low"] >= 0.95) & (table["ci_high"] <= 1.05)).sum()
    return (f"This run on {table['this'].iloc[0]} beside the published one on {table['published'].iloc[0]}: "
            f"{len(table)} points measured on both; on {near} of them the whole interval lies within 5% of "
            "the published value.")
