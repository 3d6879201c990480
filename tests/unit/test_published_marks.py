"""tests/conftest.py's marks and failure report, run on a throwaway suite beside a copy of it: tests
under unit/ are marked unit, under published/ published, and a failing published check reads "the
published data changed: <what it checks>" where a failing unit test does not."""

from __future__ import annotations

import subprocess
import sys

from unit_support import REPO

from dbexp import process


def _suite(tmp_path) -> None:
    (tmp_path / "conftest.py").write_text((REPO / "tests" / "conftest.py").read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    unit: u\n    published: p\n")
    for folder, body in (("unit", "def test_code():\n    assert 1 + 1 == 3, 'arithmetic'\n"),
                         ("published", 'def test_verdict():\n    """The claim\'s verdict word."""\n'
                                       "    assert 'agrees' == 'disagrees', 'the verdict moved'\n")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"test_{folder}_demo.py").write_text(body)


def _run(tmp_path, *args) -> subprocess.CompletedProcess:
    return process.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-ra", *args],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_each_folder_gets_its_mark_and_only_published_failures_blame_the_data(tmp_path):
    _suite(tmp_path)
    unit = _run(tmp_path, "-m", "unit")
    assert "1 failed, 1 deselected" in unit.stdout and "published data changed" not in unit.stdout
    published = _run(tmp_path, "-m", "published")
    assert "1 failed, 1 deselected" in published.stdout
    assert "the published data changed: The claim's verdict word." in published.stdout
    assert "AssertionError: the verdict moved" in published.stdout  # the assertion is still shown
