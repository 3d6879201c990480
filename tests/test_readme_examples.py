"""The README's example commands run as written (papermill with list parameters as JSON)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

from dbexp import process

REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.docker, pytest.mark.notebooks]


def readme_commands(prefix: str) -> list[str]:
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    return [line.strip() for b in blocks for line in b.splitlines() if line.strip().startswith(prefix)]


def test_the_readme_papermill_example_runs(tmp_path):
    commands = readme_commands(".venv/bin/papermill ")
    assert commands, "the README shows no papermill example"
    out = REPO / "out.ipynb"
    env = {"DBEXP_RESULTS": str(tmp_path / "results.duckdb"),
           "PATH": f"{Path(sys.executable).parent}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    try:
        for cmd in commands:
            # as written, with this test's virtual environment standing in for the checkout's .venv
            line = cmd.replace(".venv/bin/", f"{Path(sys.executable).parent}/", 1)
            proc = process.run(["bash", "-c", line], cwd=REPO, env=env, capture_output=True, text=True,
                               timeout=900)
            assert proc.returncode == 0, proc.stderr[-2000:]
            nb = nbformat.read(out, as_version=4)
            errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
            assert errors == []
            versions = "".join(str(o.get("data", {})) for c in nb.cells for o in c.get("outputs", []))
            assert "postgres 17.10" in versions
    finally:
        out.unlink(missing_ok=True)
