"""Executing one chapter notebook with papermill, safely.

``notebooks/NAME.ipynb`` is executed into a temporary file and moved to
``book/NAME.ipynb`` only when every cell succeeded, so a traceback notebook never
lands where the book would publish it.
"""

from __future__ import annotations

import contextvars
import os
import tempfile
from pathlib import Path

import nbformat

from dbexp.errors import DbexpError
from dbexp.book import toc
from dbexp.book.params import validate_scale

# per cell; a hung server must not hang the build forever. A chapter measures in one cell: versions, designed
# for up to 60 minutes of measuring at default, spent 60 minutes in its cell on a resumed publication
# (servers started again, retries) and was cut off at the former 3,600 s
DEFAULT_CELL_TIMEOUT_S = 2 * 3600
KERNEL_NAME = "python3"

# Python run first in every process the book starts (the chapters' kernels, jupyter-book): without
# it, each one spends about 0.7 s of CPU importing jsonschema, which builds 38 Lark grammars for
# rfc3987-syntax at import time, its checker of the "iri" and "iri-reference" formats
# (python-jsonschema/jsonschema#1428). No schema these processes validate against (nbformat's,
# Vega-Lite's in Altair, Jupyter Book's configuration) uses either format, so none loses a check;
# jsonschema imports the module inside `suppress(ImportError)` and goes on without it. No name is
# bound in the kernel's namespace.
SKIP_IRI_GRAMMARS = '__import__("sys").modules.setdefault("rfc3987_syntax", None)'


def notebook_parameters(path: Path) -> list[str]:
    """Names declared in the notebook's cell tagged ``parameters``, in order (papermill's public
    inspection; it reads the kernel from the notebook's kernelspec, which every chapter declares)."""
    import papermill

    try:
        declared = papermill.inspect_notebook(str(path))
    except Exception as exc:  # malformed JSON, unreadable file, no kernelspec, ...
        raise DbexpError(f"cannot read notebook {path}: {_one_line(exc)}") from None
    return list(declared)


def check_parameters(name: str, source: Path, parameters: dict) -> None:
    """Raise a one-line DbexpError for a parameter the notebook does not declare.

    papermill itself only logs a warning for an unknown name and runs with the
    notebook's default, which would silently publish the wrong experiment.
    """
    declared = notebook_parameters(source)
    if not declared:
        raise DbexpError(
            f"notebook {name} has no cell tagged 'parameters' "
            f"(it must declare: {', '.join(parameters) or 'its parameters'})"
        )
    for key in parameters:
        if key not in declared:
            raise DbexpError(
                f"unknown parameter {key!r} for notebook {name}; "
                f"its parameters are: {', '.join(declared)}"
            )
    if "scale" in parameters:
        validate_scale(parameters["scale"])


def execute_chapter(
    name: str,
    parameters: dict,
    *,
    root: Path | str | None = None,
    timeout_s: float = DEFAULT_CELL_TIMEOUT_S,
    cwd: Path | str | None = None,
    log_output: bool = False,
    render_key: str | None = None,
    kernel=None,
) -> Path:
    """Execute ``notebooks/NAME.ipynb`` into ``book/NAME.ipynb``; return the output path.

    - ``parameters``: injected by papermill; each name must be declared by the
      notebook's ``parameters`` cell, else DbexpError (before anything runs).
    - ``root``: the book's root (holding _toc.yml, notebooks/, book/); default: the
      repository this package lives in.
    - ``timeout_s``: per-cell execution timeout in seconds.
    - ``cwd``: working directory of the kernel; default ``root``.
    - ``log_output``: also copy the notebook's stdout/stderr to this process's.
    - ``render_key``: recorded in the executed notebook with the files the chapter wrote beside
      it (see dbexp.book.freshness), so a later render can reuse it while nothing it read changed.
    - ``kernel``: a dbexp.book.kernels.ChapterKernel to execute in (reset first), instead of a
      kernel of its own; its working directory is the kernel's.

    On failure no output is left behind and DbexpError names the chapter and the
    failing cell's error line.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    root = Path(root).resolve() if root is not None else toc.repo_root()
    source = toc.source_notebook(root, name)
    if not source.is_file():
        known = [p.stem for p in sorted((root / toc.SOURCE_DIR).glob("*.ipynb"))]
        raise DbexpError(
            f"no notebook for chapter {name!r}: {source} does not exist"
            + (f"; notebooks are: {', '.join(known)}" if known else "")
        )
    check_parameters(name, source, parameters)
    if not timeout_s or timeout_s <= 0:
        raise DbexpError(f"timeout_s must be a positive number of seconds, not {timeout_s!r}")

    dest = toc.executed_notebook(root, name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"dbexp-{name}-") as tmpdir:
        tmp = Path(tmpdir) / f"{name}.ipynb"
        kernel_log = kernel.log if kernel is not None else Path(tmpdir) / "kernel-stderr.log"
        token = _KERNEL_STDERR.set(kernel_log)
        try:
            papermill.execute_notebook(
                str(source),
                str(tmp),
                parameters=dict(parameters),
                kernel_name=KERNEL_NAME,
                language="python",
                cwd=str(Path(cwd).resolve() if cwd is not None else root),
                execution_timeout=int(max(1, round(timeout_s))),
                progress_bar=False,
                log_output=log_output,
                # Measuring, the notebook is written as each cell starts and ends (a cell that times
                # out hours later is named); rendering, only when it ends or fails: each write
                # serializes every chart so far, about a fifth of a render's time
                request_save_on_cell_execute=bool(parameters.get("run", True)),
                kernel_manager_class=_pinned_kernel_manager_class(),
                **(kernel.prepare() if kernel is not None else {}),
            )
        except PapermillExecutionError as exc:
            raise DbexpError(
                f"chapter {name} failed in {_cell_label(source, exc.cell_index, exc.source, exc.exec_count)}: "
                f"{exc.ename}: {_one_line(exc.evalue)}"
            ) from None
        except TimeoutError:  # nbclient's CellTimeoutError
            raise DbexpError(
                f"chapter {name}: {_started_cell_label(tmp, source)} ran longer "
                f"than the per-cell timeout of {timeout_s:g} s"
            ) from None
        except DbexpError:
            raise
        except Exception as exc:  # a dead kernel, a kernel that did not start, ...
            hint = _last_line(kernel_log)
            raise DbexpError(
                f"chapter {name} failed in {_started_cell_label(tmp, source)}: "
                f"{type(exc).__name__}: {_one_line(exc)}" + (f" (kernel: {hint})" if hint else "")
            ) from None
        finally:
            _KERNEL_STDERR.reset(token)

        nb = nbformat.read(tmp, as_version=4)
        _finalize(nb, dest)
        if render_key is not None:
            from dbexp.book import freshness

            freshness.stamp(nb, root, name, render_key)
        partial = dest.with_name(f".{dest.name}.partial")
        nbformat.write(nb, partial)
        os.replace(partial, dest)
    return dest


# how long an interrupted chapter's kernel may take to remove the servers its cell started (a sweep's unwinding:
# its run marked interrupted, each server stopped and removed; a group holds up to 20 servers at default)
STOP_WAIT_S = 180


def interrupt_chapters(wait_s: float = STOP_WAIT_S) -> int:
    """Interrupt the chapter kernels this process started, as Jupyter's own interrupt does (SIGINT: the running
    cell's sweep marks its run interrupted and removes its servers; an idle kernel ignores it), and wait until
    the servers each one started are gone (their containers carry its pid as ``dbexp.owner``), ``wait_s`` at most.
    A kernel runs in a session of its own and ends with the process that started it: neither ^C at the terminal
    nor a SIGTERM of `dbexp book` reaches its cell, and ended with the command it would leave its servers running.
    Returns how many kernels were interrupted."""
    import signal

    import psutil

    from dbexp.waits import poll

    kernels = []
    for child in psutil.Process().children(recursive=True):
        try:
            if any("ipykernel" in part for part in child.cmdline()):
                child.send_signal(signal.SIGINT)
                kernels.append(child.pid)
        except psutil.Error:  # gone in between
            continue
    if kernels:
        from dbexp.engine import LABEL, client

        def gone() -> bool:
            return not any(client().containers.list(all=True, sparse=True,
                                                    filters={"label": [LABEL, f"dbexp.owner={pid}"]})
                           for pid in kernels)
        poll(gone, wait_s, interval_s=0.5)
    return len(kernels)


def _finalize(nb, dest: Path) -> None:
    """Tidy an executed notebook before it is published."""
    meta = nb.metadata.get("papermill")
    if isinstance(meta, dict):
        meta["output_path"] = str(dest)
    # Saved ipywidgets state (a tqdm.notebook progress bar, say) makes myst-nb add
    # require.js and the widget manager from a CDN to the page: with no internet it
    # fails, and with require.js present Altair loads vega from the CDN too.
    nb.metadata.pop("widgets", None)
    # Neither parameters cell is part of the page: the notebook's own shows its defaults
    # (scale = "smoke" above default-scale data), and the one papermill injected shows how
    # the book was built, not what was measured (each chapter states its scale, servers,
    # repeats and durations from the runs themselves). Both stay in book/NAME.ipynb,
    # tagged remove-cell, so the executed notebook still records what ran.
    for cell in nb.cells:
        tags = list(cell.get("metadata", {}).get("tags", []))
        if {"parameters", "injected-parameters"} & set(tags) and "remove-cell" not in tags:
            cell.metadata["tags"] = [*tags, "remove-cell"]


def _pinned_kernel_manager_class():
    """A kernel manager whose ``python3`` kernel is always this interpreter.

    jupyter_client takes the first ``python3`` kernelspec on its search path:
    directories in $JUPYTER_PATH, and the user's (~/.local/share/jupyter) outside a
    venv, come before the venv's own, so a kernel registered by some other Python
    (without dbexp) could run the chapters. This one resolves ``python3`` to
    ipykernel under ``sys.executable`` and needs no registration (a fresh venv in
    CI works as is).
    """
    global _PINNED
    if _PINNED is None:
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import AsyncKernelManager
        from traitlets import default

        class _ThisPythonKernelSpecs(KernelSpecManager):
            @default("kernel_dirs")
            def _kernel_dirs_default(self):
                return []  # only the native kernel: ipykernel under sys.executable

        class PinnedKernelManager(AsyncKernelManager):
            @default("kernel_spec_manager")
            def _kernel_spec_manager_default(self):
                return _ThisPythonKernelSpecs(data_dir=self.data_dir)

            async def start_kernel(self, **kw):
                kw["extra_arguments"] = [*kw.get("extra_arguments", []),
                                         f"--IPKernelApp.exec_lines={SKIP_IRI_GRAMMARS}"]
                # The kernel process's own stderr (ipykernel's start-up warnings, a
                # crash) goes to a log, not the terminal; cell output is unaffected.
                log = _KERNEL_STDERR.get()
                if log is None or "stderr" in kw:
                    return await super().start_kernel(**kw)
                with open(log, "ab") as stderr:  # the child keeps its own descriptor
                    kw["stderr"] = stderr
                    return await super().start_kernel(**kw)

        _PINNED = PinnedKernelManager
    return _PINNED


_PINNED = None
_KERNEL_STDERR: contextvars.ContextVar = contextvars.ContextVar("dbexp_kernel_stderr", default=None)


def _one_line(value) -> str:
    text = str(value).strip()
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= 300 else line[:297] + "..."


def _started_cell_label(tmp: Path, source: Path) -> str:
    """The label (:func:`_cell_label`) of the last cell papermill started, from the executed notebook it saved
    when the engine stopped (papermill's metadata of each cell: its status). Only a cell that failed makes
    papermill add its error-marker cells, and that failure is labelled from papermill's error instead."""
    try:
        nb = nbformat.read(tmp, as_version=4)
    except Exception:
        return "a cell"
    started = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.get("metadata", {}).get("papermill", {}).get("status") not in (None, "pending")
    ]
    if not started:
        return "a cell"
    cell = nb.cells[started[-1]]
    return _cell_label(source, started[-1], cell.get("source", ""), cell.get("execution_count"))


def _cell_label(source: Path, index: int | None, text: str | None, execution_count: int | None) -> str:
    """'cell 4 of notebooks/x.ipynb (In [3]) `first line of its source`'.

    ``index`` counts the executed notebook's cells, which include the cell papermill injected; the label
    counts the source notebook's cells from 1, as an editor does: the source's cell with the same text at
    ``index`` or just before it (after the injected cell).
    """
    if index is None:
        return "a cell"
    number = index + 1
    try:
        cells = nbformat.read(source, as_version=4).cells
    except Exception:
        cells = []
    for candidate in (index - 1, index):
        if 0 <= candidate < len(cells) and cells[candidate].get("source") == text:
            number = candidate + 1
            break
    label = f"cell {number} of {source.parent.name}/{source.name}"
    if execution_count is not None:
        label += f" (In [{execution_count}])"
    first = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
    if first:
        label += f" `{first if len(first) <= 60 else first[:57] + '...'}`"
    return label


def _last_line(path: Path) -> str:
    try:
        lines = [l.strip() for l in path.read_text(errors="replace").splitlines() if l.strip()]
    except OSError:
        return ""
    lines = [l for l in lines if "without encryption" not in l]
    return _one_line(lines[-1]) if lines else ""


__all__ = ["execute_chapter", "check_parameters", "interrupt_chapters", "notebook_parameters",
           "DEFAULT_CELL_TIMEOUT_S"]
