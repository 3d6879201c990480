"""Letting a reader take the numbers away: under each chart or table, a link to a CSV of its own rows
and to the chapter's published results (the Parquet files under ``data/<chapter>/``).

The CSV is written when the chapter executes, next to the page papermill writes
(``book/_data/<chapter>/<name>.csv``, ignored by git: every build writes it again), and the links are
MyST ``{download}`` roles, so Sphinx copies both files into the built site (``_downloads/``) and fails
the build (``-W``) if one is missing. That needs the book to parse Markdown outputs as MyST
(``nb_render_markdown_format: myst`` in ``_config.yml``).

In a notebook::

    from dbexp.book import downloads
    downloads.chart(charts.lines(df, ...), res, "latency")      # the chart, then its data links
    downloads.links(res, df, "slopes")                           # the links alone, for rows already shown
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

PAGE_DIR = "book"  # where executed chapters live; links are relative to it
CSV_DIR = "_data"  # under PAGE_DIR: book/_data/<chapter>/<name>.csv
DATA_DIR = "data"  # the published results: data/<chapter>/<table>.parquet
TABLES = ("runs", "measurements", "series", "counters")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def _root(root=None) -> Path:
    from dbexp.paths import project_root

    return Path(root) if root is not None else project_root()


def _chapter(res_or_name) -> str:
    name = res_or_name if isinstance(res_or_name, str) else res_or_name.experiment
    if not _NAME.match(name):
        raise ValueError(f"not a chapter name: {name!r}")
    return name


def write_csv(res_or_name, rows: pd.DataFrame, name: str, root=None) -> str:
    """Write ``rows`` to ``book/_data/<chapter>/<name>.csv``; return its path relative to the page."""
    if not _NAME.match(name):
        raise ValueError(f"a CSV name is lower case letters, digits, '-' and '_', not {name!r}")
    chapter = _chapter(res_or_name)
    folder = _root(root) / PAGE_DIR / CSV_DIR / chapter
    folder.mkdir(parents=True, exist_ok=True)
    rows.to_csv(folder / f"{name}.csv", index=False)
    return f"{CSV_DIR}/{chapter}/{name}.csv"


def published_files(res_or_name, root=None) -> list[str]:
    """The published Parquet files of a chapter that exist, relative to the page (``../data/...``)."""
    chapter = _chapter(res_or_name)
    folder = _root(root) / DATA_DIR / chapter
    return [f"../{DATA_DIR}/{chapter}/{t}.parquet" for t in TABLES if (folder / f"{t}.parquet").is_file()]


def _role(label: str, target: str) -> str:
    return f"{{download}}`{label} <{target}>`"


def links_markdown(res_or_name, rows: pd.DataFrame | None = None, name: str | None = None, root=None,
                   what: str = "this chart") -> str:
    """One line of MyST: the CSV of ``rows`` (written now) and the chapter's published Parquet files."""
    parts = []
    if rows is not None:
        if name is None:
            raise ValueError("a CSV needs a name")
        target = write_csv(res_or_name, rows, name, root)
        parts.append(f"{_role(f'{name}.csv', target)} ({what}, {len(rows):,} row{'' if len(rows) == 1 else 's'})")
    published = published_files(res_or_name, root)
    if published:
        files = ", ".join(_role(Path(p).stem, p) for p in published)
        parts.append(f"the chapter's published results, Parquet: {files}")
    if not parts:
        return ""
    return "Data: " + "; ".join(parts) + "."


def links(res_or_name, rows: pd.DataFrame | None = None, name: str | None = None, root=None,
          what: str = "this chart") -> None:
    """Display :func:`links_markdown` (nothing when there is nothing to link)."""
    from IPython.display import Markdown, display

    text = links_markdown(res_or_name, rows, name, root, what)
    if text:
        display(Markdown(text))


def chart_rows(chart) -> pd.DataFrame | None:
    """The DataFrame an Altair chart (layered, faceted or concatenated) draws, when it has one."""
    data = getattr(chart, "data", None)
    if isinstance(data, pd.DataFrame):
        return data
    frames = []
    for key in ("layer", "vconcat", "hconcat", "concat"):
        for sub in getattr(chart, key, None) or []:
            found = chart_rows(sub)
            if found is not None:
                frames.append(found)
    spec = getattr(chart, "spec", None)  # a facet chart whose data sits on its inner spec
    if spec is not None and not isinstance(spec, dict):
        found = chart_rows(spec)
        if found is not None:
            frames.append(found)
    if not frames:
        return None
    unique = list({id(f): f for f in frames}.values())
    # a reference mark's own one-row frame (a rule at x = 1, say) is no row the chart measured: beside data
    # it would start the CSV with a row empty but for its constant
    data = [f for f in unique if not _reference(f, unique)] or unique
    return data[0] if len(data) == 1 else pd.concat(data, ignore_index=True)


def _reference(frame: pd.DataFrame, frames: list[pd.DataFrame]) -> bool:
    """A frame of at most one row that shares no column with the chart's other frames: a reference mark's."""
    others = set().union(*(set(f.columns) for f in frames if f is not frame))
    return len(frame) <= 1 and bool(others) and not set(frame.columns) & others


def chart(chart_obj, res, name: str, rows: pd.DataFrame | None = None, root=None) -> None:
    """Display an Altair chart, then the links to its rows (``rows``, else the chart's own data) and
    to the chapter's published results."""
    import altair as alt
    from IPython.display import display

    # What Altair's own display does (its renderer's MIME bundle of the spec), without checking the spec
    # against Vega-Lite's JSON schema a second time each render (a third of a chapter's time in charts):
    # the tests build every page's charts with the check on (tests/published), and the book's browser
    # check draws each one. A spec that cannot be made fails the chapter here, where Altair's display
    # would print a traceback and leave the chart out.
    spec = chart_obj.to_dict(validate=False, context={"pre_transform": False})
    display({**alt.renderers.get()(spec), "text/plain": repr(chart_obj)}, raw=True)
    links(res, rows if rows is not None else chart_rows(chart_obj), name, root)
