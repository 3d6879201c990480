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
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from dbexp.errors import DbexpError

START_TIMEOUT_S = 60

# Run in the kernel before each chapter but the first (silently: nothing is added to the notebook).
RESET = """\
get_ipython().reset(new_session=True)  # numbering outputs from 1 again
import os as _os, warnings as _warnings
_os.chdir({cwd!r})
_warnings.onceregistry.clear()
getattr(_warnings, "_filters_mutated", lambda: None)()  # each module's "already shown" registry
del _os, _warnings
"""


class ChapterKernel:
    """A kernel (this interpreter's ipykernel, see execute._pinned_kernel_manager_class) started on
    first use in ``cwd``, reset before each chapter after the first, shut down by ``close``. One client
    stays connected to it for all its chapters (a new client waits at least 0.2 s for the kernel's
    messages to reach it, twice per chapter); papermill uses it through the ENGINE registered below.

    Use it from one thread: its manager's and client's coroutines run on that thread's event loop."""

    def __init__(self, cwd: Path | str):
        self.cwd = str(Path(cwd).resolve())
        self._dir = tempfile.TemporaryDirectory(prefix="dbexp-kernel-")
        self.log = Path(self._dir.name) / "kernel-stderr.log"  # the kernel process's own stderr
        self.manager = None
        self.client = None
        self.chapters = 0  # executed in it so far

    def prepare(self) -> dict:
        """Start the kernel (first use) or reset it (a chapter ran in it before); papermill's engine
        arguments that execute the next chapter in it."""
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
            self.client = manager.client()
            self.client.start_channels()
            run_sync(self.client.wait_for_ready)(timeout=START_TIMEOUT_S)
        elif self.chapters:
            self._run(RESET.format(cwd=self.cwd))
        self.chapters += 1
        return {"engine_name": ENGINE, "kernel": self}

    def _run(self, code: str) -> None:
        from jupyter_core.utils import run_sync

        reply = run_sync(self.client.execute_interactive)(code, silent=True, store_history=False,
                                                           timeout=START_TIMEOUT_S, output_hook=lambda msg: None)
        if reply["content"].get("status") != "ok":
            content = reply["content"]
            raise DbexpError(f"could not reset the chapters' kernel: {content.get('ename')}: {content.get('evalue')}")

    def close(self) -> None:
        from jupyter_core.utils import run_sync

        try:
            if self.client is not None:
                self.client.stop_channels()
            if self.manager is not None and self.manager.has_kernel:
                run_sync(self.manager.shutdown_kernel)(now=True)
        finally:
            self.manager = self.client = None
            self._dir.cleanup()

    def __enter__(self) -> "ChapterKernel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


ENGINE = "dbexp-chapter-kernel"


def _engine():
    """papermill's nbclient engine, executing in a ChapterKernel with its connected client: nbclient
    starts neither a kernel (its manager has one) nor a client (it has one), and leaves both running."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.log import logger

    class ChapterKernelEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None,
                                     stderr_file=None, start_timeout=60, execution_timeout=None, **kwargs):
            kernel = kwargs.pop("kernel")
            for unused in ("input_path", "timeout", "startup_timeout"):  # as NBClientEngine drops them
                kwargs.pop(unused, None)
            client = PapermillNotebookClient(nb_man, km=kernel.manager, timeout=execution_timeout,
                                             startup_timeout=start_timeout, kernel_name=kernel_name, log=logger,
                                             log_output=log_output, stdout_file=stdout_file,
                                             stderr_file=stderr_file, **kwargs)
            client.kc = kernel.client
            return client.execute()

    papermill_engines.register(ENGINE, ChapterKernelEngine)


_engine()
