"""Executing the chapter notebooks and building the Jupyter Book.

    toc.py      which pages _toc.yml lists; which are executed chapters
    params.py   the parameters every chapter receives (scale, run, publish)
    execute.py  one chapter: papermill, parameter check, no traceback left behind
    build.py    all chapters, then `jupyter-book build -W`
    vega.py     Altair charts offline (a Sphinx extension + enable_offline())
    style.py    the book's style sheet (a Sphinx extension): tables fit the page
    check.py    headless Chromium: did every chart draw, with no network?
    charts.py   chart helpers for the notebooks: legends with line samples, panels and servers
                in a deliberate order, ticks at measured values
    tables.py   tables with human headers and units, shortened, the rest downloadable
    downloads.py  the data behind a chart or table: its rows as CSV, the published Parquet

Everything here raises dbexp.errors.DbexpError (one line) for people's mistakes.
"""

from dbexp.book.build import BookBuild, build_book, html_dir
from dbexp.book.check import PageResult, check_charts, screenshot
from dbexp.book.execute import DEFAULT_CELL_TIMEOUT_S, execute_chapter
from dbexp.book.params import SCALES
from dbexp.book.toc import executed_chapters
from dbexp.book.vega import enable_offline

__all__ = [
    "SCALES",
    "DEFAULT_CELL_TIMEOUT_S",
    "BookBuild",
    "PageResult",
    "build_book",
    "check_charts",
    "enable_offline",
    "executed_chapters",
    "execute_chapter",
    "html_dir",
    "screenshot",
]
