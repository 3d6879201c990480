"""The claims table: every entry of the chapter's ledger (claims.yaml), each tested one with its verdict
computed from the runs (verdict rules: dbexp.experiments.verdicts) and its witness, what the runs' own
loops and probes saw that shows the claim's mechanism happened in them: the buffers the benchmark held and
pinned (the pinbench functions return them with each time), the pins and content locks the uprobes counted,
the blocks a cold scan read, the caches a cold walk exceeds, the windows that paired the array builds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dbexp.chapters.buffer_pins.analysis import (GROWTH, KIND_LABELS, STEP, THREAD_KIND, array_runs, array_table,
                                                 array_witness,
                                                 cold_over_warm, curve_runs, histograms, pin_runs, pin_table,
                                                 pooled_share, shape_table, source_ratio, witness_columns)
from dbexp.experiments import claims_ledger, stats, verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import PGHACKERS_PINS as THREAD

MOST = 0.9  # "the vast majority": at least 90% of new pins, the interval's low end above it
HERE = "below"
REPEATED = 0.99  # a FIFO of one buffer: at least this share of its timed pins were of the previous one's buffer
ARRAY_AT = 19  # the array claim's N: more held than 8 entries keep, fewer than 32
ARRAY_BUILD = "32 direct"  # the thread's proposal: 32 entries, the linear search removed
STOCK_32 = "32"  # upstream's array with REFCOUNT_ARRAY_ENTRIES 32, searched linearly


def ledger() -> tuple[dict, ...]:
    return claims_ledger.ledger("buffer_pins")


def _ci(r: float, lo: float, hi: float) -> str:
    return f"{r:.2f}" if np.isnan(lo) else f"{r:.2f} [{lo:.2f}, {hi:.2f}]"


def _n(v) -> str:
    return f"{int(v):,}"


# --- witnesses -----------------------------------------------------------------------------------------------

def fifo_witness(res: Results) -> dict[str, verdicts.Witness]:
    """Per version, whether its runs of the thread's benchmark did what the author describes: N distinct buffers
    held through every timed loop at each N, and one block in one buffer pinned and released again (at least
    REPEATED of the timed pins of the previous operation's buffer), none moved. Where no such run is stored (or
    none with the loops' witness), the cycle runs say what was measured instead."""
    t = witness_columns(res, THREAD_KIND)
    if t.empty or t["held_buffers"].isna().all():
        return {"": _cycle_instead(res)}
    out = {}
    for version, g in t.groupby("version", sort=False):
        if g[["held_buffers", "touched_blocks", "touched_buffers", "repeats", "moved"]].isna().any().any():
            out[version] = verdicts.witness(False, "some of its fifo runs stored no witness of their loops")
            continue
        held = (g["held_buffers"] == g["n"]).all()
        one = (g["touched_blocks"] == 1).all() and (g["touched_buffers"] == 1).all()
        again = g["repeats"].min()
        moved = int(g["moved"].max())
        ok = held and one and again >= REPEATED and moved == 0
        out[version] = verdicts.witness(ok, (
            f"held {'N' if held else 'not always N'} distinct buffers at each N ({_n(g['n'].min())} to "
            f"{_n(g['n'].max())}) and pinned "
            f"{'one block in one buffer' if one else f'up to {_n(g.touched_blocks.max())} blocks'} again and again "
            f"(at least {again:.3%} of timed pins re-pinned the previous one's buffer; {moved} moved)"))
    return out


def grouped(parts: dict[str, verdicts.Witness]) -> verdicts.Witness | None:
    """Several versions' witnesses as one row's, the versions that saw the same named together ("13.23, 15.18:
    ..."); held where any held (verdicts.witnesses' rule: each version's verdict is gated by its own first)."""
    by: dict[tuple[str, bool], list[str]] = {}
    for version, w in parts.items():
        by.setdefault((w.what, w.ok), []).append(version)
    if not by:
        return None
    return verdicts.witness(any(ok for _, ok in by), "; ".join(
        (f"{', '.join(v for v in versions if v)}'s runs: " if any(versions) else "") + what
        for (what, _), versions in by.items()))


def _cycle_instead(res: Results) -> verdicts.Witness:
    """The failed witness of results with no run of the thread's benchmark: what the cycle runs touched (their
    stored witness, or the blocks their parameters walk: min(N x rounds, the table's blocks))."""
    c = witness_columns(res, "cycle")
    if c.empty:
        return verdicts.witness(False, "no run of the thread's benchmark (N held, a FIFO of one buffer) in these runs")
    one = c[c["n"] == c["n"].min()]
    stored = one["touched_blocks"].notna().all()
    walked = (one["touched_blocks"] if stored else
              np.minimum((one["ops"] // one["n"]).clip(lower=1) * one["n"], one["blocks"])).max()
    return verdicts.witness(False, (
        f"no run of the thread's benchmark (N held, a FIFO of one buffer) in these runs: the *pin N, release N* "
        f"runs walk {_n(walked)} distinct blocks at N = {_n(one['n'].iloc[0])}"
        f"{'' if stored else ' (from their parameters; no witness of their loops is stored)'}, not one buffer again"))


def pins_witness(res: Results, locks: bool = False) -> verdicts.Witness:
    """The uprobes counted the measuring backend's pins (and, with ``locks``, its content-lock calls) in every pin
    run, and matched nearly every release to a pin."""
    w = pin_runs(res)
    if w.empty:
        return verdicts.witness(False, "no pin run in these results")
    pins, released, unmatched = w["pins"], w["released"], w["unmatched"]
    ok = bool((pins > 0).all() and (released >= 0.99 * pins).all())
    what = (f"the uprobes on PinBuffer, PinBuffer_Locked and the unpin function counted {_n(pins.sum())} pins and "
            f"{_n(released.sum())} releases of the measuring backend in {len(w)} runs "
            f"(each run above 0; at most {_n(unmatched.max())} releases unmatched per run)")
    if locks:
        lk = w["lock_calls"]
        ok = ok and bool((lk > 0).all())
        what += f", and {_n(lk.sum())} content-lock calls (LockBuffer and its conditional and cleanup forms)"
    return verdicts.witness(ok, what)


def cold_witness(res: Results) -> verdicts.Witness:
    """A cold run's walk before each operation exceeds the server CPU's L2 cache (sizes stored with the run)."""
    w = res.wide
    w = w[w["kind"] == "hold_cold"] if "kind" in w else w.iloc[0:0]
    if w.empty:
        return verdicts.witness(False, "no cold run in these results")
    if "l2_kib" not in w or w["l2_kib"].isna().any():
        return verdicts.witness(False, "the server CPU's cache sizes were not stored with these cold runs: that "
                                       f"their walk of {_n(w['cold_kb'].max())} KiB evicts L1 and L2 is not shown")
    walk, l2 = w["cold_kb"], w["l2_kib"]
    ok = bool((walk > l2).all())
    l1 = f"L1d {_n(w['l1d_kib'].max())} KiB, " if "l1d_kib" in w else ""
    return verdicts.witness(ok, f"the walk before each cold operation, {_n(walk.min())} KiB, "
                                f"{'exceeds' if ok else 'does not exceed'} the server CPU's caches ({l1}"
                                f"L2 {_n(l2.max())} KiB) in {len(w)} runs")


def prefetch_witness(res: Results) -> verdicts.Witness:
    """The cold sequential scans read their blocks from disk (a read stream then has reads to look ahead for)."""
    t = pin_runs(res)
    cold = t[t["cold"].astype(bool) & (t["shape"] == "seq_scan")] if len(t) else t
    if cold.empty:
        return verdicts.witness(False, "no cold sequential scan in these results")
    ok = bool((cold["blocks_read"] > 0).all())
    lo, hi = cold["blocks_read"].min(), cold["blocks_read"].max()
    read = _n(lo) if lo == hi else f"{_n(lo)} to {_n(hi)}"
    return verdicts.witness(ok, f"the {len(cold)} cold sequential scans read {read} blocks from disk each (shared "
                                "buffers and the host's page cache emptied before), the pins held counted by the uprobes")


def array_witness_of(res: Results) -> verdicts.Witness:
    """The 8-entry and the direct-mapped 32-entry builds measured in shared windows, and at ARRAY_AT held the
    direct array's slots keep more of the held pins than an 8-entry array can."""
    w = array_witness(res, THREAD_KIND, ARRAY_AT)
    t = array_table(res)
    if t.empty:
        return verdicts.witness(False, "the builds of one source with arrays of 8 and 32 entries are not in these runs")
    builds = set(array_runs(res)["build"])
    if ARRAY_BUILD not in builds:
        return verdicts.witness(False, (
            f"no build with 32 entries and no linear search in these runs (builds: "
            f"{', '.join(sorted(builds, key=lambda b: (int(b.split()[0]), b)))} entries, upstream's layout, the "
            f"thread's v2 removes the search); {'paired in windows' if t['paired'].all() else 'each build timed in runs of its own, minutes apart, not paired'}"))
    if not t["paired"].all():
        return verdicts.witness(False, "the builds were timed in runs of their own, not called in turn in one window")
    d = w[w["build"] == ARRAY_BUILD]
    if d["slots32"].isna().any():
        return verdicts.witness(False, "the direct build's runs stored no witness of their loops")
    cells = [f"{r['pattern']}: {_n(r['slots32'])} of the {_n(r['held'])} held in the array's slots, the FIFO's buffer "
             f"{'in a held one' if r['in_slots32'] else 'in a slot of its own'}" for _, r in d.iterrows()]
    ok = bool((d["slots32"] > 8).all() and (d["held"] == ARRAY_AT).all())
    return verdicts.witness(ok, (
        f"{int(t['units'].max())} windows called the builds in turn; at {ARRAY_AT} held the 8-entry array keeps 8 of "
        f"{ARRAY_AT + 1} pins (the rest in the hash table), the direct-mapped 32: " + "; ".join(cells)))


# --- measures ------------------------------------------------------------------------------------------------

def _thread_rows(res: Results) -> tuple[pd.DataFrame, str]:
    """shape_table's rows of the thread's benchmark, or of the cycle where no run of it is stored."""
    t = shape_table(res)
    if t.empty:
        return t, THREAD_KIND
    kind = THREAD_KIND if (t["kind"] == THREAD_KIND).any() else "cycle"
    return t[t["kind"] == kind], kind


def _curve_claim(res: Results, name: str, pair: tuple[int, int]):
    """Each version's ratio of the thread's benchmark, per pattern, against the source's (recomputed from its
    table), gated per version by its witness."""
    t, kind = _thread_rows(res)
    wit = fifo_witness(res)
    if t.empty:
        return "", verdicts.NOT_MEASURED, grouped(wit)
    parts, vs = [], []
    for pattern, g in t.groupby("pattern", sort=False):
        fig = source_ratio(pattern, pair)
        cells = []
        for _, r in g.iterrows():
            if np.isnan(r[name]):
                continue
            cells.append(f"{r['version']} {_ci(r[name], r[f'{name}_lo'], r[f'{name}_hi'])}")
            v = (verdicts.magnitude(r[f"{name}_lo"], r[f"{name}_hi"], fig, fig, point=r[name],
                                    n=int(r[f"{name}_runs"])) if r[f"{name}_runs"] > 1
                 else verdicts.not_resolved("one run: no interval"))
            vs.append(verdicts.witnessed(v, wit.get(r["version"], wit.get(""))))
        if cells:
            parts.append(f"{pattern} (source {fig:.2f}): " + ", ".join(cells))
    if not parts:
        return "", verdicts.not_measured(f"no run timed both N = {pair[0]:,} and {pair[1]:,}"), grouped(wit)
    return f"{KIND_LABELS[kind]}: " + "; ".join(parts), verdicts.combine(vs), grouped(wit)


def _sequential(res: Results):
    long = curve_runs(res)
    kind = THREAD_KIND if (long["kind"] == THREAD_KIND).any() else "cycle"
    c = long[(long["kind"] == kind) & (long["n"] == GROWTH[1])]
    wit = fifo_witness(res)
    fig = 497.92 / 587.13
    cells, vs = [], []
    for version, g in c.groupby("version", sort=False):
        seq, rnd = g[g["pattern"] == "sequential"]["ns"], g[g["pattern"] == "random"]["ns"]
        if len(seq) < 2 or len(rnd) < 2:
            continue
        r, lo, hi = stats.unpaired_ratio_ci(seq.to_numpy(), rnd.to_numpy())
        cells.append(f"{version} {_ci(r, lo, hi)}")
        vs.append(verdicts.witnessed(verdicts.magnitude(lo, hi, fig, fig, point=r, n=len(seq)),
                                     wit.get(version, wit.get(""))))
    if not cells:
        return "", verdicts.NOT_MEASURED, grouped(wit)
    return (f"{KIND_LABELS[kind]}: sequential over random at {GROWTH[1]:,} held (source {fig:.2f}): " + ", ".join(cells),
            verdicts.combine(vs), grouped(wit))


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


def _zero_to_two(res: Results):
    """Pooled over every run, and judged per shape and version: a shape agrees where at least 90% of its
    new pins were taken with at most two others held (the interval's low end above 90%)."""
    wit = pins_witness(res)
    text, _, lo, hi = _share_claim(res, "held_at_pin", lambda v: v <= 3, "new pins taken with at most 2 others held")
    if not text:
        return text, verdicts.NOT_MEASURED, wit
    h = histograms(res, "held_at_pin")
    vs, low = [], []
    for (version, label), g in h[["version", "label", "value", "pins"]].groupby(["version", "label"], sort=False):
        value, pins = g["value"].to_numpy(), g["pins"].to_numpy()
        k, n = int(pins[value <= 3].sum()), int(pins.sum())
        vs.append(verdicts.share_at_least(k, n, MOST))
        if vs[-1] == verdicts.DISAGREES:
            low.append(f"{label} ({version}): {k / n:.0%}")
    text += " pooled" + _per_shape(res, "others_le2_share") + (f"; under 90%: {', '.join(low)}" if low else "")
    return text, verdicts.combine(vs) + " (shapes and versions)", wit


def _pin_lock(res: Results):
    wit = pins_witness(res, locks=True)
    text, _, lo, _ = _share_claim(res, "locks_per_pin", lambda v: v >= 1, "pins that took a content lock")
    if not text:
        return text, verdicts.NOT_MEASURED, wit
    again, _, _, _ = _share_claim(res, "locks_per_pin", lambda v: v >= 2, "that took two or more")
    verdict = verdicts.DIRECTION_ONLY if lo > 0.5 else verdicts.disagrees()
    return text + "; " + again + _per_shape(res, "locked_pin_share"), verdict, wit


def _cache(res: Results):
    """One held pin, the caches evicted before each operation over the same operation warm, timed right after it
    in the same run (analysis.cold_over_warm): the remark holds where the cold time is resolved above the warm."""
    wit = cold_witness(res)
    t = cold_over_warm(res, ns=(1,))
    if t.empty:
        return "", verdicts.not_measured("no cold run timed its warm twin in these runs"), wit
    cells = [f"{r['version']} {r['ratio_text']}" for _, r in t.iterrows()]
    vs = [verdicts.direction(r["lo"] - 1, r["hi"] - 1, r["ratio"] - 1, int(r["runs"])) for _, r in t.iterrows()]
    kib = ", ".join(f"{int(k):,}" for k in sorted(res.wide.loc[res.wide["kind"] == "hold_cold", "cold_kb"].unique()))
    return (f"one held pin, caches evicted before each operation (a walk of {kib} KiB) over warm, paired within "
            "runs: " + ", ".join(cells), verdicts.combine(vs), wit)


def _prefetch(res: Results):
    wit = prefetch_witness(res)
    t = pin_table(res)
    if t.empty:
        return "", verdicts.NOT_MEASURED, wit
    cold = t[t["label"].str.startswith("seq scan cold")]
    if cold.empty:
        return "", verdicts.not_measured("no cold sequential scan at this scale"), wit
    cells = [f"{r['version']} {r['label'].split(', ')[1]}: {int(r['held_max'])}" for _, r in cold.iterrows()]
    most = int(cold["held_max"].max())
    verdict = verdicts.count_between(most, 2, 8, "most pins held at once")
    verdict = verdicts.DIRECTION_ONLY if verdict == verdicts.AGREES else verdict
    return "most pins held at once, cold sequential scans: " + ", ".join(cells), verdict, wit


def _array(res: Results):
    """The thread's proposal (32 entries, the linear search removed) against upstream's 8 on raw time per operation,
    divided within the rounds of shared windows (analysis.array_table), on the thread's benchmark at ARRAY_AT held
    (more than 8 entries keep, fewer than 32): it helps where the ratio's interval lies below 1. Beside it where
    both arrays keep every pin (1, 7) and neither does (100), and the stock 32-entry build (linear search kept)."""
    wit = array_witness_of(res)
    t = array_table(res)
    if t.empty:
        return "", verdicts.not_measured("the builds of one source with arrays of 8 and 32 entries are not in these "
                                         "runs"), wit
    t = t[t["kind"] == THREAD_KIND] if (t["kind"] == THREAD_KIND).any() else t
    build = ARRAY_BUILD if (t["build"] == ARRAY_BUILD).any() else STOCK_32
    cells, vs = [], []
    for (kind, pattern), g in t.groupby(["kind", "pattern"], sort=False):
        at = g[g["build"] == build].set_index("n")
        if ARRAY_AT not in at.index:
            continue
        r = at.loc[ARRAY_AT]
        beside = ", ".join(f"{n}: {at.loc[n, 'ratio_text']}" for n in (1, 7, 100) if n in at.index)
        stock = g[(g["build"] == STOCK_32) & (g["n"] == ARRAY_AT)]
        also = (f"; the stock 32 (searched linearly) at {ARRAY_AT}: {stock['ratio_text'].iloc[0]}"
                if build != STOCK_32 and len(stock) else "")
        cells.append(f"{KIND_LABELS[kind]}, {pattern}: at {ARRAY_AT}, {r['ratio_text']} ({beside}){also}")
        vs.append(verdicts.direction(1 - r["hi"], 1 - r["lo"], 1 - r["ratio"], int(r["units"])))
    if not cells:
        return "", verdicts.not_measured(f"N = {ARRAY_AT} is not in the array comparison's runs"), wit
    how = ("raw time per operation, divided within the rounds of windows that called the builds in turn"
           if t["paired"].all() else "raw time per operation, each build's runs on their own (unpaired)")
    name = "32 entries, no linear search" if build == ARRAY_BUILD else "32 entries (linear search kept)"
    return f"{name} over 8, {how}: " + "; ".join(cells), verdicts.combine(vs), wit


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
        w = None
        if e["status"] == "tested":
            measured, verdict, w = MEASURES[e["id"]](res)
        elif e["status"] == "not testable here":
            measured, verdict = "", verdicts.not_testable(e["why"])
        else:
            measured, verdict = "", verdicts.not_measured(e["why"])
        rows.append(verdicts.ClaimRow(THREAD.cite(e["claim"], "thread"), e["conditions"],
                                      HERE if e["status"] == "tested" else "", measured, verdict,
                                      ids=(e["id"],), witness=w))
    return verdicts.table(rows)
