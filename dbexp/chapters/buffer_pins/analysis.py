"""What the runs show: the curve of ns per buffer operation against N per version, kind and pattern
(mean over runs with its interval), its shape as ratios paired within each run (the step from 7 to
11, the growth from 1 to 10,000, both as the source lists them), the source's own figures recomputed
from its table, what each curve's loops touched (the witness its calls return), the array builds' raw times
divided within the rounds of their shared windows, and the pins real queries hold (per shape: pins per
execution, the share of new pins taken with at most two others held, the share of pins that took a content
lock, and the histograms)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from dbexp.experiments import stats
from dbexp.experiments.chapter import Results, memo

# The source's table (seed 004, baseline column): ns per ReadBuffer/ReleaseBuffer at each num_buffers
SOURCE_NS = {
    "random": {1: 194.76, 2: 204.74, 3: 222.62, 7: 233.96, 11: 365.50, 19: 390.58, 100: 424.03, 988: 445.75,
               10000: 587.13},
    "sequential": {1: 183.75, 2: 195.27, 3: 212.81, 7: 221.94, 11: 318.24, 19: 369.51, 100: 420.74,
                   988: 453.61, 10000: 497.92},
}
STEP = (7, 11)  # the source's two N around the array's 8 entries
GROWTH = (1, 10000)
THREAD_KIND = "fifo"  # the thread's benchmark as its author describes it: N held, a FIFO of one buffer
KIND_LABELS = {"fifo": "N held, one buffer again (thread's)", "cycle": "pin N, release N", "hold": "N held",
               "hold_lock": "N held, locked", "hold_cold": "N held, cold"}
EDGES = {"cycle": (8, 9)}  # the array's own edge: the op's pin becomes the ninth entry (8 held; cycle: 9 pinned)


def source_ratio(pattern: str, pair: tuple[int, int]) -> float:
    """The source's ratio ns(pair[1]) / ns(pair[0]), recomputed from its table."""
    t = SOURCE_NS[pattern]
    return t[pair[1]] / t[pair[0]]


def _version(w: pd.DataFrame) -> pd.Series:
    """The build's version as its spec names it (13.23, 19.0~rc1): the server's own banner differs by
    packager (Debian's 19 reports "19rc1 (Debian 19~rc1-1)")."""
    return w["spec"].astype(str).str.extract(r":([^+@]+)", expand=False)


ARRAY_MARK = "+pinbench-src"  # the specs of the two builds whose arrays differ (postgres:18.6+pinbench-src32)


def curve_runs(res: Results, array: bool = False) -> pd.DataFrame:
    """One row per ok curve run and N: version, kind, pattern, n, ns, run_id, instance; the released builds'
    runs, or (``array``) those of the two builds whose arrays differ, their version then naming the array."""
    def compute():
        w = res.wide
        if w.empty or "kind" not in w:
            return pd.DataFrame(columns=["version", "kind", "pattern", "n", "ns", "run_id", "instance"])
        w = w[w["kind"].notna() & (w["status"] == "ok") & (w["spec"].str.contains(ARRAY_MARK, regex=False) == array)]
        if w.empty:
            return pd.DataFrame(columns=["version", "kind", "pattern", "n", "ns", "run_id", "instance"])
        if array:
            w = w.assign(spec=w["spec"].map(lambda x: re.sub(r":([^+@]+)\+pinbench-src.*?(@|$)",
                                                                r":\1, array " + array_label(x) + r"\2", x)))
        cols = [c for c in w.columns if c.startswith("ns_") and c[3:].isdigit()]
        long = w.drop(columns=["ns"], errors="ignore").assign(version=_version(w)).melt(id_vars=["version", "kind", "pattern", "run_id", "instance"],
                                                  value_vars=cols, var_name="n", value_name="ns")
        long = long.dropna(subset=["ns"])
        long["n"] = long["n"].str[3:].astype(int)
        return long.sort_values(["version", "kind", "pattern", "n"], key=_order).reset_index(drop=True)
    return memo(res, f"curve_runs {array}", compute)


def _order(col: pd.Series) -> pd.Series:
    if col.name == "version":
        return col.map(lambda v: tuple(int(x) if x.isdigit() else 0 for x in v.replace("~", ".").split(".")))
    if col.name == "kind":
        return col.map(list(KIND_LABELS).index)
    return col


def curve(res: Results) -> pd.DataFrame:
    """Mean ns per operation per version, kind, pattern and N, with its 95% interval over the runs."""
    long = curve_runs(res)
    rows = []
    for (version, kind, pattern, n), g in long.groupby(["version", "kind", "pattern", "n"], sort=False):
        mean, lo, hi = stats.mean_ci(g["ns"]) if len(g) > 1 else (float(g["ns"].iloc[0]), np.nan, np.nan)
        rows.append({"version": version, "kind": kind, "kind_label": KIND_LABELS[kind], "pattern": pattern, "n": n,
                     "ns": mean, "lo": lo, "hi": hi, "runs": len(g), "instances": g["instance"].nunique(),
                     "source_ns": SOURCE_NS[pattern].get(n, np.nan) if kind == THREAD_KIND else np.nan})
    return pd.DataFrame(rows)


def _pinbench_rounds(res: Results, array: bool) -> pd.DataFrame:
    """The ok curve runs' pinbench series, one row per run and round (run_id, t), one column per series name."""
    def compute():
        ids = curve_runs(res, array)["run_id"].unique()
        s = res.series
        if len(ids) == 0 or s.empty:
            return pd.DataFrame()
        s = s[(s["source"] == "pinbench") & s["run_id"].isin(ids)]
        return s.pivot_table(index=["run_id", "t"], columns="name", values="value")
    return memo(res, f"buffer_pins.rounds {array}", compute)


def round_ratios(res: Results, num: str, den: str, array: bool = False) -> pd.DataFrame:
    """Per ok curve run: the median over its rounds of ``num`` / ``den`` (series names such as ns_11, ns_7,
    warm_1), each round's two calls a few milliseconds apart on the same machine state (measure_curve).
    Columns run_id, version, kind, pattern, instance, ratio."""
    def compute():
        runs = _curve_run_table(res, array)
        wide = _pinbench_rounds(res, array)
        if runs.empty or num not in wide or den not in wide:
            return runs.iloc[0:0].assign(ratio=pd.Series(dtype=float))
        ratios = _run_ratios(res, num, den, array)
        return runs.assign(ratio=ratios)[~np.isnan(ratios)].reset_index(drop=True)  # the runs with a ratio
    return memo(res, f"buffer_pins.round_ratios {num} {den} {array}", compute)


def _curve_run_table(res: Results, array: bool) -> pd.DataFrame:
    """One row per ok curve run (curve_runs' order): run_id, version, kind, pattern, instance."""
    return memo(res, f"buffer_pins.curve_run_table {array}", lambda: curve_runs(res, array)[
        ["run_id", "version", "kind", "pattern", "instance"]].drop_duplicates("run_id"))


def _run_ratios(res: Results, num: str, den: str, array: bool) -> np.ndarray:
    """:func:`round_ratios`' ratio of every run of _curve_run_table, in its order (NaN where no round of the run
    has both series). Computed once per results and arguments."""
    def compute():
        runs = _curve_run_table(res, array)
        wide = _pinbench_rounds(res, array)
        if runs.empty or num not in wide or den not in wide:
            return np.full(len(runs), np.nan)
        per = (wide[num] / wide[den]).dropna().groupby("run_id").median()
        return runs["run_id"].map(per).to_numpy(float)
    return memo(res, f"buffer_pins.run_ratios {num} {den} {array}", compute)


def _runs_by(res: Results, keys: tuple[str, ...], array: bool) -> dict:
    """The positions in _curve_run_table of each group of its runs by ``keys`` (key -> positions, in the
    runs' order). Computed once per results, keys and array."""
    return memo(res, f"buffer_pins.runs_by {keys} {array}",
                lambda: _curve_run_table(res, array).groupby(list(keys), sort=False).indices)


def _ratios_by(res: Results, num: str, den: str, keys: tuple[str, ...], array: bool) -> dict:
    """:func:`round_ratios` of ``num`` over ``den`` per group of runs by ``keys``: key -> one ratio per run (the
    runs' order), the groups without one left out."""
    ratios = _run_ratios(res, num, den, array)
    out = {}
    for key, at in _runs_by(res, keys, array).items():
        measured = ratios[at][~np.isnan(ratios[at])]
        if len(measured):
            out[key] = measured
    return out


def geometric_ci(values) -> tuple[float, float, float]:
    """The geometric mean of positive ratios (one per run) with its 95% t interval on their logarithms."""
    v = np.log(np.asarray(list(values), dtype=float))
    m, lo, hi = stats.mean_ci(v)
    return float(np.exp(m)), float(np.exp(lo)), float(np.exp(hi))


NO_RATIO = (np.nan, np.nan, np.nan, 0)  # ratio() where no run measured the pair


def ratio(res: Results, version: str, kind: str, pattern: str, pair: tuple[int, int],
          array: bool = False) -> tuple[float, float, float, int]:
    """ns(pair[1]) / ns(pair[0]), divided within each round of a run and the median taken over its rounds, then
    the geometric mean over the runs with its 95% interval: (r, lo, hi, runs)."""
    if pair[0] == pair[1]:
        return (1.0, 1.0, 1.0, 0)
    return pair_ratios(res, pair, array).get((version, kind, pattern), NO_RATIO)


def pair_ratios(res: Results, pair: tuple[int, int], array: bool = False) -> dict:
    """:func:`ratio` of ``pair`` for every version, kind and pattern at once: (version, kind, pattern) ->
    (r, lo, hi, runs), those with no run left out. Computed once per results, pair and array."""
    def compute():
        by = _ratios_by(res, f"ns_{pair[1]}", f"ns_{pair[0]}", ("version", "kind", "pattern"), array)
        return {key: _over_runs(ratios) for key, ratios in by.items()}
    return memo(res, f"buffer_pins.pair_ratios {pair} {array}", compute)


def _over_runs(ratios: np.ndarray) -> tuple[float, float, float, int]:
    """One ratio per run as (geometric mean, lo, hi, runs); no interval from one run."""
    if len(ratios) < 2:
        return (float(ratios[0]), np.nan, np.nan, 1)
    return (*geometric_ci(ratios), len(ratios))


def shape_table(res: Results) -> pd.DataFrame:
    """Per version, kind and pattern: the step (7 -> 11), the array's own edge (fifo and hold: 7 -> 8 held, the
    op's pin the 9th entry; cycle: 8 -> 9 pinned) and the growth (1 -> 10,000), each divided within rounds (ratio);
    the source's step and growth beside the thread's benchmark's (fifo). Computed once per results."""
    return memo(res, "buffer_pins.shape_table", lambda: _shape_table(res))


def _shape_table(res: Results) -> pd.DataFrame:
    long = curve_runs(res)
    rows = []
    for (version, kind, pattern), _ in long.groupby(["version", "kind", "pattern"], sort=False):
        edge = EDGES.get(kind, (7, 8))
        row = {"version": version, "kind": kind, "kind_label": KIND_LABELS[kind], "pattern": pattern}
        for name, pair in (("step", STEP), ("edge", edge), ("growth", GROWTH)):
            r, lo, hi, n = ratio(res, version, kind, pattern, pair)
            row.update({name: r, f"{name}_lo": lo, f"{name}_hi": hi, f"{name}_runs": n})
        row["edge_pair"] = f"{edge[0]} -> {edge[1]}"
        row["source_step"] = source_ratio(pattern, STEP) if kind == THREAD_KIND else np.nan
        row["source_growth"] = source_ratio(pattern, GROWTH) if kind == THREAD_KIND else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def pin_runs(res: Results) -> pd.DataFrame:
    """The ok pin runs: version, shape, eic, cold and their measurements. Computed once per results."""
    return memo(res, "buffer_pins.pin_runs", lambda: _pin_runs(res))


def _pin_runs(res: Results) -> pd.DataFrame:
    w = res.wide
    if w.empty or "shape" not in w:
        return pd.DataFrame()
    w = w[w["shape"].notna() & (w["status"] == "ok")]
    if w.empty:
        return pd.DataFrame()
    labels = [_shape_label(shape, int(eic), bool(cold)) for shape, eic, cold in zip(w["shape"], w["eic"], w["cold"])]
    return w.assign(version=_version(w), eic=w["eic"].astype(int), label=pd.Series(labels, index=w.index))


def _in_order(w: pd.DataFrame) -> pd.DataFrame:
    """Pin runs by version, then the shapes in queries.SHAPES' order, warm before cold, eic rising."""
    from dbexp.chapters.buffer_pins.queries import SHAPES

    key = w.assign(_v=_order(w["version"].rename("version")), _s=w["shape"].map(list(SHAPES).index),
                   _c=w["cold"].astype(bool), _e=w["eic"].astype(int))
    return key.sort_values(["_v", "_s", "_c", "_e"]).drop(columns=["_v", "_s", "_c", "_e"])


def _shape_label(shape: str, eic: int, cold: bool) -> str:
    if shape != "seq_scan":
        return shape.replace("_", " ")
    return f"seq scan {'cold' if cold else 'warm'}, eic {eic}"


def pin_table(res: Results) -> pd.DataFrame:
    """Per version and shape label: pins per execution, the share of new pins with at most two others
    held, the most held at once, and the shares of pins with at least one and at least two content
    locks (the means over the runs; each run's own numbers in the CSV). Computed once per results."""
    return memo(res, "buffer_pins.pin_table", lambda: _pin_table(res))


def _pin_table(res: Results) -> pd.DataFrame:
    w = query_pin_runs(res)
    if w.empty:
        return pd.DataFrame()
    w = _in_order(w)
    agg = w.groupby(["version", "label"], sort=False).agg(
        runs=("run_id", "count"), pins_per_execution=("pins_per_execution", "mean"),
        others_le2_share=("others_le2_share", "mean"), held_max=("held_max", "max"),
        locked_pin_share=("locked_pin_share", "mean"), relocked_pin_share=("relocked_pin_share", "mean"),
        blocks_read=("blocks_read", "mean"), executions=("executions", "first"))
    return agg.reset_index()


def histograms(res: Results, source: str) -> pd.DataFrame:
    """The counters of ``source`` (held_at_pin or locks_per_pin) summed over the runs: version, label,
    value, pins, share (of that version's and label's pins). Computed once per results and source."""
    return memo(res, f"buffer_pins.histograms {source}", lambda: _histograms(res, source))


def _histograms(res: Results, source: str) -> pd.DataFrame:
    w = query_pin_runs(res)
    c = res.counters
    if w.empty or c.empty:
        return pd.DataFrame(columns=["version", "label", "value", "pins", "share"])
    c = _in_order(w)[["run_id", "version", "label"]].merge(c[c["source"] == source], on="run_id")  # runs' order
    c = c.assign(value=c["name"].astype(int)).groupby(["version", "label", "value"], sort=False)["delta"].sum()
    c = c.reset_index().rename(columns={"delta": "pins"})
    c["share"] = c["pins"] / c.groupby(["version", "label"])["pins"].transform("sum")
    return c


def pooled_share(res: Results, source: str, keep) -> tuple[int, int]:
    """(pins whose value satisfies ``keep``, all pins) over every run of the histogram ``source``."""
    h = histograms(res, source)
    if h.empty:
        return (0, 0)
    return int(h[h["value"].map(keep)]["pins"].sum()), int(h["pins"].sum())


def source_curve(patterns) -> pd.DataFrame:
    """The thread's baseline numbers as curve rows (version 'source (master, the author's machine)')."""
    rows = [{"version": "thread (master, its author's machine)", "pattern": p, "n": n, "ns": v, "lo": np.nan,
             "hi": np.nan} for p in patterns for n, v in SOURCE_NS[p].items()]
    return pd.DataFrame(rows)


HELD_BUCKETS = ((1, 1, "1"), (2, 2, "2"), (3, 3, "3"), (4, 8, "4-8"), (9, 16, "9-16"), (17, 10**9, "17+"))


def _bucketed(res: Results, source: str, buckets, column: str) -> pd.DataFrame:
    """The histogram ``source`` (analysis.histograms) as the share of pins in each bucket (low, high, name),
    one row per version and shape; ``column`` names a bucket's column ({} is its name). Computed once per
    results and source."""
    def compute():
        h = histograms(res, source)
        if h.empty:
            return pd.DataFrame(columns=["version", "shape"])
        rows = []
        for (version, label), g in h[["version", "label", "value", "pins"]].groupby(["version", "label"], sort=False):
            v, p = g["value"].to_numpy(), g["pins"].to_numpy()
            total = p.sum()
            row = {"version": version, "shape": label}
            for lo, hi, name in buckets:
                row[column.format(name)] = f"{p[(v >= lo) & (v <= hi)].sum() / total:.1%}"
            rows.append(row)
        return pd.DataFrame(rows)
    return memo(res, f"buffer_pins.bucketed {source} {column}", compute)


def held_buckets(res: Results) -> pd.DataFrame:
    """The share of new pins by the buffers then held (this one included), bucketed, per version and shape."""
    return _bucketed(res, "held_at_pin", HELD_BUCKETS, "held {}")


def _with_ci(r: float, lo: float, hi: float) -> str:
    if np.isnan(r):
        return ""
    return f"{r:.2f}" if np.isnan(lo) else f"{r:.2f} [{lo:.2f}, {hi:.2f}]"


def shape_display(res: Results) -> pd.DataFrame:
    """shape_table with each ratio and its interval in one cell, for the page."""
    t = shape_table(res)
    if t.empty:
        return t
    out = t[["version", "kind_label", "pattern"]].copy()
    for name in ("step", "edge", "growth"):
        out[name] = [_with_ci(r, lo, hi) for r, lo, hi in zip(t[name], t[f"{name}_lo"], t[f"{name}_hi"])]
    out["source"] = [f"{a:.2f} / {b:.2f}" if not np.isnan(a) else "" for a, b in zip(t["source_step"], t["source_growth"])]
    return out


def relative_curve(res: Results, kind: str) -> pd.DataFrame:
    """Each N's time over N = 1's, divided within rounds (ratio: geometric mean and 95% interval), per version and
    pattern of ``kind``; with the thread's own table, divided the same way, as one more line (its benchmark, fifo)."""
    long = curve_runs(res)
    g = long[long["kind"] == kind]
    rows = []
    for (version, pattern), d in g.groupby(["version", "pattern"], sort=False):
        for n in sorted(d["n"].unique()):
            r, lo, hi, _ = ratio(res, version, kind, pattern, (1, int(n)))
            rows.append({"version": version, "pattern": pattern, "kind_label": KIND_LABELS[kind], "n": int(n),
                         "relative": r, "lo": lo, "hi": hi})
    if kind == THREAD_KIND:
        for pattern in g["pattern"].unique():
            t = SOURCE_NS[pattern]
            rows += [{"version": "thread (master, its author's machine)", "pattern": pattern,
                      "kind_label": KIND_LABELS[kind], "n": n, "relative": v / t[1], "lo": np.nan, "hi": np.nan}
                     for n, v in t.items()]
    return pd.DataFrame(rows)


LOCK_BUCKETS = ((0, 0, "0"), (1, 1, "1"), (2, 2, "2"), (3, 4, "3-4"), (5, 15, "5-15"), (16, 10**9, "16+"))


def lock_buckets(res: Results) -> pd.DataFrame:
    """The share of pins by the content locks taken while the pin was held (the thread's pin, (lock,
    unlock)+, unpin), bucketed, per version and shape."""
    return _bucketed(res, "locks_per_pin", LOCK_BUCKETS, "{} locks")


ARRAY_BASE = "8"  # the array comparison's reference build: upstream's 8 entries, searched linearly


def array_label(spec: str) -> str:
    """An array build's name from its spec: "8", "32", "32 direct" (postgres:18.6+pinbench-src32direct)."""
    m = re.search(r"\+pinbench-src(\d+)([a-z]*)", str(spec))
    if m is None:
        raise ValueError(f"{spec!r} is not an array build (postgres:18.6+pinbench-srcN)")
    return m[1] + (f" {m[2]}" if m[2] else "")


def array_runs(res: Results) -> pd.DataFrame:
    """The ok runs of the array builds: run_id, build (array_label), kind, pattern, instance, window (the
    window_start the runs of one window share; NaN for runs measured one build at a time). Computed once."""
    def compute():
        w = res.wide
        if w.empty or "kind" not in w:
            return pd.DataFrame(columns=["run_id", "build", "kind", "pattern", "instance", "window"])
        w = w[w["kind"].notna() & (w["status"] == "ok") & w["spec"].str.contains(ARRAY_MARK, regex=False)]
        if w.empty:
            return pd.DataFrame(columns=["run_id", "build", "kind", "pattern", "instance", "window"])
        window = w["window_start"] if "window_start" in w else pd.Series(np.nan, index=w.index)
        return pd.DataFrame({"run_id": w["run_id"], "build": w["spec"].map(array_label), "kind": w["kind"],
                             "pattern": w["pattern"], "instance": w["instance"], "window": window}).reset_index(drop=True)
    return memo(res, "buffer_pins.array_runs", compute)


def _array_rounds(res: Results) -> pd.DataFrame:
    """The array runs' calls: one row per run, round and N (run_id, t, n, ns)."""
    def compute():
        runs = array_runs(res)
        s = res.series
        if runs.empty or s.empty:
            return pd.DataFrame(columns=["run_id", "t", "n", "ns"])
        s = s[(s["source"] == "pinbench") & s["run_id"].isin(runs["run_id"]) & s["name"].str.match(r"ns_\d+$")]
        return pd.DataFrame({"run_id": s["run_id"].to_numpy(), "t": s["t"].to_numpy(),
                             "n": s["name"].str[3:].astype(int).to_numpy(), "ns": s["value"].to_numpy()})
    return memo(res, "buffer_pins.array_rounds", compute)


def array_table(res: Results) -> pd.DataFrame:
    """The builds of one source whose arrays differ (18.6: 8 entries, 32, and 32 indexed by buffer number with no
    linear search), on RAW time per operation: per curve (kind, pattern), build and N, each build's time over the
    8-entry build's, divided within each round of a window (the builds called in turn, milliseconds apart), the
    median over the window's rounds, then the geometric mean over the windows with its 95% t interval
    (``paired``). Runs measured one build at a time (no window) are divided unpaired instead: each run's median
    over its rounds, a Welch interval on the logs (``paired`` False). Beside: each build's time (the median over
    its runs of their medians, ns). Computed once per results."""
    return memo(res, "buffer_pins.array_table", lambda: _array_table(res))


def _array_table(res: Results) -> pd.DataFrame:
    runs = array_runs(res)
    calls = _array_rounds(res)
    if runs.empty or calls.empty or ARRAY_BASE not in set(runs["build"]):
        return pd.DataFrame()
    calls = calls.merge(runs, on="run_id")
    per_run = calls.groupby(["run_id", "build", "kind", "pattern", "window", "n"], dropna=False)["ns"].median()
    per_run = per_run.reset_index()
    rows = []
    builds = sorted(runs["build"].unique(), key=lambda b: (int(b.split()[0]), b))
    for (kind, pattern), g in calls.groupby(["kind", "pattern"], sort=False):
        paired = g["window"].notna().all()
        for n in sorted(g["n"].unique()):
            at = g[g["n"] == n]
            base = at[at["build"] == ARRAY_BASE]
            for build in builds:
                if build == ARRAY_BASE:
                    continue
                other = at[at["build"] == build]
                if base.empty or other.empty:
                    continue
                if paired:
                    both = base.merge(other, on=["window", "t"], suffixes=("_a", "_b"))
                    ratios = (both["ns_b"] / both["ns_a"]).groupby(both["window"]).median().to_numpy()
                    r, lo, hi = geometric_ci(ratios) if len(ratios) > 1 else (
                        (float(ratios[0]), np.nan, np.nan) if len(ratios) else (np.nan,) * 3)
                    units = len(ratios)
                else:
                    pr = per_run[(per_run["kind"] == kind) & (per_run["pattern"] == pattern) & (per_run["n"] == n)]
                    a = pr[pr["build"] == ARRAY_BASE]["ns"].to_numpy()
                    b = pr[pr["build"] == build]["ns"].to_numpy()
                    r, lo, hi = stats.unpaired_ratio_ci(b, a)
                    units = min(len(a), len(b))
                pr = per_run[(per_run["kind"] == kind) & (per_run["pattern"] == pattern) & (per_run["n"] == n)]
                rows.append({"kind": kind, "kind_label": KIND_LABELS[kind], "pattern": pattern, "n": int(n),
                             "build": build, "base": ARRAY_BASE, "ratio": r, "lo": lo, "hi": hi, "units": units,
                             "paired": bool(paired),
                             "ns_base": float(pr[pr["build"] == ARRAY_BASE]["ns"].median()),
                             "ns_build": float(pr[pr["build"] == build]["ns"].median()),
                             "ratio_text": _with_ci(r, lo, hi)})
    return pd.DataFrame(rows)


def array_witness(res: Results, kind: str = THREAD_KIND, n: int = 19) -> pd.DataFrame:
    """What the array builds' runs at ``n`` touched, per build and pattern: the fewest distinct buffers any run
    held, the fewest distinct buffer numbers mod 32 among them (the entries an array of 32 indexed by buffer number
    keeps), the most of the loop's buffers falling in a held one's slot, and the runs and windows (NaN columns for
    runs stored before the witness)."""
    runs = array_runs(res)
    w = res.wide.set_index("run_id") if len(res.wide) else pd.DataFrame()
    out = []
    for (build, pattern), g in runs[runs["kind"] == kind].groupby(["build", "pattern"], sort=False):
        rows = w.loc[g["run_id"]] if len(w) else pd.DataFrame()

        def col(name, how):
            c = f"w_{name}_{n}"
            return float(getattr(rows[c], how)()) if c in rows and rows[c].notna().all() else np.nan
        out.append({"build": build, "pattern": pattern, "runs": len(g), "windows": int(g["window"].nunique()),
                    "held": col("held_buffers", "min"), "slots32": col("held_slots32", "min"),
                    "in_slots32": col("touched_in_held_slots32", "max")})
    return pd.DataFrame(out)


def witness_columns(res: Results, kind: str) -> pd.DataFrame:
    """The ok curve runs of ``kind`` (released builds), one row per run and N: version, pattern, n and what its
    calls' loops touched (held, blocks, buffers, repeats: the share of operations that pinned the previous one's
    buffer again, moved); NaN where the runs were stored before the witness."""
    def compute():
        w = res.wide
        if w.empty or "kind" not in w:
            return pd.DataFrame()
        w = w[(w["kind"] == kind) & (w["status"] == "ok") & ~w["spec"].str.contains(ARRAY_MARK, regex=False)]
        versions = _version(w)  # once: a frame built per row and N took 80 of the claims' 99 s
        rows = []
        names = ("held_buffers", "touched_blocks", "touched_buffers", "repeats", "moved")
        ns = sorted(int(c[3:]) for c in w.columns if c.startswith("ns_") and c[3:].isdigit())
        for i, r in w.iterrows():
            for n in ns:
                if pd.isna(r.get(f"ns_{n}")):
                    continue
                rows.append({"version": versions.loc[i], "pattern": r["pattern"], "n": n,
                             "run_id": r["run_id"], "ops": r["ops"], "calls": r["calls"],
                             "loop_blocks": r["loop_blocks"], "blocks": max(ns) + r["loop_blocks"],
                             **{k: r.get(f"w_{k}_{n}", np.nan) for k in names}})
        return pd.DataFrame(rows)
    return memo(res, f"buffer_pins.witness_columns {kind}", compute)


def overflow_ns(res: Results, kind: str = THREAD_KIND, pattern: str = "random", pair: tuple[int, int] = (7, 8)) -> pd.DataFrame:
    """Per version: what the operation's pin costs more once the array is full, ns(pair[1]) - ns(pair[0])
    subtracted within each round of a run, the median over its rounds, then the mean over runs with its 95%
    interval (with 8 held the array is full: the operation's pin probes the overflow table)."""
    def compute():
        runs = _curve_run_table(res, False)
        wide = _pinbench_rounds(res, False)
        a, b = f"ns_{pair[0]}", f"ns_{pair[1]}"
        if runs.empty or a not in wide or b not in wide:
            return pd.DataFrame(columns=["version", "ns", "lo", "hi", "runs"])
        per = (wide[b] - wide[a]).dropna().groupby("run_id").median()
        sel = runs[(runs["kind"] == kind) & (runs["pattern"] == pattern)].assign(d=lambda t: t["run_id"].map(per))
        rows = []
        for version, g in sel.dropna(subset=["d"]).groupby("version", sort=False):
            m, lo, hi = stats.mean_ci(g["d"]) if len(g) > 1 else (float(g["d"].iloc[0]), np.nan, np.nan)
            rows.append({"version": version, "ns": m, "lo": lo, "hi": hi, "runs": len(g)})
        return pd.DataFrame(rows)
    return memo(res, f"buffer_pins.overflow_ns {kind} {pattern} {pair}", compute)


def cold_over_warm(res: Results, ns=(1, 8, 100)) -> pd.DataFrame:
    """Per version and N: the cold operation's time over the warm one's timed right after it (N held, random
    order), divided within each round and the median taken over the run's rounds; the geometric mean over
    runs with its 95% interval."""
    rows = []
    for n in ns:
        rr = round_ratios(res, f"ns_{n}", f"warm_{n}")
        rr = rr[rr["kind"] == "hold_cold"]
        for version, g in rr.groupby("version", sort=False):
            if len(g) < 2:
                continue
            r, lo, hi = geometric_ci(g["ratio"])
            rows.append({"version": version, "n": n, "ratio": r, "lo": lo, "hi": hi, "runs": len(g),
                         "ratio_text": _with_ci(r, lo, hi)})
    out = pd.DataFrame(rows)
    return out.sort_values(["version", "n"], key=_order).reset_index(drop=True) if len(out) else out


# --- the overflow table alone (pinbench_hash) ------------------------------------------------------------------

HASH_BASE = "identity"  # the thread's v1: the buffer number as its own hash


def hash_runs(res: Results) -> pd.DataFrame:
    """The ok runs of the overflow table alone (HashPoint: they carry a ``stride``): run_id, version, pattern,
    instance. Computed once per results."""
    def compute():
        w = res.wide
        if w.empty or "stride" not in w:
            return pd.DataFrame(columns=["run_id", "version", "pattern", "instance"])
        w = w[w["stride"].notna() & (w["status"] == "ok")]
        return pd.DataFrame({"run_id": w["run_id"], "version": _version(w), "pattern": w["pattern"],
                             "instance": w["instance"]}).reset_index(drop=True)
    return memo(res, "buffer_pins.hash_runs", compute)


def hash_table(res: Results) -> pd.DataFrame:
    """Per version, key pattern and N held: murmurhash32's time per pin and release over the identity's, divided
    within each round of a run (the two called in turn), the median over its rounds, then the geometric mean over
    runs with its 95% interval; each hash's time (the median over runs of their medians, ns) and the table's shape
    once its keys were in (buckets, growths while the held keys went in, the farthest and mean distance of a held
    entry from its hash's bucket, the FIFO key's). Computed once per results."""
    return memo(res, "buffer_pins.hash_table", lambda: _hash_table(res))


def _hash_table(res: Results) -> pd.DataFrame:
    runs = hash_runs(res)
    s = res.series
    if runs.empty or s.empty:
        return pd.DataFrame()
    s = s[(s["source"] == "pinbench") & s["run_id"].isin(runs["run_id"])]
    wide = s.pivot_table(index=["run_id", "t"], columns="name", values="value")
    w = res.wide.set_index("run_id")
    rows = []
    ns = sorted({int(c.split("_")[1]) for c in wide.columns if c.startswith(HASH_BASE + "_")})
    for (version, pattern), g in runs.groupby(["version", "pattern"], sort=False):
        for n in ns:
            a, b = f"{HASH_BASE}_{n}", f"murmur_{n}"
            if a not in wide or b not in wide:
                continue
            sub = wide.loc[wide.index.get_level_values("run_id").isin(g["run_id"])]
            per_run = (sub[b] / sub[a]).dropna().groupby(level="run_id").median()
            if per_run.empty:
                continue
            r, lo, hi, units = _over_runs(per_run.to_numpy())
            at = w.loc[g["run_id"]]
            row = {"version": version, "pattern": pattern, "n": n, "ratio": r, "lo": lo, "hi": hi, "runs": units,
                   "ratio_text": _with_ci(r, lo, hi)}
            for h in ("identity", "murmur"):
                med = sub[f"{h}_{n}"].groupby(level="run_id").median()
                row[f"{h}_ns"] = float(med.median())
                for k in ("size", "grows", "max_dib", "mean_dib", "fifo_dib"):
                    c = f"w_{h}_{k}_{n}"
                    row[f"{h}_{k}"] = float(at[c].max()) if c in at else np.nan
            rows.append(row)
    out = pd.DataFrame(rows)
    return out.sort_values(["version", "pattern", "n"], key=_order).reset_index(drop=True) if len(out) else out


# --- what the probe saw of I/O and of an array of 32 indexed by buffer number ------------------------------------

def query_pin_runs(res: Results) -> pd.DataFrame:
    """pin_runs of the query shapes (queries.QUERY_SHAPES), without the backend's own writes (pinbench_flush)."""
    from dbexp.chapters.buffer_pins.queries import QUERY_SHAPES

    w = pin_runs(res)
    return w[w["shape"].isin(QUERY_SHAPES)] if len(w) else w


IO_FROM = 16  # StartBufferIO remembers the I/O in the resource owner from 16 on (ResourceOwnerRememberBufferIO)


def io_table(res: Results) -> pd.DataFrame:
    """Per version and shape (the writes of pinbench_flush included): runs, shared blocks hit, read and written
    (EXPLAIN's buffers, planning's added), and the StartBufferIO calls the probe counted for reads and for writes,
    summed over the runs; ``resowner``: whether the version's StartBufferIO remembers the I/O in the resource
    owner (16 and later). Runs stored before the probe counted StartBufferIO are left out."""
    w = pin_runs(res)
    if w.empty or "io_starts_read" not in w:
        return pd.DataFrame()
    w = _in_order(w[w["io_starts_read"].notna()])
    if w.empty:
        return pd.DataFrame()
    agg = w.groupby(["version", "label"], sort=False).agg(
        runs=("run_id", "count"), hit=("blocks_hit", "sum"), read=("blocks_read", "sum"),
        written=("blocks_written", "sum"), io_read=("io_starts_read", "sum"), io_write=("io_starts_write", "sum"),
        cold=("cold", "max"), shape=("shape", "first")).reset_index()
    agg["resowner"] = agg["version"].map(lambda v: int(str(v).split(".")[0]) >= IO_FROM)
    return agg


def slot_shares(res: Results) -> pd.DataFrame:
    """Per version, the query shapes' new pins whose buffer number modulo 32 a buffer the backend already held had
    (the pins an array of 32 entries indexed by buffer number could not keep in their slot), of all new pins, with
    the exact (Clopper-Pearson) 95% interval; runs stored before the probe counted slots are left out."""
    w = query_pin_runs(res)
    if w.empty or "slot32_taken" not in w:
        return pd.DataFrame()
    w = w[w["slot32_taken"].notna()]
    rows = []
    for version, g in w.groupby("version", sort=False):
        k, n = int(g["slot32_taken"].sum()), int(g["pins"].sum())
        lo, hi = stats.proportion_ci(k, n)
        rows.append({"version": version, "taken": k, "pins": n, "share": k / n, "lo": lo, "hi": hi,
                     "runs": len(g)})
    return pd.DataFrame(rows)


def share_text(k: int, n: int) -> str:
    """``k`` of ``n`` as a share with its exact 95% interval, printed with the digits that tell its ends apart
    ("99.43% [99.42%, 99.44%]"); a share of all or none says so with the interval's one open end ("all 300;
    95% interval from 98.8%")."""
    lo, hi = stats.proportion_ci(k, n)
    if k == n:
        return f"all {n:,}; 95% interval from {_digits(lo, lo, 1.0)}"
    if k == 0:
        return f"none of {n:,}; 95% interval up to {_digits(hi, 0.0, hi)}"
    return f"{_digits(k / n, lo, hi)} [{_digits(lo, lo, hi)}, {_digits(hi, lo, hi)}]"


def _digits(x: float, lo: float, hi: float) -> str:
    """``x`` as a percentage with the fewest decimals (1 to 6) at which ``lo`` and ``hi`` print apart."""
    for d in range(1, 7):
        if f"{lo:.{d}%}" != f"{hi:.{d}%}":
            return f"{x:.{d}%}"
    return f"{x:.6%}"


def sequential_by_n(res: Results, kind: str = THREAD_KIND) -> pd.DataFrame:
    """Per version and N: the curve's sequential time over its random time (``kind``, each run's fastest call; the
    two orders are runs of their own, so unpaired: a Welch interval on the logs), beside the thread's own ratio at
    that N (its table; NaN where it has none)."""
    long = curve_runs(res)
    c = long[long["kind"] == kind]
    rows = []
    for (version, n), g in c.groupby(["version", "n"], sort=False):
        seq, rnd = g[g["pattern"] == "sequential"]["ns"], g[g["pattern"] == "random"]["ns"]
        if len(seq) < 2 or len(rnd) < 2:
            continue
        r, lo, hi = stats.unpaired_ratio_ci(seq.to_numpy(), rnd.to_numpy())
        src = SOURCE_NS["sequential"].get(n, np.nan) / SOURCE_NS["random"].get(n, np.nan)
        rows.append({"version": version, "n": int(n), "ratio": r, "lo": lo, "hi": hi, "runs": min(len(seq), len(rnd)),
                     "source": src, "ratio_text": _with_ci(r, lo, hi)})
    return pd.DataFrame(rows)


IO_KINDS = ("warm queries", "cold scans", "backend's writes")


def io_summary(res: Results) -> pd.DataFrame:
    """io_table summed per version over what ran: the warm runs of the query shapes, the cold scans, the backend's own
    writes (pinbench_flush): blocks hit, read and written, and StartBufferIO's read and write starts."""
    t = io_table(res)
    if t.empty:
        return t
    what = np.where(t["shape"] == "flush", IO_KINDS[2], np.where(t["cold"].astype(bool), IO_KINDS[1], IO_KINDS[0]))
    g = t.assign(runs=what).groupby(["version", "runs"], sort=False)[["hit", "read", "written", "io_read",
                                                                      "io_write"]].sum().reset_index()
    g["_k"] = g["runs"].map(IO_KINDS.index)
    return g.sort_values(["version", "_k"], key=_order, kind="stable").drop(columns="_k").reset_index(drop=True)


def with_measurement(res: Results, value: str) -> Results:
    """``res`` with only the runs that measured ``value`` (a column of the runs' measurements): what this machine's
    run can be set beside the published one's on (dbexp.book.charts.beside_published)."""
    import dataclasses

    w = res.wide
    keep = w[value].notna() if value in w else pd.Series(False, index=w.index)
    return dataclasses.replace(res, wide=w[keep].reset_index(drop=True))
