"""The book pipeline on a throwaway mini book (no database, no server).

The mini book uses the repository's own _config.yml, a one-page introduction and one
chapter notebook that draws an Altair chart from a small DataFrame. It checks that:
unknown parameters and bad scales are refused before anything runs; a failing
notebook leaves nothing where the book would publish it; the book builds with
warnings as errors; a warning fails the build; and, in headless Chromium with no
network, the chart draws its marks (and does not without the book's offline script).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from dbexp.book import build_book, check_charts, execute_chapter
from dbexp.book import check as check_mod
from dbexp.book import freshness
from dbexp.book import toc as toc_mod
from dbexp.book.build import run_jupyter_book
from dbexp.book.kernels import ChapterKernel
from dbexp.errors import DbexpError
from dbexp import process
from dbexp.engine import LABEL, client
from dbexp.waits import poll
from conftest import POSTGRES, labelled_containers

pytestmark = pytest.mark.notebooks

REPO = Path(__file__).resolve().parents[1]
HAVE_CHROMIUM = any(shutil.which(n) for n in check_mod.CHROMIUM_CANDIDATES)

CHART_CELL = """\
import altair as alt
import pandas as pd
from dbexp.book.vega import enable_offline

enable_offline()
if scale == "full":
    raise ValueError("boom: this chapter refuses full scale")
print(f"scale={scale} run={run} publish={publish}")
df = pd.DataFrame({"threads": [1, 2, 4, 8, 16], "tps": [900, 1700, 3100, 4800, 5200]})
alt.Chart(df).mark_line(point=True).encode(x="threads:Q", y="tps:Q")
"""


def _chapter_notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('scale = "smoke"\nrun = True\npublish = False\nforce = False')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Throughput\n\nOne chart from a small DataFrame."),
        params,
        nbformat.v4.new_code_cell(CHART_CELL),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A mini book: the repository's _config.yml and the static files it names, an intro page and one chapter."""
    root = tmp_path / "minibook"
    (root / "notebooks").mkdir(parents=True)
    shutil.copytree(REPO / "book" / "_static", root / "book" / "_static")  # the style sheet _config.yml loads
    shutil.copy(REPO / "_config.yml", root / "_config.yml")
    (root / "_toc.yml").write_text(
        textwrap.dedent(
            """\
            format: jb-book
            root: book/intro
            chapters:
              - file: book/throughput
            """
        )
    )
    (root / "book" / "intro.md").write_text("# Mini book\n\nA test of the pipeline.\n")
    nbformat.write(_chapter_notebook(), root / "notebooks" / "throughput.ipynb")
    return root


def _book_dir_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "book").iterdir() if p.name not in ("_build", "_static"))


def test_unknown_parameter_is_refused(book: Path):
    with pytest.raises(DbexpError) as err:
        execute_chapter("throughput", {"scael": "smoke"}, root=book)
    assert str(err.value) == (
        "unknown parameter 'scael' for notebook throughput; "
        "its parameters are: scale, run, publish, force"
    )
    assert _book_dir_files(book) == ["intro.md"]


def test_bad_scale_is_refused(book: Path):
    with pytest.raises(DbexpError, match=r"unknown scale 'huge'; valid scales are smoke, default or full"):
        execute_chapter("throughput", {"scale": "huge"}, root=book)
    with pytest.raises(DbexpError, match=r"unknown scale 'huge'"):
        build_book("huge", root=book, log=lambda _: None)


def test_unknown_chapter_is_refused(book: Path):
    with pytest.raises(DbexpError, match=r"unknown chapter 'nope'; chapters: throughput"):
        build_book("smoke", only="nope", root=book, log=lambda _: None)


def test_failing_notebook_leaves_no_output(book: Path):
    with pytest.raises(DbexpError) as err:
        execute_chapter("throughput", {"scale": "full"}, root=book, timeout_s=120)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("chapter throughput failed in cell 3 of notebooks/throughput.ipynb")
    assert message.endswith("ValueError: boom: this chapter refuses full scale")
    assert _book_dir_files(book) == ["intro.md"]  # no traceback notebook, no partial file


LEAK_CELL = """\
import os
print(sorted(name for name in globals() if name in ("alt", "pd", "df", "enable_offline")))
print(os.getcwd())
"""


def test_chapters_in_one_kernel_start_from_an_empty_namespace(book: Path):
    """Rendering, chapters share a kernel (dbexp.book.kernels): each sees none of the names an earlier one
    left, runs in the book's directory although an earlier one moved, and numbers its outputs from 1, as
    in a kernel of its own; a failure in it is named as usual and the next chapter runs."""
    nb = _chapter_notebook()
    nb.cells = [nb.cells[1], nbformat.v4.new_code_cell(LEAK_CELL), nbformat.v4.new_code_cell("os.chdir('/'); 1")]
    nbformat.write(nb, book / "notebooks" / "leak.ipynb")
    params = {"scale": "smoke", "run": False, "publish": False, "force": False}
    with ChapterKernel(book) as kernel:
        execute_chapter("throughput", params, root=book, kernel=kernel)  # defines alt, pd, df
        with pytest.raises(DbexpError, match=r"failed in cell 3 of notebooks/throughput.ipynb .*boom"):
            execute_chapter("throughput", {**params, "scale": "full"}, root=book, kernel=kernel)
        runs = [nbformat.read(execute_chapter("leak", params, root=book, kernel=kernel), as_version=4)
                for _ in range(2)]
        assert kernel.chapters == 4
    for executed in runs:  # parameters, papermill's injected parameters, the leak cell, the chdir
        leak, moved = [c for c in executed.cells if c.cell_type == "code"][2:]
        assert leak.outputs[0]["text"] == f"[]\n{book.resolve()}\n"
        assert moved.outputs[0]["data"]["text/plain"] == "1" and moved.outputs[0]["execution_count"] == 4


def test_missing_page_fails_before_executing(book: Path):
    toc = book / "_toc.yml"
    toc.write_text(toc.read_text() + "  - file: book/ghost\n")
    with pytest.raises(DbexpError, match=r"lists pages that do not exist: book/ghost"):
        build_book("smoke", root=book, log=lambda _: None)
    assert _book_dir_files(book) == ["intro.md"]


def test_filtered_toc_leaves_out_missing_chapters(book: Path, tmp_path: Path):
    toc = book / "_toc.yml"
    toc.write_text(
        "format: jb-book\nroot: book/intro\nparts:\n"
        "  - caption: One\n    chapters:\n      - file: book/throughput\n      - file: book/later\n"
        "  - caption: Two\n    chapters:\n      - file: book/mvcc_chains\n"
    )
    (book / "book" / "throughput.ipynb").write_text("{}")  # "executed"
    path, dropped = toc_mod.write_filtered_toc(book, tmp_path / "toc.yml")
    assert dropped == ["book/later", "book/mvcc_chains"]
    assert toc_mod.toc_files(toc_mod.yaml.safe_load(path.read_text())) == [
        "book/intro",
        "book/throughput",
    ]


def test_warnings_fail_the_build(book: Path):
    (book / "_toc.yml").write_text("format: jb-book\nroot: book/intro\n")
    (book / "book" / "intro.md").write_text("# Mini book\n\nSee {ref}`no-such-label`.\n")
    with pytest.raises(DbexpError, match=r"jupyter-book build failed: .*no-such-label"):
        run_jupyter_book(book)


def test_book_builds_and_chart_draws_offline(book: Path, tmp_path: Path):
    lines: list[str] = []
    result = build_book(
        "smoke", run=False, publish=False, root=book, check=HAVE_CHROMIUM, log=lines.append
    )
    assert result.executed == ["throughput"]
    assert result.index.is_file()
    page = result.html_dir / "book" / "throughput.html"
    assert page.is_file()
    assert (result.html_dir / "_static" / "dbexp-vega.js").is_file()
    html = page.read_text()
    assert "dbexp-vega.js" in html
    assert len(re.findall(r'<div id="altair-viz-', html)) == 1

    # Every chapter received scale, run and publish; both parameters cells are removed from the page.
    executed = nbformat.read(book / "book" / "throughput.ipynb", as_version=4)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1
    assert 'scale = "smoke"' in injected[0].source and "run = False" in injected[0].source
    assert "publish = False" in injected[0].source
    assert "remove-cell" in injected[0].metadata["tags"]
    defaults = [c for c in executed.cells if "parameters" in c.metadata.get("tags", [])]
    assert "remove-cell" in defaults[0].metadata["tags"]
    assert "scale=smoke run=False publish=False" in html
    assert 'scale = "smoke"' not in html  # neither parameters cell is on the page

    if not HAVE_CHROMIUM:
        pytest.skip("no chromium: the offline drawing check needs Debian's chromium")
    assert [(p.page.name, p.expected, p.drawn) for p in result.pages] == [("throughput.html", 1, 1)]

    # Control: the same page without the book's offline script cannot draw offline,
    # so the check above really tested the offline path.
    bare = page.with_name("bare.html")
    bare.write_text(re.sub(r'<script src="[^"]*dbexp-vega\.js[^"]*"></script>', "", html))
    assert "dbexp-vega.js" not in bare.read_text()
    with pytest.raises(DbexpError, match=r"bare\.html: 0 of 1 charts drew .*Error loading script"):
        check_charts(result.html_dir)
    bare.unlink()

    png = check_mod.screenshot(page, tmp_path / "throughput.png", height=1200)
    assert png.stat().st_size > 10_000


def test_render_only_executes_again_only_what_changed(book: Path):
    first = build_book("smoke", run=False, root=book, check=False, log=lambda _: None)
    assert first.executed == ["throughput"] and first.reused == []
    key = freshness.recorded(book, "throughput")["render_key"]
    assert key == freshness.render_key(book, "throughput", {"scale": "smoke", "run": False, "publish": False,
                                                            "force": False})

    (book / "notebooks" / "throughput.ipynb").touch()  # the same content: nothing to do
    second = build_book("smoke", run=False, root=book, check=False, log=lambda _: None)
    assert second.executed == [] and second.reused == ["throughput"]

    nb = nbformat.read(book / "notebooks" / "throughput.ipynb", as_version=4)
    nb.cells[0].source += "\n\nOne more sentence."
    nbformat.write(nb, book / "notebooks" / "throughput.ipynb")
    third = build_book("smoke", run=False, root=book, check=False, log=lambda _: None)
    assert third.executed == ["throughput"]
    assert "One more sentence." in (third.html_dir / "book" / "throughput.html").read_text()
    assert freshness.recorded(book, "throughput")["render_key"] != key


# --- the repository's own book, rendered from its data/ ------------------------------------------------

@pytest.fixture(scope="module")
def published_book(tmp_path_factory) -> Path:
    """The repository's book rendered from the committed data/ as `make book BOOKFLAGS=--render-only` renders it,
    into a folder of its own (the repository's book/ is left as it is): its built HTML folder."""
    root = tmp_path_factory.mktemp("published-book")
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(REPO / name, root / name)
    for name in ("notebooks", "data"):
        (root / name).symlink_to(REPO / name)
    shutil.copytree(REPO / "book", root / "book", ignore=shutil.ignore_patterns("_build", "_data", "*.ipynb", ".*"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBEXP_ROOT", str(root))  # the chapters' CSVs are written beside these pages
        built = build_book("smoke", run=False, root=root, check=False, log=lambda _: None)
    return built.html_dir


def _defects(html_dir: Path, kind: str) -> list[str]:
    return [d.describe() for d in check_mod.defects(html_dir) if d.kind == kind]


def test_no_page_of_the_book_shows_a_code_cell(published_book: Path):
    """Every code cell of a chapter is tagged remove-input (or remove-cell): a reader sees outputs, not code."""
    shown = _defects(published_book, "code cell")
    assert shown == [], f"{len(shown)} code cells shown: " + "; ".join(shown)


def test_no_page_of_the_book_prints_nan(published_book: Path):
    """No page's text (outside its scripts) holds "nan" or "NaN": a missing value is said, or left out."""
    shown = _defects(published_book, "nan")
    assert shown == [], f"{len(shown)} pages' texts print nan: " + "; ".join(shown)


def test_no_page_of_the_book_prints_a_share_interval_outside_0_and_100_percent(published_book: Path):
    """A share's interval is exact or Wilson ("0.07% [-0.14%, 0.28%]" and "100.0% [100.0%, 100.0%]" were normal
    approximations): none leaves [0%, 100%]."""
    shown = _defects(published_book, "share interval")
    assert shown == [], f"{len(shown)} share intervals outside [0%, 100%]: " + "; ".join(shown)


def test_no_csv_the_book_links_has_a_row_that_says_nothing(published_book: Path):
    """Every CSV under a chart or table holds the rows it shows: none empty but for one cell (a reference line's
    own row, 11 of 91 downloads once)."""
    linked = {csv for page in check_mod.book_pages(published_book) for csv in check_mod.linked_csvs(page)}
    assert len(linked) >= 50, f"only {len(linked)} CSV downloads found in the book"
    shown = _defects(published_book, "empty CSV row")
    assert shown == [], f"{len(shown)} empty CSV rows: " + "; ".join(shown)


def test_the_book_is_at_most_its_limit_of_screens(published_book: Path):
    """The whole book, drawn at 1280 px, is at most check.SCREENS_LIMIT screens of 900 px (`dbexp book --screens`
    prints each page's count)."""
    if not HAVE_CHROMIUM:
        pytest.skip("no chromium: the pages' heights need Debian's chromium")
    measured = check_mod.screens(published_book)
    assert measured.total <= check_mod.SCREENS_LIMIT, "\n".join(measured.describe())


SERVE_CELL = """\
import time
from dbexp.servers.config import ServerConfig
from dbexp.servers.lifecycle import running
with running(ServerConfig({spec!r}, "1")) as server:
    print("serving", flush=True)
    time.sleep(600)  # until interrupted
"""


@pytest.mark.docker
def test_sigterm_of_dbexp_book_interrupts_the_chapters_kernel_which_removes_its_server(tmp_path):
    """A chapter's kernel runs in a session of its own: ended with `dbexp book` it left the servers its cell
    started (9 containers after a publication was stopped, 2026-12-08). SIGTERM now interrupts the kernel first,
    whose cell removes its server, and the command exits 143 with none of the kernel's containers left."""
    root = tmp_path / "book"
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: book/serve\n")
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('scale = "smoke"\nrun = True\npublish = False\nforce = False')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(SERVE_CELL.format(spec=POSTGRES))]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "notebooks" / "serve.ipynb")
    dbexp = str(Path(sys.executable).with_name("dbexp"))
    env = dict(os.environ, DBEXP_ROOT=str(root), DBEXP_RESULTS=str(tmp_path / "r.duckdb"),
               DBEXP_RECIPES=str(REPO / "docker"))
    harness = process.Child([dbexp, "book", "--only", "serve"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)

    def kernels_container():
        import psutil

        assert harness.poll() is None, f"dbexp book ended first: {harness.stderr.read()}"
        kids = {p.pid for p in psutil.Process(harness.pid).children(recursive=True)}
        found = [c for c in labelled_containers(mine=False)
                 if int((c.attrs.get("Labels") or {}).get("dbexp.owner", 0)) in kids]
        return found or None
    try:
        started = poll(kernels_container, 240, interval_s=0.5)
        assert started, "the chapter's kernel started no server"
        owner = started[0].attrs["Labels"]["dbexp.owner"]
        harness.send_signal(signal.SIGTERM)
        _, err = harness.communicate(timeout=240)
        assert harness.returncode == 143, err
        assert "interrupted the chapter's kernel; its servers removed" in err
        left = client().containers.list(all=True, filters={"label": [LABEL, f"dbexp.owner={owner}"]})
        assert left == []
    finally:
        if harness.poll() is None:
            harness.kill()
