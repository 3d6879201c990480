"""The book's own style sheet, a Sphinx extension (``sphinx: extra_extensions: [dbexp.book.style]``):
tables fit the page at 1,280 px (smaller type, headers and long cells wrap instead of running off the
right edge) and the data links under charts read as a caption.

Like dbexp.book.vega, the file is written at build time into ``<build dir>/_dbexp_static/``, so nothing
generated is committed.
"""

from __future__ import annotations

from pathlib import Path

from dbexp.book.vega import serve_static

CSS_NAME = "dbexp.css"

CSS = """\
/* dbexp: tables the chapters display (pandas Styler, class dbexp-table; myst tables too) */
.cell_output table.dataframe, .cell_output table.dbexp-table {
  font-size: 0.78rem;
  max-width: 100%;
  border-collapse: collapse;
}
.cell_output table.dataframe th, .cell_output table.dataframe td {
  white-space: normal;
  padding: 0.2em 0.45em;
  vertical-align: top;
}
.cell_output table.dataframe th { text-align: left; }
.cell_output table.dbexp-nowrap td { white-space: nowrap; }
/* a table that still cannot fit scrolls inside its cell rather than being cut */
.cell_output .output.text_html { overflow-x: auto; max-width: 100%; }
/* any output table (a Styler's has no class): a long unbreakable name (a mutex, a setting) may break
   anywhere, so a table's last columns (a claims table's verdict) stay on the page */
.cell_output table td, .cell_output table th { overflow-wrap: anywhere; }
/* hand-written pages: wrap long code names in table cells */
article table.table td code, article table.table th code { white-space: normal; word-break: break-word; }
/* the data links under a chart */
.cell_output p:has(> a.download, > a > code.download) { font-size: 0.85rem; }
"""


def write_static(directory: Path | str) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / CSS_NAME
    if not path.is_file() or path.read_text(encoding="utf-8") != CSS:
        path.write_text(CSS, encoding="utf-8")
    return path


_on_builder_inited = serve_static(write_static)


def setup(app):
    """Sphinx extension entry point."""
    app.connect("builder-inited", _on_builder_inited)
    app.add_css_file(CSS_NAME)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
