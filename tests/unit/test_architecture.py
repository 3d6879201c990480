"""The package's shape, read from its source with ast (nothing of dbexp is imported).

1. The import graph between dbexp's parts (subpackages, and top-level modules such as
   dbexp.cli) has no cycle. Every import statement counts, also one inside a function or
   under ``if TYPE_CHECKING:``: a lazy import is still a dependency.
2. Outside dbexp/servers/ (and the catalog, the table of builds) no code branches on
   flavor names spelled as strings; it asks the server's flavor object instead. The one
   exception is a chapter's ``Engines(...)`` declaration, which names the flavors its
   per-engine parts serve (dbexp/servers/engines.py).
3. Outside dbexp/servers/ and the chapters' engine modules, no code imports a concrete flavor
   class (dbexp.servers.mysql, .postgres, .mariadb), compares a flavor's ``name`` attribute
   (``MySQL.name``, ``server.flavor.name == ...``) or asks ``isinstance(x, MySQL)``. A chapter's
   engine modules are the modules of its folder whose classes it declares in ``Engines(...)``:
   they are allowed to know their engine.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from unit_support import PACKAGE

ROOT = "dbexp"
TOP = "dbexp.cli"  # may import everything; nothing may import it
MAX_CYCLES_SHOWN = 40


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


def nodes(package: Path = PACKAGE) -> set[str]:
    """dbexp (its __init__), each subpackage and each top-level module."""
    found = {ROOT}
    for entry in package.iterdir():
        if entry.is_dir() and any(p for p in entry.rglob("*.py") if "__pycache__" not in p.parts):
            found.add(f"{ROOT}.{entry.name}")
        elif entry.suffix == ".py" and entry.name != "__init__.py":
            found.add(f"{ROOT}.{entry.stem}")
    return found


def node_of(module: str) -> str | None:
    """The graph node a dotted module belongs to; None outside dbexp."""
    parts = module.split(".")
    if parts[0] != ROOT:
        return None
    return ROOT if len(parts) == 1 else f"{ROOT}.{parts[1]}"


def _scopes(tree: ast.AST):
    """(node, name of the enclosing function or None) for every node of the tree."""
    todo = [(tree, None)]
    while todo:
        node, func = todo.pop()
        yield node, func
        inner = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
        todo.extend((child, inner) for child in ast.iter_child_nodes(node))


@dataclass(frozen=True)
class Site:
    file: str
    line: int
    function: str | None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f" (lazy, in {self.function}())" if self.function else "")


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


def target_node(dotted: str, known: set[str]) -> str | None:
    node = node_of(dotted)
    if node is None:
        return None
    if node not in known:  # `from dbexp import __version__`: an attribute of dbexp itself
        return ROOT
    return node


def import_graph(package: Path = PACKAGE) -> dict[tuple[str, str], list[Site]]:
    """{(importer node, imported node): [sites]} between different nodes."""
    known = nodes(package)
    edges: dict[tuple[str, str], list[Site]] = defaultdict(list)
    for path in source_files(package):
        module = module_name(path, package)
        src = node_of(module)
        for stmt, func in _scopes(parse(path)):
            if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
                continue
            targets = {target_node(m, known)
                       for m in imported_modules(stmt, module, path.name == "__init__.py")}
            for dst in sorted(t for t in targets if t is not None and t != src):
                edges[(src, dst)].append(Site(rel(path, package), stmt.lineno, func))
    for sites in edges.values():
        sites.sort(key=lambda s: (s.file, s.line))
    return dict(edges)


# --- cycles ----------------------------------------------------------------------------------

def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def simple_cycles(graph: dict[str, set[str]], component: list[str]) -> list[list[str]]:
    """Every elementary cycle within one component, each once, starting at its smallest node."""
    members = set(component)
    cycles = []
    for start in sorted(members):
        allowed = {v for v in members if v >= start}
        path = [start]

        def walk(v: str) -> None:
            for w in sorted(graph.get(v, ())):
                if w == start:
                    cycles.append(path + [start])
                elif w in allowed and w not in path:
                    path.append(w)
                    walk(w)
                    path.pop()

        walk(start)
    return sorted(cycles, key=lambda c: (len(c), c))


def describe_cycles(edges: dict[tuple[str, str], list[Site]]) -> str:
    graph: dict[str, set[str]] = defaultdict(set)
    for src, dst in edges:
        graph[src].add(dst)
    components = strongly_connected(graph)
    if not components:
        return ""
    cycles = [c for comp in components for c in simple_cycles(graph, comp)]
    cycles.sort(key=lambda c: (len(c), c))
    lines = [f"{len(cycles)} import cycle(s) between dbexp's parts, within "
             + "; ".join("{" + ", ".join(comp) + "}" for comp in components)
             + " (an edge a -> b: a module of a imports from b):"]
    for cycle in cycles[:MAX_CYCLES_SHOWN]:
        lines.append("")
        lines.append("  " + " -> ".join(cycle))
        for src, dst in zip(cycle, cycle[1:]):
            sites = edges[(src, dst)]
            lines.append(f"      {src} -> {dst}:")
            lines.extend(f"          {site}" for site in sites)
    if len(cycles) > MAX_CYCLES_SHOWN:
        lines.append(f"\n  ... and {len(cycles) - MAX_CYCLES_SHOWN} longer cycle(s)")
    return "\n".join(lines)


def describe_layering(edges: dict[tuple[str, str], list[Site]]) -> str:
    lines = []
    for (src, dst), sites in sorted(edges.items()):
        if src == ROOT:
            problem = f"dbexp/__init__.py must import nothing of the package, but imports {dst}"
        elif dst == TOP:
            problem = f"{TOP} is the top (it may import everything), but {src} imports it"
        else:
            continue
        lines.append(f"  {problem}:")
        lines.extend(f"      {site}" for site in sites)
    return "\n".join(lines)


def import_problems(package: Path = PACKAGE) -> str:
    edges = import_graph(package)
    assert edges, f"found no imports at all under {package}"
    return "\n\n".join(text for text in (describe_cycles(edges), describe_layering(edges)) if text)


def test_no_import_cycles_between_parts():
    problems = import_problems()
    assert not problems, "\n\n" + problems


# --- flavor names as strings -----------------------------------------------------------------

FLAVOR_NAMES = {"mysql", "postgres", "mariadb", "postgresql", "pg"}
EXEMPT = ("dbexp/servers/", "dbexp/catalog/")
COMPARE_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in"}
PREFIX_METHODS = {"startswith", "endswith"}


def flavor_names_in(node: ast.AST | None) -> list[str]:
    """Flavor names a constant spells: "mysql", or ("mysql", "mariadb") as a tuple/list/set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in FLAVOR_NAMES:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for elt in node.elts for n in flavor_names_in(elt)]
    return []


def engines_declarations(tree: ast.AST) -> list[ast.Call]:
    """The ``Engines(...)`` calls of a module: where a chapter names the flavors its parts serve."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and (getattr(node.func, "id", None) == "Engines" or getattr(node.func, "attr", None) == "Engines")]


def flavor_string_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each place that compares against, or is keyed by, a flavor name (an
    ``Engines(...)`` declaration excepted)."""
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
                    if flavor_names_in(side):
                        found.append((node.lineno, f"`{COMPARE_OPS[type(op)]}` against {ast.unparse(side)}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in PREFIX_METHODS):
            if any(flavor_names_in(arg) for arg in node.args):
                args = ", ".join(ast.unparse(arg) for arg in node.args)
                found.append((node.lineno, f".{node.func.attr}({args})"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            names = [kw.arg for kw in node.keywords if kw.arg in FLAVOR_NAMES]
            if names:
                found.append((node.lineno, f"dict(...) keyed by {', '.join(map(repr, names))}"))
        elif isinstance(node, ast.Dict):
            names = [n for key in node.keys for n in flavor_names_in(key) if isinstance(key, ast.Constant)]
            if names:
                found.append((node.lineno, f"dict literal keyed by {', '.join(map(repr, names))}"))
        elif isinstance(node, ast.match_case):
            names = [n for pat in ast.walk(node.pattern) if isinstance(pat, ast.MatchValue)
                     for n in flavor_names_in(pat.value)]
            if names:
                found.append((node.pattern.lineno, f"match case {', '.join(map(repr, names))}"))
    return found


def flavor_problems(package: Path = PACKAGE) -> str:
    offenders = []
    for path in source_files(package):
        name = rel(path, package)
        if name.startswith(EXEMPT):
            continue
        lines = path.read_text().splitlines()
        for line, what in sorted(set(flavor_string_uses(parse(path)))):
            offenders.append(f"  {name}:{line}: {what}\n      {lines[line - 1].strip()[:110]}")
    if not offenders:
        return ""
    return (f"{len(offenders)} place(s) outside {' and '.join(EXEMPT)} branch on flavor names as strings "
            f"({', '.join(sorted(FLAVOR_NAMES))}); ask the flavor object (dbexp/servers/) instead:\n\n"
            + "\n".join(offenders))


def test_no_flavor_name_comparisons_outside_servers():
    problems = flavor_problems()
    assert not problems, "\n\n" + problems


# --- flavor classes and their names --------------------------------------------------------

FLAVOR_MODULES = {"dbexp.servers.mysql", "dbexp.servers.postgres", "dbexp.servers.mariadb"}
FLAVOR_CLASSES = {"MySQL", "Postgres", "MariaDB"}


def engine_modules(package: Path = PACKAGE) -> set[str]:
    """Files (dbexp/chapters/<ch>/<m>.py) whose classes a chapter declares in ``Engines(...)``:
    ``Engines("ch", {"mysql": innodb.Views})`` or ``{"mysql": Views}`` with ``from .innodb import Views``."""
    found = set()
    chapters = package / "chapters"
    if not chapters.is_dir():
        return found
    for path in sorted(chapters.rglob("*.py")):
        tree = parse(path)
        calls = engines_declarations(tree)
        if not calls:
            continue
        imported = {}  # local name -> module file stem it came from, within the chapter's folder
        for stmt in ast.walk(tree):
            if isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    local = alias.asname or alias.name
                    if stmt.level and not stmt.module:  # from . import innodb
                        imported[local] = alias.name
                    elif stmt.module:  # from .innodb import Views / from dbexp.chapters.x.innodb import Views
                        imported[local] = stmt.module.rpartition(".")[2]
                        if stmt.module.startswith("dbexp.chapters.") and stmt.module.count(".") == 2:
                            imported[local] = alias.name  # from dbexp.chapters.x import innodb
        for call in calls:
            for value in (n for arg in [*call.args, *(k.value for k in call.keywords)] for n in ast.walk(arg)):
                if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
                    stem = imported.get(value.value.id, value.value.id)
                elif isinstance(value, ast.Name) and value.id in imported:
                    stem = imported[value.id]
                else:
                    continue
                candidate = path.parent / f"{stem}.py"
                if candidate.exists():
                    found.add(rel(candidate, package))
    return found


def _flavorish(node: ast.AST) -> bool:
    """``MySQL.name``, ``flavor.name``, ``server.flavor.name``, ``self.flavor.name``."""
    if not (isinstance(node, ast.Attribute) and node.attr == "name"):
        return False
    inner = node.value
    if isinstance(inner, ast.Name):
        return inner.id in FLAVOR_CLASSES or inner.id.endswith("flavor")
    return isinstance(inner, ast.Attribute) and inner.attr.endswith("flavor")


def flavor_class_uses(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, what) for each import of a concrete flavor class, comparison of a flavor's name and
    isinstance against a flavor class."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for dotted in imported_modules(node, module, is_package):
                if any(dotted == m or dotted.startswith(m + ".") for m in FLAVOR_MODULES) or (
                        dotted.rpartition(".")[0] == "dbexp.servers" and dotted.rpartition(".")[2] in FLAVOR_CLASSES):
                    found.append((node.lineno, f"imports {dotted}"))
        elif isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if _flavorish(side):
                    found.append((node.lineno, f"compares {ast.unparse(side)}"))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
            classes = [n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name) and n.id in FLAVOR_CLASSES]
            if classes:
                found.append((node.lineno, f"isinstance against {', '.join(classes)}"))
    return found


def flavor_class_problems(package: Path = PACKAGE) -> str:
    allowed = engine_modules(package)
    offenders = []
    for path in source_files(package):
        name = rel(path, package)
        if name.startswith("dbexp/servers/") or name in allowed:
            continue
        lines = path.read_text().splitlines()
        uses = flavor_class_uses(parse(path), module_name(path, package), path.name == "__init__.py")
        for line, what in sorted(set(uses)):
            offenders.append(f"  {name}:{line}: {what}\n      {lines[line - 1].strip()[:110]}")
    if not offenders:
        return ""
    return (f"{len(offenders)} place(s) outside dbexp/servers/ and the chapters' engine modules know a concrete "
            "flavor (its class or its name); give the chapter a part per engine (dbexp/servers/engines.py) "
            "or ask the flavor object:\n\n" + "\n".join(offenders))


def test_no_flavor_classes_or_names_outside_servers_and_engine_modules():
    problems = flavor_class_problems()
    assert not problems, "\n\n" + problems


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
'''
    found = flavor_string_uses(ast.parse(source))
    assert sorted(line for line, _ in found) == [2, 3, 4, 5, 6, 7, 8, 9, 11]


def test_cycle_finder_on_a_made_up_graph():
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert simple_cycles(graph, ["a", "b", "c"]) == [["a", "b", "a"], ["a", "b", "c", "a"]]


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
    known = {"dbexp", "dbexp.servers", "dbexp.errors"}
    assert target_node("dbexp.__version__", known) == "dbexp"
    assert target_node("dbexp.servers.flavor.Flavor", known) == "dbexp.servers"
    assert target_node("docker.errors", known) is None


def write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "dbexp"


def test_import_checker_on_a_made_up_package(tmp_path):
    package = write_package(tmp_path, {
        "dbexp/__init__.py": "from dbexp import errors\n",
        "dbexp/errors.py": "",
        "dbexp/cli.py": "import dbexp.servers\nfrom dbexp import metrics, errors\n",
        "dbexp/servers/__init__.py": "from .lifecycle import start\n",
        "dbexp/servers/lifecycle.py": "import os\n\ndef start():\n    from ..metrics import sampler\n",
        "dbexp/metrics/__init__.py": "",
        "dbexp/metrics/sampler.py": "import dbexp\nfrom dbexp.servers.lifecycle import start\n"
                                    "from dbexp.errors import E\n",
        "dbexp/workloads/__init__.py": "from dbexp.cli import main\n",
    })
    assert import_problems(package) == """\
1 import cycle(s) between dbexp's parts, within {dbexp.metrics, dbexp.servers} (an edge a -> b: a module of a imports from b):

  dbexp.metrics -> dbexp.servers -> dbexp.metrics
      dbexp.metrics -> dbexp.servers:
          dbexp/metrics/sampler.py:2
      dbexp.servers -> dbexp.metrics:
          dbexp/servers/lifecycle.py:4 (lazy, in start())

  dbexp/__init__.py must import nothing of the package, but imports dbexp.errors:
      dbexp/__init__.py:1
  dbexp.cli is the top (it may import everything), but dbexp.workloads imports it:
      dbexp/workloads/__init__.py:1"""


def test_flavor_checker_on_a_made_up_package(tmp_path):
    package = write_package(tmp_path, {
        "dbexp/__init__.py": "",
        "dbexp/servers/mysql.py": "if name == 'mysql': pass\n",  # exempt
        "dbexp/catalog/catalog.py": "FLAVORS = {'mysql': 1}\n",  # exempt
        "dbexp/metrics/counters.py": "x = 1\nif flavor in ('mysql', 'mariadb'):\n    pass\n",
    })
    assert flavor_problems(package) == (
        "1 place(s) outside dbexp/servers/ and dbexp/catalog/ branch on flavor names as strings "
        "(mariadb, mysql, pg, postgres, postgresql); ask the flavor object (dbexp/servers/) instead:\n\n"
        "  dbexp/metrics/counters.py:2: `in` against ('mysql', 'mariadb')\n"
        "      if flavor in ('mysql', 'mariadb'):")


def test_flavor_class_checker_on_a_made_up_package(tmp_path):
    package = write_package(tmp_path, {
        "dbexp/__init__.py": "",
        "dbexp/servers/mysql.py": "class MySQL: name = 'mysql'\n",
        "dbexp/chapters/__init__.py": "",
        "dbexp/chapters/ch/__init__.py": (
            "from dbexp.servers.engines import Engines\nfrom . import innodb\nfrom .pg import Heap\n"
            "PARTS = Engines('ch', {'mysql': innodb.Undo, 'postgres': Heap}, skipped={'mariadb': 'why'})\n"),
        "dbexp/chapters/ch/innodb.py": "from dbexp.servers.mysql import MySQL\nclass Undo: pass\n",
        "dbexp/chapters/ch/pg.py": "class Heap:\n    def f(self):\n        return self.flavor.name == 'x'\n",
        "dbexp/chapters/ch/analysis.py": (
            "from dbexp.servers.mysql import MySQL\nfrom dbexp.servers import Postgres\n"
            "if server.flavor.name == MySQL.name: pass\nif isinstance(f, (MySQL, int)): pass\n"),
    })
    assert engine_modules(package) == {"dbexp/chapters/ch/innodb.py", "dbexp/chapters/ch/pg.py"}
    assert flavor_problems(package) == ""  # the Engines declaration may name flavors
    problems = flavor_class_problems(package)
    assert problems.startswith("5 place(s) outside dbexp/servers/"), problems
    assert "analysis.py:1: imports dbexp.servers.mysql.MySQL" in problems
    assert "analysis.py:2: imports dbexp.servers.Postgres" in problems
    assert "analysis.py:3: compares MySQL.name" in problems and "analysis.py:3: compares server.flavor.name" in problems
    assert "analysis.py:4: isinstance against MySQL" in problems
    assert "innodb.py" not in problems and "pg.py" not in problems
