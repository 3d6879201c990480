"""What the buffer_pins chapter's page shows from its published data/ (issue 45's defects, each tested on it): no
'nan' anywhere it shows text, no share's interval below 0%, above 100% or of one value, no CSV download whose first
row is mostly empty, an answer with a 95% interval and the CPU model, the claims table of tested claims only (the
others listed once, in the ledger's table), "your machine beside the published run" (run by `make published`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from unittest import mock

import pytest

from dbexp.chapters import buffer_pins as bp
from published_support import published as published_results

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "buffer_pins.ipynb"


@pytest.fixture(scope="module")
def published():
    return published_results("buffer_pins")


@pytest.fixture(scope="module")
def page():
    """Every text the page shows from its published data/ (its code cells run in this process: the glued values,
    the displayed Markdown and tables as HTML) and the frames its CSV downloads write, by name."""
    from dbexp.book import downloads, page as page_module, tables

    nb = json.loads(NOTEBOOK.read_text())
    texts, csvs, glued = [], {}, {}

    def keep(obj, *a, **k):
        data = getattr(obj, "data", None)
        texts.append(data if isinstance(data, str) else obj.to_html() if hasattr(obj, "to_html") else "")

    def write_csv(res, rows, name, root=None):
        csvs[name] = rows.copy()
        return f"_data/buffer_pins/{name}.csv"

    def glue(name, value):
        glued[name] = value
        texts.append(value if isinstance(value, str) else str(value))

    ns = {"__name__": "__main__"}
    with mock.patch("IPython.display.display", keep), mock.patch.object(tables, "display", keep), \
            mock.patch("dbexp.book.glued.glue", glue), mock.patch.object(page_module, "glue", glue), \
            mock.patch.object(downloads, "write_csv", write_csv):
        for c in nb["cells"]:
            if c["cell_type"] == "code":
                code = "".join(c["source"]) + ("\nrun = False\n" if "parameters" in c["metadata"].get("tags", []) else "")
                exec(compile(code, "buffer_pins.ipynb", "exec"), ns)
    return "\n".join(texts), csvs, glued


def test_the_page_shows_no_nan_no_impossible_share_and_no_empty_csv_row(page):
    text, csvs, _ = page
    assert not re.findall(r"\bnan\b", text, re.I), re.findall(r".{60}\bnan\b.{20}", text, re.I)[:3]
    bad = []
    for m in re.finditer(r"(-?[\d.,]+)% \[(-?[\d.,]+)%, (-?[\d.,]+)%\]", text):
        v, lo, hi = (float(x.replace(",", "")) for x in m.groups())
        if lo < 0 or (v <= 100 and hi > 100) or lo == hi:  # a share's exact interval is never one value
            bad.append(m.group(0))
    assert not bad, bad[:5]
    assert csvs
    for name, frame in csvs.items():
        if len(frame):
            first = frame.iloc[0]
            empty = first.isna() | (first.astype(str).str.strip() == "")
            assert empty.mean() <= 0.5, (name, list(first.index[empty]))


def test_the_page_opens_with_an_answer_that_has_an_interval_and_the_cpu(page, published):
    from dbexp.experiments.chapter import cpu_models

    _, _, glued = page
    answer = glued["answer"]
    first = answer.split("\n\n")[0]
    assert cpu_models(published.runs) in first and re.search(r"\d\.\d\dx \[\d\.\d\d, \d\.\d\d\]", first), first
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    shown = [c for c in cells if c["cell_type"] == "markdown"]
    assert shown[0]["source"][0].startswith("# ") and "".join(shown[1]["source"]).startswith("{glue:md}`answer`")
    assert all("remove-input" in c["metadata"].get("tags", []) or "parameters" in c["metadata"].get("tags", [])
               for c in cells if c["cell_type"] == "code")  # no code cell shown
    findings = glued["findings"]
    bullets = [b for b in findings.split("\n\n") if b.startswith("- ")]
    assert 1 <= len(bullets) <= 5 and all(len(re.findall(r"(?<=[a-z0-9)])\. ", b)) <= 1 for b in bullets), bullets


def test_the_claims_table_shows_the_tested_claims_and_the_ledger_the_rest_once(published):
    claims = bp.CHAPTER.claims(published)
    shown = bp.claims.tested(claims)
    ledger = bp.claims.ledger()
    assert set(shown["id"]) == {e["id"] for e in ledger if e["status"] == "tested"}
    assert len(shown) < len(claims)  # the untested ones are left to tables.untested_claims


def test_the_page_has_your_machine_beside_the_published_run(published):
    from dbexp.experiments import compare

    src = NOTEBOOK.read_text()
    assert "## Your machine beside the published run" in src and "charts.beside_published(" in src
    table, sentence = compare.beside_published(bp.analysis.with_measurement(published, "ns_8"), "ns_8")
    assert table.empty and "This page shows the published run" in sentence
