"""Every chart every page draws from the committed data/ is a valid Vega-Lite spec.

The book displays its charts without Altair's schema check (dbexp.book.downloads.chart: the check
costs a third of a chapter's time in charts, at every render); this test makes the check instead. It
executes each chapter notebook's code as the book renders it (from data/, ``run=False``) in this
process, with downloads.chart checking each chart against Vega-Lite's JSON schema before it shows it.
"""

from __future__ import annotations

import json

import pytest

from dbexp.book import downloads, toc
from published_support import REPO

CHAPTERS = toc.executed_chapters(REPO)
RENDERING = 'scale = "smoke"\nrun = False\npublish = False\nforce = False\n'


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chart_a_page_draws_passes_vega_lites_schema(chapter, monkeypatch, tmp_path):
    from IPython.core.interactiveshell import InteractiveShell

    shown = []
    draw = downloads.chart

    def checked(chart_obj, *args, **kwargs):
        chart_obj.to_dict(validate=True)  # raises on a spec the schema refuses
        shown.append(chart_obj)
        return draw(chart_obj, *args, **kwargs)

    monkeypatch.setattr(downloads, "chart", checked)
    # the page's CSV files are the build's to write (book/_data), not this test's
    monkeypatch.setattr(downloads, "write_csv", lambda res, rows, name, root=None: f"_data/{name}.csv")
    monkeypatch.chdir(REPO)
    shell = InteractiveShell.instance()
    shell.reset(new_session=True)
    nb = json.loads(toc.source_notebook(REPO, chapter).read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source += "\n" + RENDERING  # as the book renders: from data/
        result = shell.run_cell(source, silent=True)
        assert result.success, f"{chapter}: {result.error_in_exec or result.error_before_exec}"
    if chapter != "intro":
        assert shown, f"{chapter} drew no chart"
