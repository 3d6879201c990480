"""Every chapter the registry finds (dbexp/chapters/<name>/), with no server: it is in the book, its
notebook's parameters are its Scale's, and the shared protocol validates overrides as papermill passes them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from dbexp import chapters
from dbexp.book import parameters
from dbexp.book.toc import executed_chapters
from dbexp.errors import DbexpError
from dbexp.experiments.chapter import Chapter

REPO = Path(__file__).resolve().parents[2]
NAMES = chapters.names()


def test_the_registry_and_the_book_name_the_same_chapters():
    assert NAMES, "no chapter folder under dbexp/chapters/"
    assert set(NAMES) == set(executed_chapters(REPO)) - {"intro"}
    with pytest.raises(DbexpError, match="unknown chapter 'readviews'; valid are"):
        chapters.get("readviews")


@pytest.mark.parametrize("name", NAMES)
def test_the_notebook_parameters_are_the_chapters_scale(name: str):
    chapter = chapters.get(name)
    assert isinstance(chapter, Chapter) and chapter.name == name
    nb = json.loads((REPO / "notebooks" / f"{name}.ipynb").read_text())
    cell = parameters.parameters_cell(nb)
    assert cell is not None, f"notebooks/{name}.ipynb has no parameters cell"
    assert "".join(cell["source"]) == parameters.cell(chapter), (
        f"notebooks/{name}.ipynb's parameters cell differs from its Scale: run `dbexp chapters --write-parameters`")
    assert set(chapter.knob_help) <= {f.name for f in dataclasses.fields(chapter.Scale)}


@pytest.mark.parametrize("name", NAMES)
def test_overrides_as_papermill_passes_them(name: str):
    chapter = chapters.get(name)
    sc = chapter.scale("smoke", servers='["postgres:17"]') if hasattr(chapter.Scale, "servers") else None
    if sc is not None:
        assert sc.servers == ("postgres:17",)
    with pytest.raises(DbexpError, match=f"unknown parameter 'nope' for chapter {name}; valid are"):
        chapter.scale("smoke", nope=[1])
    with pytest.raises(DbexpError, match="unknown scale 'huge'"):
        chapter.scale("huge")
    ints = [f.name for f in dataclasses.fields(chapter.Scale)
            if isinstance(getattr(chapter.scales["smoke"], f.name), int)
            and not isinstance(getattr(chapter.scales["smoke"], f.name), bool)]
    if ints:
        assert getattr(chapter.scale("smoke", **{ints[0]: "3"}), ints[0]) == 3
        with pytest.raises(DbexpError, match=f"bad value for {ints[0]}"):
            chapter.scale("smoke", **{ints[0]: "three"})


@pytest.mark.parametrize("name", NAMES)
def test_a_server_the_chapter_cannot_measure_is_refused_in_one_line(name: str):
    chapter = chapters.get(name)
    if chapter.engines is None or not chapter.engines.skipped:
        pytest.skip(f"{name} measures every flavor it is given")
    from dbexp.catalog.catalog import known_versions

    flavor = next(iter(chapter.engines.skipped))
    spec = f"{flavor}:{known_versions(flavor)[0]}"
    with pytest.raises(DbexpError, match=f"chapter {name} cannot measure"):
        chapter.engines.check(spec)
