"""What moved since a chapter's last publication: its claims then (dbexp.results.previous) beside its claims now,
matched by ledger id, compared by verdict category (verdicts.category), counted by move, and the findings
whose headline number moved further than either publication's interval allows between two machines."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from dbexp.experiments.verdicts import category
from dbexp.results.previous import KEPT, previous

NEW, GONE = "new claim", "claim gone"


def _key(df: pd.DataFrame, by_id: bool) -> pd.Series:
    """The claim's key: its ledger ids where both tables have them, else its text without tags."""
    if by_id:
        return df["id"].astype(str)
    return df["claim"].astype(str).str.replace(r"<[^>]+>", "", regex=True).str.strip()


def moved(experiment: str, claims: pd.DataFrame, root: str | Path | None = None) -> pd.DataFrame | None:
    """Each claim of the current table beside the last publication's, matched by ledger id (by its text where
    the last publication kept no ids): what was measured then and now, the verdicts and their categories
    (verdicts.category), and whether the category moved ("new claim" and "claim gone" say so). None where no
    earlier publication was kept."""
    prev = previous(experiment, root)
    if prev is None:
        return None
    now = claims[[c for c in KEPT if c in claims]]
    by_id = ("id" in prev and "id" in now and (prev["id"].astype(str) != "").all()
             and (now["id"].astype(str) != "").all())
    prev = prev.assign(_key=_key(prev, by_id))
    now = now.assign(_key=_key(now, by_id))
    both = prev.drop(columns=[c for c in ("id",) if c in prev and c in now]).merge(
        now, on="_key", how="outer", suffixes=(" then", " now"), indicator=True)
    if "claim now" in both:
        both["claim"] = both["claim now"].fillna(both["claim then"])
    both["category then"] = [category(v) if isinstance(v, str) else "" for v in both["verdict then"]]
    both["category now"] = [category(v) if isinstance(v, str) else "" for v in both["verdict now"]]
    both["moved"] = [
        NEW if how == "right_only" else GONE if how == "left_only" else ("yes" if a != b else "no")
        for how, a, b in zip(both["_merge"], both["category then"], both["category now"])]
    order = ["id", "claim", "measured here then", "verdict then", "category then", "measured here now", "verdict now",
             "category now", "moved"]
    return both[[c for c in order if c in both]].fillna("").reset_index(drop=True)


def counts(table: pd.DataFrame) -> pd.Series:
    """How many claims moved from one verdict category to another ("agrees -> not measured": 3), the moves
    only, most first; a new or a gone claim counts as a move from or to nothing."""
    m = table[table["moved"] != "no"]
    keys = [f"{a or '(none)'} \u2192 {b or '(none)'}" for a, b in zip(m["category then"], m["category now"])]
    return pd.Series(keys, dtype=object).value_counts()


_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_FIRST = re.compile(rf"(?<![\w.])(?P<point>{_NUM})\s*(?:%|[a-zµ/]{{1,12}})?\s*\[\s*(?P<lo>{_NUM})\s*%?\s*,"
                    rf"\s*(?P<hi>{_NUM})\s*%?\s*\]")


def first_interval(cell: str) -> tuple[float, float, float] | None:
    """The first "POINT [LOW, HIGH]" of a measured cell (its headline number), or None."""
    found = _FIRST.search(re.sub(r"<[^>]+>", "", str(cell)))
    if not found:
        return None
    return tuple(float(found[k].replace(",", "")) for k in ("point", "lo", "hi"))


def machine_moves(table: pd.DataFrame, then_host: str, now_host: str) -> pd.DataFrame:
    """The claims whose headline number moved beyond what either publication's interval allows when the two
    ran on different machines (the earlier point outside the interval now, and the point now outside the
    earlier interval): findings that depend on the machine, or on what else changed between the two. Empty
    where both ran on one machine."""
    rows = []
    if then_host and now_host and then_host != now_host:
        for _, r in table[table["moved"].isin(("yes", "no"))].iterrows():
            a, b = first_interval(r["measured here then"]), first_interval(r["measured here now"])
            if a and b and not (b[1] <= a[0] <= b[2]) and not (a[1] <= b[0] <= a[2]):
                rows.append((r["claim"], f"{r['measured here then']}", f"{r['measured here now']}"))
    return pd.DataFrame(rows, columns=["claim", f"then ({then_host})", f"now ({now_host})"])
