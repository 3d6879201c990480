"""Where the project's folders are, wherever a command or a notebook runs from."""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """DBEXP_ROOT, else the nearest folder upwards with _toc.yml and dbexp/, else the checkout
    this package was installed from, else the current folder."""
    if os.environ.get("DBEXP_ROOT"):
        return Path(os.environ["DBEXP_ROOT"]).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").exists() and (folder / "dbexp").is_dir():
            return folder
    checkout = Path(__file__).resolve().parents[1]
    if (checkout / "_toc.yml").exists():
        return checkout
    return here


def results_db() -> Path:
    return Path(os.environ.get("DBEXP_RESULTS") or project_root() / ".dbexp" / "results.duckdb")


def data_dir() -> Path:
    return project_root() / "data"


def cache_dir() -> Path:
    """Downloads, unpacked servers and option lists: $DBEXP_CACHE, else $XDG_CACHE_HOME/dbexp,
    else ~/.cache/dbexp."""
    base = os.environ.get("DBEXP_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "dbexp")
    return Path(base)
