"""The chapter's sentences, from the templates in notebooks/calibration/ filled with the numbers of
its analysis: what each ratio says, the sampler's cost, the machine's episodes, CPU per query under
pinning, the run-length check, the page's findings and README.md's block."""

from __future__ import annotations

import pandas as pd

from dbexp.book import prose
from dbexp.chapters.calibration.analysis import (LENGTH_FACTOR, RATIOS, cotenancy_table, cpu_table, durations,
                                                 episode_numbers, length_checks, neighbour_server, ratio_busy,
                                                 ratio_table, sampler_cost, server_label, spread_numbers, spread_table,
                                                 variance_components)
from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Results
from dbexp.results.provenance import hardware_label

CHAPTER = "calibration"
WHAT = {"qps": "QPS", "cpu_per_op_us": "server cpu/o", "total_cpu_per_op_us": "server and sysbench cpu/o"}


def _nan_to_none(x):
    return None if x is None or x != x else x


def ratio_parts(res: Results) -> list[dict]:
    """Per measured ratio: its A and B, its fewest pairs, each server's ratio, interval and effect
    (in A's and B's names), and the widest interval's half-width in % of its ratio."""
    rt = ratio_table(res)
    out = []
    for part, (a, b, _) in RATIOS.items():
        g = rt[(rt["ratio"] == part) & (rt["pairs"] > 0)] if len(rt) else rt
        if g.empty:
            continue
        cells = [{"server": server_label(r), "ratio": r["ratio_qps"], "lo": r["ci_low"], "hi": r["ci_high"],
                  "effect": verdicts.effect(r["ci_low"], r["ci_high"]).replace("A is", a).replace("than B", "than " + b)}
                 for _, r in g.iterrows()]
        out.append({"part": part, "a": a, "b": b, "pairs": int(g["pairs"].min()), "cells": cells,
                    "widest": g["half_width_pct"].max()})
    return out


def spread_reading(res: Results) -> str:
    """The spread of single runs in words (point select both ways; read-write where measured)."""
    return prose.render(CHAPTER, "spread_reading", **spread_numbers(spread_table(res)))


def ratio_design(res: Results) -> str:
    """How these results paired the ratios: one group per server sharing the reference run, or one
    group per ratio (the published runs before the shared design)."""
    return prose.render(CHAPTER, "ratio_design", shared=bool((res.wide["part"] == "ratios").any()))


def ratio_reading(res: Results) -> str:
    """What each measured ratio says, one bullet per ratio (Markdown)."""
    return prose.render(CHAPTER, "ratio_reading", keep_lines=True, ratios=ratio_parts(res))


def _cost_rows(cost: pd.DataFrame) -> list[dict]:
    return [{"sessions": int(r["idle sessions"]), "processes": _nan_to_none(r.get("server processes")),
             "ratio": r["QPS harness / hand"], "lo": r["QPS low"], "hi": r["QPS high"]} for _, r in cost.iterrows()]


def sampler_cost_sentence(res: Results) -> str:
    """Part 3 in words: the harness's QPS cost per number of sessions, the effect the last interval
    excludes, and the sampler thread's own CPU."""
    cost = sampler_cost(res)
    if cost.empty:
        return prose.render(CHAPTER, "sampler_cost", rows=[])
    top = cost.iloc[-1]
    cpu = cost["sampler CPU (% of a CPU)"].tolist() if "sampler CPU (% of a CPU)" in cost else None
    return prose.render(CHAPTER, "sampler_cost", rows=_cost_rows(cost), server=top["server"],
                        top_sessions=int(top["idle sessions"]), loss=100 * (1 - top["QPS harness / hand"]),
                        worst=_nan_to_none(100 * (1 - top["QPS low"])), sampler_cpu=cpu)


def episodes_sentence(res: Results) -> str:
    """The spread's runs that fell in episodes of the machine, and why they are the machine's."""
    e = episode_numbers(res)
    return prose.render(CHAPTER, "episodes", threads=int(res.wide["threads"].max()), **e)


def _cpu_rows(res: Results) -> list[dict]:
    cpu = cpu_table(res)
    cpu = cpu[cpu["ratio"] == "pinning"] if len(cpu) else cpu
    return [{"server": f"{r['flavor']} {r['version']}", "cpu_a": r["cpu_a"], "cpu_b": r["cpu_b"],
             "ratio": r["ratio_cpu"], "lo": r["ci_low"], "hi": r["ci_high"], "pairs": int(r["pairs"]),
             "client": r["ratio_client"], "client_lo": r["client_low"], "client_hi": r["client_high"],
             "cpus_a": r["cpus_a"], "cpus_b": r["cpus_b"]} for _, r in cpu.iterrows()]


def cpu_reading(res: Results) -> str:
    """Server CPU per query under pinning (pair ratios) and what it means for the rest of the book."""
    rows = _cpu_rows(res)
    return prose.render(CHAPTER, "cpu_reading", keep_lines=True, rows=rows,
                        low=min((r["lo"] for r in rows), default=None), high=max((r["hi"] for r in rows), default=None))


def _checks(res: Results) -> tuple[list[dict], list[str]]:
    """The run-length checks measured (as the templates name them) and the comparisons without one."""
    lc = length_checks(res)
    done, missing = [], []
    for _, r in lc.iterrows():
        what = WHAT.get(r["value"], r["value"])
        if pd.isna(r["position"]):
            missing.append(f"{r['label']}, {what}")
            continue
        done.append({"label": r["label"], "what": what, "ratio": r["ratio"], "lo": r["ci_low"], "hi": r["ci_high"],
                     "long": r["long"], "long_s": r["long_s"], "short_s": r["short_s"], "position": r["position"],
                     "over": r["over"], "over_lo": r["over_low"], "over_hi": r["over_high"],
                     "comparison": r["comparison"], "reading": r["reading"],
                     # where the long ratio itself lies against the short runs' interval (issue 30: the over
                     # interval may hold 1 while the long ratio lies outside the short interval)
                     "long_against_short": verdicts.inside(r["long"], r["ci_low"], r["ci_high"])})
    return done, missing


def _factor(checks: list[dict]) -> int:
    return round(checks[0]["long_s"] / checks[0]["short_s"]) if checks else LENGTH_FACTOR


def _length_groups(checks: list[dict]) -> dict:
    """The checks by what their interval says: the same within 1 +- NEAR_BAND (agree), holding 1 but
    reaching beyond that band (too wide to tell), and excluding 1 (run length moved the answer)."""
    inside = [c for c in checks if c["position"] == "inside"]
    return {"agree": [c for c in inside if c["reading"] == "agrees"],
            "wide": [c for c in inside if c["reading"] != "agrees"],
            "outside": [c for c in checks if c["position"] != "inside"], "band": verdicts.NEAR_BAND}


def length_reading(res: Results) -> str:
    """The run-length check in words: which comparisons' long over short lies within 1 +- 5% (agree),
    which holds 1 but is too wide to tell, and which excludes 1."""
    checks, missing = _checks(res)
    return prose.render(CHAPTER, "length_reading", checks=checks, missing=missing, factor=_factor(checks),
                        **_length_groups(checks))


def _seconds_range(res: Results) -> str:
    """The seconds of the runs the page compares (the run-length check's left out): '3' or '4 to 6'."""
    w = res.wide[res.wide["part"] != "length"]
    seconds = sorted(w["workload"].map(lambda x: x["duration_s"]).unique())
    return f"{seconds[0]:g}" if len(seconds) == 1 else f"{seconds[0]:g} to {seconds[-1]:g}"


def findings(res: Results) -> str:
    """The page's summary (Markdown list): the spread of single runs and the machine's episodes, what
    the lab costs, what pinning changes (QPS and CPU per query), the sampler's cost at the most
    sessions held, and the run-length check."""
    sp = spread_table(res)
    spread = None
    if (sp["script"] == "oltp_point_select").any():
        n = spread_numbers(sp)
        e = episode_numbers(res)
        spread = {"repeats": int(sp["n"].max()), "cv_median": n["cv_ps_median"], "cv_max": n["cv_ps_max"],
                  "cv_max_server": n["cv_ps_max_server"], "cv_steady_max": n["cv_ps_steady_max"],
                  "episodes": e["episodes"], "runs": e["runs"], "busy_low": e["busy_low"], "busy_high": e["busy_high"],
                  "rest_median": e["rest_median"], "threshold": e["threshold"]}
    parts = {p["part"]: p for p in ratio_parts(res)}
    cost = [parts[p] for p in ("harness", "container") if p in parts]
    # the lab's cost: every interval of harness / hand and container / bare holding 1, or the ones that do not
    bent = [{**c, "a": p["a"], "b": p["b"], "direction": "slower" if c["hi"] < 1 else "faster"}
            for p in cost for c in p["cells"] if not c["lo"] <= 1 <= c["hi"]]
    cpu = [{"server": r["server"], "ratio": r["ratio"], "lo": r["lo"], "hi": r["hi"]} for r in _cpu_rows(res)]
    sampler = sampler_cost(res)
    sessions = None
    if not sampler.empty:
        top = sampler.iloc[-1]
        sessions = {**_cost_rows(sampler)[-1], "server": top["server"],
                    "sampler_cpu": _nan_to_none(top.get("sampler CPU (% of a CPU)"))}
    checks, _ = _checks(res)
    length = None
    if checks:
        versions = [c for c in checks if c["comparison"] == "versions"]
        length = {"total": len(checks), "factor": _factor(checks), "first": (versions or checks)[0],
                  **_length_groups(checks)}
    # the lab's cost comparisons whose answer moved with runs ten times as long (the run-length check)
    moved = [c for c in (length or {}).get("outside", []) if c["what"] == "QPS"
             and any(c["label"].endswith(f"{p['a']} / {p['b']}") for p in cost)]
    from dbexp.chapters.calibration.analysis import aa_intervals, aa_summary

    aa = aa_summary(res)
    ai = aa_intervals(res)
    intervals = {"holds": int(ai["holds"].sum()), "n": len(ai)} if len(ai) else None
    text = prose.render(CHAPTER, "findings", spread=spread, cost=cost, bent=bent, busy=ratio_busy(res),
                        pinning=parts.get("pinning"), cpu=cpu, sessions=sessions, length=length, moved=moved,
                        durations=durations(res, spread=True), cotenancy=cotenancy_numbers(res),
                        variance=variance_components(res).to_dict("records"), aa=aa if aa.get("n") else None,
                        intervals=intervals)
    return "\n".join(text.split("\n\n"))


def cotenancy_numbers(res: Results) -> dict | None:
    """The co-tenancy finding: each server's CPU per statement with the most neighbours over alone, and
    whether two servers' intervals lie apart (None where no server ran with neighbours)."""
    co = cotenancy_table(res)
    if co.empty or not (co["neighbours"] > 0).any():
        return None
    top = co[co["neighbours"] == co["neighbours"].max()]
    rows = [{"server": r["server"], "ratio": r["cpu_ratio"], "lo": r["cpu_low"], "hi": r["cpu_high"],
             "pairs": int(r["pairs"])} for _, r in top.iterrows()]
    apart = None
    if len(rows) > 1:  # the most against the least growth: the interval of their ratio (log SEs added)
        hi_row, lo_row = max(rows, key=lambda x: x["ratio"]), min(rows, key=lambda x: x["ratio"])
        r, lo, hi = stats.ratio_of_ratios(*((x["ratio"], x["lo"], x["hi"], x["pairs"] - 1) for x in (hi_row, lo_row)))
        apart = {"top": hi_row["server"], "bottom": lo_row["server"], "ratio": r, "lo": lo, "hi": hi}
    return {"most": int(top["neighbours"].iloc[0]), "neighbour": neighbour_server(res), "rows": rows,
            "apart": apart, "pairs": min(x["pairs"] for x in rows)}


def readme_block(res: Results) -> str:
    """The calibration figures as Markdown, for README.md (regenerated on publish)."""
    sp = spread_table(res)
    rt = ratio_table(res)
    rt = rt[rt["pairs"] > 0]
    w = res.wide
    ratios = [{**r, "server": server_label(r), "reading": verdicts.effect(r["ci_low"], r["ci_high"])}
              for r in rt.to_dict("records")]
    return prose.render(CHAPTER, "readme_block", keep_lines=True, date=f"{pd.to_datetime(w['started_at']).min():%Y-%m-%d}",
                  hardware=hardware_label(res.host), threads=int(w["threads"].max()),
                  ratio_durations=durations(res, False), spread_durations=durations(res, True),
                  repeats=int(sp["n"].max()), ratios=ratios, spread=sp.to_dict("records")) + "\n"


def headline(res: Results) -> str:
    """The page's answer in two sentences, from the data: on the runs' CPU, how often one run of a server against
    one on another start of it read as a regression of 5% or more (an exact 95% interval) and how many of the
    lab's own A/A intervals held 1; and pinning's QPS ratio on each ratio server with its interval ('' without
    the spread's A/A pairs)."""
    from dbexp.chapters.calibration.analysis import aa_intervals, aa_summary
    from dbexp.experiments.chapter import cpu_models

    aa = aa_summary(res)
    if not aa.get("n"):
        return ""
    lo, hi = aa["below_ci"]
    seconds = durations(res, spread=True)
    text = (f"On an {cpu_models(res.runs)}, one {seconds} s point-select run of a server against one on another start "
            f"of the same server read below {1 - aa['band']:.2f} in {aa['below']} of {aa['n']} pairs ({lo:.0%} to "
            f"{hi:.0%} of such pairs, exact 95% interval): single runs cannot tell a {aa['band']:.0%} regression from "
            "noise here")
    ai = aa_intervals(res)
    if len(ai):
        text += f", while this lab's 95% intervals held 1 in {int(ai['holds'].sum())} of {len(ai)} such comparisons"
    text += "."
    rt = ratio_table(res)
    pin = rt[(rt["ratio"] == "pinning") & (rt["pairs"] > 0)] if len(rt) else rt
    if len(pin):
        cells = [f"{r['ratio_qps']:.3f} {prose.ci(r['ci_low'], r['ci_high'], '.3f')} ({server_label(r)})"
                 for _, r in pin.iterrows()]
        text += (" Pinning the server and its client to one CPU each gave " + " and ".join(cells)
                 + " of the QPS unpinned (pair ratios, 95% t intervals).")
    return text
