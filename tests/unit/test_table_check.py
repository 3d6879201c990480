"""dbexp.book.check's table check: in headless Chromium at 1280 px, a table that breaks a number across lines or
scrolls is reported; one that fits is not; the labelled blocks are left alone."""

import shutil

import pytest

from dbexp.book import check

pytestmark = pytest.mark.skipif(not any(shutil.which(c) for c in check.CHROMIUM_CANDIDATES),
                                reason="no chromium: the table check needs Debian's chromium")

ROW = "<tr><td>mysql 8.0.15</td><td>{}</td></tr>"


def _page(tmp_path, body: str):
    page = tmp_path / "page.html"
    page.write_text(f"<html><body><article style='width:700px'><section><h2>Numbers</h2>"
                    f"<div class='output'>{body}</div></section></article></body></html>")
    return page


def test_a_squeezed_number_and_a_wide_table_are_reported(tmp_path):
    squeezed = ("<table class='dbexp-table' style='width:120px'><thead><tr><th>server</th><th>QPS</th></tr></thead>"
                "<tbody>" + ROW.format("<span style='display:inline-block;width:20px;overflow-wrap:anywhere'>"
                                       "12,345.678</span>") + "</tbody></table>")
    wide = ("<div style='width:300px;overflow-x:auto'><table class='dbexp-table' style='width:900px'><thead><tr>"
            "<th>server</th><th>QPS</th></tr></thead><tbody>" + ROW.format("1") + "</tbody></table></div>")
    result = check.check_page(_page(tmp_path, squeezed + wide))
    assert any("numbers broken across lines (12,345.678)" in t for t in result.tables), result.tables
    assert any("900 px wide in a column of 300" in t for t in result.tables), result.tables
    assert not result.ok


def test_a_table_that_fits_and_the_blocks_pass(tmp_path):
    fits = ("<table class='dbexp-table'><thead><tr><th>server</th><th>date</th></tr></thead><tbody>"
            + ROW.format("2026-11-26, -0.52 [-0.61, +0.10]") + "</tbody></table>")
    blocks = ("<div style='width:300px;overflow-x:auto'><table class='dbexp-table dbexp-blocks' style='width:900px'>"
              "<tbody>" + ROW.format("x") + "</tbody></table></div>")
    result = check.check_page(_page(tmp_path, fits + blocks))
    assert result.tables == [] and result.ok
