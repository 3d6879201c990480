"""The page's summary: the summary's numbers, by variant, put into notebooks/buffer_eviction/findings.md.j2."""

from __future__ import annotations

import pandas as pd

from dbexp.book import prose
from dbexp.experiments.chapter import Results

from .analysis import RECOVERED, of_variant, pool_pages, summary
from .parts import VARIANT_NAMES

COLUMNS = {"server": "series_name", "hot_resident": "hot_resident_scan", "hot_reads": "hot_reads_s_scan",
           "made_young": "made_young_s_scan", "alloc": "alloc_s_scan", "free_pages": "free_pages_scan",
           "ratio": "ratio"}


def _rows(sm: pd.DataFrame, variant: str) -> list[dict]:
    """One dict per server that ran ``variant``: its numbers under the template's names."""
    df = of_variant(sm, variant)
    return [{k: r[c] for k, c in COLUMNS.items() if c in df} for _, r in df.iterrows()]


def numbers(res: Results) -> dict:
    """What the findings quote, from the summary."""
    sm = summary(res)
    if sm.empty:
        return {"runs": 0}
    r = sm["recovery_s"]
    return {
        "runs": len(res.wide),
        "defaults": _rows(sm, VARIANT_NAMES[0]),
        "zero": _rows(sm, "old_blocks_time=0"),
        "depth": _rows(sm, "scan depth at its default"),
        "seq": _rows(sm, "seq scan (ring)"),
        "index": _rows(sm, "index scan (no ring)"),
        "update": _rows(sm, "UPDATE scan"),
        "pool_pages": pool_pages(res.wide["pool_mb"].max()),
        "all_recovered": bool(r.notna().all()),
        "not_recovered": int(r.isna().sum()),
        "recovery_max": float(r.max()),
        "recovery_median": float(r.median()),
        "recovered": RECOVERED,
    }


def findings(res: Results) -> str:
    """What this run found, as a Markdown list (the template's paragraphs, one per finding)."""
    return "\n".join(prose.render("buffer_eviction", "findings", **numbers(res)).split("\n\n"))
