"""The Chapter protocol's conventions (dbexp.experiments.chapter): claims and findings found in the
chapter's folder by name, a chapter built before its first publication rendered empty, a server at
its own settings only."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dbexp.chapters import get
from dbexp.experiments.chapter import Chapter, Results


@dataclass(frozen=True)
class _Scale:
    servers: tuple[str, ...] = ("postgres:16@offline",)


class _Bare(Chapter):
    """A chapter defined outside dbexp/chapters/: no claims.py or findings.py beside it."""

    name = "bare_test_chapter"
    Scale = _Scale
    scales = {"smoke": _Scale(), "default": _Scale(), "full": _Scale()}
    empty_until_published = True


def test_claims_and_findings_are_found_in_the_chapters_folder():
    for name in ("gtid", "versions", "calibration"):
        chapter = get(name)
        assert chapter._own("claims", "claims").__module__ == f"dbexp.chapters.{name}.claims"
        assert chapter._own("findings", "findings").__module__ == f"dbexp.chapters.{name}.findings"
    assert get("calibration")._own("findings", "readme_block") is not None
    assert get("gtid")._own("findings", "readme_block") is None  # no README block: readme_block() is None


def test_a_chapter_without_its_modules_has_no_claims_and_empty_findings(tmp_path):
    bare = _Bare()
    res = bare.run("smoke", run=False, root=tmp_path)  # nothing published under tmp_path: empty, not an error
    assert isinstance(res, Results) and res.wide.empty and res.source == "no published results yet"
    assert bare.findings(res) == "" and bare.readme_block(res) is None
    with pytest.raises(NotImplementedError, match="bare_test_chapter has no claims.py"):
        bare.claims(res)


def test_server_config_with_or_without_the_comparable_baseline():
    mine = {"shared_buffers": "64MB"}
    alone = Chapter.server_config("postgres:16@offline", "1", mine, comparable=False)
    assert alone.settings == mine
    both = Chapter.server_config("postgres:16@offline", "1", mine)
    assert both.settings["shared_buffers"] == "64MB" and len(both.settings) > len(mine)
