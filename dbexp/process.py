"""Every child process the lab starts, from its start to its end, in one place.

:class:`Child` is a ``subprocess.Popen`` that

- is **tied to the lab**: it gets ``DBEXP_LOAD=<pid of the harness>`` in its environment and, on
  Linux, dies with a SIGKILL when the thread that started it ends (PR_SET_PDEATHSIG, set by
  util-linux's ``setpriv --pdeathsig KILL`` just before it executes the command: no Python runs
  between fork and exec, which is unsafe in a threaded process). A harness killed with SIGKILL takes
  its sysbench, perf and bpftrace with it; one that still outlived its harness (another OS, a double
  fork, a set-user-ID ``sudo``, which clears the signal) is found by its marker (:func:`orphans`,
  ended by ``dbexp clean``);
- is **stopped** with a signal and a deadline (:meth:`Child.stop`) and **ended** with SIGKILL where
  it does not stop (:meth:`Child.end`), its whole process group with ``group=True``;
- is **reaped** with ``wait4``, so its CPU time and context switches (``usage``) are known once
  it has ended (the client-side figures of a sysbench run, perf's own cost).

:func:`run` runs a short command to its end the same way (``subprocess.run``, tied to the lab).
This module sits below servers, metrics and workloads (of dbexp it imports only dbexp.waits), so
each of them can start its children through it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import psutil

from dbexp.waits import poll

MARKER = "DBEXP_LOAD"


def _setpriv() -> str | None:
    found = shutil.which("setpriv")
    return os.path.realpath(found) if found else None


def tied(args: list[str]) -> list[str]:
    """``args`` run so that the process dies with the thread that starts it (where setpriv exists).
    A command that cannot be found raises FileNotFoundError here, as Popen would without setpriv."""
    setpriv = _setpriv()
    if setpriv is None:
        return list(args)
    if shutil.which(args[0]) is None:
        raise FileNotFoundError(2, "No such file or directory", args[0])
    return [setpriv, "--pdeathsig", "KILL", "--", *args]


def marked(env: dict | None = None) -> dict:
    """``env`` (default: this process's) with the lab's marker naming this process."""
    return dict(os.environ if env is None else env, **{MARKER: str(os.getpid())})


def run(args: list[str], *, env: dict | None = None, **options) -> subprocess.CompletedProcess:
    """``subprocess.run`` of a command tied to the lab (see the module's notes)."""
    return subprocess.run(tied(args), env=marked(env), **options)


class Child(subprocess.Popen):
    """A child process tied to the lab (``tie=False``: an ordinary one, e.g. a server that must
    outlive this process). With ``group=True`` it leads a new session and process group, and
    :meth:`end` kills the group. ``args`` stays the command as given (what a person would type)."""

    def __init__(self, args: list[str], *, group: bool = False, tie: bool = True, env: dict | None = None,
                 **options):
        self.group = group
        self.usage = None  # resource.struct_rusage, once reaped by reap()
        command = tied(args) if tie else list(args)
        super().__init__(command, env=marked(env) if tie else env, start_new_session=group, **options)
        self.args = list(args)
        if command[0] != args[0]:
            self._until_tied(command[0])

    def _until_tied(self, setpriv: str) -> None:
        """Return once setpriv has set the parent-death signal and executed the command (well under a
        millisecond): a thread that started the child and ended before that would leave it untied,
        since the signal follows only a parent that dies after it was set (preexec_fn set it before
        Popen returned)."""
        def executed() -> bool:
            try:
                return os.readlink(f"/proc/{self.pid}/exe") != setpriv
            except OSError:  # exited (no exe), or a set-user-ID command this process may not read
                return True

        poll(executed, 5.0, interval_s=0.0002)

    def running(self) -> bool:
        """Still running (asked without reaping it: reap() collects its exit and resource use)."""
        if self.returncode is not None:
            return False
        return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None

    def reap(self, timeout_s: float | None = None, interval_s: float = 0.05) -> bool:
        """Wait up to ``timeout_s`` (None: as long as it takes) for it to end; True once it has, with
        its exit status in ``returncode`` and its resource use in ``usage``."""
        def reaped() -> bool:
            if self.returncode is None:
                pid, status, usage = os.wait4(self.pid, os.WNOHANG)
                if pid:
                    self.returncode, self.usage = os.waitstatus_to_exitcode(status), usage
            return self.returncode is not None

        return bool(poll(reaped, float("inf") if timeout_s is None else timeout_s, interval_s))

    def send(self, sig: int) -> None:
        """Send ``sig`` (to the group with ``group=True``) unless it has been reaped already."""
        if self.returncode is None:
            (os.killpg if self.group else os.kill)(self.pid, sig)

    def stop(self, sig: int = signal.SIGINT, timeout_s: float | None = 10.0, interval_s: float = 0.05) -> bool:
        """Send ``sig`` and wait up to ``timeout_s`` for the end; False if it is still running."""
        self.send(sig)
        return self.reap(timeout_s, interval_s)

    def end(self, timeout_s: float | None = None) -> bool:
        """SIGKILL (the group's with ``group=True``) and reap; False if it was still not reaped after
        ``timeout_s`` (a process inside an uninterruptible kernel call)."""
        self.send(signal.SIGKILL)
        return self.reap(timeout_s)


def orphans() -> list[int]:
    """Processes tied to the lab whose harness no longer exists."""
    found = []
    for proc in psutil.process_iter():
        try:
            owner = proc.environ().get(MARKER)
        except (psutil.NoSuchProcess, psutil.AccessDenied):  # gone, or not ours to read
            continue
        if owner is not None and not psutil.pid_exists(int(owner)):
            found.append(proc.pid)
    return found


def end_orphans() -> int:
    """SIGKILL every orphaned process of the lab; returns how many."""
    pids = orphans()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue  # ended on its own meanwhile
    return len(pids)
