"""The versions page's sentences, from the analysis (templates in notebooks/versions/)."""

from __future__ import annotations

from dbexp.book import prose
from dbexp.chapters.versions.analysis import (TARGET_HALF_WIDTH, control, headlines, pool_reads, resolution, widest,
                                              windows)
from dbexp.servers.registry import FLAVORS
from dbexp.experiments.chapter import Results


def _short(p: dict | None) -> dict | None:
    if p is None:
        return None
    return {**p, "server": p["server"].split(" ", 1)[1], "against": p["against"].split(" ", 1)[1]}


def findings_numbers(res: Results) -> dict:
    pr = pool_reads(res)
    heads = [{**h, "title": FLAVORS[h["flavor"]].title if h["flavor"] in FLAVORS else h["flavor"],
              "lowest": _short(h["lowest"]), "highest": _short(h["highest"])} for h in headlines(res)]
    wide = [{**x, "title": FLAVORS[x["flavor"]].title if x["flavor"] in FLAVORS else x["flavor"]}
            for x in widest(res).to_dict("records")]
    return {"headlines": heads, "widest": wide, "resolution": resolution(res), "control": control(res),
            "target": TARGET_HALF_WIDTH, "pool_reads": float(pr["pool_reads"].sum()) if len(pr) else float("nan"),
            "pool_windows": int(pr["windows"].sum()) if len(pr) else 0,
            "windows": windows(res)}


NUMBERS = {"findings": findings_numbers, "resolution": findings_numbers}


def sentence(res: Results, name: str) -> str:
    return prose.render("versions", name, **NUMBERS[name](res))
