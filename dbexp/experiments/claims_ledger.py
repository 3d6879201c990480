"""A chapter's ledger: every testable claim its sources make on its topic, tested here or not, in
``dbexp/chapters/<name>/claims.yaml``.

One entry per claim, with its place in the source (``source``: a file of ../shared/seeds/, ``line``:
1-based, ``anchor``: a few of the source's words on that line, checked by tests/unit/test_ledgers.py),
the claim in our words (``claim``), the source's ``conditions`` and a ``status``:

- ``tested``: the chapter's claims.py computes a verdict for it from the runs; ``measured`` names the
  claims table's row that holds it;
- ``not measured``: this lab could test it, the chapter does not; ``why`` says so;
- ``not testable here``: a condition of the source this lab cannot meet; ``why`` names it.

The claims tables show what is tested; the ledger says what is not, and how much of what could be
tested here is (:func:`coverage`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from dbexp.errors import DbexpError

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
TESTED, NOT_TESTABLE, NOT_MEASURED = "tested", "not testable here", "not measured"
STATUSES = (TESTED, NOT_TESTABLE, NOT_MEASURED)
FIELDS = ("id", "source", "line", "anchor", "claim", "conditions", "status")


def path(chapter: str) -> Path:
    """Where the ledger of ``chapter`` (a folder name under dbexp/chapters/) is."""
    return CHAPTERS / chapter / "claims.yaml"


@cache
def ledger(chapter: str) -> tuple[dict, ...]:
    """The entries of ``chapter``'s ledger, checked: each has every field of FIELDS and a known
    status, a tested one says where it is measured (``measured``), any other why not (``why``)."""
    file = path(chapter)
    if not file.is_file():
        raise DbexpError(f"chapter {chapter!r} has no ledger of its sources' claims ({file})")
    entries = yaml.safe_load(file.read_text()) or []
    for e in entries:
        missing = [k for k in FIELDS if k not in e]
        if not missing:
            missing = [k for k in ("measured" if e["status"] == TESTED else "why",) if not e.get(k)]
        if missing or e["status"] not in STATUSES:
            raise DbexpError(f"{chapter}/{file.name}: entry {e.get('id', '?')!r} lacks {missing} or has a bad "
                             f"status {e.get('status')!r} (valid: {', '.join(STATUSES)})")
    return tuple(entries)


def coverage(entries) -> tuple[int, int]:
    """(tested, testable): the entries tested, and those this lab could test (all but the ones not
    testable here). An entry with ``extends`` (the id of the source's claim it carries further) is a
    chapter's own extension, not a source's claim, and is not counted."""
    statuses = [e["status"] for e in entries if not e.get("extends")]
    return statuses.count(TESTED), len(statuses) - statuses.count(NOT_TESTABLE)
