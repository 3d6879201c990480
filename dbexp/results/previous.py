"""What the last publication of a chapter said, kept when it is measured again: its claims table
(id, claim, measured, verdict) as computed from the data it replaces, in data/<chapter>/previous_claims.parquet,
so that the page can say which answers moved (dbexp.experiments.moved).

Written by Chapter.run just before a publication overwrites data/<chapter>/ (:func:`keep`); the file is
replaced at every publication, so it always holds the one before the current.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dbexp.results.export import data_dir

FILE = "previous_claims.parquet"
KEPT = ("id", "claim", "measured here", "verdict")


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


