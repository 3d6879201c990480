"""What a reader of the rendered book sees, checked without building it: tables with human headers,
data links under charts, legends with line samples, panels in a deliberate order, hidden parameters
cells, the intro's chapter list from the TOC, and the workflow that publishes the book."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml

from dbexp import process
from dbexp.book import charts, downloads, tables, toc
from dbexp.book.execute import _finalize

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "book.yml"


# --- tables ---------------------------------------------------------------------------------------

def test_human_renames_orders_and_formats_and_skips_missing_columns():
    df = pd.DataFrame({"ci_low": [0.91], "old_p50_us": [1234.5], "x": [1]})
    table, formats = tables.human(df, {"old_p50_us": ("old reader, median (us)", "{:,.0f}"),
                                       "ci_low": "95% interval, low", "absent": "never shown"})
    assert list(table.columns) == ["old reader, median (us)", "95% interval, low"]
    assert formats == {"old reader, median (us)": "{:,.0f}"}


def test_human_refuses_two_columns_with_one_header():
    with pytest.raises(ValueError):
        tables.human(pd.DataFrame({"a": [1], "b": [2]}), {"a": "same", "b": "same"})


def test_side_by_side_puts_each_workload_beside_the_other():
    df = pd.DataFrame({"server": ["b", "b", "a", "a"], "script": ["ps", "rw", "ps", "rw"],
                       "median": [1, 2, 3, 4], "cv": [.1, .2, .3, .4]})
    wide = tables.side_by_side(df, "server", "script", ["median", "cv"])
    assert list(wide.columns) == ["server", "median|ps", "cv|ps", "median|rw", "cv|rw"]
    assert wide.set_index("server").loc["a", "median|rw"] == 4 and len(wide) == 2


def test_show_writes_the_whole_table_and_links_it(tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(tables, "display", shown.append)
    monkeypatch.setattr("IPython.display.display", shown.append)
    monkeypatch.setenv("DBEXP_ROOT", str(tmp_path))
    (tmp_path / "data" / "demo").mkdir(parents=True)
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "data" / "demo" / "runs.parquet")
    df = pd.DataFrame({"server": ["postgres 12.22", "mysql 8.0.15", "mysql 5.7.22"], "v": [1.0, 2.0, 3.0]})
    tables.show(df, {"server": "server", "v": ("value (us)", "{:.1f}")}, res="demo", name="t", rows=2,
                servers="server")
    written = pd.read_csv(tmp_path / "book" / "_data" / "demo" / "t.csv")
    assert list(written.columns) == ["server", "value (us)"]
    assert list(written["server"]) == ["mysql 5.7.22", "mysql 8.0.15", "postgres 12.22"]  # flavor, then version
    texts = [getattr(o, "data", "") for o in shown]
    assert any("The first 2 of 3 rows" in t for t in texts)
    assert any("{download}`t.csv <_data/demo/t.csv>`" in t and "runs.parquet" in t for t in texts)
    html = shown[0].to_html()
    assert "value (us)" in html and "dbexp-table" in html and "mysql 5.7.22" in html and "postgres" not in html


def test_claims_shows_every_claim_compactly_with_its_conditions_folded(monkeypatch):
    """The claims table: one row per claim with three columns shown (the claim, what was measured, the verdict) and
    the source's conditions, this lab's and the witness in a closed details under the claim; the conditions a
    verdict names by number said once, folded."""
    from dbexp.experiments import verdicts

    shown = []
    monkeypatch.setattr(tables, "display", shown.append)
    row = verdicts.ClaimRow("a claim", "its number", "our conditions", "1.02 [0.98, 1.06]", "not resolved")
    tables.claims(verdicts.table([row, row]))
    html = shown[0].data
    assert "dbexp-verdicts" in html and ">verdict<" in html and html.count("a claim") == 2
    assert html.count("<details") == 2 and "<b>The source:</b> its number" in html and "<b>Here:</b> our conditions" in html
    shown.clear()
    monkeypatch.setattr(tables, "conditions_once", lambda t: (t, ["one CPU"]))
    tables.claims(verdicts.table([row]))
    assert "<details" in shown[1].data and "<li>one CPU</li>" in shown[1].data
    with pytest.raises(ValueError, match="without \\['verdict'\\]"):
        tables.claims(verdicts.table([row]).drop(columns=["verdict"]))
    assert list(verdicts.COLUMNS).index("verdict") == 5 and list(verdicts.COLUMNS).index("witness") == 4


def test_inline_html_shows_the_cells_markdown_and_keeps_their_links():
    assert tables.inline_html("*binlog* and `x_y` <a href='u'>s</a>, 2 * 3") == \
        "<em>binlog</em> and <code>x_y</code> <a href='u'>s</a>, 2 * 3"


# --- data links -----------------------------------------------------------------------------------

def test_links_name_the_csv_and_only_the_published_files_that_exist(tmp_path):
    (tmp_path / "data" / "demo").mkdir(parents=True)
    for t in ("runs", "series"):
        pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "data" / "demo" / f"{t}.parquet")
    text = downloads.links_markdown("demo", pd.DataFrame({"x": [1, 2]}), "latency", root=tmp_path)
    assert "{download}`latency.csv <_data/demo/latency.csv>`" in text and "2 rows)" in text
    assert "{download}`runs <../data/demo/runs.parquet>`" in text
    assert "{download}`series <../data/demo/series.parquet>`" in text
    assert "measurements" not in text  # not published: no link a build would fail on
    assert (tmp_path / "book" / "_data" / "demo" / "latency.csv").is_file()


def test_links_refuse_names_that_are_not_plain_file_names(tmp_path):
    with pytest.raises(ValueError):
        downloads.write_csv("demo", pd.DataFrame(), "../escape", root=tmp_path)
    with pytest.raises(ValueError):
        downloads.write_csv("../x", pd.DataFrame(), "ok", root=tmp_path)


def test_chart_rows_finds_the_rows_of_a_faceted_layered_chart():
    df = pd.DataFrame({"x": [1, 10], "y": [1, 2], "s": ["a", "b"], "r": ["old", "fresh"]})
    chart = charts.dashed_lines(df, "x", "y", "r", "r", "t", "x", "y", column="s")
    rows = downloads.chart_rows(chart)
    assert rows is not None and len(rows) == 2 and {"x", "y", "r", "s"} <= set(rows.columns)


# --- charts ---------------------------------------------------------------------------------------

def test_servers_are_ordered_by_flavor_then_version_number():
    names = ["postgres 12.22", "mysql 8.0.15", "postgres 9.6.1", "mariadb 10.11.19", "mysql 5.7.22"]
    assert charts.server_order(names) == ["mysql 5.7.22", "mysql 8.0.15", "mariadb 10.11.19",
                                          "postgres 9.6.1", "postgres 12.22"]


def test_ticks_sit_at_measured_values_when_few():
    assert charts.measured_ticks([1000, 10, 100, 10, 10000]) == [10, 100, 1000, 10000]
    assert charts.measured_ticks(range(50)) is None


def _find(spec, key):
    """Every value of ``key`` anywhere in a Vega-Lite spec."""
    if isinstance(spec, dict):
        for k, v in spec.items():
            if k == key:
                yield v
            yield from _find(v, key)
    elif isinstance(spec, list):
        for v in spec:
            yield from _find(v, key)


def test_reader_lines_share_one_legend_with_line_samples_and_ordered_panels():
    df = pd.DataFrame({"V": [10, 100] * 4, "us": range(8), "reader": ["old", "old", "fresh", "fresh"] * 2,
                       "server": ["postgres 12.22"] * 4 + ["mysql 8.0.15"] * 4})
    spec = charts.dashed_lines(df, "V", "us", "reader", "reader", "t", "V", "us", log_x=True, row="server",
                               color_order=["fresh", "old"]).to_dict()
    legends = [lg for lg in _find(spec, "legend") if isinstance(lg, dict)]
    assert legends and all(lg.get("symbolType") == "stroke" for lg in legends)
    dash = next(_find(spec, "strokeDash"))
    assert dash["scale"]["domain"] == ["fresh", "old"] and dash["scale"]["range"][0] == [1, 0]
    assert spec["facet"]["row"]["sort"] == ["mysql 8.0.15", "postgres 12.22"]
    axis = next(a for a in _find(spec, "axis") if isinstance(a, dict) and "values" in a)
    assert axis["values"] == [10, 100]


def test_quantities_in_different_units_get_charts_of_their_own():
    df = pd.DataFrame({"t": [0, 0.5] * 2, "value": [40000, 0, 20000, 0],
                       "name": ["purge_lag_trx"] * 2 + ["n_dead_tup"] * 2, "variant": ["v"] * 4,
                       "server": ["mysql 8.0.15"] * 2 + ["postgres 16.14"] * 2})
    spec = charts.per_measure(df, "t", "value", "name", {"purge_lag_trx": ("InnoDB", "purge lag (trx numbers)"),
                                                         "n_dead_tup": ("PostgreSQL", "dead tuples")},
                              "variant", "server", "t", "s").to_dict()
    titles = [y["title"] for y in _find(spec, "y") if isinstance(y, dict) and "title" in y]
    assert list(dict.fromkeys(titles)) == ["purge lag (trx numbers)", "dead tuples"]
    assert len(spec["vconcat"]) == 2


# --- parameters cells, the intro, the configuration -------------------------------------------------

def test_both_parameters_cells_are_removed_from_the_page(tmp_path):
    nb = nbformat.v4.new_notebook()
    own = nbformat.v4.new_code_cell('scale = "smoke"')
    own.metadata["tags"] = ["parameters"]
    injected = nbformat.v4.new_code_cell('scale = "default"')
    injected.metadata["tags"] = ["injected-parameters"]
    nb.cells = [own, injected, nbformat.v4.new_code_cell("1")]
    _finalize(nb, tmp_path / "x.ipynb")
    assert "remove-cell" in nb.cells[0].metadata["tags"] and "remove-cell" in nb.cells[1].metadata["tags"]
    assert "parameters" in nb.cells[0].metadata["tags"]  # papermill still finds it
    assert "tags" not in nb.cells[2].metadata


def test_the_chapter_list_comes_from_the_toc_with_titles(tmp_path):
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n"
                                       "  - file: book/method\n  - file: book/exp\n  - file: book/gone\n")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.md").write_text("# Intro\n")
    (tmp_path / "book" / "method.md").write_text("Some text\n\n# How we measure\n")
    (tmp_path / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Who pays? <a test>")]
    nbformat.write(nb, tmp_path / "notebooks" / "exp.ipynb")
    assert toc.chapters(tmp_path) == [("book/method", "How we measure"), ("book/exp", "Who pays? <a test>")]
    assert toc.chapters_markdown(tmp_path).splitlines() == [
        "1. {doc}`How we measure <method>`", "1. {doc}`Who pays? (a test) <exp>`"]


def test_the_repository_chapters_are_all_listed():
    listed = [doc for doc, _ in toc.chapters(REPO)]
    assert listed == toc.toc_files(toc.load_toc(REPO))[1:]


def test_config_links_the_repository_and_renders_markdown_outputs_as_myst():
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    assert config["repository"]["url"].startswith("https://github.com/")
    assert config["repository"]["branch"] == "main"
    assert config["html"]["use_repository_button"] and config["html"]["use_issues_button"]
    assert config["sphinx"]["config"]["nb_render_markdown_format"] == "myst"
    # the book's style sheet is a static file, served from where the config says
    static = config["sphinx"]["config"]["html_static_path"]
    css = [c[0] if isinstance(c, list) else c for c in config["sphinx"]["config"]["html_css_files"]]
    assert [name for name in css if not any((REPO / folder / name).is_file() for folder in static)] == []
    assert "dbexp.css" in css


# --- the workflow that publishes the book ------------------------------------------------------------

def test_workflow_tests_every_push_and_deploys_main_to_pages():
    wf = yaml.safe_load(WORKFLOW.read_text())
    on = wf[True] if True in wf else wf["on"]  # YAML 1.1 reads the key `on` as true
    assert "push" in on and "pull_request" in on
    jobs = wf["jobs"]
    assert any("make test" in step.get("run", "") for step in jobs["test"]["steps"])
    book_steps = jobs["book"]["steps"]
    assert "refs/heads/main" in jobs["book"]["if"]
    assert any("make book BOOKFLAGS=--render-only" in s.get("run", "") for s in book_steps)
    uses = [s.get("uses", "") for job in jobs.values() for s in job["steps"]]
    for action in ("actions/configure-pages@", "actions/upload-pages-artifact@", "actions/deploy-pages@"):
        assert any(u.startswith(action) for u in uses), action
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert jobs["deploy"]["environment"]["name"] == "github-pages"


def test_workflow_passes_actionlint_when_installed():
    found = shutil.which("actionlint") or next(
        (str(p) for p in (Path.home() / "go" / "bin" / "actionlint",) if p.is_file()), None)
    if not found:
        pytest.skip("actionlint is not installed (make lint-ci installs it)")
    proc = process.run([found, str(WORKFLOW)], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_reference_rule_adds_no_empty_row_to_the_charts_csv():
    """charts.ratio_forest draws a dashed rule at 1 from a one-row frame of its own ({"x": [1.0]}): its CSV holds
    the ratios alone, not a first row empty but for that 1.0 (11 of 91 downloads did)."""
    df = pd.DataFrame({"label": ["a", "b"], "ratio_qps": [0.9, 1.2], "ci_low": [0.8, 1.1], "ci_high": [1.0, 1.3]})
    import altair as alt

    one = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule().encode(x="x:Q")
    points = alt.Chart(df).mark_point().encode(x="ratio_qps:Q", y="label:N")
    rows = downloads.chart_rows(alt.layer(one, points))
    assert list(rows.columns) == list(df.columns) and len(rows) == 2
    assert not rows.isna().all(axis=1).any() and "x" not in rows
    alone = downloads.chart_rows(one)  # a chart of one row only keeps it
    assert list(alone["x"]) == [1.0]


# --- what no built page may show (dbexp.book.check.page_defects) ----------------------------------------

SHOWN_CELL = ('<div class="cell docutils container"><div class="cell_input docutils container">'
              '<div class="highlight"><pre><span>ctl</span> = versions.controls(res)\nif len(ctl):</pre></div></div>'
              '<div class="cell_output docutils container"><p>a table</p></div></div>')
HIDDEN_CELL = ('<div class="cell docutils container"><details class="hide above-input"><summary>Show code cell source'
               '</summary><div class="cell_input docutils container"><pre>hidden = 1</pre></div></details></div>')


def test_a_shown_code_cell_nan_text_and_an_empty_csv_row_are_each_found(tmp_path):
    from dbexp.book import check

    (tmp_path / "_downloads" / "abc").mkdir(parents=True)
    (tmp_path / "_downloads" / "abc" / "ratio.csv").write_text(
        "x,label,ratio,ci_low\n1.0,,,\n,mysql 8.0,0.9,0.8\n")
    (tmp_path / "_downloads" / "abc" / "fine.csv").write_text("label,ratio,ci_low\nmysql 8.0,0.9,0.8\n")
    page = tmp_path / "book" / "versions.html"
    page.parent.mkdir()
    page.write_text("<html><head><style>.nan{}</style><script>var x = NaN; // nan</script></head><body>"
                    f"{SHOWN_CELL}{HIDDEN_CELL}<p>13.23 nan, 15.18 NaN; 3 nanoseconds, Nancy, nano</p>"
                    '<a href="../_downloads/abc/ratio.csv">ratio.csv</a> <a href="../_downloads/abc/fine.csv">f</a>'
                    "</body></html>")
    found = check.page_defects(page, tmp_path)
    assert [(d.where, d.kind) for d in found] == [("book/versions.html", "code cell"), ("book/versions.html", "nan"),
                                                  ("book/versions.html", "nan"),
                                                  ("book/versions.html (ratio.csv)", "empty CSV row")]
    assert found[0].detail == "ctl = versions.controls(res)"
    assert "13.23 nan" in found[1].detail and found[3].detail == "row 1: 1.0,,,"
    assert check.defects(tmp_path) == found  # the book: every page


def test_a_clean_page_has_no_defect(tmp_path):
    from dbexp.book import check

    page = tmp_path / "intro.html"
    page.write_text("<html><body><div class='cell docutils container'><div class='cell_output docutils container'>"
                    "<p>2.5 ns per version [2.1, 2.9]; a missing value reads \u2014</p></div></div></body></html>")
    assert check.page_defects(page) == []


def test_a_share_whose_interval_leaves_0_to_100_percent_is_found(tmp_path):
    """A share's interval is exact or Wilson, inside [0%, 100%]: a normal approximation's "0.07% [-0.14%, 0.28%]" is
    a defect; a change, printed signed, may have an interval below 0."""
    from dbexp.book import check

    page = tmp_path / "group_commit.html"
    page.write_text("<html><body><p>woken three times 0.07% [-0.14%, 0.28%]; changed in 100.0% [97.0%, 100.0%] of "
                    "trials; 99.5% [98.0%, 100.3%]; a change of +3.2% [-1.0%, +7.4%]; 100.0% [100.0%, 100.0%]</p>"
                    "</body></html>")
    found = check.page_defects(page)
    assert [(d.kind, d.detail) for d in found] == [("share interval", "0.07% [-0.14%, 0.28%]"),
                                                   ("share interval", "99.5% [98.0%, 100.3%]"),
                                                   ("share interval", "100.0% [100.0%, 100.0%]")]
