"""The claims table: every entry of the chapter's ledger (claims.yaml), each tested one with its verdict
computed from the runs (verdict rules: dbexp.experiments.verdicts)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dbexp.chapters.buffer_pins.analysis import (GROWTH, STEP, array_table, cold_over_warm, curve_runs, histograms,
                                                 pin_table, pooled_share, shape_table, source_ratio)
from dbexp.experiments import claims_ledger, stats, verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import PGHACKERS_PINS as THREAD

MOST = 0.9  # "the vast majority": at least 90% of new pins, the interval's low end above it
HERE = "below"


def ledger() -> tuple[dict, ...]:
    return claims_ledger.ledger("buffer_pins")


def _ci(r: float, lo: float, hi: float) -> str:
    return f"{r:.2f}" if np.isnan(lo) else f"{r:.2f} [{lo:.2f}, {hi:.2f}]"


def _curve_claim(res: Results, name: str, pair: tuple[int, int]) -> tuple[str, str]:
    """Each version's cycle ratio, per pattern, against the source's (recomputed from its table)."""
    t = shape_table(res)
    t = t[t["kind"] == "cycle"]
    if t.empty:
        return "", verdicts.NOT_MEASURED
    parts, vs = [], []
    for pattern, g in t.groupby("pattern", sort=False):
        fig = source_ratio(pattern, pair)
        cells = []
        for _, r in g.iterrows():
            cells.append(f"{r['version']} {_ci(r[name], r[f'{name}_lo'], r[f'{name}_hi'])}")
            vs.append(verdicts.magnitude(r[f"{name}_lo"], r[f"{name}_hi"], fig, fig, point=r[name],
                                         n=int(r[f"{name}_runs"])) if r[f"{name}_runs"] > 1
                      else verdicts.not_resolved("one run: no interval"))
        parts.append(f"{pattern} (source {fig:.2f}): " + ", ".join(cells))
    return "; ".join(parts), verdicts.combine(vs)


def _sequential(res: Results) -> tuple[str, str]:
    long = curve_runs(res)
    c = long[(long["kind"] == "cycle") & (long["n"] == GROWTH[1])]
    fig = 497.92 / 587.13
    cells, vs = [], []
    for version, g in c.groupby("version", sort=False):
        seq, rnd = g[g["pattern"] == "sequential"]["ns"], g[g["pattern"] == "random"]["ns"]
        if len(seq) < 2 or len(rnd) < 2:
            continue
        r, lo, hi = stats.unpaired_ratio_ci(seq.to_numpy(), rnd.to_numpy())
        cells.append(f"{version} {_ci(r, lo, hi)}")
        vs.append(verdicts.magnitude(lo, hi, fig, fig, point=r, n=len(seq)))
    if not cells:
        return "", verdicts.NOT_MEASURED
    return (f"sequential over random at {GROWTH[1]:,} pins (source {fig:.2f}): " + ", ".join(cells),
            verdicts.combine(vs))


def _share_claim(res: Results, source: str, keep, what: str) -> tuple[str, str, float, float]:
    k, n = pooled_share(res, source, keep)
    if not n:
        return "", verdicts.NOT_MEASURED, np.nan, np.nan
    low, high = stats.proportion_ci(k, n)
    return f"{k:,} of {n:,} {what} ({k / n:.1%} [{low:.1%}, {high:.1%}])", "", low, high


def _per_shape(res: Results, col: str) -> str:
    t = pin_table(res)
    if t.empty:
        return ""
    by = t.groupby("label", sort=False)[col].agg(["min", "max"])
    return "; by shape: " + ", ".join(f"{label} {r['min']:.0%}" + (f" to {r['max']:.0%}" if r["max"] - r["min"] >= 0.005 else "")
                                      for label, r in by.iterrows())


def _zero_to_two(res: Results) -> tuple[str, str]:
    """Pooled over every run, and judged per shape and version: a shape agrees where at least 90% of its
    new pins were taken with at most two others held (the interval's low end above 90%)."""
    text, _, lo, hi = _share_claim(res, "held_at_pin", lambda v: v <= 3, "new pins taken with at most 2 others held")
    if not text:
        return text, verdicts.NOT_MEASURED
    h = histograms(res, "held_at_pin")
    vs, low = [], []
    for (version, label), g in h[["version", "label", "value", "pins"]].groupby(["version", "label"], sort=False):
        value, pins = g["value"].to_numpy(), g["pins"].to_numpy()
        k, n = int(pins[value <= 3].sum()), int(pins.sum())
        vs.append(verdicts.share_at_least(k, n, MOST))
        if vs[-1] == verdicts.DISAGREES:
            low.append(f"{label} ({version}): {k / n:.0%}")
    text += " pooled" + _per_shape(res, "others_le2_share") + (f"; under 90%: {', '.join(low)}" if low else "")
    return text, verdicts.combine(vs) + " (shapes and versions)"


def _pin_lock(res: Results) -> tuple[str, str]:
    text, _, lo, _ = _share_claim(res, "locks_per_pin", lambda v: v >= 1, "pins that took a content lock")
    if not text:
        return text, verdicts.NOT_MEASURED
    again, _, _, _ = _share_claim(res, "locks_per_pin", lambda v: v >= 2, "that took two or more")
    verdict = verdicts.DIRECTION_ONLY if lo > 0.5 else verdicts.disagrees()
    return text + "; " + again + _per_shape(res, "locked_pin_share"), verdict


def _cache(res: Results) -> tuple[str, str]:
    """One held pin, the caches evicted before each operation over the same operation warm, timed right after it
    in the same run (analysis.cold_over_warm): the remark holds where the cold time is resolved above the warm."""
    t = cold_over_warm(res, ns=(1,))
    if t.empty:
        return "", verdicts.not_measured("no cold run timed its warm twin in these runs")
    cells = [f"{r['version']} {r['ratio_text']}" for _, r in t.iterrows()]
    vs = [verdicts.direction(r["lo"] - 1, r["hi"] - 1, r["ratio"] - 1, int(r["runs"])) for _, r in t.iterrows()]
    kib = ", ".join(f"{int(k):,}" for k in sorted(res.wide.loc[res.wide["kind"] == "hold_cold", "cold_kb"].unique()))
    return (f"one held pin, caches evicted before each operation (a walk of {kib} KiB) over warm, paired within "
            "runs: " + ", ".join(cells), verdicts.combine(vs))


def _prefetch(res: Results) -> tuple[str, str]:
    t = pin_table(res)
    if t.empty:
        return "", verdicts.NOT_MEASURED
    cold = t[t["label"].str.startswith("seq scan cold")]
    if cold.empty:
        return "", verdicts.not_measured("no cold sequential scan at this scale")
    cells = [f"{r['version']} {r['label'].split(', ')[1]}: {int(r['held_max'])}" for _, r in cold.iterrows()]
    most = int(cold["held_max"].max())
    verdict = verdicts.count_between(most, 2, 8, "most pins held at once")
    verdict = verdicts.DIRECTION_ONLY if verdict == verdicts.AGREES else verdict
    return "most pins held at once, cold sequential scans: " + ", ".join(cells), verdict


def _array(res: Results) -> tuple[str, str]:
    """32 entries over 8, each build's time over its own run's at N = 7 (analysis.array_table), where only the
    larger array keeps every pin (19), and beside it where both do (1) and neither does (100): it helps where
    the ratio's interval at 19 lies below 1."""
    t = array_table(res)
    if t.empty:
        return "", verdicts.not_measured("the two builds of one source with arrays of 8 and 32 entries are not in "
                                         "these runs")
    cells, vs = [], []
    for kind, g in t.groupby("kind", sort=False):
        at = g.set_index("n")
        if 19 not in at.index:
            continue
        r = at.loc[19]
        beside = ", ".join(f"{n}: {at.loc[n, 'ratio_text']}" for n in (1, 100) if n in at.index)
        cells.append(f"{r['kind_label']}: at 19, {r['ratio_text']} ({beside})")
        vs.append(verdicts.direction(1 - r["hi"], 1 - r["lo"], 1 - r["ratio"], int(r["runs"])))
    if not cells:
        return "", verdicts.not_measured("N = 19 is not in the array comparison's runs")
    return (f"{t['big'].iloc[0]} over {t['small'].iloc[0]}, each build's time over its own run's at N = 7: "
            + "; ".join(cells), verdicts.combine(vs))


MEASURES = {
    "array-32": _array,
    "step-past-array": lambda res: _curve_claim(res, "step", STEP),
    "growth-to-10000": lambda res: _curve_claim(res, "growth", GROWTH),
    "sequential-cheaper": _sequential,
    "zero-to-two-pinned": _zero_to_two,
    "pin-lock-unlock-unpin": _pin_lock,
    "cache-hit-ratios": _cache,
    "prefetch-fifo": _prefetch,
}


def conditions(res: Results) -> str:
    """This lab's conditions for every tested claim, said once (the table's 'here' column points to it)."""
    long = curve_runs(res)
    if long.empty:
        return ""
    versions = ", ".join(long["version"].unique())
    w = res.wide[res.wide["kind"].notna()] if "kind" in res.wide else res.wide
    ops = int(w["ops"].iloc[0]) if len(w) else 0
    return (f"Here, for every tested claim: PostgreSQL {versions}, one backend on one server CPU, the pinbench "
            f"extension's loops inside it ({ops:,} operations per call, {int(w['calls'].iloc[0])} rounds over every N "
            "per run), each ratio divided within a round, its median over the run's rounds taken over "
            f"{int(long.groupby(['version', 'kind', 'pattern'])['run_id'].nunique().min())} or more runs on "
            f"{int(long['instance'].nunique())} independently started servers per version; the pin counts from "
            "uprobes on the builds that keep their symbols, the queries on one connection.")


def claims(res: Results) -> pd.DataFrame:
    rows = []
    for e in ledger():
        if e["status"] == "tested":
            measured, verdict = MEASURES[e["id"]](res)
        elif e["status"] == "not testable here":
            measured, verdict = "", verdicts.not_testable(e["why"])
        else:
            measured, verdict = "", verdicts.not_measured(e["why"])
        rows.append(verdicts.ClaimRow(THREAD.cite(e["claim"], "thread"), e["conditions"],
                                      HERE if e["status"] == "tested" else "", measured, verdict))
    return verdicts.table(rows)
