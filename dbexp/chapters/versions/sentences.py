"""The versions page's sentences, from the analysis (templates in notebooks/versions/)."""

from __future__ import annotations

from dbexp.book import prose
from dbexp.chapters.versions.analysis import TARGET_HALF_WIDTH, control, pool_reads, resolution, summary, windows
from dbexp.experiments.chapter import Results


def _medians(res: Results, view: str) -> list[dict]:
    s = summary(res, view)
    if s.empty:
        return []
    return [{"server": x.server.split(" ", 1)[1], "against": x.against.split(" ", 1)[1], "flavor": x.flavor,
             "group": str(x.group), "median": x.median_w, "low": x.median_low, "high": x.median_high,
             "tests": int(x.tests)} for x in s.itertuples()]


def findings_numbers(res: Results) -> dict:
    pr = pool_reads(res)
    return {"previous": _medians(res, "previous"), "resolution": resolution(res), "control": control(res),
            "target": TARGET_HALF_WIDTH, "pool_reads": float(pr["pool_reads"].sum()) if len(pr) else float("nan"),
            "windows": windows(res)}


NUMBERS = {"findings": findings_numbers, "resolution": findings_numbers}


def sentence(res: Results, name: str) -> str:
    return prose.render("versions", name, **NUMBERS[name](res))
