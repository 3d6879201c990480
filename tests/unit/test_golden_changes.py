"""A golden file of verdicts (tests/published/golden/) changes only with what a verdict is made of (issue 46).

The golden files pin every published chapter's verdict words and intervals. Between 2026-11-26 and 2026-12-07
they changed in 8 commits that changed code and no data: a regression of a verdict looks exactly like that. Every
commit after BASELINE, and the working tree's change, that touches a golden file must also touch what verdicts are
made of: the published data (data/), a ledger (a chapter's claims.yaml), the verdict rules (dbexp/experiments/
verdicts.py) or a chapter's claims rules (its claims.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dbexp import process

REPO = Path(__file__).resolve().parents[2]
GOLDEN = "tests/published/golden/"
# the commit before this check: the golden files' history up to it is what it is (the 8 commits above among it)
BASELINE = "8b9cea00cebb4f9e52fd5190b2249f7a862da4eb"


def causes(path: str) -> bool:
    """Whether a changed file is one a verdict is made of."""
    return (path.startswith("data/") or path == "dbexp/experiments/verdicts.py"
            or (path.startswith("dbexp/chapters/") and path.rsplit("/", 1)[-1] in ("claims.yaml", "claims.py")))


def unexplained(files: list[str]) -> list[str]:
    """The golden files among ``files`` (one change's), where nothing else among them is a verdict's cause."""
    golden = [f for f in files if f.startswith(GOLDEN)]
    return [] if not golden or any(causes(f) for f in files) else golden


def _git(*args: str) -> list[str]:
    done = process.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"git {args[0]} failed here: {done.stderr.strip()[-200:]}")
    return [line for line in done.stdout.splitlines() if line.strip()]


def test_a_change_of_a_golden_file_alone_is_caught_and_one_with_its_cause_is_not():
    assert unexplained(["tests/published/golden/gtid.claims.json", "dbexp/chapters/gtid/analysis.py"]) == \
        ["tests/published/golden/gtid.claims.json"]
    for cause in ("data/gtid/runs.parquet", "dbexp/chapters/gtid/claims.yaml", "dbexp/experiments/verdicts.py",
                  "dbexp/chapters/versions/claims.py"):
        assert unexplained(["tests/published/golden/gtid.claims.json", cause]) == []
    assert unexplained(["dbexp/chapters/gtid/analysis.py"]) == []  # no golden file changed


def test_every_golden_change_since_the_baseline_comes_with_its_cause():
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    if not _git("rev-list", "--max-count=1", BASELINE):
        pytest.skip(f"the baseline {BASELINE[:8]} is not in this clone's history (a shallow clone)")
    bad = []
    for commit in _git("rev-list", f"{BASELINE}..HEAD"):
        files = _git("diff-tree", "--no-commit-id", "--name-only", "-r", commit)
        if unexplained(files):
            bad.append(f"{commit[:8]}: {', '.join(unexplained(files))}")
    working = [line[3:] for line in _git("status", "--porcelain")]
    if unexplained(working):
        bad.append(f"the working tree: {', '.join(unexplained(working))}")
    assert not bad, ("golden files changed with neither data/, a ledger, verdicts.py nor a chapter's claims.py: "
                     + "; ".join(bad))
