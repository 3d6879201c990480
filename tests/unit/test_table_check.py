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


def test_the_harness_is_read_from_the_package_and_filled_in():
    html = check.harness_html([{"url": "file:///x/</script>.html", "expected": 2}])
    assert "{{" not in html and "function dbexpTables(doc)" in html and "</script>.html" not in html
    assert all(check.static_text(name) for name in check.STATIC)


def test_each_page_is_measured_in_screens_of_the_window(tmp_path):
    """A page 2,700 px tall at 1280 px is 3 screens of 900; a short one under 1 (the window's height, at least)."""
    (tmp_path / "index.html").write_text("<html><head><meta http-equiv='refresh' content='0; url=a.html'></head></html>")
    (tmp_path / "a.html").write_text("<html><body style='margin:0'><div style='height:2700px'>tall</div></body></html>")
    (tmp_path / "b.html").write_text("<html><body style='margin:0'><p>short</p></body></html>")
    measured = check.screens(tmp_path)
    assert list(measured.heights) == ["a.html", "b.html"]  # the redirect is no page
    assert measured.per_page["a.html"] == pytest.approx(3.0, abs=0.01)
    assert measured.per_page["b.html"] == pytest.approx(1.0, abs=0.01)  # the frame's height, at least
    assert measured.total == pytest.approx(4.0, abs=0.02)
    assert measured.describe()[-1].startswith("the book") and f"limit {check.SCREENS_LIMIT}" in measured.describe()[-1]


def test_a_page_is_measured_as_it_loads_with_its_folded_sections_closed(tmp_path):
    """What a page folds (a closed details: the chapters' hide-output cells, MyST dropdowns, the claims' conditions)
    counts only by its summary line, as a reader sees the page on load; the same content open counts in full."""
    (tmp_path / "index.html").write_text("<html><head><meta http-equiv='refresh' content='0; url=a.html'></head></html>")
    tall = "<div style='height:2700px'>detail</div>"
    (tmp_path / "folded.html").write_text(f"<html><body style='margin:0'><details><summary>more</summary>{tall}"
                                          "</details><div style='height:1800px'>answer</div></body></html>")
    (tmp_path / "open.html").write_text(f"<html><body style='margin:0'><details open><summary>more</summary>{tall}"
                                        "</details><div style='height:1800px'>answer</div></body></html>")
    measured = check.screens(tmp_path)
    assert measured.per_page["folded.html"] == pytest.approx(2.0, abs=0.05)
    assert measured.per_page["open.html"] == pytest.approx(5.0, abs=0.05)
