"""A chapter notebook's papermill parameters cell, written from the chapter's ``Scale``.

The cell names the run's switches (scale, run, publish, force), one override per field of the
chapter's ``Scale`` (None keeps the scale's value) and the CPU sets. It is generated, never typed:
``dbexp chapters --write-parameters`` rewrites every notebook's cell, and a unit test fails where a
notebook's cell differs from what its chapter's Scale gives.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from dbexp.experiments.chapter import NOTEBOOK_SWITCHES

SWITCHES = [
    ("scale", '"smoke"', "smoke | default | full"),
    ("run", "True", "False: render from the published results in data/"),
    ("publish", "False", "True: export these results to data/"),
    ("force", "False", "True: measure again points already recorded ok (else a rerun resumes)"),
]
CPUS = [
    ("server_cpus", '"1"', "CPUs the server containers may use"),
    ("client_cpus", '"0"', "CPUs the load generator (and the lab's sampler and probes) may use"),
]
assert tuple(n for n, _, _ in SWITCHES + CPUS) == NOTEBOOK_SWITCHES
COLUMN = 22


def _line(name: str, value: str, comment: str) -> str:
    return f"{name + ' = ' + value:<{COLUMN}} # {comment}"


def cell(chapter) -> str:
    """The parameters cell's source for ``chapter``."""
    lines = [_line(*s) for s in SWITCHES]
    for f in dataclasses.fields(chapter.Scale):
        lines.append(_line(f.name, "None", f"override {chapter.knob_help.get(f.name, f.name)}"))
    lines += [_line(*c) for c in CPUS]
    return "\n".join(lines)


def parameters_cell(nb: dict) -> dict | None:
    for c in nb["cells"]:
        if c["cell_type"] == "code" and "parameters" in c.get("metadata", {}).get("tags", []):
            return c
    return None


def write(path: Path, chapter) -> bool:
    """Rewrite the parameters cell of the notebook at ``path``; True if it changed."""
    nb = json.loads(path.read_text())
    c = parameters_cell(nb)
    if c is None:
        raise ValueError(f"{path} has no cell tagged 'parameters'")
    want = cell(chapter)
    if "".join(c["source"]) == want:
        return False
    c["source"] = want.splitlines(keepends=True)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return True
