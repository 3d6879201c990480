"""The claims table: every entry of the chapter's ledger (claims.yaml), each tested one with its verdict
computed from the runs (verdict rules: dbexp.experiments.verdicts) and its witness, what the runs' own
loops and probes saw that shows the claim's mechanism happened in them: the buffers the benchmark held and
pinned (the pinbench functions return them with each time), the pins and content locks the uprobes counted,
the blocks a cold scan read, the caches a cold walk exceeds, the windows that paired the array builds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dbexp.chapters.buffer_pins.analysis import (GROWTH, IO_FROM, KIND_LABELS, SOURCE_NS, STEP, THREAD_KIND,
                                                 array_runs, array_table, array_witness, curve_runs, hash_table,
                                                 histograms, io_table, overflow_ns, pin_table, pooled_share,
                                                 query_pin_runs, sequential_by_n, shape_table, share_text, slot_shares,
                                                 source_ratio, witness_columns)
from dbexp.experiments import claims_ledger, stats, verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import PGHACKERS_PINS as THREAD

MOST = 0.9  # "the vast majority": at least 90% of new pins, the interval's low end above it
HERE = "below"
REPEATED = 0.99  # a FIFO of one buffer: at least this share of its timed pins were of the previous one's buffer
ARRAY_AT = 19  # the array claim's N: more held than 8 entries keep, fewer than 32
SLOT_MISS = 0.03  # the thread's share of lookups an array indexed by buffer number & 31 would miss ("~3%")
GROW_MAX_DIB = 25  # simplehash's SH_GROW_MAX_DIB: an insert that probes further grows the table (if 10% full)
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
    w = query_pin_runs(res)
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


def prefetch_witness(res: Results) -> verdicts.Witness:
    """The cold sequential scans read their blocks from disk (a read stream then has reads to look ahead for)."""
    t = query_pin_runs(res)
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
    """Sequential over random at every N of the thread's table, per version, each against the thread's own ratio at
    that N (below 1 at every N but 988, where its table has sequential 453.61 against random 445.75 ns)."""
    t = sequential_by_n(res, THREAD_KIND)
    kind = THREAD_KIND
    if t.empty:
        t, kind = sequential_by_n(res, "cycle"), "cycle"
    wit = fifo_witness(res)
    t = t[t["n"].isin(list(SOURCE_NS["random"]))] if len(t) else t
    if t.empty:
        return "", verdicts.NOT_MEASURED, grouped(wit)
    cells, vs = [], []
    for n, g in t.groupby("n", sort=True):
        fig = float(g["source"].iloc[0])
        lo_row, hi_row = g.loc[g["ratio"].idxmin()], g.loc[g["ratio"].idxmax()]
        span = (lo_row["ratio_text"] if lo_row["version"] == hi_row["version"] else
                f"{lo_row['ratio_text']} ({lo_row['version']}) to {hi_row['ratio_text']} ({hi_row['version']})")
        cells.append(f"{n:,} (thread {fig:.2f}): {span}")
        for _, r in g.iterrows():
            vs.append(verdicts.witnessed(verdicts.magnitude(r["lo"], r["hi"], fig, fig, point=r["ratio"],
                                                            n=int(r["runs"])),
                                         wit.get(r["version"], wit.get(""))))
    return (f"{KIND_LABELS[kind]}: sequential over random at each N, the versions' lowest and highest: "
            + "; ".join(cells), _tally(vs) + " (versions and N)", grouped(wit))


def _tally(vs: list[str]) -> str:
    """verdicts.combine over many cells (versions and N), each "not resolved (...)" said once without its hint:
    what would resolve one cell is in no other."""
    hint = verdicts.not_resolved("its interval reaches both sides")
    return verdicts.combine([hint if verdicts.category(v) == "not resolved" else v for v in vs])


def _share_claim(res: Results, source: str, keep, what: str) -> tuple[str, str, float, float]:
    k, n = pooled_share(res, source, keep)
    if not n:
        return "", verdicts.NOT_MEASURED, np.nan, np.nan
    low, high = stats.proportion_ci(k, n)
    return f"{k:,} of {n:,} {what} ({share_text(k, n)})", "", low, high


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


def _repeated_cost(res: Results):
    """What a pin-lock-unlock-unpin sequence pays once its pin's lookup leaves the array for the overflow table: with
    8 held (the array full) over 7, subtracted within each round of a run (analysis.overflow_ns on *N held, locked*),
    per version; the thread's remark agrees where the added time is resolved above 0."""
    o = overflow_ns(res, "hold_lock")
    e = shape_table(res)
    e = e[(e["kind"] == "hold_lock") & (e["pattern"] == "random")].set_index("version") if len(e) else e
    wit = _hold_witness(res, "hold_lock", (7, 8))
    if o.empty:
        return "", verdicts.not_measured("no run of N held, locked at 7 and 8 held"), grouped(wit)
    cells, vs = [], []
    for _, r in o.iterrows():
        ratio = e.loc[r["version"], "edge"] if r["version"] in e.index else np.nan
        edge = f" ({ratio:.2f}x)" if not np.isnan(ratio) else ""
        cells.append(f"{r['version']} {_ci(r['ns'], r['lo'], r['hi'])} ns{edge}")
        vs.append(verdicts.witnessed(verdicts.direction(r["lo"], r["hi"], r["ns"], int(r["runs"])),
                                     wit.get(r["version"], wit.get(""))))
    return ("pin, share lock, unlock and release of one of 64 other buffers (N held, locked, random order): the time "
            "8 held add over 7, when the pin's lookup misses the full array and probes the overflow table: "
            + ", ".join(cells), verdicts.combine(vs), grouped(wit))


def _hold_witness(res: Results, kind: str, ns: tuple[int, ...]) -> dict[str, verdicts.Witness]:
    """Per version, whether its runs of ``kind`` held N distinct buffers at each of ``ns`` through their loops and
    read the same other blocks, none moving."""
    t = witness_columns(res, kind)
    if t.empty or t["held_buffers"].isna().all():
        return {"": verdicts.witness(False, f"no run of {KIND_LABELS.get(kind, kind)} with the witness of its loops")}
    t = t[t["n"].isin(ns)]
    out = {}
    for version, g in t.groupby("version", sort=False):
        held = bool((g["held_buffers"] == g["n"]).all())
        moved = int(g["moved"].max())
        out[version] = verdicts.witness(held and moved == 0, (
            f"held {'N' if held else 'not always N'} distinct buffers at N = {', '.join(str(n) for n in ns)} while "
            f"{_n(g['touched_blocks'].max())} other blocks were pinned in turn ({moved} moved)"))
    return out


def _hash_witness(res: Results, pattern: str, mixed_worse: bool) -> dict[str, verdicts.Witness]:
    """Per version, the tables of the overflow-table runs of ``pattern``: the keys all in (N + 1 of them), and the
    mechanism's sign: with keys stride apart the identity's entries sit far from their buckets where murmur's do
    not (``mixed_worse`` False); with the buffers of neighbouring blocks the identity puts every entry in its own
    bucket (True)."""
    t = hash_table(res)
    t = t[t["pattern"] == pattern] if len(t) else t
    if t.empty:
        return {"": verdicts.witness(False, f"no run of the overflow table alone with {pattern} keys in these results")}
    out = {}
    for version, g in t.groupby("version", sort=False):
        top = g.loc[g["n"].idxmax()]
        if mixed_worse:
            ok = bool((g["identity_max_dib"] == 0).all())
            what = (f"{pattern} keys: with the identity every held entry sat in its own bucket (farthest "
                    f"{_n(g['identity_max_dib'].max())}), with murmurhash32 up to {_n(g['murmur_max_dib'].max())} "
                    "buckets from it")
        else:
            ok = bool((g["identity_mean_dib"] > g["murmur_mean_dib"]).all())
            what = (f"keys {pattern}: at {_n(top['n'])} held the identity's entries sat {top['identity_mean_dib']:.1f} "
                    f"buckets from their own on average (farthest {_n(top['identity_max_dib'])}), murmurhash32's "
                    f"{top['murmur_mean_dib']:.1f} (farthest {_n(top['murmur_max_dib'])})")
        out[version] = verdicts.witness(ok, what)
    return out


def _hash_claim(res: Results, pattern: str, slower: str):
    """One hash's time over the other's per version and N for keys of ``pattern``: ``slower`` names the hash the
    claim says is slower (identity: its bits are not mixed; murmur: it costs more on sequential buffers); agrees
    (direction only) where the ratio's interval lies on the claim's side of 1."""
    t = hash_table(res)
    t = t[t["pattern"] == pattern] if len(t) else t
    wit = _hash_witness(res, pattern, slower == "murmur")
    if t.empty:
        return "", verdicts.not_measured(f"no run of the overflow table alone with {pattern} keys"), grouped(wit)
    cells, vs = [], []
    for version, g in t.groupby("version", sort=False):
        parts = []
        for _, r in g.iterrows():
            if slower == "murmur":
                ratio, lo, hi = r["ratio"], r["lo"], r["hi"]
            else:  # identity over murmur: the reciprocal of the stored ratio
                ratio, lo, hi = 1 / r["ratio"], 1 / r["hi"], 1 / r["lo"]
            parts.append(f"{_n(r['n'])}: {_ci(ratio, lo, hi)}")
            vs.append(verdicts.witnessed(verdicts.direction(lo - 1, hi - 1, ratio - 1, int(r["runs"])),
                                         wit.get(version, wit.get(""))))
        cells.append(f"{version} " + ", ".join(parts))
    what = ("identity over murmurhash32" if slower == "identity" else "murmurhash32 over identity")
    keys = {"stride": "keys 1,024 apart (differing only above their low 10 bits)",
            "sequential": "the buffers of neighbouring blocks", "random": "the buffers of blocks drawn at random"}[pattern]
    return (f"a pin and release of one more key with N held in a simplehash, {what}, {keys}, per N held: "
            + "; ".join(cells), _tally(vs) + " (versions and N)", grouped(wit))


def _growth(res: Results):
    """Keys 1,024 apart, with the identity hash: the table grew (more buckets than murmurhash32's for the same keys)
    and still kept an entry farther than simplehash's SH_GROW_MAX_DIB from its bucket: growth did not fix it."""
    t = hash_table(res)
    t = t[t["pattern"] == "stride"] if len(t) else t
    wit = _hash_witness(res, "stride", False)
    if t.empty:
        return "", verdicts.not_measured("no run of the overflow table alone with keys stride apart"), grouped(wit)
    cells, vs = [], []
    for version, g in t.groupby("version", sort=False):
        cells.append(f"{version} " + ", ".join(
            f"{_n(r['n'])} held: {_n(r['identity_size'])} buckets after {_n(r['identity_grows'])} growths, farthest "
            f"{_n(r['identity_max_dib'])} (murmurhash32: {_n(r['murmur_size'])}, {_n(r['murmur_max_dib'])})"
            for _, r in g.iterrows()))
        grew = g[g["identity_grows"] > g["murmur_grows"]]
        if grew.empty:
            vs.append(verdicts.witnessed(verdicts.not_resolved("no N at which the identity's table grew more than "
                                                               "murmurhash32's"), wit.get(version, wit.get(""))))
            continue
        ok = bool((grew["identity_max_dib"] > GROW_MAX_DIB).all())
        vs.append(verdicts.witnessed(verdicts.holds(ok, "a growth brought every entry within "
                                                        f"{GROW_MAX_DIB} buckets of its own"),
                                     wit.get(version, wit.get(""))))
    return "identity hash, keys 1,024 apart: " + "; ".join(cells), verdicts.combine(vs), grouped(wit)


def _io_witness(res: Results) -> verdicts.Witness:
    """The probe saw StartBufferIO where I/O happened: in the cold scans that read blocks and in the backend's own
    writes (pinbench_flush), on the versions whose StartBufferIO keeps the resource owner (16 and later)."""
    t = io_table(res)
    t = t[t["resowner"]] if len(t) else t
    if t.empty:
        return verdicts.witness(False, f"no pin run of PostgreSQL {IO_FROM} or later whose probe counted "
                                       "StartBufferIO in these results")
    reads, writes = t[t["read"] > 0], t[t["written"] > 0]
    ok = bool(len(reads) and len(writes) and (reads["io_read"] > 0).all() and (writes["io_write"] > 0).all())
    return verdicts.witness(ok, (
        f"the probe on StartBufferIO counted {_n(reads['io_read'].sum())} read starts in runs that read "
        f"{_n(reads['read'].sum())} blocks and {_n(writes['io_write'].sum())} write starts in runs that wrote "
        f"{_n(writes['written'].sum())} ({', '.join(dict.fromkeys(t['version']))}, whose StartBufferIO remembers "
        "the I/O in the resource owner)"))


def _io_hits(res: Results):
    """Hits never start an I/O: in the warm runs of the query shapes, StartBufferIO's read starts stay within the
    blocks read (none where every block was a hit), per version from 16 on."""
    t = io_table(res)
    wit = _io_witness(res)
    t = t[t["resowner"] & ~t["cold"].astype(bool) & (t["shape"] != "flush")] if len(t) else t
    if t.empty:
        return "", verdicts.not_measured(f"no warm pin run of PostgreSQL {IO_FROM} or later with StartBufferIO "
                                         "counted"), wit
    cells, vs = [], []
    for version, g in t.groupby("version", sort=False):
        hit, read, io = int(g["hit"].sum()), int(g["read"].sum()), int(g["io_read"].sum() + g["io_write"].sum())
        cells.append(f"{version}: {_n(io)} I/O starts for {_n(hit)} hits and {_n(read)} blocks read")
        vs.append(verdicts.holds(io <= read, f"{io - read:,} more I/O starts than blocks read"))
    return ("warm runs of the query shapes, StartBufferIO counted: " + "; ".join(cells), verdicts.combine(vs), wit)


def _io_reads_writes(res: Results):
    """Reads and writes start an I/O through StartBufferIO (and so, from 16 on, the resource owner): read starts in the
    cold scans that read blocks, and in the backend's writes a write start per block written."""
    t = io_table(res)
    wit = _io_witness(res)
    t = t[t["resowner"]] if len(t) else t
    reads, writes = (t[t["read"] > 0], t[t["written"] > 0]) if len(t) else (t, t)
    if reads.empty or writes.empty:
        return "", verdicts.not_measured("no run that read (a cold scan) and no run that wrote (pinbench_flush) "
                                         f"on PostgreSQL {IO_FROM} or later"), wit
    cells, vs = [], []
    for version in dict.fromkeys(t["version"]):
        r, w = reads[reads["version"] == version], writes[writes["version"] == version]
        if r.empty or w.empty:
            continue
        ri, rb, wi, wb = (int(r["io_read"].sum()), int(r["read"].sum()), int(w["io_write"].sum()),
                          int(w["written"].sum()))
        cells.append(f"{version}: {_n(ri)} read starts for {_n(rb)} blocks read, {_n(wi)} write starts for {_n(wb)} "
                     "written")
        vs.append(verdicts.holds(ri > 0 and wi >= wb, "a read or a write without its I/O start"))
    if not cells:
        return "", verdicts.not_measured("no version with both a cold scan and the backend's writes"), wit
    return "; ".join(cells), verdicts.combine(vs), wit


def _slots(res: Results):
    """The query shapes' new pins whose slot in an array of 32 indexed by buffer number another held buffer had
    taken (they would go to the hash table), pooled over versions, against the thread's ~3%."""
    t = slot_shares(res)
    wit = pins_witness(res)
    if t.empty:
        return "", verdicts.not_measured("no pin run whose probe counted the slots"), wit
    k, n = int(t["taken"].sum()), int(t["pins"].sum())
    lo, hi = stats.proportion_ci(k, n)
    by = ", ".join(f"{r['version']} {share_text(int(r['taken']), int(r['pins']))}" for _, r in t.iterrows())
    verdict = verdicts.magnitude(lo, hi, SLOT_MISS, SLOT_MISS, reference=0.0)
    return (f"{k:,} of {n:,} new pins found their slot (buffer number mod 32) taken by a held buffer "
            f"({share_text(k, n)}); by version: {by}", verdict, wit)


ALIGNED = "8 aligned"  # 18.6's 8-entry build again, every function aligned to 64 bytes
NO_DEGRADATION = 1.03  # the 3% the thread's moved copy lost, which the alignment took away


def _aligned(res: Results):
    """The same code laid out differently: the 8-entry build compiled with -falign-functions=64 over it as compiled
    by default, on raw time divided within the rounds of shared windows (analysis.array_table), at every N of the
    thread's benchmark: "no degradation" agrees where the interval's upper end stays under NO_DEGRADATION."""
    t = array_table(res)
    t = t[(t["build"] == ALIGNED) & (t["kind"] == THREAD_KIND)] if len(t) else t
    if t.empty:
        why = "no build of 18.6 with -falign-functions=64 in these runs"
        return "", verdicts.not_measured(why), verdicts.witness(False, why)
    paired = bool(t["paired"].all())
    wit = verdicts.witness(paired, (
        f"{int(t['units'].max())} windows called the aligned and the default build in turn, calls milliseconds apart"
        if paired else "the aligned and the default build were timed in runs of their own, not in one window"))
    cells, vs = [], []
    for pattern, g in t.groupby("pattern", sort=False):
        low, high = g.loc[g["ratio"].idxmin()], g.loc[g["ratio"].idxmax()]
        cells.append(f"{pattern}: {low['ratio_text']} (N = {_n(low['n'])}) to {high['ratio_text']} "
                     f"(N = {_n(high['n'])}) over {len(g)} N")
        vs += [verdicts.below_limit(r["lo"], r["hi"], NO_DEGRADATION, "aligned over default")
               for _, r in g.iterrows()]
    return ("18.6 compiled with -falign-functions=64 over 18.6 as compiled by default (8 entries both), raw time of "
            "the thread's benchmark, the lowest and highest N: " + "; ".join(cells),
            _tally(vs) + " (N and orders)", wit)


def _pct(v: float) -> str:
    return f"{100 * v:.2f}%"


def _hit_ratios(res: Results):
    """The microbenchmark's simulated cache hit ratios against a query's, counted the same way on the same server
    starts (counting.hit_table: 1 - misses / data accesses, D1 and LL): per query, it agrees where the thread's curve
    (fifo) at every counted N hits more often than the query at both levels on each of the two starts, disagrees
    where the query hits more often at either level on both starts; the counts of the points compared must agree
    between the starts (the counted part's rule), else not resolved."""
    from dbexp.chapters.buffer_pins import counting

    t = counting.hit_table(res)
    q = t[t["source"] == "query"] if len(t) else t
    f = t[(t["source"] == "pinbench") & (t["kind"] == counting.THREAD_KIND)] if len(t) else t
    if q.empty or f.empty:
        why = "no query counted beside the microbenchmark's curves in these runs"
        return "", verdicts.not_measured(why), verdicts.witness(False, why)
    wit = verdicts.witness(bool(q["witness_ok"].all()), "; ".join(
        f"{r['what']}: {r['buffers_per_statement']:,.1f} shared buffers hit and {r['rows_per_statement']:,.0f} rows "
        f"scanned per statement (EXPLAIN (ANALYZE, BUFFERS)), {int(r['servers'])} starts"
        for _, r in q.iterrows()) + f"; the thread's curve counted at {len(f)} N, "
        f"{', '.join(_n(n) for n in f['n'])}")
    cells, vs = [], []
    starts = [s for s in (0, 1) if f[f"d1_hit_{s}"].notna().all() and q[f"d1_hit_{s}"].notna().all()]
    for _, r in q.iterrows():
        above = {s: all((f[f"{lvl}_hit_{s}"] > r[f"{lvl}_hit_{s}"]).all() for lvl in ("d1", "ll")) for s in starts}
        below = {s: any((f[f"{lvl}_hit_{s}"] <= r[f"{lvl}_hit_{s}"]).any() for lvl in ("d1", "ll")) for s in starts}
        per = ", ".join(f"start {s + 1}: D1 {_pct(r[f'd1_hit_{s}'])}, LL {_pct(r[f'll_hit_{s}'])}" for s in starts)
        cells.append(f"{r['what']} {per}")
        if len(starts) < 2:
            vs.append(verdicts.not_measured("counted on one server start only"))
        elif not (r["agree"] and f["agree"].all()):
            vs.append(verdicts.not_resolved("the counts of the two server starts differ by more than "
                                            f"{counting.AGREE:.1%}"))
        elif all(above.values()):
            vs.append(verdicts.DIRECTION_ONLY)
        elif all(below.values()):
            vs.append(verdicts.disagrees("the query hits as often or more at some N, on both starts"))
        else:
            vs.append(verdicts.not_resolved("the two starts order them differently"))
    thread = "; ".join(
        f"start {s + 1}: D1 {_pct(f[f'd1_hit_{s}'].min())} to {_pct(f[f'd1_hit_{s}'].max())}, "
        f"LL {_pct(f[f'll_hit_{s}'].min())} to {_pct(f[f'll_hit_{s}'].max())}" for s in starts)
    o = t[(t["source"] == "pinbench") & (t["kind"] != counting.THREAD_KIND)]
    other = "; ".join(
        f"{counting.KIND_LABELS.get(k, k)} D1 {_pct(g[['d1_hit_0', 'd1_hit_1']].min().min())} to "
        f"{_pct(g[['d1_hit_0', 'd1_hit_1']].max().max())}" for k, g in o.groupby("kind", sort=False))
    text = ("data accesses that hit callgrind's simulated caches (1 - misses / accesses), PostgreSQL 18.6 stock, "
            f"the same two server starts: the thread's benchmark over its {len(f)} counted N, {thread}; "
            + "; ".join(cells) + (f" (the chapter's other curves, not judged: {other})" if other else ""))
    return text, verdicts.combine(vs), wit


MEASURES = {
    "cache-hit-ratios": _hit_ratios,
    "array-32": _array,
    "step-past-array": lambda res: _curve_claim(res, "step", STEP),
    "growth-to-10000": lambda res: _curve_claim(res, "growth", GROWTH),
    "sequential-cheaper": _sequential,
    "zero-to-two-pinned": _zero_to_two,
    "pin-lock-unlock-unpin": _pin_lock,
    "prefetch-fifo": _prefetch,
    "repeated-access-cost": _repeated_cost,
    "hash-needs-mixing": lambda res: _hash_claim(res, "stride", "identity"),
    "murmur-slower-sequential": lambda res: _hash_claim(res, "sequential", "murmur"),
    "collisions-grow-table": _growth,
    "io-resowner-not-hits": _io_hits,
    "io-resowner-reads-writes": _io_reads_writes,
    "direct-slot-misses": _slots,
    "align-functions": _aligned,
}


def tested(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of a claims table whose ledger entries are ``tested``: the page lists the others once, in the ledger's
    own table of the claims not tested (dbexp.book.tables.untested_claims)."""
    ids = {e["id"] for e in ledger() if e["status"] == "tested"}
    return table[table["id"].isin(ids)].reset_index(drop=True)


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
