"""One kernel that executes several chapters in turn, when the book is rendered from data/.

Rendering only reads data/, and each chapter's notebook spends more time starting a kernel and
importing pandas, scipy, Altair, duckdb and dbexp than it spends on its own cells (about 3.5 s of
CPU a chapter on a 2-CPU VM). A build that renders therefore gives each of its parallel workers one
kernel for all the chapters it executes. Before each chapter the kernel is put back to the state
a fresh one starts in, as far as a chapter can tell: an empty namespace (IPython's reset: every
name, the output history and the display hook's cache), the working directory the build gave it,
and no warning remembered as already shown. Imported modules stay imported: that is the saving,
and they hold no chapter's results (a chapter's computed tables are memoized on its own Results).

Measuring (``run=True``) keeps one fresh kernel per chapter: those run for minutes, servers and
all, and the start-up cost does not matter there.

The engine, and what it relies on
---------------------------------
papermill executes a chapter in a ChapterKernel through :class:`ChapterKernelEngine`, a papermill engine
(papermill's documented extension point: a subclass of ``papermill.engines.Engine`` implementing
``execute_managed_notebook``, registered under ENGINE with ``papermill.engines.papermill_engines.register``
and chosen by ``papermill.execute_notebook(engine_name=ENGINE, kernel=...)``, whose extra keyword arguments
papermill hands to the engine). The engine executes the cells with nbclient's public client:
``nbclient.NotebookClient(nb, km=...)`` given the ChapterKernel's kernel manager (nbclient then starts no
kernel: the manager has one, and it leaves it running, since it does not own it), its ``setup_kernel()``
context (which connects a client of its own to that kernel, as ``NotebookClient.kc``, read here and closed
after the chapter), ``execute_cell`` and ``wait_for_reply``; the reset goes over that client with jupyter_client's
``execute_interactive`` (silent, not in the history); around each cell it calls the papermill
execution manager's ``cell_start``, ``cell_exception`` and ``cell_complete``, as papermill's own engine does,
so that the executed notebook carries papermill's metadata and papermill raises its
``PapermillExecutionError`` for a failed cell. It uses no module of papermill's beyond ``papermill.engines``
and ``papermill.exceptions``, and sets no attribute of any library's objects.

Every name used is listed in RELIED_ON, and tests/unit/test_book_freshness.py checks each against the
installed papermill and nbclient (a failure names the name that changed). A client connected per chapter
waits about 0.2 s for the kernel's messages to reach it (jupyter_client's ``wait_for_ready``), a second or so
of a whole render.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from papermill.engines import Engine, papermill_engines

from dbexp.errors import DbexpError

START_TIMEOUT_S = 60

# Run in the kernel before each chapter but the first (silently: not stored in its history, and not added to
# the notebook).
RESET = """\
get_ipython().reset(new_session=True)  # numbering outputs from 1 again
import os as _os, warnings as _warnings
_os.chdir({cwd!r})
_warnings.onceregistry.clear()
getattr(_warnings, "_filters_mutated", lambda: None)()  # each module's "already shown" registry
del _os, _warnings
"""

ENGINE = "dbexp-chapter-kernel"

# What this module and execute.py use of papermill, nbclient and jupyter_client: (module, attribute path), each public API
# (documented, or a method of a documented class). tests/unit/test_book_freshness.py checks that each still exists
# in the installed versions and that neither module imports another name of theirs.
RELIED_ON = (
    ("papermill", "execute_notebook"),  # engine_name= and extra keyword arguments for the engine
    ("papermill", "inspect_notebook"),  # execute.py: the parameters a notebook declares
    ("papermill.engines", "Engine"),  # the base class papermill's docs tell engines to extend
    ("papermill.engines", "Engine.execute_managed_notebook"),  # the one method an engine implements
    ("papermill.engines", "papermill_engines.register"),  # registering an engine by name (the registry's method)
    ("papermill.engines", "NotebookExecutionManager.cell_start"),  # the execution manager an engine is handed:
    ("papermill.engines", "NotebookExecutionManager.cell_exception"),  # its per-cell bookkeeping, as papermill's
    ("papermill.engines", "NotebookExecutionManager.cell_complete"),  # own nbclient engine calls it
    ("papermill.exceptions", "PapermillExecutionError"),
    ("nbclient", "NotebookClient"),
    ("nbclient", "NotebookClient.setup_kernel"),  # starts no kernel when km has one; connects self.kc
    ("nbclient", "NotebookClient.execute_cell"),
    ("nbclient", "NotebookClient.wait_for_reply"),
    ("nbclient.exceptions", "CellExecutionError"),
    ("jupyter_client", "AsyncKernelClient.execute_interactive"),  # the reset, over the client nbclient connected
)


class ChapterKernel:
    """A kernel (this interpreter's ipykernel, see execute._pinned_kernel_manager_class) started on
    first use in ``cwd``, reset before each chapter after the first, shut down by ``close``; papermill
    executes chapters in it through ChapterKernelEngine (registered as ENGINE).

    Use it from one thread: its manager's and clients' coroutines run on that thread's event loop."""

    def __init__(self, cwd: Path | str):
        self.cwd = str(Path(cwd).resolve())
        self._dir = tempfile.TemporaryDirectory(prefix="dbexp-kernel-")
        self.log = Path(self._dir.name) / "kernel-stderr.log"  # the kernel process's own stderr
        self.manager = None
        self.chapters = 0  # executed in it so far

    def prepare(self) -> dict:
        """Start the kernel (first use); papermill's engine arguments that execute the next chapter in it
        (the engine resets it first when a chapter ran in it before)."""
        from jupyter_core.utils import run_sync

        from dbexp.book import execute

        if self.manager is None:
            manager = execute._pinned_kernel_manager_class()(kernel_name=execute.KERNEL_NAME)
            token = execute._KERNEL_STDERR.set(self.log)
            try:
                run_sync(manager.start_kernel)(cwd=self.cwd)
            finally:
                execute._KERNEL_STDERR.reset(token)
            self.manager = manager
        return {"engine_name": ENGINE, "kernel": self}

    def close(self) -> None:
        from jupyter_core.utils import run_sync

        try:
            if self.manager is not None and self.manager.has_kernel:
                run_sync(self.manager.shutdown_kernel)(now=True)
        finally:
            self.manager = None
            self._dir.cleanup()

    def __enter__(self) -> "ChapterKernel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ChapterKernelEngine(Engine):
    """papermill's engine for a chapter executed in a ChapterKernel (``kernel``): the cells run through
    nbclient's client on the kernel's manager, the kernel reset first if a chapter ran in it before. What
    papermill's nbclient engine would also do and this one does not: copy the outputs to a log
    (``log_output``, ``stdout_file``, ``stderr_file``: refused) and save the notebook while a cell runs."""

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None,
                                 stderr_file=None, start_timeout=START_TIMEOUT_S, execution_timeout=None,
                                 kernel: ChapterKernel | None = None, **kwargs):
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError

        if kernel is None or kernel.manager is None:
            raise DbexpError(f"papermill's engine {ENGINE} needs a started ChapterKernel (kernel=...)")
        if log_output or stdout_file or stderr_file:
            raise DbexpError(f"papermill's engine {ENGINE} does not copy a chapter's output to a log")
        client = NotebookClient(nb_man.nb, km=kernel.manager, timeout=execution_timeout,
                                startup_timeout=start_timeout, kernel_name=kernel_name)
        with client.setup_kernel():
            try:
                if kernel.chapters:
                    _reset(client.kc, kernel.cwd)
                kernel.chapters += 1
                info = client.wait_for_reply(client.kc.kernel_info())
                if info is not None and "language_info" in info["content"]:
                    nb_man.nb.metadata["language_info"] = info["content"]["language_info"]
                for index, cell in enumerate(nb_man.nb.cells):
                    try:
                        nb_man.cell_start(cell, index)
                        client.execute_cell(cell, index)
                    except CellExecutionError as exc:  # papermill raises its error for the cell, as usual
                        nb_man.cell_exception(nb_man.nb.cells[index], cell_index=index, exception=exc)
                        break
                    finally:
                        nb_man.cell_complete(nb_man.nb.cells[index], cell_index=index)
            finally:
                client.kc.stop_channels()  # this chapter's client; the kernel stays for the next chapter
        return nb_man.nb


def _reset(kc, cwd: str) -> None:
    """Run RESET in the kernel over ``kc`` (jupyter_client's execute_interactive: silently, not stored in its
    history, nothing added to any notebook; nbclient's execute_cell would write the cell into the chapter's)."""
    from jupyter_core.utils import run_sync

    reply = run_sync(kc.execute_interactive)(RESET.format(cwd=cwd), silent=True, store_history=False,
                                             timeout=START_TIMEOUT_S, output_hook=lambda msg: None)
    content = reply["content"]
    if content.get("status") != "ok":
        raise DbexpError(f"could not reset the chapters' kernel: {content.get('ename')}: {content.get('evalue')}")


papermill_engines.register(ENGINE, ChapterKernelEngine)
