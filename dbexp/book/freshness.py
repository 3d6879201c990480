"""Is an executed chapter still what executing it again would give? The render key.

A chapter rendered from the published results (``run=False``) is a function of what it reads:

- its source notebook, ``notebooks/NAME.ipynb``, and the parameters it is given;
- its published results, every file under ``data/NAME/``;
- the ``dbexp`` package it imports (every file of it) and the environment it runs in: the Python,
  the installed distributions (their names and versions), ``PYTHONPATH`` and the ``DBEXP_*``
  variables, the book's root.

A page with no ``data/NAME/`` folder (the introduction) is taken to be about the whole book: it may
read every chapter's results (the intro's table of published experiments) and the table of
contents (its chapter list), so its key covers every file under ``data/``, ``_toc.yml`` and the
title of every page the TOC lists.

:func:`render_key` is a SHA-256 over all of these. When the book executes a chapter, it stores the
key in the executed notebook's metadata (``book/NAME.ipynb``, ``metadata.dbexp.render_key``), in the
same write as the notebook, with the hash of each file the chapter wrote beside it (its data links,
``book/_data/NAME/``). A later render-only build re-executes a chapter unless :func:`is_current`:
its executed notebook carries the key computed now and those files are all there, unchanged. A
notebook executed any other way (``execute_chapter`` alone, ``run=True``) carries no key and is
executed again. The key is computed before a chapter executes, so a change made while it runs
makes the next build execute it again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import sysconfig
from pathlib import Path

from dbexp.book import toc

KEY_VERSION = 1  # bump when what the key covers changes
META = "dbexp"  # the executed notebook's metadata entry
_DIST_SUFFIXES = (".dist-info", ".egg-info", ".egg-link", ".pth")


class Digest:
    """SHA-256 over labelled, length-prefixed parts (no two different inputs read alike)."""

    def __init__(self):
        self._h = hashlib.sha256()

    def add(self, label: str, value: bytes | str) -> None:
        data = value.encode() if isinstance(value, str) else value
        for part in (label.encode(), data):
            self._h.update(len(part).to_bytes(8, "big"))
            self._h.update(part)

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def file_hash(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def tree_files(folder: Path) -> list[Path]:
    """Every file under ``folder``, sorted, without caches (``__pycache__``, ``*.pyc``)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.rglob("*"):
        if "__pycache__" in path.parts or path.suffix == ".pyc" or not path.is_file():
            continue
        found.append(path)
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def tree_hash(folder: Path) -> str:
    """One hash of every file's relative path and content under ``folder`` ('' for none)."""
    folder = Path(folder)
    digest = Digest()
    for path in tree_files(folder):
        digest.add(path.relative_to(folder).as_posix(), file_hash(path))
    return digest.hexdigest()


def package_hash() -> str:
    """Every file of the ``dbexp`` package a kernel started from this interpreter would import."""
    import dbexp

    return tree_hash(Path(dbexp.__file__).resolve().parent)


def environment() -> dict:
    """What a chapter's kernel runs on: this interpreter and what is installed beside it."""
    folders = []
    for key in ("purelib", "platlib"):
        folder = sysconfig.get_paths().get(key)
        if folder and folder not in folders:
            folders.append(folder)
    installed = []
    for folder in folders:
        try:
            installed += [n for n in os.listdir(folder) if n.endswith(_DIST_SUFFIXES)]
        except OSError as exc:  # kept in the key: a folder that becomes readable changes it
            installed.append(f"(unreadable {folder}: {exc.strerror})")
    return {
        "python": sys.version,
        "executable": sys.executable,
        "installed": sorted(installed),
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("DBEXP_") or k == "PYTHONPATH"},
    }


def is_book_page(root: Path, name: str) -> bool:
    """A page with no published results of its own, taken to read the whole book (see above)."""
    return not (Path(root) / "data" / name).is_dir()


def render_key(root: Path | str, name: str, parameters: dict, *, package: str | None = None,
               env: dict | None = None) -> str:
    """The render key of chapter ``name`` executed with ``parameters`` (see the module's doc).

    ``package`` and ``env`` (``package_hash()``, ``environment()``) may be passed in when keys
    of several chapters are computed at once."""
    root = Path(root).resolve()
    digest = Digest()
    digest.add("version", str(KEY_VERSION))
    digest.add("name", name)
    digest.add("root", str(root))
    digest.add("parameters", json.dumps(parameters, sort_keys=True, default=str))
    source = toc.source_notebook(root, name)
    digest.add("notebook", file_hash(source) if source.is_file() else "(none)")
    digest.add("package", package if package is not None else package_hash())
    digest.add("environment", json.dumps(env if env is not None else environment(), sort_keys=True))
    if is_book_page(root, name):
        digest.add("data", tree_hash(root / "data"))
        toc_file = root / toc.TOC_FILE
        digest.add("toc", file_hash(toc_file) if toc_file.is_file() else "(none)")
        digest.add("titles", json.dumps(toc.chapters(root)))
    else:
        digest.add("data", tree_hash(root / "data" / name))
    return digest.hexdigest()


def written_files(root: Path | str, name: str) -> dict[str, str]:
    """The files beside the executed chapter that its page links (``book/_data/NAME/``), by path
    relative to ``book/``, with their hashes."""
    book = Path(root) / toc.BOOK_DIR
    folder = book / "_data" / name
    return {p.relative_to(book).as_posix(): file_hash(p) for p in tree_files(folder)}


def stamp(nb, root: Path | str, name: str, key: str) -> None:
    """Record ``key`` and the chapter's written files in the executed notebook ``nb`` (before it is
    written to book/NAME.ipynb)."""
    nb.metadata[META] = {"render_key": key, "files": written_files(root, name)}


def _metadata(root: Path | str, name: str) -> dict:
    """The metadata of the executed notebook book/NAME.ipynb ({} when there is none to read)."""
    path = toc.executed_notebook(Path(root), name)
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def recorded(root: Path | str, name: str) -> dict | None:
    """What the executed notebook book/NAME.ipynb records about its execution, if anything."""
    meta = _metadata(root, name).get(META)
    return meta if isinstance(meta, dict) else None


def last_duration(root: Path | str, name: str) -> float:
    """Seconds the last execution of the chapter took, as papermill recorded it (0 if unknown)."""
    papermill = _metadata(root, name).get("papermill")
    duration = papermill.get("duration") if isinstance(papermill, dict) else None
    return float(duration) if isinstance(duration, (int, float)) else 0.0


def is_current(root: Path | str, name: str, key: str) -> bool:
    """True when book/NAME.ipynb was executed with this very key and the files it wrote beside
    it are all there, unchanged: executing the chapter again would give the same page."""
    meta = recorded(root, name)
    if not meta or meta.get("render_key") != key or not isinstance(meta.get("files"), dict):
        return False
    book = Path(root) / toc.BOOK_DIR
    for rel, digest in meta["files"].items():
        path = book / rel
        try:
            if not path.is_file() or file_hash(path) != digest:
                return False
        except OSError:
            return False
    return True


__all__ = ["render_key", "is_current", "stamp", "recorded", "written_files", "package_hash", "environment"]
