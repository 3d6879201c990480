"""Every chapter of the book executes at smoke scale with papermill, against real servers,
and renders from the published data/ without any server."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from dbexp.book import execute_chapter
from dbexp.book.execute import notebook_parameters
from dbexp.book.toc import executed_chapters

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = executed_chapters(REPO)

pytestmark = [pytest.mark.notebooks, pytest.mark.docker]


def _errors(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [f"{o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if o.output_type == "error"]


VERDICTS = ("agrees", "disagrees", "not resolved", "not measured", "not testable")


def _shows(path: Path) -> None:
    """What a reader sees: every glued value is a number or non-empty text, every chart has rows,
    and a claims table gives each claim a verdict."""
    import json
    import re

    nb = nbformat.read(path, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    glued = {o.metadata["scrapbook"]["name"]: o.data for o in outputs if "scrapbook" in o.get("metadata", {})}
    assert glued or path.stem == "intro", f"{path.name} glues nothing"
    for name, data in glued.items():
        text = next((v for k, v in data.items() if k.endswith(("text/markdown", "text/plain"))), "")
        if not k_markdown(data):
            value = float(text)  # a number: it must parse
            assert value == value, f"{name} is NaN"
        else:
            assert text.strip() or name == "missing_official", f"{name} is empty"
    charts = [o.data["text/html"] for o in outputs if "vega" in o.get("data", {}).get("text/html", "")]
    for html in charts:
        datasets = re.findall(r'"datasets": (\{.*?\}), "\$schema"', html, re.S) or \
            re.findall(r'"datasets": (\{.*\})\}', html, re.S)
        assert datasets, "a chart without embedded data"
        rows = json.loads(datasets[0])
        assert rows and all(len(v) > 0 for v in rows.values()), "a chart with no rows"
    tables = [o.data["text/html"] for o in outputs if "<th" in o.get("data", {}).get("text/html", "")
              and ">verdict<" in o.get("data", {}).get("text/html", "")]
    if path.stem != "intro":
        assert tables, f"{path.name} has no claims table"
        # the verdict column wherever the table has it (verdicts.COLUMNS: the fifth of five; older tables: the
        # third of three)
        heads = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", tables[-1], re.S)]
        cells = re.findall(r"<td[^>]*>(.*?)</td>", tables[-1], re.S)
        verdicts = cells[heads.index("verdict")::len(heads)]
        assert verdicts and all(any(w in v for w in VERDICTS) for v in verdicts), verdicts


def k_markdown(data) -> bool:
    return any(k.endswith("text/markdown") for k in data)


def test_every_chapter_is_found():
    assert {"intro", "calibration"} <= set(CHAPTERS)


def worker_cpus(name: str) -> dict:
    """The CPUs of a smoke run on a pytest-xdist worker (make test runs three): on every other worker (gw1, gw3, ...)
    the servers are pinned to CPU 0 and the clients to CPU 1, the chapters' default turned round, so that the
    workers' servers do not all share CPU 1 (in make test on 2 CPUs, CPU 1 ran at 90 to 100% while CPU 0 idled half
    the time during the chapters' runs). Where the notebook declares no CPUs (intro), or the host has one: none."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    declared = notebook_parameters(REPO / "notebooks" / f"{name}.ipynb")
    if not worker.startswith("gw") or int(worker[2:]) % 2 == 0 or (os.cpu_count() or 1) < 2 \
            or not {"server_cpus", "client_cpus"} <= set(declared):
        return {}
    return {"server_cpus": "0", "client_cpus": "1"}


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_executes_at_smoke_scale(name, tmp_path, monkeypatch):
    monkeypatch.setenv("DBEXP_RESULTS", str(tmp_path / "results.duckdb"))  # a fresh store: really run
    out = execute_chapter(name, {"scale": "smoke", "run": True, "publish": False, **worker_cpus(name)}, root=REPO,
                          timeout_s=1200)
    assert out.exists() and _errors(out) == []
    _shows(out)


@pytest.mark.parametrize("name", [c for c in CHAPTERS if (REPO / "data" / c).is_dir()])
def test_chapter_renders_from_published_data(name, tmp_path, monkeypatch):
    monkeypatch.setenv("DBEXP_RESULTS", str(tmp_path / "empty.duckdb"))
    out = execute_chapter(name, {"scale": "default", "run": False, "publish": False}, root=REPO,
                          timeout_s=600)
    assert _errors(out) == []
    _shows(out)


def test_readme_figures_come_from_the_published_data():
    from dbexp.chapters import calibration
    from dbexp.results.readme import read_block

    if not (REPO / "data" / "calibration").is_dir():
        pytest.skip("no published calibration results yet")
    res = calibration.run("default", run=False)
    assert read_block("calibration", REPO / "README.md") == calibration.readme_block(res)
