"""The package's shape where import-linter cannot see it, read from its source with ast (nothing of dbexp is
imported). The import contracts themselves (the layers in order, no chapter importing another, no cycle between
sibling modules) are pyproject.toml's [tool.importlinter], checked by import-linter (`make imports`).

1. No import by a computed name (``import_module`` or ``__import__`` of anything but a literal) and no
   ``sys.modules`` outside the few modules that must (COMPUTED_IMPORTS: the chapter registry, the chapter
   protocol's own-module lookup, the lazy loader, the optional packages' stubs); a notebook imports its own
   chapter and no other.
2. Every chapter folder has the same shape: the files of ``CHAPTER_FILES``; its engine-part
   interface in ``engines/__init__.py`` (an abstract class, nothing engine-specific) and its
   ``Engines(...)`` declaration in ``chapter.py``; chapter code spells no verdict word (verdicts.py does).
3. Outside dbexp/servers/ (and the catalog, the table of builds) no code, and no notebook cell,
   branches on flavor or engine names spelled as strings, in any case (compares, prefixes, keys a dict,
   indexes by one, or iterates over several); it asks the server's flavor object, a capability or the
   chapter's engine part instead. The one exception is a chapter's ``Engines(...)`` declaration, which names
   the flavors its per-engine parts serve (dbexp/servers/engines.py). The flavor names, their titles, their
   classes' names, their other spellings and the engines' names (an engine part's ``engine = "InnoDB"``) are
   read from the registry, the catalog and the engine modules, not typed here.
4. Outside dbexp/servers/ and the chapters' engine modules, no code or notebook imports a concrete
   flavor class (dbexp.servers.mysql, ...), compares a flavor's ``name`` attribute (``MySQL.name``,
   ``server.flavor.name == ...``) or asks ``isinstance(x, MySQL)``. A chapter's engine modules are
   the modules of its ``engines/`` folder (``__init__.py`` excepted) and those whose classes it
   declares in ``Engines(...)``: they are allowed to know their engine.
5. Notebooks do not branch on version numbers spelled as strings (``v.startswith("8.0")``,
   ``version == "5.7.22"``): the catalog and the flavor know versions.
6. ``Flavor`` (dbexp/servers/flavor.py) stays small: at most ``MAX_FLAVOR_METHODS`` public methods.
7. Every child process, in the package, its tests and the notebooks, starts through dbexp/process.py
   (``process.run``, ``process.Child``): no ``subprocess.run``/``Popen``/... under any name, no ``from
   subprocess import run``, no ``os.system``/``popen``/``spawn*``, outside process.py (OWN_CHILDREN).

Every offence is reported on one line that starts with the file and line (for a notebook: the
file, its cell's number counted from 1 over all cells, and the line in that cell). Each check is also fed
made-up violations (MADE_UP_VIOLATIONS), which it must catch.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from unit_support import PACKAGE

ROOT = "dbexp"


# --- reading the source ----------------------------------------------------------------------

def source_files(package: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)


def rel(path: Path, package: Path = PACKAGE) -> str:
    """dbexp/servers/flavor.py"""
    return path.relative_to(package.parent).as_posix()


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


@dataclass(frozen=True)
class Source:
    """One unit of Python the checks read: a module of the package, or a notebook's code cell."""
    name: str  # dbexp/servers/flavor.py, or notebooks/versions.ipynb
    tree: ast.Module
    lines: tuple[str, ...]
    module: str  # the dotted module (a notebook cell: "__main__")
    is_package: bool = False
    cell: int | None = None  # a notebook's cell, counted from 1 over all its cells

    def at(self, line: int) -> str:
        """Where a line is, on one line: ``dbexp/x.py:12`` or ``notebooks/n.ipynb cell 7 line 3``."""
        return f"{self.name}:{line}" if self.cell is None else f"{self.name} cell {self.cell} line {line}"

    def line(self, line: int) -> str:
        return self.lines[line - 1].strip()[:110] if 0 < line <= len(self.lines) else ""


def package_sources(package: Path = PACKAGE) -> list[Source]:
    out = []
    for path in source_files(package):
        text = path.read_text()
        out.append(Source(rel(path, package), ast.parse(text, filename=str(path)), tuple(text.splitlines()),
                          module_name(path, package), path.name == "__init__.py"))
    return out


MAGIC = re.compile(r"^\s*[%!]")  # IPython's line magics and shell escapes: not Python


def notebook_sources(package: Path = PACKAGE) -> list[Source]:
    """Every code cell of notebooks/*.ipynb beside the package, as Python (magics blanked)."""
    out = []
    folder = package.parent / "notebooks"
    for path in sorted(folder.glob("*.ipynb")) if folder.is_dir() else ():
        name = path.relative_to(package.parent).as_posix()
        for number, cell in enumerate(json.loads(path.read_text()).get("cells", []), start=1):
            if cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            text = "".join(source) if isinstance(source, list) else source
            lines = tuple(text.splitlines())
            code = "\n".join("" if MAGIC.match(ln) else ln for ln in lines)
            try:
                tree = ast.parse(code, filename=f"{name} cell {number}")
            except SyntaxError as exc:
                raise AssertionError(f"{name} cell {number} line {exc.lineno}: not Python: {exc.msg}") from None
            out.append(Source(name, tree, lines, "__main__", cell=number))
    return out


def imported_modules(stmt: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """Dotted modules (or module.attribute) one import statement depends on, relative ones resolved."""
    if isinstance(stmt, ast.Import):
        return [alias.name for alias in stmt.names]
    if stmt.level:
        package = module if is_package else module.rpartition(".")[0]
        base_parts = package.split(".")
        if stmt.level > 1:
            base_parts = base_parts[:len(base_parts) - (stmt.level - 1)]
        base = ".".join(base_parts + ([stmt.module] if stmt.module else []))
    else:
        base = stmt.module
    # `from dbexp import servers` depends on dbexp.servers, `from dbexp import __version__` on dbexp.
    return [f"{base}.{alias.name}" if alias.name != "*" else base for alias in stmt.names]




def module_of(dotted: str, modules: set[str]) -> str | None:
    """The module of the package a dotted import names: its longest prefix that is a module
    (``dbexp.servers.flavor.Flavor`` -> ``dbexp.servers.flavor``; ``dbexp.servers.Flavor`` -> the
    package's ``__init__``, ``dbexp.servers``); None outside the package."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


# --- cycles ----------------------------------------------------------------------------------


# --- chapters: no chapter imports another; one shape ---------------------------------------------

CHAPTERS = f"{ROOT}.chapters"
# The files every chapter folder has (the README's "Layout" section says what each holds).
CHAPTER_FILES = ("__init__.py", "chapter.py", "analysis.py", "claims.py", "findings.py", "engines/__init__.py")
DECLARED_IN = "chapter.py"  # where a chapter's Engines(...) declaration (PARTS) lives


def chapter_folders(package: Path = PACKAGE) -> list[Path]:
    folder = package / "chapters"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__")


def chapter_of(module: str) -> str | None:
    """The chapter folder a module belongs to (dbexp.chapters.gtid.design -> gtid), else None."""
    parts = module.split(".")
    return parts[2] if module.startswith(CHAPTERS + ".") and len(parts) > 2 else None


VERDICT_WORDS = ("agrees", "disagrees", "not resolved", "not testable", "not measured")


def _reads_a_verdict(node: ast.AST, parents: dict) -> bool:
    """A string that reads a verdict rather than making one: compared with (==, !=, in) or handed to a
    str method (startswith, count, ...), or a docstring."""
    up = parents.get(node)
    if isinstance(up, ast.JoinedStr):
        node, up = up, parents.get(up)
    if isinstance(up, ast.Compare):
        return True
    if isinstance(up, ast.Call) and isinstance(up.func, ast.Attribute) and node in up.args:
        return True
    if isinstance(up, (ast.Tuple, ast.List)) and isinstance(parents.get(up), (ast.Compare, ast.Call)):
        return True
    return isinstance(up, ast.Expr)  # a docstring or a bare string


def verdict_words_spelled(package: Path = PACKAGE) -> list[str]:
    """One line per string inside a chapter's folder that starts with a verdict word and makes a verdict:
    verdicts are built by dbexp/experiments/verdicts.py (its rules and its agrees()/disagrees()/
    not_resolved() constructors), so that every verdict word has one spelling and every rule one place."""
    offenders = []
    for source in package_sources(package):
        if chapter_of(source.module) is None:
            continue
        parents = {child: node for node in ast.walk(source.tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(source.tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            up = parents.get(node)
            if isinstance(up, ast.JoinedStr) and up.values and up.values[0] is not node:
                continue  # the middle of an f-string
            if node.value.lstrip().startswith(VERDICT_WORDS) and not _reads_a_verdict(node, parents):
                offenders.append(f"  {source.at(node.lineno)}: {source.line(node.lineno)}")
    return offenders


def test_chapters_build_verdicts_through_verdicts_py():
    offenders = verdict_words_spelled()
    assert not offenders, (
        f"\n\n{len(offenders)} verdict(s) spelled inside dbexp/chapters/; build them with dbexp.experiments."
        "verdicts (a rule there, or agrees()/disagrees()/not_resolved()/not_measured()/not_testable()):\n"
        + "\n".join(offenders))


def _is_abstract(cls: ast.ClassDef) -> bool:
    bases = [ast.unparse(b) for b in cls.bases] + [ast.unparse(k.value) for k in cls.keywords
                                                   if k.arg == "metaclass"]
    return any(b.rpartition(".")[2] in ("ABC", "ABCMeta") for b in bases)


def chapter_shape_problems(package: Path = PACKAGE) -> list[str]:
    """One line per way a chapter folder departs from the common shape."""
    offenders = []
    for folder in chapter_folders(package):
        where = rel(folder, package)
        missing = [f for f in CHAPTER_FILES if not (folder / f).is_file()]
        if missing:
            offenders.append(f"  {where}/: missing {', '.join(missing)}")
        interface = folder / "engines" / "__init__.py"
        if interface.is_file() and not any(isinstance(n, ast.ClassDef) and _is_abstract(n)
                                           for n in parse(interface).body):
            offenders.append(f"  {rel(interface, package)}:1: declares no engine-part interface "
                             "(a class deriving from abc.ABC)")
        for path in sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts):
            if path == folder / DECLARED_IN:
                continue
            for call in engines_declarations(parse(path)):
                offenders.append(f"  {rel(path, package)}:{call.lineno}: Engines(...) declared outside "
                                 f"{DECLARED_IN}")
    return offenders


def test_every_chapter_has_the_same_shape():
    folders = chapter_folders()
    assert folders, "no chapter folder under dbexp/chapters/"
    offenders = chapter_shape_problems()
    assert not offenders, (
        f"\n\n{len(offenders)} departure(s) from the chapter shape (every dbexp/chapters/NAME/ holds "
        f"{', '.join(CHAPTER_FILES)}; PARTS = Engines(...) in {DECLARED_IN}; README.md, 'Layout'):\n"
        + "\n".join(offenders))


# --- the flavors, as the registry lists them ------------------------------------------------------

REGISTRY = "servers/registry.py"  # under the package: FLAVORS, the one list of flavors the lab runs
REGISTRY_NAME = "FLAVORS"
CATALOG = "catalog"  # under the package: the table of builds, where a flavor's other spellings are read


@dataclass(frozen=True)
class Flavors:
    names: frozenset[str]  # every spelling of a flavor: its name, its title lower-cased, the catalog's aliases
    modules: frozenset[str]  # the modules that define the flavor classes (dbexp.servers.mysql)
    classes: frozenset[str]  # the flavor classes' names (MySQL)


def _class_attributes(cls: ast.ClassDef) -> dict[str, str]:
    """The class body's string constants: ``name = "mysql"``, ``title = "MySQL"``."""
    found = {}
    for stmt in cls.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        value = getattr(stmt, "value", None)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            found.update({t.id: value.value for t in targets if isinstance(t, ast.Name)})
    return found


def _module_file(module: str, package: Path) -> Path | None:
    base = package.parent.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def find_class(module: str, name: str, package: Path = PACKAGE, seen: frozenset = frozenset()) -> tuple[str, ast.ClassDef]:
    """(defining module, class) of ``name`` as ``module`` exposes it, following re-exports."""
    path = _module_file(module, package)
    assert path is not None and (module, name) not in seen, f"cannot find {module}.{name} under {package}"
    tree = parse(path)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return module, node
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias, dotted in zip(node.names, imported_modules(node, module, path.name == "__init__.py")):
                if (alias.asname or alias.name) == name:
                    return find_class(dotted.rpartition(".")[0], alias.name, package, seen | {(module, name)})
    raise AssertionError(f"{rel(path, package)}: defines no class {name}")


@cache
def registered(package: Path = PACKAGE) -> Flavors:
    """The flavors the registry lists (its ``FLAVORS``), read with ast: their modules, classes and
    every spelling of their names (the catalog's aliases such as "pg" included)."""
    path = package / REGISTRY
    assert path.is_file(), f"no flavor registry at {rel(path, package)}: say in test_architecture.py where it moved"
    tree = parse(path)
    module = module_name(path, package)
    imported = {}  # local name -> dotted (module.Class) it came from
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias, dotted in zip(node.names, imported_modules(node, module, False)):
                imported[alias.asname or alias.name] = dotted
    listing = [node.value for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
               and any(getattr(t, "id", None) == REGISTRY_NAME
                       for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    assert listing, f"{rel(path, package)}: no {REGISTRY_NAME} = ... to read the flavors from"
    local = sorted({n.id for n in ast.walk(listing[0]) if isinstance(n, ast.Name) and n.id in imported})
    names, modules, classes = set(), set(), set()
    for cls_name in local:
        dotted = imported[cls_name]
        defined_in, cls = find_class(dotted.rpartition(".")[0], dotted.rpartition(".")[2], package)
        attributes = _class_attributes(cls)
        assert "name" in attributes, f"{defined_in}.{cls.name} has no name = '...' the registry keys it by"
        names.add(attributes["name"])
        if "title" in attributes:
            names.add(attributes["title"].lower())
        modules.add(defined_in)
        classes.add(cls.name)
    assert names, f"{rel(path, package)}: {REGISTRY_NAME} lists no flavor class"
    names |= catalog_aliases(package, frozenset(names))
    return Flavors(frozenset(names), frozenset(modules), frozenset(classes))


def catalog_aliases(package: Path, names: frozenset[str]) -> set[str]:
    """Keys of the catalog's dict literals that map other spellings onto flavor names
    (``{"postgresql": "postgres", "pg": "postgres"}``)."""
    found = set()
    for path in sorted((package / CATALOG).rglob("*.py")):
        for node in ast.walk(parse(path)):
            if (isinstance(node, ast.Dict) and node.keys
                    and all(isinstance(v, ast.Constant) and v.value in names for v in node.values)
                    and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys)):
                found |= {k.value for k in node.keys}
    return found


def test_the_registry_is_read():
    flavors = registered()
    assert {"mysql", "postgres", "mariadb"} <= flavors.names, flavors
    assert "dbexp.servers.mysql" in flavors.modules and "MySQL" in flavors.classes, flavors


# --- flavor names as strings -----------------------------------------------------------------

EXEMPT = ("dbexp/servers/", "dbexp/catalog/")
COMPARE_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in"}
PREFIX_METHODS = {"startswith", "endswith"}
KEY_METHODS = {"get", "pop", "setdefault"}  # d.get("mysql"): keyed by a flavor name, as d["mysql"]


def flavor_names_in(node: ast.AST | None, names: frozenset[str]) -> list[str]:
    """Flavor (or engine) names a constant spells, in any case: "mysql", "MySQL", "Postgres" (a class's name), or
    ("mysql", "mariadb") as a tuple/list/set. ``names`` are lower-case."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in names:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for elt in node.elts for n in flavor_names_in(elt, names)]
    return []


def engines_declarations(tree: ast.AST) -> list[ast.Call]:
    """The ``Engines(...)`` calls of a module: where a chapter names the flavors its parts serve."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and (getattr(node.func, "id", None) == "Engines" or getattr(node.func, "attr", None) == "Engines")]


def flavor_string_uses(tree: ast.AST, names: frozenset[str] | None = None) -> list[tuple[int, str]]:
    """(line, what) for each place that compares against, is keyed by or indexes by a flavor name
    (an ``Engines(...)`` declaration excepted)."""
    names = frozenset(n.lower() for n in registered().names) if names is None else names
    found = []
    declared = {id(n) for call in engines_declarations(tree) for n in ast.walk(call)}
    for node in ast.walk(tree):
        if id(node) in declared:
            continue
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands, operands[1:]):
                if type(op) not in COMPARE_OPS:
                    continue
                for side in (left, right):
                    if flavor_names_in(side, names):
                        found.append((node.lineno, f"`{COMPARE_OPS[type(op)]}` against {ast.unparse(side)}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in PREFIX_METHODS):
            if any(flavor_names_in(arg, names) for arg in node.args):
                args = ", ".join(ast.unparse(arg) for arg in node.args)
                found.append((node.lineno, f".{node.func.attr}({args})"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in KEY_METHODS and node.args and flavor_names_in(node.args[0], names)):
            found.append((node.lineno, f".{node.func.attr}({ast.unparse(node.args[0])}, ...)"))
        elif isinstance(node, ast.Subscript) and flavor_names_in(node.slice, names):
            found.append((node.lineno, f"indexed by {ast.unparse(node.slice)}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            keys = [kw.arg for kw in node.keywords if kw.arg in names]
            if keys:
                found.append((node.lineno, f"dict(...) keyed by {', '.join(map(repr, keys))}"))
        elif isinstance(node, ast.Dict):
            keys = [n for key in node.keys for n in flavor_names_in(key, names) if isinstance(key, ast.Constant)]
            if keys:
                found.append((node.lineno, f"dict literal keyed by {', '.join(map(repr, keys))}"))
        elif isinstance(node, ast.match_case):
            cases = [n for pat in ast.walk(node.pattern) if isinstance(pat, ast.MatchValue)
                     for n in flavor_names_in(pat.value, names)]
            if cases:
                found.append((node.pattern.lineno, f"match case {', '.join(map(repr, cases))}"))
        elif isinstance(node, (ast.For, ast.comprehension)) and len(flavor_names_in(node.iter, names)) > 1:
            found.append((getattr(node, "lineno", getattr(node.iter, "lineno", 0)),
                          f"iterates over the names {ast.unparse(node.iter)}"))
    return found


def offences(sources: list[Source], find) -> list[str]:
    """One line per offence ``find(source)`` reports: where, what, and the line itself."""
    out = []
    for source in sources:
        for line, what in sorted(set(find(source))):
            out.append(f"  {source.at(line)}: {what}: {source.line(line)}")
    return out


def engine_names(package: Path = PACKAGE) -> frozenset[str]:
    """The names the chapters' engine parts give their engines (``engine = "InnoDB"`` in an engine module's
    class), lower-cased: a chapter that compares or iterates them branches on an engine by name."""
    allowed = engine_modules(package)
    found = set()
    for source in package_sources(package):
        if source.name in allowed:
            for cls in (n for n in ast.walk(source.tree) if isinstance(n, ast.ClassDef)):
                value = _class_attributes(cls).get("engine")
                if value:
                    found.add(value.lower())
    return frozenset(found)


def flavor_problems(package: Path = PACKAGE) -> str:
    flavors = registered(package)
    names = frozenset(n.lower() for n in flavors.names | flavors.classes) | engine_names(package)
    sources = [s for s in package_sources(package) if not s.name.startswith(EXEMPT)] + notebook_sources(package)
    offenders = offences(sources, lambda s: flavor_string_uses(s.tree, names))
    if not offenders:
        return ""
    return (f"{len(offenders)} place(s) outside {' and '.join(EXEMPT)} branch on flavor or engine names as strings "
            f"({', '.join(sorted(names))}, in any case); ask the flavor object (dbexp/servers/), a capability, or the "
            f"chapter's engine part instead:\n"
            + "\n".join(offenders))


def test_no_flavor_name_comparisons_outside_servers():
    problems = flavor_problems()
    assert not problems, "\n\n" + problems


# --- version numbers as strings, in notebooks --------------------------------------------------

VERSION = re.compile(r"^v?\d+\.(\d|$)")  # "8.0", "5.7.22", "16.4", "9.": a version number, or its prefix
VERSION_METHODS = {"startswith", "endswith", "contains", "match"}


def versions_in(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and VERSION.match(node.value):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for elt in node.elts for v in versions_in(elt)]
    return []


def version_string_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each comparison with, or prefix test against, a version number as a string."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if versions_in(side):
                    found.append((node.lineno, f"compares with the version string {ast.unparse(side)}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in VERSION_METHODS and any(versions_in(arg) for arg in node.args)):
            args = ", ".join(ast.unparse(arg) for arg in node.args)
            found.append((node.lineno, f".{node.func.attr}({args}) on a version string"))
    return found


def version_problems(package: Path = PACKAGE) -> str:
    offenders = offences(notebook_sources(package), lambda s: version_string_uses(s.tree))
    if not offenders:
        return ""
    return (f"{len(offenders)} place(s) in notebooks branch on version numbers as strings; let the chapter "
            "(dbexp/chapters/) ask the catalog or the flavor, and hand the notebook the result:\n"
            + "\n".join(offenders))


def test_no_version_string_comparisons_in_notebooks():
    problems = version_problems()
    assert not problems, "\n\n" + problems


# --- flavor classes and their names --------------------------------------------------------

ENGINES_FOLDER = "engines"  # dbexp/chapters/<ch>/engines/<engine>.py: one module per engine


def engine_modules(package: Path = PACKAGE) -> set[str]:
    """Files that may know their engine: every module of a chapter's ``engines/`` folder but its
    ``__init__`` (the interface), and the modules whose classes a chapter declares in ``Engines(...)``:
    ``Engines("ch", {"mysql": innodb.Views})`` with ``from .engines import innodb``, or
    ``{"mysql": Views}`` with ``from .engines.innodb import Views``."""
    found = set()
    sources = package_sources(package)
    files = {s.module: s.name for s in sources}
    for source in sources:
        parts = source.name.split("/")
        if (len(parts) == 5 and parts[1] == "chapters" and parts[3] == ENGINES_FOLDER
                and parts[4] != "__init__.py"):
            found.add(source.name)
        calls = engines_declarations(source.tree)
        if chapter_of(source.module) is None or not calls:
            continue
        imported = {}  # local name -> the dotted module (or module.attribute) it came from
        for stmt in ast.walk(source.tree):
            if isinstance(stmt, ast.ImportFrom):
                for alias, dotted in zip(stmt.names, imported_modules(stmt, source.module, source.is_package)):
                    imported[alias.asname or alias.name] = dotted
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    imported[alias.asname or alias.name] = alias.name if alias.asname else alias.name.split(".")[0]
        for call in calls:
            for value in (n for arg in [*call.args, *(k.value for k in call.keywords)] for n in ast.walk(arg)):
                if isinstance(value, (ast.Attribute, ast.Name)):
                    dotted = ast.unparse(value)
                    head, _, tail = dotted.partition(".")
                    if head not in imported:
                        continue
                    target = module_of(imported[head] + (f".{tail}" if tail else ""), set(files))
                    if target is not None and chapter_of(target) == chapter_of(source.module):
                        found.add(files[target])
    return found


def _flavorish(node: ast.AST, classes: frozenset[str]) -> bool:
    """``MySQL.name``, ``flavor.name``, ``server.flavor.name``, ``self.flavor.name``."""
    if not (isinstance(node, ast.Attribute) and node.attr == "name"):
        return False
    inner = node.value
    if isinstance(inner, ast.Name):
        return inner.id in classes or inner.id.endswith("flavor")
    return isinstance(inner, ast.Attribute) and inner.attr.endswith("flavor")


def flavor_class_uses(tree: ast.AST, module: str, is_package: bool,
                      flavors: Flavors | None = None) -> list[tuple[int, str]]:
    """(line, what) for each import of a concrete flavor class, comparison of a flavor's name and
    isinstance against a flavor class."""
    flavors = registered() if flavors is None else flavors
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for dotted in imported_modules(node, module, is_package):
                if any(dotted == m or dotted.startswith(m + ".") for m in flavors.modules) or (
                        dotted.rpartition(".")[0] == "dbexp.servers" and dotted.rpartition(".")[2] in flavors.classes):
                    found.append((node.lineno, f"imports {dotted}"))
        elif isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if _flavorish(side, flavors.classes):
                    found.append((node.lineno, f"compares {ast.unparse(side)}"))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
            classes = [n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name) and n.id in flavors.classes]
            if classes:
                found.append((node.lineno, f"isinstance against {', '.join(classes)}"))
    return found


def flavor_class_problems(package: Path = PACKAGE) -> str:
    allowed = engine_modules(package)
    flavors = registered(package)
    sources = [s for s in package_sources(package)
               if not s.name.startswith("dbexp/servers/") and s.name not in allowed] + notebook_sources(package)
    offenders = offences(sources, lambda s: flavor_class_uses(s.tree, s.module, s.is_package, flavors))
    if not offenders:
        return ""
    return (f"{len(offenders)} place(s) outside dbexp/servers/ and the chapters' engine modules know a concrete "
            "flavor (its class or its name); give the chapter a part per engine (dbexp/servers/engines.py) "
            "or ask the flavor object:\n" + "\n".join(offenders))


def test_no_flavor_classes_or_names_outside_servers_and_engine_modules():
    problems = flavor_class_problems()
    assert not problems, "\n\n" + problems


# --- Flavor stays small --------------------------------------------------------------------------

FLAVOR_MODULE = "servers/flavor.py"  # under the package
FLAVOR_CLASS = "Flavor"
MAX_FLAVOR_METHODS = 15
CALLABLE_WRAPPERS = {"staticmethod", "classmethod", "property", "partial", "partialmethod", "cached_property"}


def public_methods(cls: ast.ClassDef) -> list[tuple[str, int]]:
    """(name, line) of every public callable the class body defines: each ``def`` (a property
    included) and each name bound to ``staticmethod(...)``, ``classmethod(...)`` or a lambda."""
    found = []
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((stmt.name, stmt.lineno))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and (
                isinstance(stmt.value, ast.Lambda) or (
                isinstance(stmt.value, ast.Call)
                and ast.unparse(stmt.value.func).rpartition(".")[2] in CALLABLE_WRAPPERS)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            found.extend((t.id, stmt.lineno) for t in targets if isinstance(t, ast.Name))
    return [(name, line) for name, line in found if not name.startswith("_")]


def flavor_size_problem(package: Path = PACKAGE) -> str:
    path = package / FLAVOR_MODULE
    classes = [n for n in parse(path).body if isinstance(n, ast.ClassDef) and n.name == FLAVOR_CLASS]
    assert classes, f"{rel(path, package)}: no class {FLAVOR_CLASS}"
    methods = public_methods(classes[0])
    if len(methods) <= MAX_FLAVOR_METHODS:
        return ""
    return (f"{rel(path, package)}:{classes[0].lineno}: class {FLAVOR_CLASS} has {len(methods)} public methods, "
            f"at most {MAX_FLAVOR_METHODS}: " + ", ".join(f"{name} ({line})" for name, line in methods))


def test_flavor_has_at_most_15_public_methods():
    problem = flavor_size_problem()
    assert not problem, "\n\n" + problem


# --- the checkers themselves, on made-up source ------------------------------------------------

def test_flavor_checker_finds_each_form():
    source = '''
if flavor == "mysql": pass
if "postgres" != server.flavor: pass
if flavor in ("mysql", "mariadb"): pass
if flavor not in {"pg"}: pass
if image.startswith("mysql"): pass
if image.startswith(("mariadb", "postgresql")): pass
SERIES = {"mysql": 1, "other": 2}
OPTS = dict(postgres=1)
match flavor:
    case "mariadb" | "x":
        pass
if flavor == "sqlite" or name in ("a", "b") or x < "mysql" or d["mysql"]: pass
colors.get("mariadb", "grey")
d["other"], d[name], d.get("x")
'''
    found = flavor_string_uses(ast.parse(source), frozenset({"mysql", "postgres", "mariadb", "postgresql", "pg"}))
    assert sorted(line for line, _ in found) == [2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 14]
    assert (13, 'indexed by \'mysql\'') in found and (14, ".get('mariadb', ...)") in found


def test_version_checker_finds_each_form():
    source = '''
ab["new"].map(lambda n: n.split(" ", 1)[1].startswith("8.0"))
if version == "5.7.22": pass
if v >= "16.4": pass
df[df.version.str.contains("9.")]
if name.startswith("mysql") or n == "8" or x.startswith(prefix): pass
'''
    assert sorted(line for line, _ in version_string_uses(ast.parse(source))) == [2, 3, 4, 5]


def test_relative_imports_resolve():
    def deps(code: str, module: str, is_package: bool = False) -> list[str]:
        stmt = ast.parse(code).body[0]
        return imported_modules(stmt, module, is_package)

    assert deps("from . import lifecycle", "dbexp.servers.flavor") == ["dbexp.servers.lifecycle"]
    assert deps("from .. import errors", "dbexp.servers.flavor") == ["dbexp.errors"]
    assert deps("from ..metrics.procfs import Tracker", "dbexp.servers.flavor") == [
        "dbexp.metrics.procfs.Tracker"]
    assert deps("from .flavor import Flavor", "dbexp.servers", is_package=True) == [
        "dbexp.servers.flavor.Flavor"]
    assert deps("import dbexp.servers.config as c", "dbexp.cli") == ["dbexp.servers.config"]
    modules = {"dbexp", "dbexp.servers", "dbexp.servers.flavor"}
    assert module_of("dbexp.servers.flavor.Flavor", modules) == "dbexp.servers.flavor"
    assert module_of("dbexp.servers.Flavor", modules) == "dbexp.servers"
    assert module_of("docker.errors", modules) is None


def write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "dbexp"


# A made-up package's flavor registry, read as the real one is.
SERVERS = {
    "dbexp/servers/__init__.py": "",
    "dbexp/servers/flavor.py": "class Flavor:\n    name: str\n",
    "dbexp/servers/mysql.py": "from .flavor import Flavor\nclass MySQL(Flavor):\n    name = 'mysql'\n    title = 'MySQL'\n",
    "dbexp/servers/postgres.py": "from .flavor import Flavor\nclass Postgres(Flavor):\n    name = 'postgres'\n"
                                 "    title = 'PostgreSQL'\n",
    "dbexp/servers/mariadb.py": "from dbexp.servers.mysql import MySQL\nclass MariaDB(MySQL):\n    name = 'mariadb'\n",
    "dbexp/servers/registry.py": "from dbexp.servers.mariadb import MariaDB\nfrom dbexp.servers.mysql import MySQL\n"
                                 "from dbexp.servers.postgres import Postgres\n"
                                 "FLAVORS = {cls.name: cls for cls in (MySQL, Postgres, MariaDB)}\n",
    "dbexp/catalog/catalog.py": "def parse(f):\n    return {'pg': 'postgres'}.get(f, f)\n",
}


def test_the_registry_is_read_on_a_made_up_package(tmp_path):
    package = write_package(tmp_path, {"dbexp/__init__.py": "", **SERVERS})
    assert registered(package) == Flavors(
        frozenset({"mysql", "postgres", "postgresql", "mariadb", "pg"}),
        frozenset({"dbexp.servers.mysql", "dbexp.servers.postgres", "dbexp.servers.mariadb"}),
        frozenset({"MySQL", "Postgres", "MariaDB"}))


def test_chapter_shape_checker_on_a_made_up_package(tmp_path):
    whole = {f"dbexp/chapters/good/{f}": "" for f in CHAPTER_FILES}
    package = write_package(tmp_path, {
        "dbexp/__init__.py": "",
        "dbexp/chapters/__init__.py": "",
        **whole,
        "dbexp/chapters/good/engines/__init__.py": "import abc\nclass Part(abc.ABC):\n    pass\n",
        "dbexp/chapters/good/chapter.py": "PARTS = Engines('good', {'mysql': innodb.Part})\n",
        "dbexp/chapters/old/__init__.py": "",
        "dbexp/chapters/old/design.py": "",
        "dbexp/chapters/old/analysis.py": "",
        "dbexp/chapters/old/claims.py": "",
        "dbexp/chapters/old/parts.py": "\nPARTS = Engines('old', {})\n",
        "dbexp/chapters/bare/__init__.py": "",
        "dbexp/chapters/bare/chapter.py": "",
        "dbexp/chapters/bare/analysis.py": "",
        "dbexp/chapters/bare/claims.py": "",
        "dbexp/chapters/bare/findings.py": "",
        "dbexp/chapters/bare/engines/__init__.py": "class Part:\n    pass\n",
    })
    assert chapter_shape_problems(package) == [
        "  dbexp/chapters/bare/engines/__init__.py:1: declares no engine-part interface (a class deriving from abc.ABC)",
        "  dbexp/chapters/old/: missing chapter.py, findings.py, engines/__init__.py",
        "  dbexp/chapters/old/parts.py:2: Engines(...) declared outside chapter.py",
    ]


def test_flavor_checker_on_a_made_up_package(tmp_path):
    package = write_package(tmp_path, {
        **SERVERS,
        "dbexp/__init__.py": "",
        "dbexp/servers/mysql.py": SERVERS["dbexp/servers/mysql.py"] + "if name == 'mysql': pass\n",  # exempt
        "dbexp/catalog/catalog.py": SERVERS["dbexp/catalog/catalog.py"] + "FLAVORS = {'mysql': 1}\n",  # exempt
        "dbexp/metrics/counters.py": "x = 1\nif flavor in ('mysql', 'mariadb'):\n    pass\n",
        "notebooks/ch.ipynb": json.dumps({"cells": [
            {"cell_type": "markdown", "source": ["if x == 'mysql'"]},
            {"cell_type": "code", "source": ["%matplotlib inline\n", "y = colors['pg']\n"]},
        ]}),
    })
    assert flavor_problems(package) == (
        "2 place(s) outside dbexp/servers/ and dbexp/catalog/ branch on flavor or engine names as strings "
        "(mariadb, mysql, pg, postgres, postgresql, in any case); ask the flavor object (dbexp/servers/), a "
        "capability, or the chapter's engine part instead:\n"
        "  dbexp/metrics/counters.py:2: `in` against ('mysql', 'mariadb'): if flavor in ('mysql', 'mariadb'):\n"
        "  notebooks/ch.ipynb cell 2 line 2: indexed by 'pg': y = colors['pg']")


def test_flavor_class_checker_on_a_made_up_package(tmp_path):
    package = write_package(tmp_path, {
        **SERVERS,
        "dbexp/__init__.py": "",
        "dbexp/chapters/__init__.py": "",
        "dbexp/chapters/ch/__init__.py": "",
        "dbexp/chapters/ch/chapter.py": (
            "from dbexp.servers.engines import Engines\nfrom .engines import innodb\nfrom .pg import Heap\n"
            "PARTS = Engines('ch', {'mysql': innodb.Undo, 'postgres': Heap}, skipped={'mariadb': 'why'})\n"),
        "dbexp/chapters/ch/engines/__init__.py": "from dbexp.servers.mysql import MySQL\n",
        "dbexp/chapters/ch/engines/innodb.py": "from dbexp.servers.mysql import MySQL\nclass Undo: pass\n",
        "dbexp/chapters/ch/engines/mariadb.py": "from dbexp.servers.mariadb import MariaDB\n",
        "dbexp/chapters/ch/pg.py": "class Heap:\n    def f(self):\n        return self.flavor.name == 'x'\n",
        "dbexp/chapters/ch/analysis.py": (
            "from dbexp.servers.mysql import MySQL\nfrom dbexp.servers import Postgres\n"
            "if server.flavor.name == MySQL.name: pass\nif isinstance(f, (MySQL, int)): pass\n"),
        "notebooks/ch.ipynb": json.dumps({"cells": [
            {"cell_type": "code", "source": "from dbexp.servers.postgres import Postgres\n"}]}),
    })
    assert engine_modules(package) == {"dbexp/chapters/ch/engines/innodb.py", "dbexp/chapters/ch/engines/mariadb.py",
                                       "dbexp/chapters/ch/pg.py"}
    assert flavor_problems(package) == ""  # the Engines declaration may name flavors
    problems = flavor_class_problems(package)
    assert problems.startswith("7 place(s) outside dbexp/servers/"), problems
    assert "analysis.py:1: imports dbexp.servers.mysql.MySQL" in problems
    assert "analysis.py:2: imports dbexp.servers.Postgres" in problems
    assert "analysis.py:3: compares MySQL.name" in problems and "analysis.py:3: compares server.flavor.name" in problems
    assert "analysis.py:4: isinstance against MySQL" in problems
    assert "engines/__init__.py:1: imports dbexp.servers.mysql.MySQL" in problems
    assert "notebooks/ch.ipynb cell 1 line 1: imports dbexp.servers.postgres.Postgres" in problems
    assert "innodb.py" not in problems and "pg.py" not in problems and "mariadb.py" not in problems


def test_flavor_size_checker_on_made_up_source(tmp_path):
    methods = "".join(f"    def m{i}(self): pass\n" for i in range(15))
    package = write_package(tmp_path, {
        "dbexp/servers/flavor.py": "class Flavor:\n    name: str\n    def _private(self): pass\n" + methods,
    })
    assert flavor_size_problem(package) == ""
    (package / "servers/flavor.py").write_text(
        "class Flavor:\n    query = staticmethod(sql.query)\n    size = 1\n" + methods)
    assert flavor_size_problem(package) == (
        "dbexp/servers/flavor.py:1: class Flavor has 16 public methods, at most 15: query (2), "
        + ", ".join(f"m{i} ({i + 4})" for i in range(15)))


# --- every child process through dbexp/process.py (issue 46) -----------------------------------------------------

# the files that may start a child process around dbexp.process, and why: process.py itself, where run and Child tie
# each child to the lab (it dies with the thread that started it, carries the lab's marker) and reap it. The tests
# start theirs through it too: a child that must outlive the test or carry a marker of its own is a
# process.Child(tie=False) (tests/unit/test_process.py's orphan), not a raw Popen.
OWN_CHILDREN = {"dbexp/process.py": "the one place a child process starts: process.run and process.Child"}
SUBPROCESS_STARTS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}


def starts_a_child(module: str, name: str) -> bool:
    """``module.name`` starts a child process: subprocess's runners, os.system, os.popen, os.spawn*, os.posix_spawn*."""
    if module == "subprocess":
        return name in SUBPROCESS_STARTS
    return module == "os" and (name in ("system", "popen") or name.startswith(("spawn", "posix_spawn")))


def child_process_starts(source: Source) -> list[tuple[int, str]]:
    """(line, what) for each child process started around dbexp.process: ``subprocess.run(...)`` under any name the
    module is imported as, and ``from subprocess import run`` (or ``*``); the same for os.system, popen and spawn*."""
    modules, found = {}, []  # the names subprocess and os are bound to here
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("subprocess", "os"):
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in ("subprocess", "os"):
            found += [(node.lineno, f"from {node.module} import {alias.name}") for alias in node.names
                      if alias.name == "*" or starts_a_child(node.module, alias.name)]
    for node in ast.walk(source.tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and starts_a_child(modules[node.value.id], node.attr)):
            found.append((node.lineno, f"{modules[node.value.id]}.{node.attr}"))
    return found


def child_process_problems(package: Path = PACKAGE) -> str:
    tests = package.parent / "tests"
    sources = package_sources(package) + (package_sources(tests) if tests.is_dir() else []) + notebook_sources(package)
    offenders = offences([s for s in sources if s.name not in OWN_CHILDREN], child_process_starts)
    if not offenders:
        return ""
    return (f"{len(offenders)} child process(es) started around dbexp.process: start them with process.run or "
            "process.Child (tie=False for one that must outlive this process); allowed: "
            + "; ".join(f"{name} ({why})" for name, why in sorted(OWN_CHILDREN.items())) + "\n" + "\n".join(offenders))


def test_every_child_process_starts_through_dbexp_process():
    """No subprocess.run, Popen, call or check_output outside dbexp/process.py, in the package, its tests and the
    notebooks: every child the lab starts is tied to it (dies with it, carries its marker) and reaped there."""
    problems = child_process_problems()
    assert not problems, "\n\n" + problems


def test_child_process_checker_on_made_up_source(tmp_path):
    package = write_package(tmp_path, {
        "dbexp/process.py": "import subprocess\ndef run(a):\n    return subprocess.run(a)\n",
        "dbexp/a.py": ("import subprocess as sp\nimport os.path\nfrom subprocess import PIPE, Popen\n"
                       "def f():\n    sp.check_output(['x'], stdout=PIPE)\n    os.system('x')\n"
                       "    return os.path.join('a', 'b'), os.getpid(), sp.CompletedProcess\n"),
        "tests/unit/test_b.py": ("from dbexp import process\ndef test():\n    import subprocess\n"
                                 "    process.run(['x'], stdout=subprocess.PIPE)\n    subprocess.call(['x'])\n"),
        "tests/test_c.py": "from os import posix_spawnp, getcwd\nfrom subprocess import *\n",
    })
    problems = child_process_problems(package)
    assert problems.startswith("6 child process(es) started around dbexp.process"), problems
    assert "dbexp/a.py:3: from subprocess import Popen" in problems
    assert "dbexp/a.py:5: subprocess.check_output" in problems and "dbexp/a.py:6: os.system" in problems
    assert "tests/unit/test_b.py:5: subprocess.call" in problems
    assert "tests/test_c.py:1: from os import posix_spawnp" in problems
    assert "tests/test_c.py:2: from subprocess import *" in problems
    assert "process.py" not in problems.split("\n", 1)[1]  # its own subprocess.run is allowed
    assert "import PIPE:" not in problems and "import getcwd" not in problems and "os.path" not in problems


# --- what import-linter cannot see: computed imports, sys.modules, notebooks' imports ------------------------------

# the modules that may import by a computed name, and why: the chapter registry (a folder per chapter), the chapter
# protocol (a chapter folder's own claims.py and findings.py, by convention), the lazy attribute loader (its
# callers name modules as literals), the book's stubs for optional packages, and the command line's (the same)
COMPUTED_IMPORTS = {"dbexp/chapters/__init__.py", "dbexp/experiments/chapter.py", "dbexp/lazy.py",
                    "dbexp/book/__init__.py", "dbexp/cli.py"}
IMPORTERS = {"import_module", "__import__"}


def computed_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each import by a name computed at run time (import_module or __import__ of anything but a
    string literal) and each use of sys.modules: imports import-linter cannot follow."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in IMPORTERS and node.args and not (
                    isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.append((node.lineno, f"{name}({ast.unparse(node.args[0])}): an import by a computed name"))
        elif (isinstance(node, ast.Attribute) and node.attr == "modules" and isinstance(node.value, ast.Name)
              and node.value.id == "sys"):
            found.append((node.lineno, "sys.modules: a module reached around the import system"))
    return found


def chapter_imports_in_notebook(source: Source, chapters: set[str]) -> list[tuple[int, str]]:
    """(line, what) for each chapter a notebook imports other than its own (notebooks/NAME.ipynb: NAME)."""
    own = Path(source.name).stem
    found = []
    for node in ast.walk(source.tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            dotted = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            dotted = [a.name for a in node.names]
        else:
            continue
        for d in dotted:
            parts = d.split(".")
            if len(parts) >= 3 and parts[:2] == ["dbexp", "chapters"] and parts[2] in chapters and parts[2] != own:
                found.append((node.lineno, f"imports chapter {parts[2]}"))
    return found


def import_problems(package: Path = PACKAGE) -> str:
    chapters = {p.name for p in (package / "chapters").iterdir() if (p / "__init__.py").is_file()}
    sources = [s for s in package_sources(package) if s.name not in COMPUTED_IMPORTS]
    offenders = offences(sources + notebook_sources(package), lambda s: computed_imports(s.tree))
    offenders += offences(notebook_sources(package), lambda s: chapter_imports_in_notebook(s, chapters))
    if not offenders:
        return ""
    return (f"{len(offenders)} import(s) import-linter cannot check: import by a literal name, and a notebook imports "
            "its own chapter only (allowed computed imports: " + ", ".join(sorted(COMPUTED_IMPORTS)) + "):\n"
            + "\n".join(offenders))


def test_no_computed_imports_and_no_notebook_imports_another_chapter():
    problems = import_problems()
    assert not problems, "\n\n" + problems


MADE_UP_VIOLATIONS = {  # issue 46: each of these passed the home-made checks; each must fail one now
    "computed import": ('import importlib\nname = "gtid"\nm = importlib.import_module("dbexp.chapters." + name)\n',
                        "computed"),
    "sys.modules": ('import sys\ngtid = sys.modules["dbexp.chapters.gtid"]\n', "computed"),
    "flavor title": ('def f(flavor):\n    return 1 if flavor.title == "MySQL" else 2\n', "flavor"),
    "class name": ('def f(flavor):\n    return type(flavor).__name__ == "Postgres"\n', "flavor"),
    "engine name": ('def f(part):\n    if part.engine == "InnoDB":\n        return 1\n', "flavor"),
    "names iterated": ('for engine in ("InnoDB", "PostgreSQL"):\n    print(engine)\n', "flavor"),
    "a tuple of one": ('def f(spec):\n    return spec.split(":")[0] in ("postgres",)\n', "flavor"),
}


def test_the_checks_catch_each_made_up_violation(tmp_path):
    names = frozenset(n.lower() for n in registered().names | registered().classes) | engine_names()
    for label, (code, check) in MADE_UP_VIOLATIONS.items():
        tree = ast.parse(code)
        found = computed_imports(tree) if check == "computed" else flavor_string_uses(tree, names)
        assert found, f"the {label} violation passed: {code}"
    # a notebook importing another chapter
    nb = tmp_path / "notebooks"
    nb.mkdir()
    (nb / "readview.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": (
        "from dbexp.chapters import gtid\nfrom dbexp.chapters.readview import CHAPTER\n")}]}))
    cells = notebook_sources(tmp_path / "dbexp")
    found = [f for c in cells for f in chapter_imports_in_notebook(c, {"gtid", "readview"})]
    assert found == [(1, "imports chapter gtid")], found
