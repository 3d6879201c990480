"""Where the image recipes live (``docker/`` at the repository root) and how they are hashed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from dbexp.errors import DbexpError, choices
from dbexp.paths import project_root

RECIPES_ENV = "DBEXP_RECIPES"


def recipes_root() -> Path:
    """The ``docker/`` folder: $DBEXP_RECIPES, else the one beside the package's source tree."""
    env = os.environ.get(RECIPES_ENV)
    root = Path(env) if env else project_root() / "docker"
    if not root.is_dir():
        raise DbexpError(f"image recipes not found at {root}: run from a checkout of the repository "
                         f"or set {RECIPES_ENV} to its docker/ folder")
    return root


def recipe_dir(name: str) -> Path:
    root = recipes_root()
    path = root / name
    if not (path.is_dir() and name and "/" not in name):
        known = sorted(p.name for p in root.iterdir() if p.is_dir())
        raise DbexpError(f"no image recipe {name!r} in {root}; recipes: {choices(known)}")
    return path


def recipe_files(path: Path) -> list[Path]:
    """Every file of a recipe folder, in a stable order (editor leftovers excluded)."""
    skip = (".pyc", "~", ".swp")
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.endswith(skip)
                  and "__pycache__" not in p.parts)


def digest(path: Path, extra: dict[str, str] | None = None, files: list[Path] | None = None) -> str:
    """sha256 over a recipe folder's files (names, modes and contents) plus ``extra`` items;
    ``files``: only these files of the folder (default: all of them). A file that is a symbolic link
    (a script shared with another recipe) counts with the contents of the file it names."""
    h = hashlib.sha256()
    for f in recipe_files(path) if files is None else sorted(files):
        h.update(f.relative_to(path).as_posix().encode() + b"\0")
        h.update(b"x" if os.access(f, os.X_OK) else b"-")
        h.update(hashlib.sha256(f.read_bytes()).digest())
    for key, value in sorted((extra or {}).items()):
        h.update(f"\0{key}={value}".encode())
    return h.hexdigest()
