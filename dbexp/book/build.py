"""Building the book: execute the chapters, then let Jupyter Book render them.

``build_book`` executes every chapter listed in ``_toc.yml`` (or only some) with
papermill, passing ``scale``, ``run`` and ``publish`` to each, then runs
``jupyter-book build`` with warnings as errors. The HTML lands in
``book/_build/html``.

Rendering from the published results (``run=False``), a chapter whose render key did not change
since it was executed is not executed again (dbexp.book.freshness), and the others are executed in
parallel, one kernel per available CPU: each only reads data/ and writes its own files. Measuring
(``run=True``) executes the chapters one after the other, as the servers need the CPUs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import tempfile
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from dbexp.errors import DbexpError
from dbexp.book import toc
from dbexp.book.execute import DEFAULT_CELL_TIMEOUT_S, SKIP_IRI_GRAMMARS, execute_chapter
from dbexp.book.params import chapter_parameters
from dbexp import process

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
    reused: list[str] = field(default_factory=list)  # chapters unchanged since executed (run=False)
    defects: list = field(default_factory=list)  # check.Defect per code cell, "nan" or empty CSV row shown (check)
    screens: object = None  # check.Screens: the book's length at 1280 x 900 (screens=True)


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
    jobs: int | None = None,
    screens: bool = False,
) -> BookBuild:
    """Execute the chapter notebooks, build the HTML book, optionally check its charts.

    - ``scale``: smoke, default or full; passed to every chapter.
    - ``run``: True runs the experiments; False (render only) executes every chapter
      with ``run=False``, so it reads the committed results in data/; a chapter whose
      render key is unchanged since its last execution keeps its executed notebook
      (dbexp.book.freshness), and the others run in parallel (``jobs``).
    - ``publish``: passed to every chapter (it marks a build meant for publication).
    - ``force``: passed to every chapter: measure again points already recorded;
      rendering only, it executes every chapter again, changed or not (the chapters get
      ``force=False`` then, so a later plain render reuses what this one executed).
    - ``only``: a chapter name (or several): execute just those; other chapters keep
      their last executed notebook, and TOC entries never executed are left out of
      this build (listed in the result's ``left_out``).
    - ``check``: afterwards, draw every page that has charts in headless Chromium
      with no network and fail unless each chart drew (see check.check_charts).
    - ``root``: the book's root (default: this repository); ``timeout_s``: per cell.
    - ``log``: called with one line per step (default: print to stderr).
    - ``jobs``: chapters executed at once when rendering only, each worker in a kernel of its own
      (default: the CPUs this process may use). The browser check loads the pages in one browser.
    - ``screens``: afterwards, draw every page at 1280 px in headless Chromium and say how many screens of
      1280 x 900 each one and the book take (check.screens; the result's ``screens``).

    With ``check``, the pages are also read for what none may show (check.defects: a code cell, "nan", a CSV
    row that says nothing): each is said, and kept in the result's ``defects``; tests/test_book_pipeline.py
    fails on them in the published book.

    Raises DbexpError (one line) on any failure.
    """
    say = _serialized(log or _to_stderr)
    root = Path(root).resolve() if root is not None else toc.repo_root()
    # Rendering only, ``force`` decides which chapters execute, not what they do: every notebook reads
    # data/ whatever its ``force`` (that switch measures again), so it gets False, and a chapter
    # executed by ``--force`` carries the very key a plain render computes (it is reused next time).
    parameters = chapter_parameters(scale, run, publish, force and run)
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

    keys: dict[str, str] = {}
    reused: list[str] = []
    if not run:  # render only: a chapter is a function of what it reads (freshness.py)
        from dbexp.book import freshness

        package, env = freshness.package_hash(), freshness.environment()
        for name in wanted:
            keys[name] = freshness.render_key(root, name, parameters, package=package, env=env)
            if not force and freshness.is_current(root, name, keys[name]):
                reused.append(name)
        if reused:
            say(f"unchanged since last executed, not executed again: {', '.join(reused)}")
    todo = [name for name in wanted if name not in reused]
    workers = max(1, jobs if jobs is not None else available_cpus())
    if run or workers == 1:
        _execute(todo, parameters, root, timeout_s, keys, 1, say)
    else:  # the longest first (as they took last time), so that no long one starts last
        from dbexp.book.freshness import last_duration

        longest_first = sorted(todo, key=lambda name: -last_duration(root, name))
        _execute(longest_first, parameters, root, timeout_s, keys, workers, say, order=todo)

    toc_path = root / toc.TOC_FILE
    left_out: list[str] = []
    if missing:
        toc_path, left_out = toc.write_filtered_toc(
            root, root / toc.BOOK_DIR / "_build" / "_toc.partial.yml"
        )
        say(f"leaving out of this build (no page yet): {', '.join(left_out)}")

    say("building the book with jupyter-book (warnings are errors)")
    started = time.monotonic()
    out = run_jupyter_book(root, toc_path=toc_path)
    say(f"jupyter-book built the pages in {time.monotonic() - started:.1f} s")
    index = out / "index.html"
    result = BookBuild(html_dir=out, index=index, executed=todo, left_out=left_out, reused=reused)
    failed = None  # the browser check's failure, raised once the pages were also read and measured
    if check:
        from dbexp.book.check import check_charts, defects

        say("checking that every chart draws in headless Chromium, offline")
        started = time.monotonic()
        try:
            result.pages = check_charts(out, known=root / toc.BOOK_DIR / "_build" / CHECKED_FILE)
        except DbexpError as error:
            failed = error
        else:
            again = sum(p.known for p in result.pages)
            say(f"charts drawn: {sum(p.drawn for p in result.pages)} on {len(result.pages)} page(s) in "
                f"{time.monotonic() - started:.1f} s"
                + (f" ({again} page(s) unchanged since they last drew, not loaded again)" if again else ""))
        result.defects = defects(out)
        for defect in result.defects:
            say(f"shown where no page may show it: {defect.describe()}")
    if screens:
        from dbexp.book.check import screens as count_screens

        say("drawing every page at 1280 px in headless Chromium to count its screens")
        result.screens = count_screens(out)
        for line in result.screens.describe():
            say(f"  {line}")
    if failed is not None:
        raise failed
    say(f"book built: {index}")
    return result


CHECKED_FILE = "charts-drawn.json"  # under book/_build: pages whose charts drew, by content


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _to_stderr(line: str) -> None:
    sys.stderr.write(line + "\n")  # one write: lines from parallel chapters do not interleave
    sys.stderr.flush()


def _serialized(say: Callable[[str], None]) -> Callable[[str], None]:
    lock = threading.Lock()

    def locked(line: str) -> None:
        with lock:
            say(line)

    return locked


PROGRESS_POLL_S = 2.0  # how often the command line reads the sweep's progress line
PROGRESS_QUIET_S = 60.0  # the longest the command line stays silent while a sweep's line changes
# tqdm's line: "versions:  45%|####5     | 123/270 [10:00<12:00,  0.20run/s, mysql:8.0 ... #3]": runs done, postfix
PROGRESS_LINE = re.compile(r"(\d+/\d+) \[[^,\]]*,[^,\]]*(?:, (.*))?\]\s*$")


@contextmanager
def progress_shown(say: Callable[[str], None]):
    """While a chapter measures in its kernel (whose stderr the command line does not show), print its sweeps'
    progress (points done of all, the current point, time left: the sweep's own bar, dbexp.experiments.sweep
    .Progress, which writes each line to the file named by PROGRESS_FILE in the kernel's environment): a line
    each time a run ends or the point changes, and at least every PROGRESS_QUIET_S otherwise."""
    from dbexp.experiments.sweep import PROGRESS_FILE

    with tempfile.TemporaryDirectory(prefix="dbexp-progress-") as tmp:
        path = Path(tmp) / "progress"
        before = os.environ.get(PROGRESS_FILE)
        os.environ[PROGRESS_FILE] = str(path)  # the kernel started next inherits it
        stop = threading.Event()

        def watch() -> None:
            last, last_key, last_said = "", None, 0.0
            while not stop.wait(PROGRESS_POLL_S):
                line = path.read_text().strip() if path.exists() else ""
                if not line or line == last:
                    continue
                # the runs done and the current point, without the clock that changes every redraw
                found = PROGRESS_LINE.search(line)
                key = (found[1], found[2]) if found else line
                if key != last_key or time.monotonic() - last_said >= PROGRESS_QUIET_S:
                    say(f"  {line}")
                    last_key, last_said = key, time.monotonic()
                last = line

        watcher = threading.Thread(target=watch, name="progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()
            if before is None:
                os.environ.pop(PROGRESS_FILE, None)
            else:
                os.environ[PROGRESS_FILE] = before


def _execute(names: list[str], parameters: dict, root: Path, timeout_s: float, keys: dict,
             workers: int, say: Callable[[str], None], order: list[str] | None = None) -> None:
    """Execute the chapters ``names`` (in this order), ``workers`` at a time; raise the first
    failure in ``order`` (TOC order) once those started have finished (none is started after a
    failure). Rendering only (``run`` False), each worker executes its chapters in one kernel of its
    own (dbexp.book.kernels); measuring, each chapter gets a fresh kernel."""
    shared = not parameters.get("run", True)
    pending = list(names)
    failed: dict[str, BaseException] = {}
    lock = threading.Lock()

    def next_name() -> str | None:
        with lock:
            return pending.pop(0) if pending and not failed else None

    def worker() -> None:
        from dbexp.book.kernels import ChapterKernel

        kernel = ChapterKernel(root) if shared else None
        try:
            while (name := next_name()) is not None:
                say(f"executing chapter {name} ({_describe(parameters)})")
                started = time.monotonic()
                try:
                    with (nullcontext() if shared else progress_shown(say)):
                        execute_chapter(name, parameters, root=root, timeout_s=timeout_s,
                                        render_key=keys.get(name), kernel=kernel)
                except BaseException as error:  # raised below, once the other workers stopped
                    with lock:
                        failed[name] = error
                    return
                say(f"executed chapter {name} in {time.monotonic() - started:.1f} s")
        finally:
            if kernel is not None:
                kernel.close()

    threads = [threading.Thread(target=worker, name=f"chapter-{i}", daemon=True)
               for i in range(min(workers, len(names)))]
    if len(threads) <= 1:
        worker()  # in this thread: nbclient then sets its SIGINT/SIGTERM handlers that stop the kernel
    else:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if failed:
        order = [n for n in (order or names) if n in failed]
        first = order[0]
        error = failed[first]
        if len(failed) > 1 and isinstance(error, DbexpError):
            others = ", ".join(n for n in order if n != first)
            raise DbexpError(f"{error} (also failed: {others})") from None
        raise error


def run_jupyter_book(root: Path, *, toc_path: Path | None = None) -> Path:
    """``jupyter-book build`` with -W -n --keep-going --all; return the HTML directory."""
    root = Path(root)
    out = html_dir(root)
    if out.is_dir():  # no page of a chapter since removed may survive into this build
        shutil.rmtree(out)
    cmd = [
        sys.executable,
        "-c",
        f"import sys; {SKIP_IRI_GRAMMARS}; from jupyter_book.cli.main import main; sys.exit(main())",
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
        proc = process.run(
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
