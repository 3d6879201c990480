"""The numbers the gtid page's sentences are filled with (the sentences are templates in
notebooks/gtid/), and :func:`sentence`, which renders one of them from the results."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dbexp.book import prose
from dbexp.catalog.versions import version_key
from dbexp.chapters.gtid.analysis import (control, effects, gap_changes, length_check, main_runs, pick, ratios,
                                          resolution, spread, tidy, twin_over_binlog, windows)
from dbexp.chapters.gtid.configs import TARGET_HALF_WIDTH
from dbexp.chapters.gtid.engines.innodb import of_series
from dbexp.experiments import ledger as src
from dbexp.experiments import paired, rotation, stats
from dbexp.experiments.chapter import Results


def loss_numbers(res: Results) -> dict:
    """The throughput lost to GTIDs over every version, test and thread count: the least and the
    most (fractions; the least is negative where GTIDs gained)."""
    r = ratios(res)
    g = r[(r["comparison"] == "GTIDs") & (r["value"] == "throughput")] if len(r) else r
    if g.empty:
        return {"n": 0}
    return {"n": len(g), "least": 1 - g["ratio"].max(), "most": 1 - g["ratio"].min()}


def edge_numbers(res: Results) -> dict:
    """The A/A control's throughput ratio from each run's own QPS (sysbench's, start to end) and over
    the common interval, every window pooled (geometric means)."""
    w = main_runs(tidy(res))
    if w.empty or "qps_common" not in w:
        return {"n": 0}
    keys = ["series_name", "test", "threads"]
    own, common = (stats.gmean(twin_over_binlog(w, col, keys)) for col in ("qps", "qps_common"))
    return {"n": len(w), "own": own, "common": common}


def resolution_numbers(res: Results) -> dict:
    """The resolution the throughput ratios reached, the window-to-window spread and the A/A control."""
    c = control(res)
    if c["n"] and math.isnan(c["cpu_ratio"]):
        c = {**c, "cpu_ratio": None}
    return {"resolution": resolution(res), "spread": spread(res), "control": c, "target": TARGET_HALF_WIDTH,
            "windows": windows(res)}


def _point(x, label: str | None = None) -> dict:
    """A ratio with its point and its interval (None where one window gave no interval)."""
    interval = (x.ci_low, x.ci_high) if x.ci_low == x.ci_low else (None, None)
    return {"label": label or f"{x.series_name.split(' ', 1)[-1]} {x.test}", "ratio": x.ratio,
            "low": interval[0], "high": interval[1],
            "source": getattr(x, "source", None) if getattr(x, "source", None) == getattr(x, "source", None) else None}


def _extremes(g: pd.DataFrame) -> dict | None:
    """The smallest and largest ratio (with their intervals and points), how many points there are
    and how many of their intervals exclude 1; None where there are none."""
    g = g.dropna(subset=["ratio"]) if len(g) else g
    if g.empty:
        return None
    return {"n": len(g), "min": _point(g.loc[g["ratio"].idxmin()]), "max": _point(g.loc[g["ratio"].idxmax()]),
            "excluding_1": int(((g["ci_low"] > 1) | (g["ci_high"] < 1)).sum())}


def length_numbers(res: Results) -> dict:
    """The run-length check: how many comparisons were measured at the longer length, how many of
    their longer-over-shorter intervals hold 1, the farthest from 1 (with its interval), the lengths."""
    lc = length_check(res)
    if lc.empty:
        return {"n": 0}
    worst = lc.loc[(np.log(lc["ratio"])).abs().idxmax()]
    holding = paired.holds_one(lc)
    resolved = lc["ci_low"].notna()
    return {"n": len(lc), "intervals": int(resolved.sum()), "holding_1": int(holding.sum()),
            "factor": int(lc["length"].iloc[0]),
            "short_s": float(lc["duration_short"].median()), "long_s": float(lc["duration_long"].median()),
            "common_short": float(lc["common_short"].median()), "common_long": float(lc["common_long"].median()),
            "windows_long": int(lc["windows_long"].min()),
            "servers": sorted({s.split(" ", 1)[-1] for s in lc["series_name"]}, key=version_key),
            "tests": sorted(set(f"{t} {n}t" for t, n in zip(lc["test"], lc["threads"]))),
            "worst": {"label": f"{worst['comparison']}", "ratio": worst["ratio"],
                      "low": worst["ci_low"] if worst["ci_low"] == worst["ci_low"] else None,
                      "high": worst["ci_high"] if worst["ci_high"] == worst["ci_high"] else None},
            "max_excluded": float(max((1 - lc["ci_low"]).max(), (lc["ci_high"] - 1).max()))
            if resolved.any() else None}


def _by_version(e: pd.DataFrame) -> list[dict]:
    """One effect's rows (effects()) as points labelled by version, oldest first."""
    e = e.sort_values("series_name", key=lambda col: col.map(version_key)) if len(e) else e
    return [_point(x, x.version) for x in e.itertuples()]


def findings_numbers(res: Results) -> dict:
    """The page's five findings' numbers, each ratio in the page's direction (analysis.effects: what turning a
    feature off gains), with its 95% interval."""
    e = effects(res)
    one = e[e["threads"] == 1] if len(e) else e
    unx = one[one["test"] == "update-non-index"] if len(one) else one
    gtid = one[one["comparison"] == "GTIDs"] if len(one) else one
    per_commit = gtid[gtid["series_name"].map(lambda n: of_series(n).gtid_table_per_commit())] if len(gtid) else gtid
    cpu = effects(res, "server CPU/o")
    cpu = cpu[(cpu["comparison"] == "the binlog") & (cpu["test"] == "update-non-index") & (cpu["threads"] == 1)] \
        if len(cpu) else cpu
    cpu = cpu.assign(ratio=1 / cpu["ratio"], ci_low=1 / cpu["ci_high"], ci_high=1 / cpu["ci_low"]) if len(cpu) else cpu
    w = main_runs(tidy(res))
    old, new = (pick(w, f) if len(w) else None for f in ("5.7", "8.0"))
    gc = gap_changes(res)
    gc = gc[(gc["base"] == old) & (gc["new"] == new) & (gc["threads"] == 1)] if len(gc) else gc
    head = moves = None
    if len(gc):
        x = gc.iloc[0]
        head = {"ratio": x["gap"], "low": x["gap_low"], "high": x["gap_high"], "source": src.gap(),
                "old": old.split(" ", 1)[-1], "new": new.split(" ", 1)[-1]}
        moves = [{"what": what, "points": y["points"], "ratio": y["ratio"], "low": y["ci_low"], "high": y["ci_high"],
                  "source_points": src.gap_points(factor)}
                 for config, factor, what in (("binlog off", "skip-log-bin", "the binlog off"),
                                              ("binlog, P_S off", "performance_schema=0", "performance_schema off"))
                 for y in [gc[gc["config"] == config]] if len(y) for y in [y.iloc[0]]]
    return {"binlog": _by_version(unx[unx["comparison"] == "the binlog"]) if len(unx) else [],
            "binlog_cpu": _by_version(cpu),
            "binlog_all": _extremes(one[one["comparison"] == "the binlog"]) if len(one) else None,
            "gtid": _extremes(gtid), "gtid_table": _extremes(per_commit),
            "gtid_table_versions": sorted({x.split(" ", 1)[-1] for x in per_commit["series_name"]}, key=version_key)
            if len(per_commit) else [],
            "insert": [p for p in _by_version(per_commit[per_commit["test"] == "insert"])] if len(per_commit) else [],
            "pfs": _by_version(unx[unx["comparison"] == "performance_schema off"]) if len(unx) else [],
            "pfs_all": _extremes(one[one["comparison"] == "performance_schema off"]) if len(one) else None,
            "head": head, "moves": moves or [], "length": length_numbers(res), "control": control(res),
            "turns": turn_numbers(res)}


def headline(res: Results) -> str:
    """The page's answer in one or two sentences (the template headline.md.j2; '' with no ratio)."""
    return sentence(res, "headline").strip()


def turn_numbers(res: Results) -> dict:
    """What the turns stored with the runs show (dbexp.experiments.rotation.numbers): one server working at a
    time, its per-operation figures counted in its own turns."""
    return rotation.numbers(tidy(res))


NUMBERS = {"turns": turn_numbers, "headline": findings_numbers, "gtid_loss": loss_numbers, "edge_effect": edge_numbers, "resolution": resolution_numbers,
           "findings": findings_numbers, "length_check": length_numbers}


def findings(res: Results) -> str:
    """The page's findings (the template findings.md.j2)."""
    return sentence(res, "findings")


def sentence(res: Results, name: str) -> str:
    """The page's text ``name`` (a template in notebooks/gtid/) filled with these results' numbers."""
    return prose.render("gtid", name, **NUMBERS[name](res))
