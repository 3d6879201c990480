"""Render-only builds execute only what changed: the render key (dbexp.book.freshness), the reuse and
parallel execution in build_book, and the chart check that skips pages that drew before. No kernel,
no Sphinx, no browser: execution, the build and the page loads are stand-ins."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import nbformat
import pytest

from dbexp.book import build as build_mod
from dbexp.book import check as check_mod
from dbexp.book import freshness
from dbexp.errors import DbexpError

PARAMS = {"scale": "smoke", "run": False, "publish": False, "force": False}
CHAPTERS = ("alpha", "beta", "gamma")


def _notebook(title: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('scale = "smoke"\nrun = True\npublish = False\nforce = False')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}"), params, nbformat.v4.new_code_cell("1 + 1")]
    return nb


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A book: an intro notebook (no data of its own) and three chapters with published data."""
    root = tmp_path / "book-root"
    (root / "notebooks").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nchapters:\n" + "".join(f"  - file: book/{n}\n" for n in CHAPTERS))
    nbformat.write(_notebook("Intro"), root / "notebooks" / "intro.ipynb")
    for name in CHAPTERS:
        nbformat.write(_notebook(name.title()), root / "notebooks" / f"{name}.ipynb")
        (root / "data" / name).mkdir(parents=True)
        (root / "data" / name / "runs.parquet").write_bytes(f"runs of {name}".encode())
    return root


def key(root: Path, name: str, params: dict = PARAMS, **kw) -> str:
    return freshness.render_key(root, name, params, package="pkg", env={"python": "3"}, **kw)


def _edit(path: Path, text: str = "# changed") -> None:
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell(text))
    nbformat.write(nb, path)


# --- the key --------------------------------------------------------------------------------------

def test_key_is_stable_and_covers_notebook_parameters_and_own_data(root: Path):
    before = key(root, "beta")
    assert key(root, "beta") == before and len(before) == 64
    assert key(root, "alpha") != before
    assert key(root, "beta", {**PARAMS, "scale": "default"}) != before
    assert freshness.render_key(root, "beta", PARAMS, package="other", env={"python": "3"}) != before
    assert freshness.render_key(root, "beta", PARAMS, package="pkg", env={"python": "3.12"}) != before

    (root / "data" / "beta" / "runs.parquet").write_bytes(b"republished")
    assert key(root, "beta") != before
    before = key(root, "beta")
    (root / "data" / "beta" / "series.parquet").write_bytes(b"a new table")
    assert key(root, "beta") != before
    before = key(root, "beta")
    _edit(root / "notebooks" / "beta.ipynb")
    assert key(root, "beta") != before


def test_a_chapter_key_ignores_other_chapters_and_mtimes(root: Path):
    beta = key(root, "beta")
    (root / "data" / "alpha" / "runs.parquet").write_bytes(b"alpha republished")
    _edit(root / "notebooks" / "gamma.ipynb", "# Gamma renamed")
    (root / "notebooks" / "beta.ipynb").touch()  # a new time, the same content
    assert key(root, "beta") == beta


def test_a_page_without_data_of_its_own_reads_the_whole_book(root: Path):
    intro = key(root, "intro")
    (root / "data" / "alpha" / "runs.parquet").write_bytes(b"alpha republished")
    assert key(root, "intro") != intro
    intro = key(root, "intro")
    _edit(root / "notebooks" / "gamma.ipynb", "more prose, the same title")
    assert key(root, "intro") == intro  # only the titles of the other pages are read
    nb = nbformat.read(root / "notebooks" / "gamma.ipynb", as_version=4)
    nb.cells[0].source = "# Gamma, renamed"
    nbformat.write(nb, root / "notebooks" / "gamma.ipynb")
    assert key(root, "intro") != intro
    intro = key(root, "intro")
    (root / "_toc.yml").write_text((root / "_toc.yml").read_text().replace("  - file: book/gamma\n", ""))
    assert key(root, "intro") != intro


def test_the_package_and_environment_are_part_of_the_real_key(root: Path, monkeypatch):
    real = freshness.render_key(root, "alpha", PARAMS)
    assert freshness.render_key(root, "alpha", PARAMS) == real
    monkeypatch.setenv("DBEXP_ROOT", str(root))
    assert freshness.render_key(root, "alpha", PARAMS) != real
    assert "dbexp-" in " ".join(freshness.environment()["installed"])  # this package's own dist-info


# --- the stamp ------------------------------------------------------------------------------------

def _executed(root: Path, name: str, k: str, csv: str | None = "a,b\n1,2\n") -> Path:
    """What execute_chapter leaves: book/NAME.ipynb stamped with the key and the files beside it."""
    if csv is not None:
        (root / "book" / "_data" / name).mkdir(parents=True, exist_ok=True)
        (root / "book" / "_data" / name / "chart.csv").write_text(csv)
    nb = nbformat.read(root / "notebooks" / f"{name}.ipynb", as_version=4)
    freshness.stamp(nb, root, name, k)
    path = root / "book" / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def test_is_current_needs_the_same_key_and_the_files_written_beside(root: Path):
    k = key(root, "alpha")
    assert not freshness.is_current(root, "alpha", k)  # never executed
    _executed(root, "alpha", k)
    assert freshness.recorded(root, "alpha")["files"] == {
        "_data/alpha/chart.csv": freshness.file_hash(root / "book" / "_data" / "alpha" / "chart.csv")}
    assert freshness.is_current(root, "alpha", k)
    assert not freshness.is_current(root, "alpha", key(root, "alpha", {**PARAMS, "publish": True}))

    csv = root / "book" / "_data" / "alpha" / "chart.csv"
    csv.write_text("a,b\n1,3\n")  # a data link that no longer matches its page
    assert not freshness.is_current(root, "alpha", k)
    csv.unlink()
    assert not freshness.is_current(root, "alpha", k)


def test_a_notebook_executed_without_a_key_or_unreadable_is_not_current(root: Path):
    k = key(root, "alpha")
    nbformat.write(_notebook("Alpha"), root / "book" / "alpha.ipynb")  # execute_chapter alone
    assert freshness.recorded(root, "alpha") is None
    assert not freshness.is_current(root, "alpha", k)
    (root / "book" / "alpha.ipynb").write_text("{not json")
    assert not freshness.is_current(root, "alpha", k)


# --- build_book: reuse and parallel execution -----------------------------------------------------

class FakeExecution:
    """Stands in for execute_chapter: records the calls, stamps as the real one does, may fail."""

    def __init__(self, root: Path, fail=(), delay: float = 0.0):
        self.root, self.fail, self.delay = root, set(fail), delay
        self.calls: list[str] = []
        self.running = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, name, parameters, *, root, timeout_s, render_key=None, kernel=None):
        with self.lock:
            self.calls.append(name)
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(self.delay)
            if name in self.fail:
                raise DbexpError(f"chapter {name} failed in cell 3: ValueError: boom")
            if render_key is None:
                nbformat.write(_notebook(name), self.root / "book" / f"{name}.ipynb")
            else:
                _executed(self.root, name, render_key, csv=f"{name}\n" if name != "intro" else None)
        finally:
            with self.lock:
                self.running -= 1


@pytest.fixture
def fake(root: Path, monkeypatch):
    execution = FakeExecution(root)
    monkeypatch.setattr(build_mod, "execute_chapter", execution)
    monkeypatch.setattr(build_mod, "run_jupyter_book", lambda r, toc_path=None: r / "book" / "_build" / "html")
    return execution


def _build(root: Path, **kw):
    lines: list[str] = []
    result = build_mod.build_book("smoke", run=kw.pop("run", False), root=root, log=lines.append, **kw)
    return result, lines


def test_a_second_render_executes_nothing_and_a_change_only_its_chapter(root: Path, fake):
    first, _ = _build(root)
    assert first.executed == ["intro", *CHAPTERS] and first.reused == []
    second, lines = _build(root)
    assert second.executed == [] and second.reused == ["intro", *CHAPTERS]
    assert any("not executed again: intro, alpha, beta, gamma" in line for line in lines)

    _edit(root / "notebooks" / "beta.ipynb")
    third, _ = _build(root)
    assert third.executed == ["beta"]
    (root / "data" / "gamma" / "runs.parquet").write_bytes(b"gamma republished")  # the intro reads it too
    fourth, _ = _build(root)
    assert fourth.executed == ["intro", "gamma"]
    (root / "book" / "_data" / "alpha" / "chart.csv").unlink()  # a data link gone: execute it again
    assert _build(root)[0].executed == ["alpha"]


def test_force_and_measuring_execute_every_chapter_and_measuring_stamps_none(root: Path, fake):
    _build(root)
    assert _build(root, force=True)[0].executed == ["intro", *CHAPTERS]
    fake.calls.clear()
    fake.most = 0
    measured, _ = _build(root, run=True)
    assert measured.executed == ["intro", *CHAPTERS] and measured.reused == []
    assert fake.most == 1  # one chapter at a time: the servers need the CPUs
    assert freshness.recorded(root, "alpha") is None  # its page shows the store, not data/
    assert _build(root)[0].executed == ["intro", *CHAPTERS]


def test_a_plain_render_after_force_executes_nothing(root: Path, fake, monkeypatch):
    monkeypatch.setattr(freshness, "package_hash", lambda: "pkg")  # as key() computes it
    monkeypatch.setattr(freshness, "environment", lambda: {"python": "3"})
    forced, _ = _build(root, force=True)
    assert forced.executed == ["intro", *CHAPTERS] and forced.reused == []
    for name in ("intro", *CHAPTERS):  # stamped with the key a plain render computes
        assert freshness.recorded(root, name)["render_key"] == key(root, name)
    fake.calls.clear()
    after, _ = _build(root)
    assert after.executed == [] and after.reused == ["intro", *CHAPTERS] and fake.calls == []
    assert _build(root, force=True)[0].executed == ["intro", *CHAPTERS]  # --force still executes all


def test_render_only_runs_chapters_in_parallel(root: Path, fake):
    fake.delay = 0.2
    result, lines = _build(root, jobs=2)
    assert sorted(fake.calls) == sorted(["intro", *CHAPTERS]) and fake.most == 2
    assert result.executed == ["intro", *CHAPTERS]  # TOC order, whatever order they finished in
    assert sum(line.startswith("executed chapter") for line in lines) == 4


def test_a_failed_chapter_fails_the_build_and_is_executed_again_next_time(root: Path, fake):
    fake.fail = {"beta", "gamma"}
    with pytest.raises(DbexpError) as err:
        _build(root, jobs=1)
    assert str(err.value) == "chapter beta failed in cell 3: ValueError: boom"
    assert fake.calls == ["intro", "alpha", "beta"]  # nothing after the failure

    fake.calls.clear()
    fake.delay = 0.05
    with pytest.raises(DbexpError) as err:
        _build(root, jobs=2)
    assert str(err.value).startswith("chapter beta failed in cell 3")
    assert not (root / "book" / "beta.ipynb").exists()
    assert "intro" not in fake.calls and "alpha" not in fake.calls  # kept from the first build

    fake.fail = set()
    fake.calls.clear()
    assert _build(root)[0].executed == ["beta", "gamma"]


# --- the chart check ------------------------------------------------------------------------------

def _site(tmp_path: Path) -> Path:
    html = tmp_path / "html"
    (html / "_static").mkdir(parents=True)
    (html / "_static" / "dbexp-vega.js").write_text("vega")
    (html / "index.html").write_text("<html>no chart</html>")
    for name, chart_id in (("one", "0a"), ("two", "0b")):
        (html / f"{name}.html").write_text(f'<html><div id="altair-viz-{chart_id}"></div>{name}</html>')
    return html


def test_pages_that_drew_are_not_loaded_again_while_unchanged(tmp_path: Path, monkeypatch):
    html = _site(tmp_path)
    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\n")
    monkeypatch.setattr(check_mod, "find_chromium", lambda: str(browser))
    loaded: list[str] = []
    drawn = {"one": 1, "two": 1}

    def fake_check(pages):
        loaded.extend(page.stem for page in pages)
        return [check_mod.PageResult(page, 1, drawn[page.stem]) for page in pages]

    monkeypatch.setattr(check_mod, "check_pages", fake_check)
    known = tmp_path / "drawn.json"
    first = check_mod.check_charts(html, known=known)
    assert sorted(loaded) == ["one", "two"] and not any(p.known for p in first)
    assert sorted(v["page"] for v in json.loads(known.read_text()).values()) == ["one.html", "two.html"]

    loaded.clear()
    again = check_mod.check_charts(html, known=known)
    assert loaded == [] and [(p.page.name, p.known, p.drawn) for p in again] == [
        ("one.html", True, 1), ("two.html", True, 1)]

    (html / "two.html").write_text('<html><div id="altair-viz-0c"></div>changed</html>')
    drawn["two"] = 0
    with pytest.raises(DbexpError, match=r"two\.html: 0 of 1 charts drew"):
        check_mod.check_charts(html, known=known)
    assert loaded == ["two"]
    assert [v["page"] for v in json.loads(known.read_text()).values()] == ["one.html"]  # a failure is not kept

    loaded.clear()
    (html / "_static" / "dbexp-vega.js").write_text("another vega")  # every page depends on _static
    drawn["two"] = 1
    check_mod.check_charts(html, known=known)
    assert sorted(loaded) == ["one", "two"]
    loaded.clear()
    check_mod.check_charts(html)  # no record given: every page is loaded
    assert sorted(loaded) == ["one", "two"]


# --- the engine that executes chapters in one kernel -------------------------------------------------

def _installed(module: str) -> str:
    from importlib.metadata import version

    top = module.split(".")[0]
    return f"{top} {version(top)}"


def test_the_chapter_engine_relies_only_on_listed_names_the_installed_papermill_and_nbclient_have():
    """dbexp/book/kernels.py's RELIED_ON lists each name of papermill, nbclient and jupyter_client that the book's
    execution uses (kernels.py and execute.py); each must exist in the installed versions, with the keyword
    arguments the engine passes, and no other name of papermill's or nbclient's may be imported."""
    import ast
    import importlib
    import inspect

    from dbexp.book import kernels

    for module, path in kernels.RELIED_ON:
        found = importlib.import_module(module)
        for part in path.split("."):
            assert hasattr(found, part), (
                f"{module}.{path} is gone from the installed {_installed(module)}: dbexp/book/kernels.py's engine "
                f"relies on it (RELIED_ON); adapt the engine to the new version or pin the old one in pyproject.toml")
            found = getattr(found, part)
    from nbclient import NotebookClient

    from jupyter_client import AsyncKernelClient

    for method, keyword in ((NotebookClient.__init__, "km"), (AsyncKernelClient.execute_interactive, "store_history")):
        assert keyword in inspect.signature(method).parameters, (
            f"{method.__qualname__} of the installed {_installed(method.__module__)} takes no {keyword}=: "
            "dbexp/book/kernels.py's engine passes it")
    listed = {(m, p.split(".")[0]) for m, p in kernels.RELIED_ON}
    book = Path(kernels.__file__).parent
    for source in (book / "kernels.py", book / "execute.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("papermill",
                                                                                                    "nbclient"):
                for alias in node.names:
                    assert (node.module, alias.name) in listed, (
                        f"{source.name} imports {alias.name} from {node.module}, which kernels.RELIED_ON does not "
                        "list: list it there (and say why it is safe to rely on), or use a listed name")


def test_a_changed_name_fails_the_reliance_check_with_its_name(monkeypatch):
    """The check above says which name went missing (here: nbclient's execute_cell taken away)."""
    from nbclient import NotebookClient

    monkeypatch.delattr(NotebookClient, "execute_cell")
    with pytest.raises(AssertionError, match=r"nbclient\.NotebookClient\.execute_cell is gone from the installed "
                                             r"nbclient \d"):
        test_the_chapter_engine_relies_only_on_listed_names_the_installed_papermill_and_nbclient_have()
