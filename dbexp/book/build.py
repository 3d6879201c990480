"""Building the book: execute the chapters, then let Jupyter Book render them.

``build_book`` executes every chapter listed in ``_toc.yml`` (or only some) with
papermill, passing ``scale``, ``run`` and ``publish`` to each, then runs
``jupyter-book build`` with warnings as errors. The HTML lands in
``book/_build/html``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from dbexp.errors import DbexpError
from dbexp.book import toc
from dbexp.book.execute import DEFAULT_CELL_TIMEOUT_S, execute_chapter
from dbexp.book.params import chapter_parameters

BUILD_TIMEOUT_S = 1800
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class BookBuild:
    """What ``build_book`` did."""

    html_dir: Path  # book/_build/html
    index: Path  # the page to open
    executed: list[str]  # chapters executed now, in TOC order
    left_out: list[str] = field(default_factory=list)  # TOC entries not in this build
    pages: list = field(default_factory=list)  # check.PageResult per page with charts


def html_dir(root: Path | str | None = None) -> Path:
    root = Path(root).resolve() if root is not None else toc.repo_root()
    return root / toc.BOOK_DIR / "_build" / "html"


def build_book(
    scale: str = "default",
    run: bool = True,
    publish: bool = False,
    only: str | Iterable[str] | None = None,
    *,
    force: bool = False,
    check: bool = False,
    root: Path | str | None = None,
    timeout_s: float = DEFAULT_CELL_TIMEOUT_S,
    log: Callable[[str], None] | None = None,
) -> BookBuild:
    """Execute the chapter notebooks, build the HTML book, optionally check its charts.

    - ``scale``: smoke, default or full; passed to every chapter.
    - ``run``: True runs the experiments; False (render only) still executes every
      chapter, with ``run=False``, so it reads the committed results in data/.
    - ``publish``: passed to every chapter (it marks a build meant for publication).
    - ``force``: passed to every chapter: measure again points already recorded.
    - ``only``: a chapter name (or several): execute just those; other chapters keep
      their last executed notebook, and TOC entries never executed are left out of
      this build (listed in the result's ``left_out``).
    - ``check``: afterwards, draw every page that has charts in headless Chromium
      with no network and fail unless each chart drew (see check.check_charts).
    - ``root``: the book's root (default: this repository); ``timeout_s``: per cell.
    - ``log``: called with one line per step (default: print to stderr).

    Raises DbexpError (one line) on any failure.
    """
    say = log or (lambda line: print(line, file=sys.stderr, flush=True))
    root = Path(root).resolve() if root is not None else toc.repo_root()
    parameters = chapter_parameters(scale, run, publish, force)
    chapters = toc.executed_chapters(root)
    wanted = _select(chapters, only)

    # Pages that will still be missing after this execution: an error for a whole
    # build (before spending time executing), left out of a partial one.
    missing = [
        doc for doc in toc.missing_docs(root) if toc.chapter_name(doc) not in wanted
    ]
    if missing and only is None:
        raise DbexpError(
            "the table of contents lists pages that do not exist: "
            + ", ".join(_expected_source(doc) for doc in missing)
        )

    for name in wanted:
        say(f"executing chapter {name} ({_describe(parameters)})")
        execute_chapter(name, parameters, root=root, timeout_s=timeout_s)

    toc_path = root / toc.TOC_FILE
    left_out: list[str] = []
    if missing:
        toc_path, left_out = toc.write_filtered_toc(
            root, root / toc.BOOK_DIR / "_build" / "_toc.partial.yml"
        )
        say(f"leaving out of this build (no page yet): {', '.join(left_out)}")

    say("building the book with jupyter-book (warnings are errors)")
    out = run_jupyter_book(root, toc_path=toc_path)
    index = out / "index.html"
    result = BookBuild(html_dir=out, index=index, executed=wanted, left_out=left_out)
    if check:
        from dbexp.book.check import check_charts

        say("checking that every chart draws in headless Chromium, offline")
        result.pages = check_charts(out)
        say(f"charts drawn: {sum(p.drawn for p in result.pages)} on {len(result.pages)} page(s)")
    say(f"book built: {index}")
    return result


def run_jupyter_book(root: Path, *, toc_path: Path | None = None) -> Path:
    """``jupyter-book build`` with -W -n --keep-going --all; return the HTML directory."""
    root = Path(root)
    out = html_dir(root)
    if out.is_dir():  # no page of a chapter since removed may survive into this build
        shutil.rmtree(out)
    cmd = [
        sys.executable,
        "-c",
        "import sys; from jupyter_book.cli.main import main; sys.exit(main())",
        "build",
        str(root),
        "--path-output",
        str(root / toc.BOOK_DIR),
        "--builder",
        "html",
        "-W",
        "-n",
        "--keep-going",
        "--all",
    ]
    if toc_path is not None and Path(toc_path) != root / toc.TOC_FILE:
        cmd += ["--toc", str(toc_path)]
    try:
        proc = subprocess.run(
            cmd,
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise DbexpError(f"jupyter-book build took longer than {BUILD_TIMEOUT_S} s") from None
    if proc.returncode != 0 or not (out / "index.html").is_file():
        output = _ANSI.sub("", proc.stdout + "\n" + proc.stderr).replace(f"{root}/", "")
        raise DbexpError(f"jupyter-book build failed: {_build_problem(output)}")
    return out


def _build_problem(output: str) -> str:
    """The first warning or error line of a failed jupyter-book build."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    problems = [l for l in lines if "WARNING:" in l or "ERROR:" in l or "CRITICAL:" in l]
    if problems:
        more = f" ({len(problems)} warnings/errors in all)" if len(problems) > 1 else ""
        return _short(problems[0]) + more
    for line in lines:  # no Sphinx message: an exception, a missing file, ...
        if "Error" in line or "Exception" in line:
            return _short(line)
    return _short(lines[-1]) if lines else "no output"


def _short(line: str, limit: int = 400) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _select(chapters: list[str], only) -> list[str]:
    if only is None:
        return list(chapters)
    names = [only] if isinstance(only, str) else list(only)
    for name in names:
        if name not in chapters:
            raise DbexpError(
                f"unknown chapter {name!r}; chapters: {', '.join(chapters) or '(none)'}"
            )
    return [name for name in chapters if name in names]  # TOC order


def _describe(parameters: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in parameters.items())


def _expected_source(doc: str) -> str:
    name = toc.chapter_name(doc)
    if name:
        return f"{doc} (needs {toc.BOOK_DIR}/{name}.md or {toc.SOURCE_DIR}/{name}.ipynb)"
    return f"{doc} (needs {doc}.md)"
