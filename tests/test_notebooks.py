"""Every chapter of the book executes at smoke scale with papermill, against real servers,
and renders from the published data/ without any server."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from dbexp.book import execute_chapter
from dbexp.book.toc import executed_chapters

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = executed_chapters(REPO)

pytestmark = [pytest.mark.notebooks, pytest.mark.docker]


def _errors(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [f"{o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if o.output_type == "error"]


def test_every_chapter_is_found():
    assert {"intro", "calibration"} <= set(CHAPTERS)


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_executes_at_smoke_scale(name, tmp_path, monkeypatch):
    monkeypatch.setenv("DBEXP_RESULTS", str(tmp_path / "results.duckdb"))  # a fresh store: really run
    out = execute_chapter(name, {"scale": "smoke", "run": True, "publish": False}, root=REPO,
                          timeout_s=1200)
    assert out.exists() and _errors(out) == []


@pytest.mark.parametrize("name", [c for c in CHAPTERS if (REPO / "data" / c).is_dir()])
def test_chapter_renders_from_published_data(name, tmp_path, monkeypatch):
    monkeypatch.setenv("DBEXP_RESULTS", str(tmp_path / "empty.duckdb"))
    out = execute_chapter(name, {"scale": "default", "run": False, "publish": False}, root=REPO,
                          timeout_s=600)
    assert _errors(out) == []


def test_readme_figures_come_from_the_published_data():
    from dbexp.results.readme import read_block
    from dbexp.experiments import calibration

    if not (REPO / "data" / "calibration").is_dir():
        pytest.skip("no published calibration results yet")
    res = calibration.run("default", run=False)
    assert read_block("calibration", REPO / "README.md") == calibration.readme_block(res)
