"""The versions page's sentences, from the analysis (templates in notebooks/versions/)."""

from __future__ import annotations

from dbexp.book import prose
from dbexp.chapters.versions import counting
from dbexp.chapters.versions.analysis import (TARGET_HALF_WIDTH, TARGET_HEADLINE, ablation, best_windows, components, control,
                                              default_minutes, design_estimate, headlines, host_speed_summary, length_check,
                                              pool_reads, profile_modules, resolution, start_seconds, timing, widest,
                                              windows)
from dbexp.chapters.versions.regression import BASELINE, STEPS, source_gap, step_name
from dbexp.experiments.chapter import Results, memo
from dbexp.servers.registry import FLAVORS


def _short(p: dict | None) -> dict | None:
    if p is None:
        return None
    return {**p, "server": p["server"].split(" ", 1)[1], "against": p["against"].split(" ", 1)[1]}


def ablation_numbers(res: Results) -> list[dict]:
    """Per newer version: its gap to the oldest at the source's baseline and after the source's steps
    (with the source's 8.0 gap beside where the version is 8.0), and the factor that, alone, moves the
    gap the most (by its points, resolved or not: the interval says which)."""
    ab = ablation(res)
    out = []
    for new, g in (ab.groupby("new", sort=False) if len(ab) else ()):
        g = g.set_index("config")
        last = step_name(len(STEPS))
        if BASELINE not in g.index or last not in g.index:
            continue
        alone = g[g["kind"].isin(["alone", "step 1"])].dropna(subset=["points"])  # step 1 is one factor alone
        top = alone.loc[alone["points"].abs().idxmax()] if len(alone) else None
        is80 = new.split(" ", 1)[1].startswith("8.0")
        pick = lambda c: {"gap": g.loc[c, "gap"], "low": g.loc[c, "gap_low"], "high": g.loc[c, "gap_high"],  # noqa: E731
                          "source": source_gap(c) if is80 else None}
        same = g[g["unchanged"].astype(bool)] if "unchanged" in g else g.iloc[:0]
        out.append({"same": [{"config": c, "moves": x["moves"], "low": x["moves_low"], "high": x["moves_high"],
                              "shared": bool(x.get("shared", False)), "holds": x["moves_low"] <= 1 <= x["moves_high"]}
                             for c, x in same.iterrows()],
                    "new": new.split(" ", 1)[1], "old": g["old"].iloc[0].split(" ", 1)[1], "base": pick(BASELINE),
                    "last": pick(last), "top": None if top is None else
                    {"config": top.name, "points": top["points"], "moves": top["moves"], "low": top["moves_low"],
                     "high": top["moves_high"]}})
    return out


def length_numbers(res: Results) -> dict | None:
    """The run-length check: its windows, and how many versions' ratios to their base moved beyond the
    interval (long over short excluding 1), with the range of long over short."""
    lc = length_check(res)
    if lc.empty:
        return None
    moved = lc[(lc["ci_low"] > 1) | (lc["ci_high"] < 1)]
    return {"tests": " and ".join(dict.fromkeys(lc["test"])), "short_s": float(lc["short_s"].median()), "long_s": float(lc["long_s"].median()),
            "n": len(lc), "moved": len(moved), "low": float(lc["ratio"].min()), "high": float(lc["ratio"].max()),
            "moved_low": float(moved["ratio"].min()) if len(moved) else float("nan"),
            "moved_high": float(moved["ratio"].max()) if len(moved) else float("nan"),
            "flavors": len(lc["flavor"].unique())}


def findings_numbers(res: Results) -> dict:
    pr = pool_reads(res)
    heads = [{**h, "title": FLAVORS[h["flavor"]].title if h["flavor"] in FLAVORS else h["flavor"],
              "lowest": _short(h["lowest"]), "highest": _short(h["highest"])} for h in headlines(res)]
    wide = [{**x, "title": FLAVORS[x["flavor"]].title if x["flavor"] in FLAVORS else x["flavor"]}
            for x in widest(res).to_dict("records")]
    ctl = control(res)
    for x in ctl.get("flavors", []):
        x["title"] = FLAVORS[x["flavor"]].title if x["flavor"] in FLAVORS else x["flavor"]
    speed = host_speed_summary(res)
    return {"headlines": heads, "widest": wide, "resolution": _short_cells(resolution(res)), "control": ctl,
            "target": TARGET_HALF_WIDTH, "headline_target": TARGET_HEADLINE,
            "speed": [{**x, "title": _title(x["flavor"])} for x in speed.to_dict("records")] if len(speed) else [],
            "pool_reads": float(pr["pool_reads"].sum()) if len(pr) else float("nan"),
            "pool_windows": int(pr["windows"].sum()) if len(pr) else 0,
            "windows": windows(res), "ablation": ablation_numbers(res), "length": length_numbers(res),
            "work": counting.work(res)}


def _title(flavor: str) -> str:
    return FLAVORS[flavor].title if flavor in FLAVORS else flavor


def _short_cells(found: dict) -> dict:
    """The resolution's cells with their versions alone ('8.0.15', not 'mysql 8.0.15')."""
    cut = lambda n: n.split(" ", 1)[1] if " " in n else n  # noqa: E731
    return {**found, "headline": [{**x, "server": cut(x["server"]), "against": cut(x["against"])}
                                  for x in found.get("headline", [])]}


def design_numbers(res: Results) -> dict:
    """The design section's numbers: the variance components per flavor, the half-widths they predict per design
    (from the A/A pairs' noise to every comparison's), and what a window cost."""
    comp = components(res)
    est = design_estimate(res)
    designs = []
    for label, g in (est.groupby("design", sort=False) if len(est) else ()):
        x = g.iloc[0]
        designs.append({"design": label, "instances": int(x["instances"]), "windows": int(x["windows"]),
                        "active_s": float(x["active_s"]), "per_test_s": float(x["per_test_s"]),
                        "flavors": [{"title": _title(r["flavor"]), "aa": r["half_width_aa"], "all": r["half_width_all"]}
                                    for r in g.to_dict("records")]})
    starts, tim = start_seconds(res), timing(res)
    rows = []
    for x in (comp.to_dict("records") if len(comp) else []):
        t = tim.get(x["flavor"], {})
        start = starts.get(x["flavor"], float("nan"))
        rows.append({**x, "title": _title(x["flavor"]), "start_s": start, "window_s": t.get("step_s", float("nan")),
                     "best_windows": best_windows(x["between"], x["c"], x["active_s"], start, t.get("step_s", 0.0),
                                                  t.get("servers", 1))})
    return {"components": rows,
            "designs": designs,
            "timing": [{**x, "title": _title(f)} for f, x in timing(res).items()],
            "minutes": [{"title": _title(f), "minutes": m} for f, m in default_minutes(res).items()]}


def profile_numbers(res: Results) -> dict:
    """The share of a server binary's samples perf could not name, least and most over the profiles."""
    mods = profile_modules(res)
    return {"unnamed_min": float(mods["unnamed"].min()), "unnamed_max": float(mods["unnamed"].max())}


def _findings_numbers(res: Results) -> dict:
    return memo(res, "versions.findings_numbers", lambda: findings_numbers(res))  # the findings and resolution


NUMBERS = {"findings": _findings_numbers, "resolution": _findings_numbers, "profile": profile_numbers,
           "design": design_numbers, "headline": _findings_numbers, "counted": counting.numbers}


def headline(res: Results) -> str:
    """The page's answer in one or two sentences (the template headline.md.j2; '' with no relative QPS)."""
    return sentence(res, "headline").strip()


def findings(res: Results) -> str:
    """The page's findings (the template findings.md.j2)."""
    return sentence(res, "findings")


def sentence(res: Results, name: str) -> str:
    return prose.render("versions", name, **NUMBERS[name](res))
