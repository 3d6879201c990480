"""What the last publication of a chapter said, kept when it is measured again: its claims table
(claim, measured, verdict) as computed from the data it replaces, in data/<chapter>/previous_claims.parquet,
so that the page can say which answers moved and by how much (:func:`moved`).

Written by Chapter.run just before a publication overwrites data/<chapter>/ (:func:`keep`); the file is
replaced at every publication, so it always holds the one before the current.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dbexp.results.export import data_dir

FILE = "previous_claims.parquet"
KEPT = ("claim", "measured here", "verdict")


def path(experiment: str, root: str | Path | None = None) -> Path:
    return data_dir(root) / experiment / FILE


def keep(experiment: str, claims: pd.DataFrame, published_until, host: str = "",
         root: str | Path | None = None) -> Path:
    """Store the claims table of the publication about to be replaced, with when its last run ended and
    the machine it ran on (its CPU model: a republication may run elsewhere)."""
    out = path(experiment, root)
    out.parent.mkdir(parents=True, exist_ok=True)
    df = claims[[c for c in KEPT if c in claims]].copy()
    df["published_until"] = str(published_until)
    df["host"] = host
    df.to_parquet(out, index=False)
    return out


def previous(experiment: str, root: str | Path | None = None) -> pd.DataFrame | None:
    p = path(experiment, root)
    return pd.read_parquet(p) if p.exists() else None


def moved(experiment: str, claims: pd.DataFrame, root: str | Path | None = None) -> pd.DataFrame | None:
    """Each claim of the current table beside the last publication's: what was measured then and now,
    the verdicts, and whether the verdict moved (a claim new or gone says so). None where no earlier
    publication was kept."""
    prev = previous(experiment, root)
    if prev is None:
        return None
    now = claims[[c for c in KEPT if c in claims]]
    both = prev.merge(now, on="claim", how="outer", suffixes=(" then", " now"), indicator=True)
    both["moved"] = [
        "new claim" if how == "right_only" else "claim gone" if how == "left_only"
        else ("yes" if str(a).split(" (")[0] != str(b).split(" (")[0] else "no")
        for how, a, b in zip(both["_merge"], both["verdict then"], both["verdict now"])]
    order = ["claim", "measured here then", "verdict then", "measured here now", "verdict now", "moved"]
    return both[[c for c in order if c in both]].fillna("")
