"""The command line shows a measuring chapter's progress: the sweep's bar (sweep.Progress) writes each line it draws
to the file the kernel's environment names, and dbexp book (build.progress_shown) prints it as it changes."""

from __future__ import annotations

import io
import os
import time

import pytest

from dbexp.book import build
from dbexp.experiments.sweep import PROGRESS_FILE, Progress

pytestmark = pytest.mark.unit


def test_the_sweeps_bar_writes_each_line_it_draws_to_the_progress_file(tmp_path, monkeypatch):
    path = tmp_path / "progress"
    monkeypatch.setenv(PROGRESS_FILE, str(path))
    bar = Progress(total=4, desc="versions", unit="run", file=io.StringIO(), mininterval=0)
    bar.set_postfix_str("mysql:8.0@offline point-query #0")
    bar.update(1)
    line = path.read_text().strip()
    assert line.startswith("versions:") and "1/4" in line and line.endswith("point-query #0]")
    bar.close()


def test_dbexp_book_prints_the_progress_of_the_chapter_it_executes(monkeypatch):
    monkeypatch.setattr(build, "PROGRESS_POLL_S", 0.02)
    said: list[str] = []
    before = os.environ.get(PROGRESS_FILE)
    with build.progress_shown(said.append):
        assert os.environ[PROGRESS_FILE]  # what a kernel started now inherits
        bar = Progress(total=2, desc="calibration", unit="run", file=io.StringIO(), mininterval=0)
        for point in ("harness #0", "harness #1"):
            bar.set_postfix_str(point)
            time.sleep(0.1)
            bar.update(1)
            time.sleep(0.1)
        bar.close()
    assert os.environ.get(PROGRESS_FILE) == before
    runs = [s for s in said if "calibration:" in s]
    assert any("0/2" in s and "harness #0" in s for s in runs) and any("2/2" in s for s in runs), said
