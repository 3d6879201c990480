"""The claims table (verdicts.ClaimRow): each claim of the source with its number and conditions,
this lab's conditions, what was measured here with its interval, and the verdict.

The source (a reading of both engines' code, no measurement, versions not named) gives mechanisms,
not numbers; where it gives one (the midpoint at 3/8, the ring's usage count of at most 1) the
verdict tests it. Whether a hot set is kept is read from the hot table's misses per hot query during
the scan, with an interval over the repeats, beside its residency; hot throughput during the scan is
not a test of eviction here (the scan and the hot sessions share the server's one CPU).

Every row carries the ledger ids it tests (claims.yaml) and its witness (verdicts.Witness): what the runs it
judges stored that shows the claim's mechanism was at work in them. The hot set's rows need it kept first by
the pool's policy as the scan started (InnoDB: in the young sublist, read by LRU position; PostgreSQL: at usage
count 2 or more): the source's hot set is the young region's (seed 000, line 894), and a hot page still in the
old sublist is evicted by any scan, midpoint or not."""

from __future__ import annotations

import dataclasses
import math
import re

import pandas as pd

from dbexp.experiments import stats, steps, verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import KERNELMAKER_BUFFERPOOL

from .analysis import (STORED, WRITTEN, free_after_scan, hot_rate, mechanics, of_variant, per_run, pool_deltas,
                       pool_pages_text, pool_sizes, rings, scan_depths, summary, tidy, usage_counts)
from .chapter import FILLER_SHARE, HOT_KEPT_FIRST, VARIANT_NAMES, WARM_GAP_S, part_of
from .engines.innodb import OLD_MIN_LEN, BufferPool
from .engines.pool_mechanics import FULL_FREE_SHARE
from .engines.postgres import SharedBuffers

RING_LEAK = 0.10  # a ring holds while a scan takes at most this share of the buffers it takes without one
KEPT_MISSES = 0.01  # a hot set is kept while fewer than 1 hot query in 100 misses during the scan
KEPT_RESIDENT = 0.80  # ... and lost wherever less than this share of it stayed in the pool
MIDPOINT, MIDPOINT_BAND = 0.375, 0.02  # the old sublist's share of the LRU list: 3/8, within 2 points
RING_USAGE = 0.95  # "at most 1 through a ring": this share of the big table's buffers at usage count 0 or 1
DEFAULTS = VARIANT_NAMES[0]
DEPTH_DEFAULT = "scan depth at its default"

SOURCE = "a reading of both engines' code (Feb 2026; versions not named), no measurement"


def _nan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _pct(v: float, digits: int = 0) -> str:
    return "—" if _nan(v) else f"{100 * v:.{digits}f}%"


def _ci(point: float, lo: float, hi: float, fmt: str = ".3f") -> str:
    if _nan(point):
        return "—"
    if _nan(lo) or _nan(hi):
        return f"{point:{fmt}} (one repeat: no interval)"
    return f"{point:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def conditions(res: Results, engine: type = BufferPool) -> str:
    """This lab's conditions for ``engine``'s rows, as their 'here' cell starts."""
    w = tidy(res)
    if w.empty:
        return ""
    rate = hot_rate(w)
    load = (f"{rate:,} point selects a second" if rate else "point selects as fast as they could go")
    mine = w[w["flavor"].map(lambda f: part_of(f).engine == engine.engine)]
    hot_mb = float((mine["hot_pages"] * engine.page_bytes).median()) / 2 ** 20 if len(mine) else float("nan")
    pool_mb = int(w["pool_mb"].max())
    pool = (f"a {pool_mb} MiB buffer pool ({pool_pages_text(res)} pages of 16 kB)" if engine is BufferPool else
            f"{pool_mb} MiB of shared buffers ({pool_mb * 2 ** 20 // SharedBuffers.page_bytes:,} buffers of 8 kB)")
    return (f"{pool}; a hot table "
            f"of {int(w['hot_rows'].max()):,} rows ({hot_mb:.1f} MiB) read by {int(w['threads'].max())} sessions "
            f"at {load}; one session reading a {int(w['table_size'].max()):,}-row table in a loop for "
            f"{int(w['scan_s'].max())} s; the server on one CPU; {int(w.groupby('point_key').size().max())} repeats")


def kept(misses_lo: float, misses_hi: float, resident: float) -> str:
    """A hot set kept through the scan: fewer than KEPT_MISSES misses per hot query (the whole
    interval over the repeats below it); lost: more (the whole interval above), or less than
    KEPT_RESIDENT of it resident at some second; else not resolved."""
    if _nan(resident) and (_nan(misses_lo) or _nan(misses_hi)):
        return verdicts.NOT_MEASURED
    if not _nan(resident) and resident < KEPT_RESIDENT:
        return verdicts.disagrees(f"the hot table fell below {KEPT_RESIDENT:.0%} resident at some second")
    return verdicts.below_limit(misses_lo, misses_hi, KEPT_MISSES, "misses per hot query")


def _protected(with_it: str, without_it: str | None) -> str:
    """A defence kept the hot set (``with_it``, a kept() verdict) where the same scan without it lost the
    hot set (``without_it``); where it was not lost without the defence either, the hot set was too hot
    for the runs to show what the defence does."""
    if with_it != verdicts.AGREES or without_it is None or without_it.startswith(verdicts.DISAGREES):
        return with_it
    return verdicts.not_resolved("without the defence the hot set was not lost either: these runs cannot show "
                                 "what it protects")


def _lru_too_short(r) -> bool:
    """Whether the LRU list fell below InnoDB's minimum for an old sublist in some second of the scan."""
    return not _nan(getattr(r, "lru_pages_min", float("nan"))) and r.lru_pages_min < OLD_MIN_LEN


def _difference(res: Results, variant: str, base: str, server: str, column: str = "misses_per_q_scan"):
    """Mean of ``column`` for ``variant`` minus ``base`` on one server, Welch interval over repeats."""
    r = per_run(res)
    if r.empty or column not in r:
        return (float("nan"),) * 3
    a = r[(r["series_name"] == server) & (r["variant"] == variant)][column]
    b = r[(r["series_name"] == server) & (r["variant"] == base)][column]
    return stats.difference_ci(a, b)


def _kept_cell(r) -> str:
    cell = (f"{r.series_name}: {_ci(r.misses_per_q, r.misses_low, r.misses_high)} misses per hot query "
            f"({r.hot_reads_s_scan:,.0f}/s), {_pct(r.hot_resident_scan)} of the hot table resident at least")
    young = getattr(r, "hot_young_scan_min", float("nan"))
    if not _nan(getattr(r, "kept_at_scan_min", float("nan"))) and not _nan(young):
        cell += (f"; {_span(r.kept_at_scan_min, r.kept_at_scan_max)} of its {r.hot_pages:,.0f} pages young at the "
                 f"scan's start, {young:,.0f} at least during it")
    return cell


def _span(lo: float, hi: float) -> str:
    return f"{lo:,.0f}" if round(lo) == round(hi) else f"{lo:,.0f}-{hi:,.0f}"


def start_design(res: Results) -> str:
    """How the runs made the hot set kept first before the scan, as the 'here' cells say it: the filler table,
    the two reads and the check by position of the runs that stored it (issue 43), else the older design's."""
    r = per_run(res)
    if len(r) and (r["at_scan_from"] == STORED).any():
        return (f"each run began with the hot table read twice, {WARM_GAP_S:g} s apart, after InnoDB had read a filler "
                f"table of {FILLER_SHARE:g} times its pool (until InnoDB evicts a page it makes none young), and "
                f"checked at the scan's start: at least {HOT_KEPT_FIRST:.0%} of its pages in the young sublist, by "
                "LRU position (PostgreSQL: at usage count 2 or more)")
    return ("each run began with the hot table read twice after a restart, its place in the LRU list not checked "
            "(runs measured before issue 43)")


def start_witness(res: Results, server: str, variants) -> tuple[verdicts.Witness, verdicts.Witness]:
    """Whether the hot set was kept first by the pool's policy as the scan started, in every run of ``server`` and
    ``variants`` (per_run's kept_at_scan: InnoDB's young sublist by LRU position, PostgreSQL's usage count 2 or
    more, at least HOT_KEPT_FIRST of the hot table's pages): (the witness in full, the same in a few words for the
    server's verdict)."""
    r = per_run(res)
    g = r[(r["series_name"] == server) & r["variant"].astype(str).isin(list(variants))] if len(r) else r
    if g.empty:
        none = verdicts.witness(False, "no run of these variants")
        return none, none
    part = part_of(g["flavor"].iloc[0])
    words = part.kept_first_words
    n = len(g)
    known = g["kept_at_scan"].notna()
    if not known.all():
        why = ("MariaDB leaves INNODB_BUFFER_PAGE_LRU.IS_OLD empty, and these runs, measured before issue 43, did not "
               "read the LRU position" if part.kept_first == "young" and not part.fills_is_old else
               "these runs did not store it")
        what = f"where the hot table stood in the pool as the scan started is not known in {n - int(known.sum())} of {n} runs ({why})"
        return verdicts.witness(False, what), verdicts.witness(False, "the hot set's place at the scan's start not stored")
    ok = g["kept_at_scan"] >= HOT_KEPT_FIRST * g["hot_pages"]
    stored = int((g["at_scan_from"] == STORED).sum())
    whence = ("stored at the scan's start" if stored == n else "the last sample before the scan" if not stored
              else f"stored at the scan's start in {stored} of {n} runs, else the last sample before it")
    what = (f"{_span(g['kept_at_scan'].min(), g['kept_at_scan'].max())} of the hot table's {g['hot_pages'].median():,.0f} "
            f"pages {words} at the scan's start in {n} runs ({whence})")
    if part.kept_first == "young" and g["old_at_scan"].notna().any():
        what += f", {_span(g['old_at_scan'].min(), g['old_at_scan'].max())} in the old sublist"
    if not ok.all():
        what += (f": under {HOT_KEPT_FIRST:.0%} in {int((~ok).sum())} of them, so a page lost may have been one that "
                 + ("was still old (InnoDB makes no page young before it has evicted one: a pool just restarted keeps "
                    "the order of the first read)" if part.kept_first == "young" else "had been read once"))
    short = (f"the hot set {words} at the scan's start" if ok.all() else
             f"under {HOT_KEPT_FIRST:.0%} of the hot set {words} at the scan's start")
    return verdicts.witness(bool(ok.all()), what), verdicts.witness(bool(ok.all()), short)


def _judge(verdict: str, gate: verdicts.Witness) -> str:
    """A server's verdict gated by its own witness (verdicts.witnessed) before the servers' are combined."""
    return verdicts.witnessed(verdict, gate)


def _midpoint_witness(r) -> verdicts.Witness:
    """The LRU list had an old sublist in every second of the defaults' scans (a list of OLD_MIN_LEN pages at
    least, its old pages counted by INNODB_BUFFER_POOL_STATS) while the scan read pages from disk."""
    lru, share = getattr(r, "lru_pages_min", float("nan")), getattr(r, "old_share_scan", float("nan"))
    if _nan(lru) or _nan(share):
        return verdicts.witness(False, "the LRU list's length and its old sublist were not sampled")
    device = getattr(r, "device_mb_s_scan", float("nan"))
    return verdicts.witness(lru >= OLD_MIN_LEN and share > 0,
                            f"an LRU list of {lru:,.0f} pages at the shortest in the scan's seconds (an old sublist "
                            f"needs {OLD_MIN_LEN}), its old sublist {_pct(share, 1)} of it"
                            + ("" if _nan(device) else f", the scan reading {device:,.0f} MB/s from the device"))


def _innodb_rows(res: Results, sm: pd.DataFrame, here: str) -> list[verdicts.ClaimRow]:
    src = KERNELMAKER_BUFFERPOOL
    rows = []
    nm = verdicts.NOT_MEASURED
    d = of_variant(sm, DEFAULTS)
    if not len(d):
        return rows
    cells, marks, wits = [], [], {}
    for r in d.itertuples():
        w = _midpoint_witness(r)
        wits[r.series_name] = w
        if _lru_too_short(r):
            marks.append(verdicts.not_testable(f"{r.series_name}: the LRU list fell to {r.lru_pages_min:,.0f} pages, "
                                               f"below InnoDB's {OLD_MIN_LEN} for an old sublist"))
        else:
            marks.append(_judge(verdicts.holds(abs(r.old_share_scan - MIDPOINT) <= MIDPOINT_BAND),
                                verdicts.witness(w.ok, "no old sublist in some second of the scan")))
        cells.append(f"{r.series_name} {_pct(r.old_share_scan, 1)}")
    rows.append(verdicts.ClaimRow(
        src.cite("InnoDB inserts a page read from disk at the midpoint of its LRU list, about 3/8 from the tail "
                 "(the old sublist, innodb_old_blocks_pct = 37)"),
        f"3/8 (37.5%) of the LRU list; {SOURCE}", here + "; innodb_old_blocks_pct = 37",
        "old sublist's share of the LRU list during the scan (median second, median repeat): " + ", ".join(cells),
        verdicts.combine(marks), ids=("midpoint-at-three-eighths",), witness=verdicts.witnesses(wits)))
    z = of_variant(sm, "old_blocks_time=0")
    unprotected = {r.series_name: kept(r.misses_low, r.misses_high, r.hot_resident_scan) for r in z.itertuples()}
    design = start_design(res)
    marks, wits = [], {}
    for r in d.itertuples():
        variants = [DEFAULTS] + (["old_blocks_time=0"] if r.series_name in unprotected else [])
        wits[r.series_name], gate = start_witness(res, r.series_name, variants)
        marks.append(_judge(_protected(kept(r.misses_low, r.misses_high, r.hot_resident_scan),
                                       unprotected.get(r.series_name)), gate))
    rows.append(verdicts.ClaimRow(
        src.cite("A full scan's pages stay in the old sublist for less than innodb_old_blocks_time (1 s) and are "
                 "evicted from there: the scan does not push the hot pages out"),
        f"no number (the hot set stays: no misses); the hot set is the young region's; {SOURCE}",
        here + f"; defaults, innodb_lru_scan_depth = 100; {design}; kept: under {KEPT_MISSES:g} misses per hot query, "
        f"lost: over it or under {KEPT_RESIDENT:.0%} resident; the same scan with innodb_old_blocks_time = 0 as the "
        "reference (it must lose the hot set for keeping it to show anything)",
        "; ".join(_kept_cell(r) for r in d.itertuples()), verdicts.combine(marks),
        ids=("scan-does-not-push-out-hot-set",), witness=verdicts.witnesses(wits)))
    claim = src.cite("That protection is innodb_old_blocks_time's: a page touched again after that time moves to the "
                     "young end")
    if len(z):
        both = d.merge(z, on="series_name", suffixes=("", "_zero"))
        cells, marks, wits = [], [], {}
        for r in both.itertuples():
            diff = _difference(res, "old_blocks_time=0", DEFAULTS, r.series_name)
            young = r.made_young_s_scan_zero / max(r.made_young_s_scan, 1.0)
            cells.append(f"{r.series_name}: {r.made_young_s_scan_zero:,.0f} against {r.made_young_s_scan:,.0f} pages "
                         f"made young per second; misses per hot query {_ci(*diff, fmt='+.3f')} over the defaults'")
            made = verdicts.ratio(young, "above")
            wits[r.series_name], gate = start_witness(res, r.series_name, [DEFAULTS, "old_blocks_time=0"])
            marks.append(_judge(made if made != "agrees" else verdicts.interval(diff[1], diff[2], "above", reference=0),
                                gate))
        rows.append(verdicts.ClaimRow(
            claim, f"no number (with innodb_old_blocks_time = 0 a scan's pages reach the young end); {SOURCE}",
            here + f"; innodb_old_blocks_time = 0 against 1000; {design}; made young 'above': over "
            f"{verdicts.PAYS_RATIO:g}x",
            "; ".join(cells), verdicts.combine(marks), ids=("old-blocks-time-protects",),
            witness=verdicts.witnesses(wits)))
    else:
        rows.append(verdicts.ClaimRow(claim, SOURCE, here, "", nm, ids=("old-blocks-time-protects",),
                                      witness=verdicts.witness(False, "no run with innodb_old_blocks_time = 0")))
    k = of_variant(sm, DEPTH_DEFAULT)
    if len(k):
        pools, depths = pool_sizes(res), scan_depths(res, DEPTH_DEFAULT)

        def held(name: str) -> str:  # the page cleaner's target of free pages, out of the pool's pages
            depth, pool = depths.get(name), pools.get(name)
            return (f"a target of {depth:,} free pages of {pool:,}" if depth is not None and pool is not None else
                    f"a target of {depth:,} free pages" if depth is not None else "its default")

        marks, wits = [], {}
        for r in k.itertuples():
            wits[r.series_name], gate = start_witness(res, r.series_name, [DEPTH_DEFAULT])
            marks.append(verdicts.not_testable(
                f"{r.series_name} ({held(r.series_name)}): an LRU list of {r.lru_pages_min:,.0f} pages at the "
                f"shortest, below the {OLD_MIN_LEN} InnoDB needs for an old sublist, so there was no midpoint")
                if _lru_too_short(r) else _judge(kept(r.misses_low, r.misses_high, r.hot_resident_scan), gate))
        rows.append(verdicts.ClaimRow(
            "Our extension: the midpoint keeps the hot set at the server's own innodb_lru_scan_depth too (the free "
            "pages its page cleaner aims to keep)",
            "not in the source", here + f"; innodb_lru_scan_depth at the server's default; {design}",
            "; ".join(_kept_cell(r) + f" ({held(r.series_name)}"
                      + (f", {r.free_pages_scan:,.0f} free during the scan"
                         if not _nan(getattr(r, "free_pages_scan", float("nan"))) else "")
                      + (f", the LRU list {r.lru_pages_min:,.0f} pages at the shortest)"
                         if not _nan(getattr(r, "lru_pages_min", float("nan"))) else ")")
                      for r in k.itertuples()),
            verdicts.combine(marks), ids=("hot-set-kept-at-default-scan-depth",), witness=verdicts.witnesses(wits)))
    return rows


def _ring(share: float) -> str:
    """The ring keeps a large scan from flooding shared buffers: the sequential scan took at most
    RING_LEAK of the buffers the same read takes from the clock sweep without a ring (agrees), over half
    of them (disagrees), else not resolved. The hot set's misses and residency are shown beside: the claim
    is of what the scan takes, and whether a hot set survives is the midpoint rows' question."""
    if _nan(share):
        return verdicts.NOT_MEASURED
    if share > 0.5:
        return verdicts.disagrees("the scan took over half the buffers the read without a ring took")
    if share > RING_LEAK:
        return verdicts.not_resolved(f"the scan took {100 * share:.0f}% of the buffers the read without a ring took")
    return verdicts.agrees()


SEQ, IDX = "seq scan (ring)", "index scan (no ring)"
RING_IO = ("io.bulkread.reuses", "io.normal.reads")  # pg_stat_io (16 on): a ring's buffers reused, reads without one


def ring_witness(res: Results, server: str) -> tuple[verdicts.Witness, verdicts.Witness]:
    """The sequential scan read through its bulk-read ring and the same rows read through the primary key did not,
    in every run of ``server`` (pg_stat_io, 16 on: buffers of context bulkread reused in each sequential run, none
    in the index read's, whose reads are the normal context's), with the hot set at usage count 2 or more as the
    scan started (start_witness): (the witness in full, in a few words for the server's verdict)."""
    r = per_run(res)
    g = r[(r["series_name"] == server) & r["variant"].astype(str).isin([SEQ, IDX])] if len(r) else r
    if g.empty:
        none = verdicts.witness(False, "no sequential scan beside the read without a ring")
        return none, none
    io = pool_deltas(res, RING_IO)
    seq = io.reindex(g.loc[g["variant"].astype(str) == SEQ, "run_id"])
    idx = io.reindex(g.loc[g["variant"].astype(str) == IDX, "run_id"])
    if seq["io.bulkread.reuses"].isna().all():
        what = "pg_stat_io, which counts a ring's reuses, came in PostgreSQL 16: the scan's ring is not observed here"
        return verdicts.witness(False, what), verdicts.witness(False, "the ring's use not observed")
    used = bool((seq["io.bulkread.reuses"] > 0).all())
    bypassed = bool(((idx["io.bulkread.reuses"].fillna(0) == 0) & (idx["io.normal.reads"] > 0)).all()) if len(idx) else False
    start, gate = start_witness(res, server, [SEQ, IDX])
    ok = used and bypassed and start.ok
    what = (f"the sequential scan reused its ring's buffers {_span(seq['io.bulkread.reuses'].min(), seq['io.bulkread.reuses'].max())} "
            f"times a run (pg_stat_io, context bulkread) in {int((seq['io.bulkread.reuses'] > 0).sum())} of {len(seq)} runs; "
            f"the read without a ring reused none and read {_span(idx['io.normal.reads'].min(), idx['io.normal.reads'].max())} "
            f"buffers in the normal context; {start.what}")
    short = gate.what if not start.ok else ("the scan read through its ring" if ok else
                                           "the scan's ring, or the read without one, not as designed")
    return verdicts.witness(ok, what), verdicts.witness(ok, short)


def _postgres_rows(res: Results, sm: pd.DataFrame, here: str) -> list[verdicts.ClaimRow]:
    src = KERNELMAKER_BUFFERPOOL
    rows = []
    seq, idx = of_variant(sm, SEQ), of_variant(sm, IDX)
    if not len(seq):
        return rows
    ring = rings(res).set_index("series_name")
    sizes = "; ".join(f"{n} {r.ring_buffers} buffers ({r.ring_kb} kB: {r.ring_how})" for n, r in ring.iterrows())
    here_pg = here + "; the ring per version, from the settings each server ran with: " + sizes
    both = seq.merge(idx, on="series_name", suffixes=("", "_idx")) if len(idx) else pd.DataFrame()
    claim = src.cite("A PostgreSQL sequential scan reads through a small ring of buffers of its own, so that a "
                     "large scan does not flood shared buffers")
    witnessed = {n: ring_witness(res, n) for n in both["series_name"]} if len(both) else {}
    wits = {n: w for n, (w, _) in witnessed.items()}
    if len(both):
        cells, marks = [], []
        for r in both.itertuples():
            share = r.alloc_s_scan / max(r.alloc_s_scan_idx, 1.0)
            diff = _difference(res, IDX, SEQ, r.series_name)
            cells.append(f"{r.series_name}: {r.alloc_s_scan:,.0f} buffers a second from the clock sweep against "
                         f"{r.alloc_s_scan_idx:,.0f} without the ring; misses per hot query "
                         f"{_ci(r.misses_per_q, r.misses_low, r.misses_high)} against "
                         f"{_ci(r.misses_per_q_idx, r.misses_low_idx, r.misses_high_idx)} without it "
                         f"(difference {_ci(*diff, fmt='+.3f')}); hot table resident at least "
                         f"{_pct(r.hot_resident_scan)} against {_pct(r.hot_resident_scan_idx)}")
            marks.append(_judge(_ring(share), witnessed[r.series_name][1]))
        rows.append(verdicts.ClaimRow(
            claim, f"no number (a ring of fixed length, its size not given, in which a scan's pages evict each other); {SOURCE}",
            here_pg + f"; the same rows through the primary key (an index scan: no ring) as the reference; holds: "
            f"at most {RING_LEAK:.0%} of its sweep allocations (the hot set's misses and residency are shown beside, "
            "each run on a server restarted just before it)",
            "; ".join(cells), verdicts.combine(marks), ids=("ring-keeps-scan-out",), witness=verdicts.witnesses(wits)))
        streams = [SharedBuffers.reads_in_streams(n) for n in both["series_name"]]
        old, new = both[[not s for s in streams]], both[streams]
        if len(old) and len(new):
            share = both["alloc_s_scan"] / both["alloc_s_scan_idx"].clip(lower=1.0)
            worst_old = float(share[old.index].max())
            # the newer versions judged against the older ones' worst: both sides' rings must have been at work
            gate_old = all(witnessed[n][0].ok for n in old["series_name"])
            rows.append(verdicts.ClaimRow(
                _streams_claim(list(old["series_name"]), list(new["series_name"])),
                "not in the source", here_pg + f"; holds: a share at most twice 12 to 16's worst, or under {RING_LEAK:.0%}",
                "clock-sweep allocations of the sequential scan as a share of the index read's: "
                + "; ".join(f"{n} {100 * v:.1f}%" for n, v in zip(both["series_name"], share)),
                verdicts.combine(_judge(verdicts.holds(share[i] <= max(2 * worst_old, RING_LEAK)),
                                        verdicts.witness(gate_old and witnessed[n][0].ok, witnessed[n][1].what
                                                         if not witnessed[n][0].ok else "an older version's ring not observed"))
                                 for i, n in zip(new.index, new["series_name"])),
                ids=("streams-keep-scan-in-ring",), witness=verdicts.witnesses(wits)))
    else:
        rows.append(verdicts.ClaimRow(claim, SOURCE, here_pg, "", verdicts.NOT_MEASURED, ids=("ring-keeps-scan-out",),
                                      witness=verdicts.witness(False, "no sequential scan beside the read without a ring")))
    u = usage_counts(res)
    if len(u):
        big = u[(u["holds"] == "big") & (u["phase"] == "scan")]
        by = big.groupby(["series_name", "variant"], observed=True).apply(
            lambda g: g[g["usage"] <= 1]["share"].sum() / max(g["share"].sum(), 1e-12), include_groups=False)
        if len(by):
            low = by.xs(SEQ, level="variant") if SEQ in by.index.get_level_values(1) else pd.Series(dtype=float)
            ref = by.xs(IDX, level="variant") if IDX in by.index.get_level_values(1) else pd.Series(dtype=float)
            cells = [f"{n} {_pct(v)}" + (f" (without the ring {_pct(ref[n])})" if n in ref else "") for n, v in low.items()]
            usage_wits = {n: witnessed[n] if n in witnessed else ring_witness(res, n) for n in low.index}
            rows.append(verdicts.ClaimRow(
                src.cite("usage_count counts a buffer's accesses up to 5; read through a ring buffer it is raised "
                         "only from 0, so it stays at 1 or below"),
                f"at most 1 through a ring; {SOURCE}",
                here + f"; agrees: at least {RING_USAGE:.0%} of them at 0 or 1, where the read without a ring "
                "leaves fewer there",
                "share of the big table's buffers at usage count 0 or 1 during the sequential scan: " + ", ".join(cells),
                verdicts.combine(_judge(_ring_usage(v, ref.get(n, float("nan"))), usage_wits[n][1])
                                 for n, v in low.items()),
                ids=("ring-usage-at-most-one",), witness=verdicts.witnesses({n: w for n, (w, _) in usage_wits.items()})))
        rows.append(_usage_cap(res, u, here))
    return rows


USAGE_CAP = 5  # BM_MAX_USAGE_COUNT


def _usage_cap(res: Results, u: pd.DataFrame, here: str) -> verdicts.ClaimRow:
    """A buffer's usage count stops at 5: over every sample of every run (pg_buffercache's usagecount, not
    clipped by the sampler), no buffer above 5, and the hot table's buffers, read over and over, piled up
    at 5 (agrees); a count above 5 disagrees; none reaching 5 leaves the cap untested (not resolved). Its
    witness: the hot table's buffers were each accessed more than 5 times in every run (pg_statio's hits and
    reads of the table and its key over the run, per buffer), so a count without a cap would have passed 5."""
    cells, marks, wits = [], [], {}
    runs = per_run(res)
    access = pool_deltas(res, ("hot_requests",))["hot_requests"]
    for name, g in u.groupby("series_name", sort=False):
        seen = g[g["share"] > 0]
        top = int(seen["usage"].max()) if len(seen) else 0
        hot = g[g["holds"] == "hot"]
        at5 = hot.loc[hot["usage"] == 5, "share"].sum() / max(hot["share"].sum(), 1e-12)
        cells.append(f"{name}: highest count {top}; the hot table's buffers at 5: {_pct(at5)}")
        mine = runs[runs["series_name"] == name]
        per = (access.reindex(mine["run_id"]).to_numpy() / mine["hot_pages"].to_numpy()) if len(mine) else []
        per = pd.Series(per, dtype=float)
        ok = bool(len(per) and per.notna().all() and (per > USAGE_CAP).all())
        wits[name] = verdicts.witness(ok, (f"each hot buffer accessed {_span(per.min(), per.max())} times a run on average "
                                           f"(pg_statio_user_tables: hits and reads of the hot table and its key, over its "
                                           f"buffers), in {len(per)} runs") if per.notna().any() else
                                      "the hot table's accesses were not counted")
        marks.append(_judge(verdicts.disagrees() if top > 5 else verdicts.agrees() if top == 5 and at5 > 0.5 else
                            verdicts.not_resolved(f"no buffer piled up at 5: the highest count was {top}"),
                            verdicts.witness(ok, f"the hot buffers accessed {USAGE_CAP} times or fewer")))
    return verdicts.ClaimRow(
        KERNELMAKER_BUFFERPOOL.cite("Each access raises a buffer's usage count by one, up to 5"),
        f"a cap of 5 (BM_MAX_USAGE_COUNT); {SOURCE}",
        here + "; every buffer's count sampled through the runs (pg_buffercache); agrees: none above 5, and most of "
        "the hot table's buffers, read again and again, at 5",
        "; ".join(cells), verdicts.combine(marks), ids=("usage-count-cap-five",), witness=verdicts.witnesses(wits))


def _major(name: str) -> int | None:
    m = re.search(r"(\d+)(?:\.\d+)*\s*$", str(name))
    return int(m.group(1)) if m else None


def _streams_claim(old: list[str], new: list[str]) -> str:
    """The read-streams row's claim, naming the versions this run measured (a version left out at
    this scale, such as 17 at default scale, is not named)."""
    olds = sorted({m for m in map(_major, old) if m is not None})
    news = sorted({m for m in map(_major, new) if m is not None})
    span = (f"{olds[0]} to {olds[-1]}" if len(olds) > 1 else f"{olds[0]}") if olds else "the older versions"
    what = "read streams" + ("; asynchronous I/O in 18" if any(m >= 18 for m in news) and len(news) > 1 else
                             "; asynchronous I/O" if news == [18] or (news and min(news) >= 18) else "")
    names = " and ".join(map(str, news)) if news else "the newer versions"
    verb = "keeps" if len(news) == 1 else "keep"
    return f"Our extension: PostgreSQL {names} ({what}) {verb} a sequential scan inside its ring as {span} do"


def _ring_usage(ring: float, no_ring: float) -> str:
    """The ring's cap on usage counts: its buffers at 0 or 1 (at least RING_USAGE of them), where the
    same pages read without a ring reach higher counts; where they stay at 0 or 1 without a ring too,
    each page was touched once and the design cannot tell the cap from a single touch."""
    if _nan(ring):
        return verdicts.NOT_MEASURED
    if ring < RING_USAGE:
        return verdicts.disagrees()
    if not _nan(no_ring) and no_ring >= RING_USAGE:
        return verdicts.not_resolved("without the ring the big table's buffers stay at 0 or 1 as well: a scan "
                                     "touches each page once, so this design cannot tell the ring's cap from a "
                                     "single touch")
    return verdicts.agrees()


def _throughput_row(res: Results, sm: pd.DataFrame, here: str) -> list[verdicts.ClaimRow]:
    """A scan leaves the hot workload's throughput as it was: not testable on one server CPU; the
    numbers say how much of the change is the CPU the scan took (the witness: the scan's own CPU time, which
    shows it shared the hot sessions' CPU)."""
    d = of_variant(sm, DEFAULTS)
    if not len(d):
        d = of_variant(sm, SEQ)
    if not len(d):
        return []
    cells, wits = [], {}
    for r in d.itertuples():
        cell = (f"{r.series_name}: hot QPS during/before {_ci(r.ratio, r.ci_low, r.ci_high, '.2f')} with "
                f"{_ci(r.misses_per_q, r.misses_low, r.misses_high)} misses per hot query")
        scan_cpu = getattr(r, "scan_cpu_scan", float("nan"))
        if not _nan(scan_cpu):
            cell += (f"; the scan took {_pct(r.scan_cpu_scan)} of the CPU, the hot sessions' CPU per query "
                     f"during/before {_ci(r.cpu_ratio, r.cpu_ratio_low, r.cpu_ratio_high, '.2f')}")
        cells.append(cell)
        wits[r.series_name] = (verdicts.witness(False, "the sessions' CPU was not sampled") if _nan(scan_cpu) else
                               verdicts.witness(scan_cpu > 0, f"the scanning session took {_pct(scan_cpu)} of the "
                                                              "server's one CPU beside the hot sessions"))
    rate = hot_rate(tidy(res))
    if rate:
        why = (f"one server CPU shared by the scan and the hot sessions; the hot workload runs at a fixed "
               f"{rate:,} queries a second, so its throughput is set by this design, not by the engine")
    else:
        worst = d.loc[d["misses_per_q"].fillna(1).idxmin()]
        why = (f"one server CPU shared by the scan and the hot sessions: hot QPS falls with the CPU the scan takes "
               f"({worst['series_name']}: {worst['ratio']:.2f} of before with {worst['misses_per_q']:.3f} misses "
               "per hot query)")
    return [verdicts.ClaimRow(
        "Our extension: with the scan kept away from the hot set, the hot workload keeps its usual throughput "
        "during the scan (what the source's claim implies for a workload)",
        "implied (the hot set is not polluted); not measured by the source",
        here + "; defaults (InnoDB) and the sequential scan (PostgreSQL)",
        "; ".join(cells), verdicts.not_testable(why), ids=("hot-throughput-through-scan",),
        witness=verdicts.witnesses(wits))]


FREE_REACHED = 0.95  # the page cleaner refilled the free list: the last sample after the scan at this share of its target


def over_target(most: float, depth: float, written: float) -> bool:
    """Whether the free list went above the page cleaner's target by more than its stop test allows. The LRU batch
    (buf_flush_LRU_list_batch, MySQL and MariaDB) tests the free list's length before each page it takes from the
    LRU list's tail: a clean page it frees at once, so clean pages stop exactly at the target; a dirty one it only
    sends to be written, and the write's completion frees it later, past the test. The free list may so end above
    the target by the pages written while the batch ran, never more: the allowance is the pages the run wrote
    (Innodb_buffer_pool_pages_flushed over the run, an upper bound of the batch's; 0 where none were written)."""
    allowance = 0.0 if _nan(written) else max(written, 0.0)
    return most > depth + allowance


def _free_pages_row(res: Results) -> list[verdicts.ClaimRow]:
    """The page cleaner frees pages until the free list holds innodb_lru_scan_depth: after the scan (the pool
    full, the big table no longer read) the free pages should climb to the target and stop there. A run holds
    it where they never went above the target by more than the asynchronous frees of written pages allow
    (over_target) and, at a target the after phase can reach (100 pages), ended within FREE_REACHED of it. MySQL's
    runs decide (the source reads MySQL's code); MariaDB's are shown beside. The witness: in every judged run the
    free list was below its target during the scan or as it stopped, and rose after it (the cleaner at work)."""
    f = free_after_scan(res)
    claim = KERNELMAKER_BUFFERPOOL.cite("InnoDB's page cleaner frees pages from the LRU list's tail until the free "
                                        "list holds innodb_lru_scan_depth pages")
    ids = ("page-cleaner-keeps-free-pages",)
    if f.empty:
        return [verdicts.ClaimRow(claim, SOURCE, verdicts.NOT_MEASURED, verdicts.NOT_MEASURED, verdicts.NOT_MEASURED,
                                  ids=ids, witness=verdicts.witness(False, "no free pages sampled after a scan"))]
    small = int(f["depth"].min())
    f = f.assign(above=[over_target(m, d, w) for m, d, w in zip(f["most"], f["depth"], f["written"])],
                 short=(f["depth"] == small) & (f["last"] < FREE_REACHED * f["depth"]),
                 judged=f["flavor"].map(lambda x: part_of(x).code_the_source_reads),
                 refilled=(f["low"] < f["depth"]) & (f["most"] > f["low"]))
    cells = []
    for (name, depth), g in f.groupby(["series_name", "depth"], sort=False):
        cells.append(f"{name}, target {depth:,}: at most {g['most'].max():,.0f} free after the scan, "
                     f"{g['last'].min():,.0f} to {g['last'].max():,.0f} at its end ({len(g)} runs; "
                     f"{_span(g['written'].min(), g['written'].max())} pages written in a run)")
    mine = f[f["judged"]]
    failing = int((mine["above"] | mine["short"]).sum())
    over = mine[mine["most"] > mine["depth"]]
    verdict = verdicts.events(failing, len(mine), float("nan"), "none")
    verdict += (f" (MySQL, in {len(mine) - failing} of {len(mine)} runs" + (
                f"; {len(over)} ended {_span((over['most'] - over['depth']).min(), (over['most'] - over['depth']).max())} "
                "pages above the target, within the pages written" if len(over) else "") + ")"
                if verdict == "agrees" else f" (MySQL: the claim failed in {failing} of {len(mine)} runs)")
    seen = int(mine["refilled"].sum())
    witness = verdicts.witness(len(mine) > 0 and seen == len(mine),
                               f"MySQL's free list fell below its target during the scan and rose after it in {seen} of "
                               f"{len(mine)} runs (from {_span(mine['low'].min(), mine['low'].max())} free pages at the "
                               "fewest): the page cleaner refilling it from the LRU list's tail")
    w = tidy(res)
    writes = ("; a write a second beside the hot workload through each run (MySQL's page cleaner does its LRU batch "
              "only in a round after a write: ticker.py)" if "tick_writes" in w and w["tick_writes"].notna().any() else
              "; no write made on purpose (the runs before issue 43: MySQL's page cleaner does its LRU batch only in "
              "a round after a write, and these runs wrote the tables' statistics at each warm-up)")
    return [verdicts.ClaimRow(
        claim, SOURCE,
        "the eviction runs' after phase (the scan stopped, the hot table resident): the pool's free pages each "
        f"second (INNODB_BUFFER_POOL_STATS), one instance{writes}; holds: never above the target by more than the pages the "
        f"run wrote (a dirty page is freed when its write completes, after the batch's test of the free list: "
        f"{WRITTEN}), and at {small:,} within {FREE_REACHED:.0%} of it at the run's end (the larger defaults are not "
        "reached in the after phase's few seconds); MariaDB, whose page cleaner was rewritten in 10.5, is shown "
        "beside, not judged",
        "; ".join(cells), verdict, ids=ids, witness=witness)]


# buf0lru.cc's BUF_LRU_OLD_TOLERANCE (MySQL 5.7 to 9.x, MariaDB): buf_LRU_old_adjust_len lets the old sublist
# run this many pages over (or under) its share of the list before it moves the midpoint, and then turns the
# pages at the old sublist's head young (those just read in) until the excess is back within it
OLD_TOLERANCE = 20


def _grown_young(r) -> float:
    """The hot table's pages that may turn young without a promotion: the midpoint moves tailwards by the young
    share (1 - innodb_old_blocks_pct) of what the list grew by during the read, rounded up, and one page more;
    and by up to OLD_TOLERANCE pages where the old sublist had run over its share (the adjustment's slack)."""
    growth = r.list_growth
    grown = 0.0 if _nan(growth) else math.ceil((1 - r.old_blocks_pct / 100) * max(growth, 0.0)) + 1.0
    return grown + OLD_TOLERANCE


def _yes(v) -> str:
    return "yes" if v else "no"


def _resize_said(r) -> str:
    if r.probe == "shared buffers":
        return (f"shared_buffers changes only at a server start (context postmaster: {_yes(r.shared_buffers_context_postmaster)}); "
                f"after ALTER SYSTEM and a reload it waited for a restart ({_yes(r.resize_pending_restart)}), still "
                f"{r.shared_buffers_after_reload_mb:.0f} MiB")
    chunk = ("" if _nan(r.chunk_mb) else ", chunks the server sizes" if r.chunk_mb == 0 else
             f", chunks of {r.chunk_mb:.0f} MiB")
    return (f"grew online from {r.pool_mb_before:,.0f} to {r.pool_mb_after:,.0f} MiB{chunk}; the server's uptime "
            f"carried on ({_yes(r.uptime_continued)}) and the table's {r.new_table_pages:,.0f} pages stayed resident "
            f"({r.table_pages_kept:,.0f})")


def _resize_holds(r) -> bool:
    if r.probe == "shared buffers":
        return bool(r.shared_buffers_context_postmaster) and bool(r.resize_pending_restart)
    return r.pool_mb_after > r.pool_mb_before and bool(r.uptime_continued) and r.table_pages_kept == r.new_table_pages


# each step-by-step claim (engines/pool_mechanics.py, engines/shared_buffers_mechanics.py): the ledger's id, the
# observation a run needs, the claim as the source states it, what a run showed, and the test it passes where
# the claim holds
STEP_CLAIMS = (
    steps.StepClaim(
        "new-pages-enter-at-midpoint", "new_pages_old",
        "A page InnoDB reads from disk enters its LRU list at the midpoint (the old sublist's head), not at the young end",
        # the young part's size, which differs from run to run, is the witness's (each run's words alike)
        lambda r: f"a first read brought in {r.new_pages:,.0f} pages; {r.new_pages_old:,.0f} of the table's "
                  f"{r.table_pages:,.0f} sat in the old sublist, with pages of the big table young ahead of them",
        lambda r: r.new_pages > 0 and r.new_pages - r.new_pages_old <= _grown_young(r) and r.big_young_pages > 0),
    steps.StepClaim(
        "promotion-after-one-second", "late_made_young",
        "A page in the old sublist moves to the young end when it is read again only after innodb_old_blocks_time "
        "(1 s by default) has passed since its first read",
        # PAGES_MADE_YOUNG counts every page of the server (a dictionary page too): the table's own pages' LRU
        # positions (IS_OLD) decide, the counter is shown
        lambda r: f"read again within 1 s: {r.early_made_young:,.0f} pages made young in the server, {r.early_old_pages:,.0f} of "
                  f"the {r.new_pages_old:,.0f} old ones still old; read again after 1 s: {r.late_made_young:,.0f} made "
                  f"young, {r.late_old_pages:,.0f} still old",
        lambda r: (r.early_reread_after_s < 1.0 and r.early_old_pages == r.new_pages_old
                   and r.late_reread_after_s >= 1.0 and r.late_old_pages == 0
                   and r.late_made_young >= r.early_old_pages)),
    steps.StepClaim(
        "pool-instances-shard", "pool_instances",
        "A large InnoDB buffer pool is split into instances, each with its own lists and hash table, and pages "
        "spread over them",
        lambda r: f"{r.pool_instances:.0f} instances; a new table's {r.new_table_pages:,.0f} pages in "
                  f"{r.instances_holding_table:.0f} of them, the largest share {r.largest_instance_share:.0%}",
        lambda r: (r.pool_instances == r.instances_setting > 1 and r.instances_holding_table == r.pool_instances
                   and r.largest_instance_share < 0.5),
        only=lambda r: not _nan(getattr(r, "instances_setting", float("nan")))),
    steps.StepClaim(
        "extents-share-an-instance", "extents_split",
        "InnoDB puts 64 consecutive pages of a tablespace in the same instance",
        lambda r: f"{r.extents_split:,.0f} of {r.extents_seen:,.0f} runs of 64 pages spread over two instances or "
                  f"more; the runs together in {r.extent_instances:.0f} instances",
        lambda r: r.extents_split == 0 and r.extent_instances > 1,
        only=lambda r: getattr(r, "pool_instances", 0) > 1),
    steps.StepClaim(
        "chunks-ease-resizing", "chunks_test",
        "InnoDB's pool is made of chunks, so it can be resized while the server runs; PostgreSQL's shared buffers, "
        "one array, cannot",
        _resize_said, _resize_holds),
    steps.StepClaim(
        "sweep-decrements", "hot_count_matches_passes",
        "PostgreSQL's clock sweep lowers the usage count of each unpinned buffer it passes and evicts the first "
        "one it finds at 0",
        lambda r: f"a small table's {r.hot_buffers:,.0f} buffers at usage count {r.hot_usage_min_before:.0f}; after "
                  f"{r.sweep_laps:.1f} laps of the hand all {r.hot_resident_after:,.0f} still resident at count "
                  f"{r.hot_usage_max_after:.0f} ({r.hot_passes_after:.0f} passes over them); each buffer's count was 5 "
                  f"less the hand's passes in {r.hot_count_matches_passes:.0%} of the looks, and each was evicted on "
                  f"the pass after it was seen at {r.hot_evicted_last_seen_max:.0f} ({r.sweep_laps_end:.1f} laps in all)",
        lambda r: (r.hot_usage_min_before == 5 and r.hot_resident_after == r.hot_buffers
                   and r.hot_count_matches_passes >= 0.99 and r.hot_evicted == r.hot_buffers
                   and r.hot_evicted_last_seen_max == 0)),
    steps.StepClaim(
        "rings-for-vacuum-and-bulk-writes", "vacuum_resident",
        "VACUUM and bulk inserts (COPY) read and write through a ring of their own, as a sequential scan does",
        lambda r: f"COPY of {r.copy_table_pages:,.0f} pages left {r.copy_resident:,.0f} in shared buffers (a ring of "
                  f"{r.copy_ring_buffers:,.0f}), the same rows by INSERT {r.insert_resident:,.0f}; VACUUM of "
                  f"{r.vacuum_table_pages:,.0f} pages left {r.vacuum_resident:,.0f} (a ring of {r.vacuum_ring_buffers:,.0f})",
        lambda r: (r.copy_resident <= r.copy_ring_buffers + RING_SLACK < r.copy_table_pages
                   and r.insert_resident > r.copy_ring_buffers + RING_SLACK
                   and r.vacuum_resident <= r.vacuum_ring_buffers + RING_SLACK < r.vacuum_table_pages)),
    steps.StepClaim(
        "bgwriter-max-pages", "bgwriter_maxwritten",
        "PostgreSQL's background writer writes at most bgwriter_lru_maxpages (100) buffers a round",
        lambda r: f"{r.bgwriter_clean:,.0f} buffers written in {r.bgwriter_elapsed_s:.1f} s (at most "
                  f"{r.bgwriter_rounds_max:.0f} rounds of {r.bgwriter_delay_s * 1000:.0f} ms), "
                  f"{r.bgwriter_maxwritten:,.0f} rounds stopped at the cap of {r.bgwriter_lru_maxpages:.0f}",
        lambda r: (r.bgwriter_maxwritten >= 1
                   and r.bgwriter_clean <= r.bgwriter_lru_maxpages * r.bgwriter_rounds_max)),
    steps.StepClaim(
        "checkpoint-spread", "spread_s",
        "PostgreSQL's checkpointer paces a checkpoint's writes over the checkpoint window instead of writing them "
        "in a burst",
        lambda r: f"a requested (spread) checkpoint of {r.spread_buffers:,.0f} buffers took {r.spread_s:.1f} s of its "
                  f"{r.spread_window_s:.1f} s window; an immediate one of {r.immediate_buffers:,.0f}, {r.immediate_s:.2f} s",
        lambda r: (r.spread_buffers > 0 and r.immediate_buffers > 0 and r.spread_s >= 0.5 * r.spread_window_s
                   and r.immediate_s < 0.2 * r.spread_s)),
)
# each step claim in a few words, in STEP_CLAIMS' order (the page's summary)
STEP_NAMES = ("pages read from disk enter at the midpoint", "promotion waits innodb_old_blocks_time",
              "a large pool is split into instances", "64 consecutive pages share an instance",
              "InnoDB resizes online, PostgreSQL only at a restart", "the clock sweep lowers usage counts",
              "COPY and VACUUM read through rings", "the background writer's cap per round",
              "checkpoints spread their writes")
RING_SLACK = 16  # buffers a ring's owner may hold beyond the ring (the page in use, the relation's first pages)


def _full_split(r) -> bool:
    """The midpoint probe's pool as its steps need it: full (eviction started: InnoDB moves no page before it has
    evicted one) and split (an LRU list long enough for an old sublist, which it has)."""
    return (r.free_pages < FULL_FREE_SHARE * r.pool_pages and r.lru_pages >= OLD_MIN_LEN
            and r.old_sublist_pages > 0)


def _spanned(g: pd.DataFrame, col: str, fmt: str = ",.0f") -> str:
    lo, hi = f"{g[col].min():{fmt}}", f"{g[col].max():{fmt}}"
    return lo if lo == hi else f"{lo}-{hi}"


# each step claim's witness (STEP_CLAIMS' ids): whether a run did what the mechanism needs (a run of its own),
# and what the runs it is given did, in words
STEP_WITNESSES = {
    "new-pages-enter-at-midpoint": (
        lambda r: _full_split(r) and r.new_pages > 0,
        lambda g: f"the pool full ({_spanned(g, 'free_pages')} of {_spanned(g, 'pool_pages')} pages free) and split "
                  f"({_spanned(g, 'old_sublist_pages')} of {_spanned(g, 'lru_pages')} LRU pages old) when the hot "
                  f"table's first read brought {_spanned(g, 'new_pages')} pages from disk, "
                  f"{_spanned(g, 'big_young_pages')} pages of the big table in the young sublist ahead of them"),
    "promotion-after-one-second": (
        lambda r: _full_split(r) and r.new_pages_old > 0 and r.late_pages > 0,
        lambda g: f"eviction started (the pool full: {_spanned(g, 'free_pages')} pages free), and "
                  f"{_spanned(g, 'new_pages_old')} of the table's pages old when it was read again, twice"),
    "pool-instances-shard": (
        lambda r: r.instances_setting > 1 and r.new_table_pages > 0,
        lambda g: f"a pool of {_spanned(g, 'instances_setting')} instances holding a new table's "
                  f"{_spanned(g, 'new_table_pages')} pages"),
    "extents-share-an-instance": (
        lambda r: r.pool_instances > 1 and r.extents_seen > 0,
        lambda g: f"{_spanned(g, 'extents_seen')} runs of 64 pages of one table in a pool of "
                  f"{_spanned(g, 'pool_instances')} instances"),
    "chunks-ease-resizing": (
        lambda r: (not _nan(r.resize_pending_restart)) if r.probe == "shared buffers" else not _nan(r.resize_s),
        lambda g: "the running servers asked to resize (InnoDB: SET GLOBAL innodb_buffer_pool_size, PostgreSQL: "
                  "ALTER SYSTEM SET shared_buffers and a reload), each answer read back"),
    "sweep-decrements": (
        lambda r: r.sweep_laps >= 1 and r.hot_passes_after >= 1,
        lambda g: f"the sweep's hand went round {_spanned(g, 'sweep_laps', '.1f')} laps over the small table's buffers "
                  f"({_spanned(g, 'hot_passes_after')} passes) while a table 1.5 times the pool was loaded"),
    "rings-for-vacuum-and-bulk-writes": (
        lambda r: (r.copy_table_pages > r.copy_ring_buffers + RING_SLACK
                   and r.vacuum_table_pages > r.vacuum_ring_buffers + RING_SLACK),
        lambda g: f"COPY and VACUUM of tables of {_spanned(g, 'copy_table_pages')} pages, larger than their rings "
                  f"({_spanned(g, 'copy_ring_buffers')} and {_spanned(g, 'vacuum_ring_buffers')} buffers)"),
    "bgwriter-max-pages": (
        lambda r: r.bgwriter_clean > 0,
        lambda g: f"the background writer wrote {_spanned(g, 'bgwriter_clean')} buffers (pg_stat_bgwriter)"),
    "checkpoint-spread": (
        lambda r: r.spread_buffers > 0 and r.immediate_buffers > 0,
        lambda g: f"both checkpoints wrote buffers ({_spanned(g, 'spread_buffers')} spread, "
                  f"{_spanned(g, 'immediate_buffers')} immediate)"),
}


def _how(g: pd.DataFrame) -> str:
    probes = set(g["probe"])
    with_what = []
    if probes & {"midpoint", "instances"}:
        with_what.append("INNODB_BUFFER_PAGE_LRU and INNODB_BUFFER_POOL_STATS")
    if "shared buffers" in probes:
        with_what.append("pg_buffercache, pg_stat_bgwriter and pg_settings")
    where = {"midpoint": "a server set up as the eviction runs', restarted, the pool filled by the big table (a page may turn "
                         "young without a promotion only as the midpoint moves: up to 1 - innodb_old_blocks_pct of what "
                         f"the read lengthened the list by, and the {OLD_TOLERANCE} pages the old sublist may run over "
                         "its share before InnoDB moves it (buf0lru.cc), allowed; the table's pages judged by their LRU "
                         "positions, the server-wide PAGES_MADE_YOUNG shown)",
             "instances": "a server of its own with a pool of 1 GiB (MySQL: 4 instances)",
             "shared buffers": "a server of its own with 16 MiB of shared buffers and a 6 s checkpoint window"}
    return "; ".join(where[p] for p in sorted(probes)) + "; watched step by step with " + " and ".join(with_what)


def _step_rows(res: Results) -> list[verdicts.ClaimRow]:
    m = mechanics(res)
    for c in ("list_growth", "old_blocks_pct"):  # observed from the probes' second version on
        if len(m) and c not in m:
            m[c] = float("nan")
    if len(m):
        m = m.assign(chunks_test=1.0)  # the resize claim's rows: every probe run on a server of its own
        m.loc[m["probe"] == "midpoint", "chunks_test"] = float("nan")
    rows = steps.claim_rows(m, STEP_CLAIMS, SOURCE, _how, KERNELMAKER_BUFFERPOOL.cite)
    out = []
    m = m.reset_index(drop=True)
    for c, row in zip(STEP_CLAIMS, rows, strict=True):  # claim_rows gives one row per claim, in their order
        g = m[m[c.needs].notna()] if len(m) and c.needs in m else m.iloc[0:0]
        if c.only is not None and len(g):
            g = g[[bool(c.only(t)) for t in g.itertuples()]]
        ok_run, said = STEP_WITNESSES[c.id]
        if g.empty:
            w = verdicts.witness(False, "no run of this step")
        else:
            ok = [bool(ok_run(t)) for t in g.itertuples()]
            w = verdicts.witness(all(ok), f"{said(g)}; in {sum(ok)} of {len(ok)} runs")
        out.append(dataclasses.replace(row, ids=(c.id,), witness=w))
    return out


def claims(res: Results) -> pd.DataFrame:
    sm = summary(res)
    if sm.empty:
        return verdicts.table([])
    here, here_pg = conditions(res, BufferPool), conditions(res, SharedBuffers)
    rows = (_innodb_rows(res, sm, here) + _free_pages_row(res) + _postgres_rows(res, sm, here_pg)
            + _throughput_row(res, sm, here) + _step_rows(res))
    return verdicts.table(rows)
