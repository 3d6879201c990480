"""Kernel tracing, set up and checked: what bpftrace and ``perf stat`` need from this host, and the
one-line reason when they cannot work.

- **tracefs** at ``/sys/kernel/tracing``: tracepoints (``sched:sched_switch``) are looked up there,
  and bpftrace writes ``uprobe_events`` there when it detaches a uprobe. A fresh machine may not have
  it mounted: then every tracepoint fails ("tracepoint not found") although uprobes attach.
  :func:`ensure` mounts it (and debugfs at ``/sys/kernel/debug``, where older tools look) when
  missing and this process is root; ``make host`` does the same.
- **Whether probing can work at all** (:func:`unavailable`): bpftrace installed, root (or
  password-less sudo), a local Docker engine (a server behind a remote ``DOCKER_HOST`` runs on a
  kernel this host cannot probe), tracefs, and a real attach of a uprobe and a tracepoint. Checked
  once per process; a chapter that cannot probe skips its probe points and says why on its page.
- **bpftrace's stderr, read** (:func:`cause`): lines known to be harmless (the RLIMIT_MEMLOCK warning
  bpftrace prints without CAP_SYS_RESOURCE, and then attaches anyway) are dropped, and the line that
  says why is kept, with what to do about it where the cause is known.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys

from dbexp.metrics.procfs import mapped_library
from dbexp import process

TRACEFS = "/sys/kernel/tracing"
DEBUGFS = "/sys/kernel/debug"

# bpftrace prints this without CAP_SYS_RESOURCE, then attaches all the same: never the cause
HARMLESS = (
    re.compile(r"couldn't set RLIMIT_MEMLOCK"),
    re.compile(r"^\s*~+\s*$"),  # the caret line under a quoted program
)
MOUNT_HINT = f"`make host` mounts it, or as root: mount -t tracefs nodev {TRACEFS}"
# (what bpftrace or perf says, what it means): the first that matches a line is the cause
KNOWN = (
    (re.compile(r"tracepoint not found: (\S+)"),
     lambda m: (f"tracepoint {m[1]} not found: tracefs is not mounted at {TRACEFS} ({MOUNT_HINT})"
                if not tracefs_mounted() else f"this kernel has no tracepoint {m[1]}")),
    (re.compile(r"File /sys/kernel/(?:debug/)?tracing/events/(\S+)/(\S+) not found"),  # perf
     lambda m: (f"tracepoint {m[1]}:{m[2]} not found: tracefs is not mounted at {TRACEFS} ({MOUNT_HINT})"
                if not tracefs_mounted() else f"this kernel has no tracepoint {m[1]}:{m[2]}")),
    (re.compile(r"open\((/sys/kernel/(?:debug/)?tracing)/\S+\): No such file"),
     lambda m: f"tracefs is not mounted at {m[1]} ({MOUNT_HINT})"),
    (re.compile(r"uprobe target file '([^']+)' does not exist"),
     lambda m: f"the binary to probe, {m[1]}, does not exist (did the server exit?)"),
    (re.compile(r"[Ll]ockdown"),
     lambda m: "the kernel is locked down (lockdown forbids BPF tracing): probes cannot attach here"),
    (re.compile(r"Operation not permitted|EPERM|[Pp]ermission denied"),
     lambda m: "not permitted: probes need root (CAP_BPF and CAP_PERFMON); run as root or with sudo"),
)


def tracefs_mounted(root: str = TRACEFS) -> bool:
    return os.path.exists(os.path.join(root, "uprobe_events")) or os.path.isdir(os.path.join(root, "events"))


def _mounted_at(path: str) -> bool:
    try:
        with open("/proc/self/mounts") as f:
            return any(line.split()[1] == path for line in f if len(line.split()) > 1)
    except OSError:
        return False


def ensure() -> str | None:
    """Mount tracefs (and debugfs) where missing; None when tracefs is there, else why it is not."""
    if tracefs_mounted():
        return None
    if os.geteuid() != 0:
        return f"tracefs is not mounted at {TRACEFS} and this process is not root ({MOUNT_HINT})"
    for fstype, where in (("debugfs", DEBUGFS), ("tracefs", TRACEFS)):
        if os.path.isdir(where) and not _mounted_at(where):
            process.run(["mount", "-t", fstype, "nodev", where], capture_output=True, text=True)
    if tracefs_mounted():
        return None
    return f"tracefs is not mounted at {TRACEFS} and mounting it failed (a container without CAP_SYS_ADMIN?)"


def cause(stderr: str, fallback: str = "") -> str:
    """One line: why bpftrace (or perf) failed, from its stderr; harmless lines never count."""
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    lines = [line for line in lines if not any(h.search(line) for h in HARMLESS)]
    for line in lines:
        for pattern, meaning in KNOWN:
            m = pattern.search(line)
            if m:
                return meaning(m)
    errors = [line for line in lines if "ERROR" in line]
    text = (errors or lines or [fallback])[0]
    return re.sub(r"^stdin:\S+\s*", "", text)[:300]


def as_root() -> list[str]:
    """The prefix that runs a tracing tool as root: nothing for root, else ``sudo -n`` (it works
    where sudo asks no password, a CI runner's; :func:`can_be_root` says whether it does)."""
    return [] if os.geteuid() == 0 else ["sudo", "-n"]


def can_be_root() -> bool:
    if os.geteuid() == 0:
        return True
    if not shutil.which("sudo"):
        return False
    return process.run(["sudo", "-n", "true"], capture_output=True).returncode == 0


def libc_path() -> str | None:
    """This process's libc, as a probe target every Linux host has."""
    return mapped_library(os.getpid(), "libc.so.6")


def _try_bpftrace(program: str, timeout_s: float = 30.0) -> str | None:
    """Run a bpftrace program that exits by itself; None if it ran clean, else the cause."""
    exe = shutil.which("bpftrace")
    try:
        done = process.run(as_root() + [exe, "-e", program], capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"bpftrace did not finish a {timeout_s:g} s check"
    if done.returncode != 0:
        return cause(done.stderr, f"bpftrace exited with {done.returncode}")
    if "ERROR" in "\n".join(l for l in done.stderr.splitlines() if not any(h.search(l) for h in HARMLESS)):
        return cause(done.stderr)
    return None


def check_uprobes() -> str | None:
    libc = libc_path()
    if libc is None:
        return "no libc mapped in this process to probe"
    # a uprobe/uretprobe pair on getpid, hit by bpftrace's own child, then exit
    return _try_bpftrace(f"uprobe:{libc}:getpid {{ @n = count(); }} uretprobe:{libc}:getpid {{ @r = count(); }} "
                         "interval:ms:200 { exit(); }")


def check_tracepoints() -> str | None:
    return _try_bpftrace("tracepoint:sched:sched_switch { @n = count(); } interval:ms:200 { exit(); }")


def check_perf_cpu(cpu: int = 0) -> str | None:
    perf = shutil.which("perf")
    if perf is None:
        return "perf is not installed (Debian: linux-perf)"
    done = process.run(as_root() + [perf, "stat", "-C", str(cpu), "-x,", "-e", "context-switches",
                                       "--", "sleep", "0.2"], capture_output=True, text=True, timeout=30)
    counted = any(line.split(",")[0].strip().isdigit() for line in done.stderr.splitlines())
    if done.returncode != 0 or not counted:
        return cause(done.stderr, f"perf stat -C {cpu} counted nothing (exit {done.returncode})")
    return None


@functools.lru_cache(maxsize=1)
def unavailable() -> str | None:
    """Why bpftrace probes cannot be used from this process (one line), or None when they can.
    Mounts tracefs first where it is missing. Checked once per process."""
    from dbexp.engine import is_local

    if not sys.platform.startswith("linux"):
        return "probes need Linux (bpftrace)"
    if not is_local():
        return "the servers run behind a remote DOCKER_HOST, on a kernel this host cannot probe"
    if shutil.which("bpftrace") is None:
        return "bpftrace is not installed (`make host`, Debian package bpftrace)"
    if not can_be_root():
        return "probes need root: run as root or with password-less sudo"
    why = ensure()
    if why:
        return why
    return check_uprobes() or check_tracepoints()


def report() -> list[tuple[str, str, bool]]:
    """(check, finding, ok) rows for `dbexp doctor`: tracefs, uprobes, tracepoints, perf stat -C."""
    rows = []
    why = ensure() if can_be_root() else (None if tracefs_mounted() else f"not mounted at {TRACEFS}")
    rows.append(("tracefs", f"mounted at {TRACEFS}" if why is None else why, why is None))
    if shutil.which("bpftrace") is None:
        rows.append(("uprobes", "bpftrace is not installed (`make host`)", False))
        rows.append(("tracepoints", "bpftrace is not installed (`make host`)", False))
    elif not can_be_root():
        rows.append(("uprobes", "need root or password-less sudo", False))
        rows.append(("tracepoints", "need root or password-less sudo", False))
    else:
        for name, check in (("uprobes", check_uprobes), ("tracepoints", check_tracepoints)):
            why = check()
            rows.append((name, "attach and count (bpftrace)" if why is None else why, why is None))
    why = check_perf_cpu()
    rows.append(("perf stat -C", "counts context switches per CPU" if why is None else why, why is None))
    return rows


def skip_note(why: str | None) -> str:
    """The sentence a chapter's page shows where its probe runs were skipped, or ''."""
    return (f"The probe runs were skipped where these results were measured, since probes cannot work "
            f"there: {why}." if why else "")
