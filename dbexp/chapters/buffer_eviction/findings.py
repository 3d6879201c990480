"""The page's summary: the summary's numbers, by variant, put into notebooks/buffer_eviction/findings.md.j2
(three to five findings, each with its numbers and intervals)."""

from __future__ import annotations

import math

import pandas as pd

from dbexp.book import prose
from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Results

from .analysis import hot_rate, of_variant, per_run, pool_sizes, scan_depths, summary, tidy
from .claims import (DEFAULTS, DEPTH_DEFAULT, KEPT_MISSES, KEPT_RESIDENT, STEP_NAMES, _protected, _step_rows, kept,
                     start_witness)
from .chapter import HOT_KEPT_FIRST
from .engines.innodb import OLD_MIN_LEN


def _nan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _kept_rows(df: pd.DataFrame, reference: pd.DataFrame | None = None, res: Results | None = None,
               variants: tuple[str, ...] = ()) -> list[dict]:
    """One dict per server: its misses per hot query during the scan with their interval, the least
    share of the hot table resident, the verdict on 'kept' (claims.kept; against ``reference``, the same scan
    without the defence, where given: claims._protected), gated by the hot set's standing at the scan's start in
    the runs of ``variants`` (claims.start_witness: a verdict without it is no verdict), and that standing."""
    without = ({r.series_name: kept(r.misses_low, r.misses_high, r.hot_resident_scan) for r in reference.itertuples()}
               if reference is not None else {})
    out = []
    for r in df.itertuples():
        verdict = _protected(kept(r.misses_low, r.misses_high, r.hot_resident_scan), without.get(r.series_name))
        full = None
        if res is not None and variants:
            mine = variants + (("old_blocks_time=0",) if r.series_name in without else ())
            full, gate = start_witness(res, r.series_name, mine)
            verdict = verdicts.witnessed(verdict, gate)
        out.append({"server": r.series_name, "misses": r.misses_per_q, "lo": r.misses_low, "hi": r.misses_high,
                    "reads": r.hot_reads_s_scan, "resident": r.hot_resident_scan, "state": verdict.split(" (")[0],
                    "witness_failed": full is not None and not full.ok,
                    "young_known": not _nan(getattr(r, "kept_at_scan_min", float("nan"))),
                    "young_at_scan": getattr(r, "kept_at_scan_min", float("nan")),
                    "old_at_scan": getattr(r, "old_at_scan_max", float("nan")),
                    "young_during": getattr(r, "hot_young_scan_min", float("nan")),
                    "pages": getattr(r, "hot_pages", float("nan")),
                    "lru_min": getattr(r, "lru_pages_min", float("nan")),
                    "free": getattr(r, "free_pages_scan", float("nan")),
                    "too_short": not _nan(getattr(r, "lru_pages_min", float("nan"))) and r.lru_pages_min < OLD_MIN_LEN})
    return out


def _with_pool(rows: list[dict], pools: dict[str, int], depths: dict[str, int]) -> list[dict]:
    """``rows`` (one per server) with the pages its pool held and the free pages its page cleaner
    kept (its innodb_lru_scan_depth), NaN where the runs did not record them."""
    return [{**r, "pool": pools.get(r["server"], float("nan")), "depth": depths.get(r["server"], float("nan"))}
            for r in rows]


def _difference(runs: pd.DataFrame, server: str, variant: str, base: str) -> tuple[float, float, float]:
    a = runs[(runs["series_name"] == server) & (runs["variant"] == variant)]["misses_per_q_scan"]
    b = runs[(runs["series_name"] == server) & (runs["variant"] == base)]["misses_per_q_scan"]
    return stats.difference_ci(a, b)


def numbers(res: Results) -> dict:
    """What the findings quote, from the summary and the runs."""
    sm = summary(res)
    if sm.empty or "misses_per_q" not in sm:
        return {"runs": 0}
    runs = per_run(res)
    d, z = of_variant(sm, DEFAULTS), of_variant(sm, "old_blocks_time=0")
    zero = []
    for r in d.merge(z, on="series_name", suffixes=("", "_zero")).itertuples():
        diff = _difference(runs, r.series_name, "old_blocks_time=0", DEFAULTS)
        zero.append({"server": r.series_name, "made_young": r.made_young_s_scan_zero, "made_young_def": r.made_young_s_scan,
                     "diff": diff[0], "lo": diff[1], "hi": diff[2]})
    seq, idx = of_variant(sm, "seq scan (ring)"), of_variant(sm, "index scan (no ring)")
    ring = []
    for r in seq.merge(idx, on="series_name", suffixes=("", "_idx")).itertuples():
        diff = _difference(runs, r.series_name, "index scan (no ring)", "seq scan (ring)")
        ring.append({"server": r.series_name, "alloc": r.alloc_s_scan, "alloc_idx": r.alloc_s_scan_idx,
                     "misses": r.misses_per_q, "misses_lo": r.misses_low, "misses_hi": r.misses_high,
                     "misses_idx": r.misses_per_q_idx, "diff": diff[0], "lo": diff[1],
                     "hi": diff[2], "resident": r.hot_resident_scan, "resident_idx": r.hot_resident_scan_idx,
                     "state": kept(r.misses_low, r.misses_high, r.hot_resident_scan).split(" (")[0],
                     "lost_idx": kept(r.misses_low_idx, r.misses_high_idx,
                                                     r.hot_resident_scan_idx).startswith("disagrees")})
    cpu_rows = d if len(d) else seq
    cpu = [{"server": r.series_name, "ratio": r.ratio, "lo": r.ci_low, "hi": r.ci_high, "misses": r.misses_per_q,
            "scan_cpu": getattr(r, "scan_cpu_scan", float("nan")), "cpu_ratio": r.cpu_ratio,
            "cpu_lo": r.cpu_ratio_low, "cpu_hi": r.cpu_ratio_high} for r in cpu_rows.itertuples()]
    no_miss = [c for c in cpu if not _nan(c["misses"]) and c["misses"] == 0]
    return {
        "runs": len(res.wide),
        "kept_misses": KEPT_MISSES,
        "kept_resident": KEPT_RESIDENT,
        "defaults": _kept_rows(d, z, res, (DEFAULTS,)),
        "kept_first": HOT_KEPT_FIRST,
        "zero": zero,
        "ring": ring,
        "ring_shown": any(r["lost_idx"] for r in ring),
        "depth": _with_pool(_kept_rows(of_variant(sm, DEPTH_DEFAULT), None, res, (DEPTH_DEFAULT,)), pool_sizes(res),
                            scan_depths(res, DEPTH_DEFAULT)),
        "old_min_len": OLD_MIN_LEN,
        "cpu": cpu,
        "rate": hot_rate(tidy(res)),
        "cpu_measured": any(not _nan(c["scan_cpu"]) for c in cpu),
        "no_miss": no_miss,
        "steps": [{"name": name, "verdict": row.verdict, "held": row.verdict.startswith("agrees")}
                  for name, row in zip(STEP_NAMES, _step_rows(res))
                  if row.verdict != verdicts.NOT_MEASURED],
    }


def findings(res: Results) -> str:
    """What this run found, as a Markdown list (the template's paragraphs, one per finding)."""
    return "\n".join(prose.render("buffer_eviction", "findings", **numbers(res)).split("\n\n"))


def _state_word(state: str) -> str:
    """A kept-verdict's category (verdicts.category) as the headline says it: kept, lost, unresolved or not
    judged (the template's ``state`` macro)."""
    words = ((verdicts.agrees(), "kept"), (verdicts.disagrees(), "lost"), (verdicts.not_resolved("-"), "unresolved"))
    return next((word for made, word in words if verdicts.category(made) == verdicts.category(state)), "not judged")


def _misses(r: dict, lo: str = "lo", hi: str = "hi") -> str:
    return (f"{prose.num(r['misses'], '.3f')} " + (prose.ci(r[lo], r[hi], ".3f") if r[lo] == r[lo]
                                                   else "(one repeat)"))


def headline(res: Results) -> str:
    """The page's answer in two sentences, from the data: on the runs' CPU, the hot table's misses per hot query
    during the scan with their 95% intervals, InnoDB with a scan depth of 100 and at its own, and PostgreSQL's
    sequential scan (its ring),
    each server's with what the page's rule makes of it (kept, lost, not judged where the hot set did not begin the
    scan young), and the same read without a ring ('' without such runs)."""
    from dbexp.experiments.chapter import cpu_models

    n = numbers(res)
    if not n.get("runs") or not (n["defaults"] or n["ring"]):
        return ""
    parts = []
    if n["defaults"]:
        parts.append("InnoDB with innodb_lru_scan_depth = 100 (the rest at its defaults), " + "; ".join(
            f"{r['server']} {_misses(r)} ({_state_word(r['state'])})" for r in n["defaults"]))
    if n["ring"]:
        parts.append("PostgreSQL's sequential scan (its ring), " + "; ".join(
            f"{r['server']} {_misses(r, 'misses_lo', 'misses_hi')} ({_state_word(r['state'])})" for r in n["ring"]))
    text = (f"On an {cpu_models(res.runs)}, while a scan read a table several times the pool, the hot table missed "
            f"per hot query (95% intervals; kept: the whole interval under {prose.num(KEPT_MISSES, 'g')}): "
            + ". ".join(parts) + ".")
    if n["depth"]:
        text += (" At the server's own innodb_lru_scan_depth (its page cleaner keeping that many of the pool's pages "
                 "free): " + "; ".join(
                     f"{r['server']} {_misses(r)} ({_state_word(r['state'])}; {prose.num(r['depth'], ',.0f')} of "
                     f"{prose.num(r['pool'], ',.0f')} pages)" for r in n["depth"]) + ".")
    if n["ring"]:
        text += (" Read through the primary key without a ring, PostgreSQL's hot set missed "
                 + ", ".join(f"{prose.num(r['diff'], '+.3f')} {prose.ci(r['lo'], r['hi'], '+.3f')} more ({r['server']})"
                             if r["lo"] == r["lo"] else f"{prose.num(r['diff'], '+.3f')} more ({r['server']})"
                             for r in n["ring"]) + ".")
    return text
