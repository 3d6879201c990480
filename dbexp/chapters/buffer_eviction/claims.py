"""The claims table: each claim of the source beside what was measured here, with its verdict."""

from __future__ import annotations

import pandas as pd

from dbexp.experiments import verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import KERNELMAKER_BUFFERPOOL

from .analysis import of_variant, summary, usage_counts
from .parts import VARIANT_NAMES
from .postgres import SharedBuffers

RING_LEAK = 0.10  # a ring holds while a scan takes at most this share of the buffers it takes without one


def claims(res: Results) -> pd.DataFrame:
    sm = summary(res)
    src = KERNELMAKER_BUFFERPOOL
    rows = []
    nm = verdicts.NOT_MEASURED
    d = of_variant(sm, VARIANT_NAMES[0])
    if len(d):
        share = d["old_share_scan"]
        rows.append((src.cite("InnoDB inserts a page read from disk at the midpoint of its LRU list, about 3/8 "
                              "from the tail (the old sublist, innodb_old_blocks_pct = 37)"),
                     "old sublist during the scan: " + ", ".join(f"{n} {100 * v:.1f}%" for n, v in
                                                                  zip(d["series_name"], share)) + " of the LRU pages",
                     verdicts.combine("agrees" if abs(v - 0.375) <= 0.02 else "disagrees" for v in share)))
        rows.append((src.cite("A full scan's pages stay in the old sublist for less than innodb_old_blocks_time "
                              "(1 s) and are evicted from there: the scan does not push the hot pages out"),
                     "least share of the hot table resident during the scan: "
                     + ", ".join(f"{n} {100 * v:.0f}%" for n, v in zip(d["series_name"], d["hot_resident_scan"]))
                     + "; hot-table reads from disk during the scan: "
                     + ", ".join(f"{v:,.0f}/s" for v in d["hot_reads_s_scan"]),
                     verdicts.combine(_kept(v) for v in d["hot_resident_scan"])))
        z = of_variant(sm, "old_blocks_time=0")
        if len(z):
            both = d.merge(z, on="series_name", suffixes=("", "_zero"))
            cells = [f"{r.series_name}: {r.made_young_s_scan_zero:,.0f} against {r.made_young_s_scan:,.0f} pages "
                     f"made young per second, {100 * r.hot_resident_scan_zero:.0f}% of the hot table resident at "
                     f"least (against {100 * r.hot_resident_scan:.0f}%)" for r in both.itertuples()]
            rows.append((src.cite("That protection is innodb_old_blocks_time's: a page touched again after it is "
                                  "moves to the young end"),
                         "with innodb_old_blocks_time = 0 during the scan: " + "; ".join(cells),
                         verdicts.combine(verdicts.ratio(r.made_young_s_scan_zero / max(r.made_young_s_scan, 1.0),
                                                         "above") for r in both.itertuples())))
        else:
            rows.append((src.cite("That protection is innodb_old_blocks_time's"), "", nm))
    k = of_variant(sm, "scan depth at its default")
    if len(k):
        rows.append(("Our extension: the midpoint keeps the hot set at the server's own innodb_lru_scan_depth too, "
                     "on a pool this small",
                     "least share of the hot table resident during the scan: "
                     + ", ".join(f"{r.series_name} {100 * r.hot_resident_scan:.0f}%" for r in k.itertuples()),
                     verdicts.combine(_kept(v) for v in k["hot_resident_scan"])))
    seq, idx = of_variant(sm, "seq scan (ring)"), of_variant(sm, "index scan (no ring)")
    if len(seq):
        both = seq.merge(idx, on="series_name", suffixes=("", "_idx")) if len(idx) else pd.DataFrame()
        if len(both):
            cells = [f"{r.series_name}: {r.alloc_s_scan:,.0f} against {r.alloc_s_scan_idx:,.0f} without the ring, "
                     f"{100 * r.hot_resident_scan:.0f}% of the hot table resident at least" for r in both.itertuples()]
            rows.append((src.cite("A PostgreSQL sequential scan reads through a small ring of buffers of its own, so "
                                  "that a large scan does not flood shared buffers"),
                         "buffers taken from the clock sweep per second during the sequential scan: " + "; ".join(cells),
                         verdicts.combine(_ring(r.alloc_s_scan / max(r.alloc_s_scan_idx, 1.0), r.hot_resident_scan)
                                          for r in both.itertuples())))
            streams = [SharedBuffers.reads_in_streams(n) for n in both["series_name"]]
            old, new = both[[not s for s in streams]], both[streams]
            if len(old) and len(new):
                share = both["alloc_s_scan"] / both["alloc_s_scan_idx"].clip(lower=1.0)
                worst_old = float(share[old.index].max())
                rows.append(("Our extension: PostgreSQL 17 and 18 (read streams; asynchronous I/O in 18) keep a "
                             "sequential scan inside its ring as 12 to 16 do",
                             "clock-sweep allocations of the sequential scan as a share of the index read's: "
                             + "; ".join(f"{n} {100 * v:.1f}%" for n, v in zip(both["series_name"], share)),
                             verdicts.combine("agrees" if share[i] <= max(2 * worst_old, RING_LEAK) else "disagrees"
                                              for i in new.index)))
        else:
            rows.append(("Our extension: PostgreSQL 17 and 18 keep a sequential scan inside its ring as 12 to 16 do",
                         "", nm))
    u = usage_counts(res)
    if len(u):
        hot5 = u[(u["holds"] == "hot") & (u["phase"] == "before")]
        share5 = hot5.groupby("series_name").apply(
            lambda g: g[g["usage"] == 5]["share"].sum() / max(g["share"].sum(), 1e-12), include_groups=False)
        rows.append((src.cite("usage_count counts a buffer's accesses and stops at 5; the clock sweep lowers it "
                              "and evicts a buffer once it reaches 0"),
                     "share of the hot table's buffers at usage count 5 before the scan: "
                     + ", ".join(f"{n} {100 * v:.0f}%" for n, v in share5.items()),
                     verdicts.combine("agrees" if v >= 0.5 else "disagrees" for v in share5)))
    return pd.DataFrame(rows, columns=["claim", "measured here", "verdict"])


def _kept(resident: float) -> str:
    """A hot set kept: at least 95% of it resident all through the scan; lost: under 80% at some point."""
    if resident != resident:
        return verdicts.NOT_MEASURED
    if resident >= 0.95:
        return "agrees"
    if resident < 0.80:
        return "disagrees"
    return "not resolved (between 80% and 95% of the hot table stayed)"


def _ring(share: float, resident: float) -> str:
    """A ring holds: the sequential scan took at most RING_LEAK of the buffers the same read takes
    without a ring from the clock sweep, and the hot set was kept; it fails above 50% or when the hot
    set was lost."""
    if share != share:
        return verdicts.NOT_MEASURED
    if share <= RING_LEAK and resident >= 0.95:
        return "agrees"
    if share > 0.5 or resident < 0.80:
        return "disagrees"
    return f"not resolved (the scan took {100 * share:.0f}% of the buffers the read without a ring took)"
