"""The test suite's own layout: pytest imports test modules by their basename (no __init__.py in
tests/), so two test files of one name in tests/, tests/unit/ and tests/published/ stop the
collection of `make test` with "import file mismatch"."""

from __future__ import annotations

from collections import defaultdict

from unit_support import REPO


def test_every_test_module_has_a_name_of_its_own():
    found = defaultdict(list)
    for path in (REPO / "tests").rglob("*.py"):
        found[path.name].append(str(path.relative_to(REPO)))
    same = {name: paths for name, paths in found.items() if len(paths) > 1 and name != "conftest.py"}
    assert not same, f"modules of one name in tests/ (rename one, e.g. test_<name>_chapter.py): {same}"
