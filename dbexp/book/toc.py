"""Reading ``_toc.yml``: which documents the book has and which are executed chapters.

A TOC entry ``file: book/NAME`` is an *executed chapter* when ``notebooks/NAME.ipynb``
exists: papermill executes that source notebook into ``book/NAME.ipynb``, which the
book then renders. Every other entry is a hand-written page (``book/NAME.md``).
"""

from __future__ import annotations

import copy
from pathlib import Path, PurePosixPath

import yaml

from dbexp.errors import DbexpError

TOC_FILE = "_toc.yml"
CONFIG_FILE = "_config.yml"
SOURCE_DIR = "notebooks"  # source notebooks, with a cell tagged "parameters"
BOOK_DIR = "book"  # hand-written pages, executed chapters, and _build/
DOC_SUFFIXES = (".md", ".ipynb", ".rst")


def repo_root() -> Path:
    """The book's root (dbexp.paths.project_root), which must hold _toc.yml."""
    from dbexp.paths import project_root

    root = project_root()
    if not (root / TOC_FILE).is_file():
        raise DbexpError(f"cannot find the book: no {TOC_FILE} in {root} (run from a checkout or set DBEXP_ROOT)")
    return root


def load_toc(root: Path) -> dict:
    path = Path(root) / TOC_FILE
    if not path.is_file():
        raise DbexpError(f"cannot find the book's table of contents: {path} does not exist")
    try:
        toc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DbexpError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(toc, dict) or "root" not in toc:
        raise DbexpError(f"{path} has no 'root:' entry")
    return toc


def toc_files(toc: dict) -> list[str]:
    """Every document named in the TOC (root first), in order, without suffixes."""
    found: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    found.append(_strip_suffix(node[key]))
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return found


def _strip_suffix(docname: str) -> str:
    for suffix in DOC_SUFFIXES:
        if docname.endswith(suffix):
            return docname[: -len(suffix)]
    return docname


def chapter_name(docname: str) -> str | None:
    """NAME for a TOC entry ``book/NAME``, else None."""
    path = PurePosixPath(docname)
    if len(path.parts) == 2 and path.parts[0] == BOOK_DIR:
        return path.name
    return None


def executed_chapters(root: Path) -> list[str]:
    """Chapter names, in TOC order, with a source notebook in notebooks/."""
    root = Path(root)
    names = []
    for doc in toc_files(load_toc(root)):
        name = chapter_name(doc)
        if name and (root / SOURCE_DIR / f"{name}.ipynb").is_file() and name not in names:
            names.append(name)
    return names


def source_notebook(root: Path, name: str) -> Path:
    return Path(root) / SOURCE_DIR / f"{name}.ipynb"


def executed_notebook(root: Path, name: str) -> Path:
    return Path(root) / BOOK_DIR / f"{name}.ipynb"


def doc_exists(root: Path, docname: str) -> bool:
    root = Path(root)
    return (root / docname).is_file() or any(
        (root / f"{docname}{suffix}").is_file() for suffix in DOC_SUFFIXES
    )


def missing_docs(root: Path) -> list[str]:
    """TOC entries with no document on disk (an executed chapter not yet executed counts)."""
    return [doc for doc in toc_files(load_toc(root)) if not doc_exists(root, doc)]


def write_filtered_toc(root: Path, dest: Path) -> tuple[Path, list[str]]:
    """Write a copy of the TOC without entries whose document is missing.

    Returns the path written and the entries left out. Used when only some chapters
    are executed and others have never been: the build then shows what exists.
    """
    root = Path(root)
    toc = copy.deepcopy(load_toc(root))
    if not doc_exists(root, _strip_suffix(toc["root"])):
        raise DbexpError(f"the book's root page {toc['root']} does not exist under {root}")
    dropped: list[str] = []

    def prune(node):
        if isinstance(node, dict):
            for key, value in list(node.items()):
                if isinstance(value, list):
                    node[key] = [item for item in (prune(v) for v in value) if item is not None]
                    if not node[key]:
                        del node[key]
                elif isinstance(value, dict):
                    prune(value)
            doc = node.get("file")
            if isinstance(doc, str) and not doc_exists(root, _strip_suffix(doc)):
                dropped.append(_strip_suffix(doc))
                return None
            if set(node) <= {"caption", "numbered"} and "file" not in node:
                return None  # a part left without chapters
        return node

    prune(toc)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(yaml.safe_dump(toc, sort_keys=False), encoding="utf-8")
    return dest, dropped


def doc_title(root: Path, docname: str) -> str:
    """The title of a TOC entry: the first level-1 heading of its source (notebooks/NAME.ipynb for
    an executed chapter, else book/NAME.md), or its name when it has none."""
    import json

    root = Path(root)
    name = chapter_name(docname)
    source = source_notebook(root, name) if name else None
    texts: list[str] = []
    if source is not None and source.is_file():
        try:
            cells = json.loads(source.read_text(encoding="utf-8")).get("cells", [])
        except ValueError:
            cells = []
        texts = ["".join(c.get("source", "")) for c in cells if c.get("cell_type") == "markdown"]
    else:
        for suffix in DOC_SUFFIXES:
            path = root / f"{docname}{suffix}"
            if path.is_file() and suffix == ".md":
                texts = [path.read_text(encoding="utf-8")]
                break
    for text in texts:
        for line in text.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return PurePosixPath(docname).name


def chapters(root: Path) -> list[tuple[str, str]]:
    """(docname, title) of every TOC entry after the root page, in order, that exists on disk or will
    be executed (an executed chapter with no page yet still counts)."""
    root = Path(root)
    toc = load_toc(root)
    first = _strip_suffix(toc["root"])
    found = []
    for doc in toc_files(toc):
        if doc == first or any(doc == d for d, _ in found):
            continue
        name = chapter_name(doc)
        if doc_exists(root, doc) or (name and source_notebook(root, name).is_file()):
            found.append((doc, doc_title(root, doc)))
    return found


def chapters_markdown(root: Path | None = None, relative_to: str = BOOK_DIR) -> str:
    """The book's chapter list as MyST: one ``{doc}`` link per chapter with its title, in TOC order."""
    root = Path(root) if root is not None else repo_root()
    lines = []
    for doc, title in chapters(root):
        path = PurePosixPath(doc)
        target = path.name if path.parent == PurePosixPath(relative_to) else f"/{doc}"
        safe = title.replace("`", "'").replace("<", "(").replace(">", ")")
        lines.append(f"1. {{doc}}`{safe} <{target}>`")
    return "\n".join(lines)


# --- the chapter lists, generated from the chapter registry ---------------------------------------
#
# dbexp.chapters.names() is the one list of chapters (a folder each). _toc.yml and README.md's
# "chapters" block are written from it: the registry says which chapters there are, _toc.yml keeps the
# reading order (an entry moved by hand stays where it was put), and a new chapter is appended at the end.
# The registry is passed in: dbexp.chapters imports dbexp.book, so this module may not import it.

TOC_HEADER = """\
# Table of contents. The executed chapters' entries are generated from the chapter registry
# (a folder dbexp/chapters/NAME/ each; write them with dbexp.book.toc.write_chapter_lists): a new
# chapter is appended at the end, an entry may be moved by hand to change the reading order (the order
# is kept), and hand-written pages stay where they are. An entry `file: book/NAME` with a
# notebooks/NAME.ipynb is an executed chapter: `dbexp book` runs notebooks/NAME.ipynb with papermill
# into book/NAME.ipynb (gitignored) and the book renders that. Other entries are hand-written MyST
# pages (book/NAME.md).
"""
README_FILE = "README.md"
README_BLOCK = "chapters"  # <!-- chapters:start ... --> in README.md


class _TocDumper(yaml.SafeDumper):
    """Block style with list items indented under their key, as _toc.yml has always been written."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def _entry_lists(toc: dict) -> list[list]:
    """The lists that hold the TOC's entries: ``chapters:``, or each part's."""
    if isinstance(toc.get("chapters"), list):
        return [toc["chapters"]]
    return [part["chapters"] for part in toc.get("parts", []) if isinstance(part.get("chapters"), list)]


def _handwritten(root: Path, doc: str) -> bool:
    """A hand-written page: its MyST (or reST) source is on disk and no notebook executes into it."""
    name = chapter_name(doc)
    if name and source_notebook(root, name).is_file():
        return False
    return any((root / f"{doc}{suffix}").is_file() for suffix in (".md", ".rst"))


def synced_toc(root: Path, names) -> dict:
    """The TOC with exactly one entry ``book/NAME`` for each chapter in ``names`` (the registry), in
    the order the TOC has them: entries that are neither a chapter of the registry nor a hand-written
    page (a chapter removed, a page never written) and repeats are dropped, hand-written pages and the
    root stay, and the chapters the TOC lacks are appended to its last list in the registry's order."""
    root = Path(root)
    toc = copy.deepcopy(load_toc(root))
    names = list(names)
    seen: set[str] = {_strip_suffix(toc["root"])}
    lists = _entry_lists(toc)
    if not lists:
        toc["chapters"] = []
        lists = [toc["chapters"]]
    for entries in lists:
        kept = []
        for entry in entries:
            doc = _strip_suffix(entry["file"]) if isinstance(entry, dict) and isinstance(entry.get("file"), str) else None
            name = chapter_name(doc) if doc else None
            if doc is not None and (doc in seen or (name and name not in names and not _handwritten(root, doc))):
                continue
            if doc is not None:
                seen.add(doc)
            kept.append(entry)
        entries[:] = kept
    lists[-1].extend({"file": f"{BOOK_DIR}/{name}"} for name in names if f"{BOOK_DIR}/{name}" not in seen)
    return toc


def toc_text(root: Path, names) -> str:
    """_toc.yml as :func:`write_chapter_lists` writes it."""
    body = yaml.dump(synced_toc(root, names), Dumper=_TocDumper, sort_keys=False, default_flow_style=False)
    return TOC_HEADER + body


def readme_chapters(root: Path, names) -> str:
    """README.md's chapters block: one row per chapter in the book's order, its title from its notebook."""
    root = Path(root)
    lines = ["| chapter | title | notebook | code |", "| --- | --- | --- | --- |"]
    for doc in toc_files(synced_toc(root, names)):
        name = chapter_name(doc)
        if name in names:
            title = doc_title(root, doc).replace("|", "\\|")
            lines.append(f"| `{name}` | {title} | `{SOURCE_DIR}/{name}.ipynb` | `dbexp/chapters/{name}/` |")
    return "\n".join(lines) + "\n"


def stale_chapter_lists(root: Path, names) -> list[str]:
    """The files whose chapter list differs from the registry's (``[]`` when both are current)."""
    from dbexp.results.readme import read_block

    root = Path(root)
    stale = []
    if (root / TOC_FILE).read_text(encoding="utf-8") != toc_text(root, names):
        stale.append(TOC_FILE)
    if read_block(README_BLOCK, root / README_FILE) != readme_chapters(root, names):
        stale.append(README_FILE)
    return stale


def write_chapter_lists(root: Path, names) -> list[str]:
    """Write _toc.yml and README.md's chapters block from the registry's chapter names
    (``dbexp.chapters.names()``); returns the files rewritten."""
    from dbexp.results.readme import write_block

    root = Path(root)
    stale = stale_chapter_lists(root, names)
    if TOC_FILE in stale:
        (root / TOC_FILE).write_text(toc_text(root, names), encoding="utf-8")
    if README_FILE in stale:
        write_block(README_BLOCK, readme_chapters(root, names), root / README_FILE)
    return stale
