"""The parameters every chapter notebook receives, validated before anything runs.

Every chapter notebook declares, in its cell tagged ``parameters``::

    scale = "smoke"   # smoke, default or full: how long and how large the runs are
    run = True        # False: read committed results from data/ instead of running servers
    publish = False   # True: this execution is meant for the published book
    force = False     # True: measure again points already recorded (else a rerun resumes)
"""

from __future__ import annotations

from dbexp.errors import DbexpError
from dbexp.experiments.scales import SCALES  # noqa: F401  (re-exported by dbexp.book)
from dbexp.experiments.scales import check_scale as validate_scale


def chapter_parameters(scale: str, run: bool, publish: bool, force: bool = False) -> dict:
    """The parameter dict the pipeline passes to every chapter notebook: the first four of
    chapter.NOTEBOOK_SWITCHES (the CPU sets keep the notebook's defaults)."""
    validate_scale(scale)
    for name, value in (("run", run), ("publish", publish), ("force", force)):
        if not isinstance(value, bool):
            raise DbexpError(f"parameter {name} must be True or False, not {value!r}")
    return {"scale": scale, "run": run, "publish": publish, "force": force}
