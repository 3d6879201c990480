"""Executing the chapter notebooks and building the Jupyter Book.

    toc.py      which pages _toc.yml lists; which are executed chapters
    params.py   the parameters every chapter receives (scale, run, publish)
    execute.py  one chapter: papermill, parameter check, no traceback left behind
    freshness.py  the render key: is an executed chapter still what executing it again would give?
    build.py    all chapters (render-only: the changed ones, in parallel), then `jupyter-book build -W`
    vega.py     Altair charts offline (a Sphinx extension + enable_offline())
    check.py    headless Chromium: did every chart draw, with no network?
    charts.py   chart helpers for the notebooks: legends with line samples, panels and servers
                in a deliberate order, ticks at measured values
    tables.py   tables with human headers and units, shortened, the rest downloadable
    downloads.py  the data behind a chart or table: its rows as CSV, the published Parquet

Everything here raises dbexp.errors.DbexpError (one line) for people's mistakes.

The names below are imported on first use: a chapter's kernel (``from dbexp.book import charts``)
and the Sphinx extensions (``dbexp.book.vega``) then load neither papermill nor nbformat nor the
experiments.
"""

from importlib import import_module

_EXPORTS = {
    "SCALES": "dbexp.book.params",
    "DEFAULT_CELL_TIMEOUT_S": "dbexp.book.execute",
    "BookBuild": "dbexp.book.build",
    "PageResult": "dbexp.book.check",
    "build_book": "dbexp.book.build",
    "check_charts": "dbexp.book.check",
    "enable_offline": "dbexp.book.vega",
    "executed_chapters": "dbexp.book.toc",
    "execute_chapter": "dbexp.book.execute",
    "html_dir": "dbexp.book.build",
    "screenshot": "dbexp.book.check",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
