"""The book's chapters, one folder each: ``dbexp/chapters/<name>/``.

A chapter's folder holds everything only it needs: its design and measurement, its analysis, its
claims, and the per-server parts it speaks to (its probes, its SQL, its workload) in modules named
for the engine or mechanism (``innodb.py``, ``postgres.py``). Its ``__init__`` exposes ``CHAPTER``,
the :class:`~dbexp.experiments.chapter.Chapter` object. Chapters are found by walking this package:
adding a folder adds a chapter, and no list elsewhere names them.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from dbexp.errors import DbexpError, choices


@cache
def names() -> tuple[str, ...]:
    """Every chapter folder's name, sorted."""
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg))


def get(name: str):
    """The chapter object of ``name`` (its folder's ``CHAPTER``), or a one-line DbexpError."""
    if name not in names():
        raise DbexpError(f"unknown chapter {name!r}; valid are {choices(names())}")
    return importlib.import_module(f"{__name__}.{name}").CHAPTER


def every() -> dict[str, object]:
    """name -> chapter object, for every chapter folder."""
    return {n: get(n) for n in names()}
