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

Importing this package also defers ``rfc3987_syntax`` (see :func:`_defer_rfc3987_syntax`): Altair
imports jsonschema, whose format checkers import it, and it builds an Earley parser of RFC 3987 at
import (2 to 5 s of CPU in every chapter's kernel, for a format no Vega-Lite schema uses).
"""

import sys
import types
from importlib import import_module
from importlib.util import find_spec

from dbexp import lazy

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


def _defer_rfc3987_syntax() -> None:
    """Stand a stub in for ``rfc3987_syntax`` until something calls it: jsonschema's format module
    imports its ``is_valid_syntax`` to register the "iri" and "iri-reference" checkers, and the
    module builds its parser at import. The stub's ``is_valid_syntax`` (or any other attribute)
    imports the real module then and hands over to it, so a checker that runs behaves as before;
    in a render none runs (Vega-Lite's schema has no IRI format). Nothing is done where the
    module is absent (jsonschema then registers no IRI checker, as before) or already imported."""
    name = "rfc3987_syntax"
    if name in sys.modules or find_spec(name) is None:
        return
    stub = types.ModuleType(name, "stand-in until first use (dbexp.book)")

    def real():
        if sys.modules.get(name) is stub:
            del sys.modules[name]
        module = import_module(name)
        stub.__dict__.pop("__getattr__", None)
        return module

    def is_valid_syntax(*args, **kwargs):
        return real().is_valid_syntax(*args, **kwargs)

    stub.is_valid_syntax = is_valid_syntax
    def getattr_(attr):
        if attr.startswith("__"):  # the import system asks for __path__ and the like: not a use
            raise AttributeError(attr)
        return getattr(real(), attr)

    stub.__getattr__ = getattr_
    sys.modules[name] = stub


_defer_rfc3987_syntax()


__getattr__, __dir__ = lazy.exports(__name__, _EXPORTS)
