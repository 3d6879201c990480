"""The sources' claims this chapter can speak to, with what the runs measured and a verdict computed
from the confidence interval: the spread of single runs, then each flavor's version claims (its part)."""

from __future__ import annotations

import pandas as pd

from dbexp.chapters.calibration.analysis import spread_table, version_ratio
from dbexp.chapters.calibration.parts import PARTS
from dbexp.experiments import verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import CALLAGHAN_24


def _ratio_text(what: str, r: float, lo: float, hi: float, needs: str) -> str:
    if r != r:
        return f"not measured at this scale (needs {needs})"
    return f"{what}: {r:.3f} [{lo:.3f}, {hi:.3f}]"


def claims(res: Results) -> pd.DataFrame:
    rows = []
    sp = spread_table(res)
    cv_ps = sp[sp["script"] == "oltp_point_select"]["cv"]
    rows.append({
        "claim": CALLAGHAN_24.cite("Versions are compared as relative QPS against a named base; a value below "
                                   "1 may be a regression or only noise, so suspicious results are rerun"),
        "measured here": f"point-select CV over {int(sp['n'].max()) if len(sp) else 0} repeats: median "
                         f"{cv_ps.median():.1%}, worst {cv_ps.max():.1%}",
        "verdict": verdicts.single_runs(float(cv_ps.median()) if len(cv_ps) else float("nan"))})
    for flavor, part in PARTS.parts.items():  # the parts in the order declared: MySQL's claims, then PostgreSQL's
        for c in part.claims:
            r, lo, hi = version_ratio(res, flavor, c.num, c.den, value=c.value)
            rows.append({"claim": c.source.cite(c.claim), "measured here": _ratio_text(c.measured, r, lo, hi, c.needs),
                         "verdict": c.verdict(lo, hi)})
    return pd.DataFrame(rows)
