"""A claims table as a golden record of outcomes, not of prose: per claim id, the verdict words and the
intervals of what was measured, and the readable differences between two such records.

- A claim is keyed by the ledger ids its row tests (claims.yaml's ids, joined by ", "; issue 46), or, for a
  row that tests none, by its text as a slug (HTML tags and the "(source)" link dropped, cut to
  ``ID_WIDTH`` characters at a word); a later row with the same key gets "-2", "-3" in table order.
- Whether the row's witness held is pinned with its verdict.
- The verdict words are those of dbexp/experiments/verdicts.py, in the cell's order: "agrees",
  "agrees in direction" (with ", smaller" / ", larger" / ", higher efficiency" / ", lower efficiency"
  where the cell says it), "disagrees", "not resolved", "not testable here", "not measured", each with
  "in N of M" where the cell counts servers (verdicts.combine). The reasons in parentheses, the
  servers' names and the wording around them are prose, and not pinned.
- The intervals are read from the "measured here" cell, in its order: "POINT [LOW, HIGH]" (a unit or
  % between them allowed) gives [POINT, LOW, HIGH]; "[LOW, HIGH]" alone and "LOW to HIGH" give
  [null, LOW, HIGH]. A number that is part of a version (two dots or more: 8.0.15) is no number.
- Numbers compare within TOLERANCE: equal to relative 1e-6, or within half a unit in the last printed
  digit of the less precise of the two (0.97 against 0.966: the same number printed to two digits),
  so that a change of formatting alone does not read as a change of data.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ID_WIDTH = 60
REL_TOLERANCE = 1e-6
TOLERANCE = (f"relative {REL_TOLERANCE:g}, or half a unit in the last printed digit of the less precise "
             "of the two numbers")

_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_POINT = rf"(?<![A-Za-wyzµ_\d.]){_NUM}"
INTERVAL = re.compile(rf"(?:(?P<point>{_POINT})\s*(?:%|[a-zµ]{{1,3}})?\s*)?"
                      rf"\[\s*(?P<lo>{_NUM})\s*%?\s*,\s*(?P<hi>{_NUM})\s*%?\s*\]"
                      rf"|(?P<from>{_POINT})\s*%?\s+to\s+(?P<to>{_NUM})(?![\d.]*\.\d)")
VERDICT = re.compile(r"\b(?:not testable here|not measured|not resolved|disagrees"
                     r"|agrees in direction(?:, (?:smaller|larger|higher efficiency|lower efficiency))?|agrees)\b")
COUNT = re.compile(r"\bin (\d+) of (\d+)\b")


def book_verdicts(repo: Path) -> tuple[str, ...]:
    """The verdict words the book's notebook test accepts (VERDICTS in tests/test_notebooks.py),
    read without importing that module (it needs papermill and marks itself docker)."""
    tree = ast.parse((repo / "tests" / "test_notebooks.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "VERDICTS" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError("tests/test_notebooks.py defines no VERDICTS")


def plain(html: str | None) -> str:
    """A cell's text without HTML tags and with one space between words."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html or "")).strip()


def slug(claim: str | None, width: int = ID_WIDTH) -> str:
    text = re.sub(r"\(\s*source\s*\)", "", plain(claim)).lower()
    words = re.sub(r"[^a-z0-9.%]+", "-", text).replace(".-", "-").strip("-.")
    if len(words) <= width:
        return words
    return words[:width].rsplit("-", 1)[0]


def claim_ids(claims, ledger_ids=None) -> list[str]:
    """A stable id per row: its ledger ids where it has them, else the claim's slug, "-2", "-3" added to
    repeats in table order."""
    claims = list(claims)
    ledger_ids = [""] * len(claims) if ledger_ids is None else list(ledger_ids)
    seen: dict[str, int] = {}
    out = []
    for claim, given in zip(claims, ledger_ids, strict=True):
        base = str(given) if isinstance(given, str) and given else slug(claim)
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def _without_parentheses(text: str) -> str:
    while True:
        shorter = re.sub(r"\([^()]*\)", "", text)
        if shorter == text:
            return text
        text = shorter


def verdict_words(cell: str | None) -> list[str]:
    """The verdict words of a verdict cell, in order, each with its "in N of M" where counted."""
    text = _without_parentheses(plain(cell))
    hits = list(VERDICT.finditer(text))
    out = []
    for i, m in enumerate(hits):
        rest = text[m.end(): hits[i + 1].start() if i + 1 < len(hits) else len(text)]
        count = COUNT.search(rest)
        out.append(f"{m.group(0)} in {count[1]} of {count[2]}" if count else m.group(0))
    return out


def intervals(cell: str | None) -> list[list[str | None]]:
    """The intervals of a "measured here" cell as printed: [point or None, low, high]."""
    out = []
    for m in INTERVAL.finditer(plain(cell)):
        if m["lo"] is not None:
            out.append([m["point"], m["lo"], m["hi"]])
        else:
            out.append([None, m["from"], m["to"]])
    return out


def record(chapter: str, table) -> dict:
    """A claims table (verdicts.COLUMNS) as its golden record."""
    rows = table.to_dict("records")
    ids = claim_ids([r["claim"] for r in rows], [r.get("id", "") for r in rows])
    return {"chapter": chapter,
            "computed_by": f'claims(run("default", run=False)) on data/{chapter}/',
            "tolerance": TOLERANCE,
            "claims": {i: {"verdict": verdict_words(r["verdict"]), "witness_ok": _ok(r.get("witness_ok")),
                           "intervals": intervals(r["measured here"])}
                       for i, r in zip(ids, rows, strict=True)}}


def _ok(value) -> bool | None:
    """A row's witness_ok as JSON has it (None where the row has no witness)."""
    return None if value is None or value != value else bool(value)


def _value(text: str) -> float:
    return float(text.replace(",", ""))


def _half_unit(text: str) -> float:
    decimals = len(text.partition(".")[2])
    return 0.5 * 10 ** -decimals


def same_number(a: str | None, b: str | None) -> bool:
    """Two printed numbers are the same within TOLERANCE (None only against None)."""
    if a is None or b is None:
        return a is b
    x, y = _value(a), _value(b)
    return abs(x - y) <= max(REL_TOLERANCE * max(abs(x), abs(y)), max(_half_unit(a), _half_unit(b)))


def _shown(interval) -> str:
    point, lo, hi = interval
    return f"{point} [{lo}, {hi}]" if point is not None else f"[{lo}, {hi}]"


def differences(chapter: str, before: dict, after: dict) -> list[str]:
    """Readable lines for every claim whose verdict words or intervals differ between two records,
    and every claim id that is gone or new."""
    out = []
    old, new = before["claims"], after["claims"]
    for cid, was in old.items():
        if cid not in new:
            out.append(f"{chapter}: claim '{cid}' is no longer in the table")
            continue
        now = new[cid]
        if was["verdict"] != now["verdict"]:
            out.append(f"{chapter}: claim '{cid}': verdict {was['verdict']} -> {now['verdict']}")
        if was.get("witness_ok") != now.get("witness_ok"):
            out.append(f"{chapter}: claim '{cid}': witness held {was.get('witness_ok')} -> {now.get('witness_ok')}")
        a, b = was["intervals"], now["intervals"]
        if len(a) != len(b):
            out.append(f"{chapter}: claim '{cid}': {len(a)} intervals -> {len(b)}: "
                       f"{[_shown(i) for i in a]} -> {[_shown(i) for i in b]}")
            continue
        for k, (x, y) in enumerate(zip(a, b)):
            if not all(same_number(p, q) for p, q in zip(x, y)):
                out.append(f"{chapter}: claim '{cid}': interval {k + 1} {_shown(x)} -> {_shown(y)}")
    out += [f"{chapter}: claim '{cid}' is new: verdict {now['verdict']}" for cid, now in new.items() if cid not in old]
    if [c for c in old if c in new] != [c for c in new if c in old]:
        out.append(f"{chapter}: the claims' order changed: {list(old)} -> {list(new)}")
    return out
