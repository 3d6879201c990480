"""A server under valgrind's callgrind, in its own container: what is mounted, how its command is run.

valgrind is Debian's package on this host (``make host`` installs it, the standard way), mounted
read-only into the container: ``/usr/bin/valgrind.bin`` (the launcher) and ``/usr/libexec/valgrind``
(the tools, statically linked, and the preloaded helpers), found through ``VALGRIND_LIB``. Mounted
rather than installed in each image because one valgrind then counts every server: the images stay
as they are (an image's own valgrind would differ by Debian suite: bookworm's 3.19 under 5.7, 8.0,
10.11 and PostgreSQL, sid's under 9.7 and 11.8, and the counts of two versions would come from two
instrumentations), and the sid-based images run bookworm's launcher on their newer glibc. What 3.19
does not know on them is set aside by the flavor's ``callgrind`` capability (native AIO off:
sid's libaio waits with io_pgetevents, a system call 3.19 does not handle; MariaDB 11.8's address
space reservation for the buffer pool bounded). The launcher is run directly, not Debian's
``/usr/bin/valgrind`` script: that script only adds environment for debugging memory
(``GLIBCXX_FORCE_NEW``, a debug library path), which would change what the counted server does.

The container's ``PATH`` starts with a folder of this host mounted read-write at :data:`WORK`, whose
one script is named as the server's command (``mysqld``, ``postgres``). The image's entrypoint
prepares its data directory as always (``--initialize`` and initdb run natively), then runs that name,
and the script runs the image's own binary under valgrind, with :data:`VALGRIND_OPTS`-style options
taken from the environment. While a file ``native`` lies in that folder the script runs the server
natively instead: a counted server starts natively, its tables are loaded at full speed, then the
file is removed and the container restarted (same data directory) under valgrind
(dbexp.metrics.callgrind.instrument). callgrind writes its output files into the same folder (``out/``), where this host reads
them.

What is counted is the flavor's business (``dbexp.servers.capabilities.Callgrind``): collection is on
only inside its entry function (``--toggle-collect``, ``--collect-atstart=no``), so that logins,
background threads and timers are not counted; where one process serves every connection (MySQL,
MariaDB) a statement of its own marks the end of a window (``--dump-before`` its function: callgrind
writes what it counted since the last mark). The simulated caches, where asked for, are fixed here
(:data:`CACHES`) instead of read from the host's CPU, so that their misses are the same on every
machine.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from dbexp import process
from dbexp.errors import DbexpError, choices
from dbexp.servers.config import UNDER
from dbexp.waits import poll

MOUNT = "/opt/dbexp-valgrind"  # the host's valgrind, read-only
WORK = "/opt/dbexp-callgrind"  # this server's folder on the host, read-write: the script, the switch, the output
# Where Debian's package puts the launcher (/usr/bin/valgrind is a script that runs it) and the tools;
# the second of each is where other packagings of valgrind put them
LAUNCHERS = ("/usr/bin/valgrind.bin", "/usr/bin/valgrind")
LIBS = ("/usr/libexec/valgrind", "/usr/lib/x86_64-linux-gnu/valgrind")
# Simulated caches (--cache-sim=yes): a first-level instruction and data cache of 32 KiB, 8-way, and a
# last-level cache of 8 MiB, 16-way, 64-byte lines; valgrind would otherwise read the host CPU's (on
# one of this project's VMs: a 48 KiB 12-way D1 and a 512 MiB "LL" from a 384 MiB L3).
CACHES = ("--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64")
# What each way of running under valgrind adds to callgrind's options (ServerConfig.under).
MODES: dict[str, tuple[str, ...]] = {
    "callgrind": (),  # instructions only
    "callgrind-sim": ("--cache-sim=yes", "--branch-sim=yes", *CACHES),  # and data accesses, misses, branches
}
assert tuple(MODES) == UNDER, "dbexp.servers.config.UNDER lists the modes of MODES"
START_TIMEOUT_S = 900  # a server's start under valgrind: MySQL 9.7's took 32 s here, 30 to 60 times its native one

# --- uprobes and valgrind exclude each other on a host ----------------------------------------------------
# A uprobe writes a breakpoint (int3) into every process that maps the probed file, and the containers of one image map
# the same file (those of one base layer share its libc too). A native process traps on it in the kernel and goes on;
# valgrind runs the program from its own translation of the program's bytes, so the breakpoint reaches the program as
# a SIGTRAP and kills it. Seen here: a PostgreSQL 16 backend under callgrind died the moment bpftrace attached a uprobe
# to GetSnapshotData of another PostgreSQL 16 server, and its postmaster restarted every backend ("server closed the
# connection unexpectedly"; twice in make test, where one worker's chapter probed while another's counted). So a host
# lock is held exclusively while a server runs under valgrind (Valgrind.exclude_probes, until its close) and shared
# while bpftrace's uprobes are attached (probes_allowed): either waits for the other.
PROBES_LOCK = Path(tempfile.gettempdir()) / "dbexp-uprobes-valgrind.lock"
PROBES_WAIT_S = 1800.0  # the longest wait for the other kind to end (a counted part under valgrind: minutes)
_HELD = {"fd": None, "mode": None, "count": 0}  # this process's hold (one lock file description per process)
_HELD_GUARD = threading.Lock()


def _take(mode: str, what: str) -> None:
    with _HELD_GUARD:
        if _HELD["count"]:
            if _HELD["mode"] != mode:  # this very process would wait for itself
                held = "a server under valgrind" if _HELD["mode"] == "ex" else "uprobes attached"
                raise DbexpError(f"{what} while this process has {held}: a uprobe would kill the server under "
                                 "valgrind (its breakpoint reaches it as SIGTRAP); end one before the other")
            _HELD["count"] += 1
            return
        fd = os.open(PROBES_LOCK, os.O_RDWR | os.O_CREAT, 0o666)
        flag = (fcntl.LOCK_EX if mode == "ex" else fcntl.LOCK_SH) | fcntl.LOCK_NB

        def locked() -> bool:
            try:
                fcntl.flock(fd, flag)
                return True
            except BlockingIOError:
                return False

        if not poll(locked, PROBES_WAIT_S, 0.2):
            os.close(fd)
            other = "uprobes attached" if mode == "ex" else "a server under valgrind"
            raise DbexpError(f"{what}: waited {PROBES_WAIT_S:g} s for {PROBES_LOCK}, held by another process on this "
                             f"host with {other}")
        _HELD.update(fd=fd, mode=mode, count=1)


def _give(mode: str) -> None:
    with _HELD_GUARD:
        if not _HELD["count"] or _HELD["mode"] != mode:
            return
        _HELD["count"] -= 1
        if not _HELD["count"]:
            fcntl.flock(_HELD["fd"], fcntl.LOCK_UN)
            os.close(_HELD["fd"])
            _HELD.update(fd=None, mode=None)


class probes_allowed:
    """``with probes_allowed(what):`` around bpftrace's uprobes: waits while a server on this host runs under
    valgrind (a one-line DbexpError after PROBES_WAIT_S, or at once where this process runs it)."""

    def __init__(self, what: str):
        self.what = what

    def __enter__(self) -> "probes_allowed":
        _take("sh", f"uprobes on {self.what}")
        return self

    def __exit__(self, *exc) -> None:
        _give("sh")


SCRIPT = """#!/bin/sh
# dbexp: the server's command, run under valgrind (dbexp/servers/valgrind.py); written for one container.
name=${0##*/}
real=$(PATH="$DBEXP_IMAGE_PATH" command -v "$name") || {
    echo "dbexp-valgrind: no $name on the image's PATH ($DBEXP_IMAGE_PATH)" >&2; exit 127; }
for arg in "$@"; do
    case "$arg" in --initialize*|--help|--version|-V|--describe-config) exec "$real" "$@" ;; esac
done
[ -e WORK/native ] && exec "$real" "$@"
exec MOUNT/valgrind.bin --tool=callgrind "$real" "$@"
""".replace("WORK", WORK).replace("MOUNT", MOUNT)


def host_files() -> tuple[str, str]:
    """This host's valgrind launcher (an executable, not a script) and tools folder, or a one-line error
    saying how to install valgrind."""
    launcher = next((p for p in LAUNCHERS if os.path.isfile(p) and _is_elf(p)), None)
    lib = next((p for p in LIBS if os.path.isdir(p)), None)
    if launcher is None or lib is None:
        raise DbexpError(f"valgrind is not installed on this host (no launcher among {', '.join(LAUNCHERS)} or no "
                         f"tools among {', '.join(LIBS)}): run `make host` (Debian: apt-get install valgrind)")
    return launcher, lib


def _is_elf(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def host_valgrind() -> str:
    """This host's valgrind version ('valgrind-3.19.0'), or a one-line error saying how to install it."""
    launcher, lib = host_files()
    done = process.run([launcher, "--version"], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "VALGRIND_LIB": lib})
    if done.returncode != 0 or not done.stdout.startswith("valgrind"):
        raise DbexpError(f"{launcher} --version failed (exit {done.returncode}): "
                         f"{(done.stderr or done.stdout).strip()[-200:]}")
    return done.stdout.strip()


def counting_settings(flavor, image, requested: dict[str, str]) -> dict[str, str]:
    """The flavor's settings for a counted server (its ``callgrind`` capability) that this version knows,
    given those ``requested`` (which the caller puts after these, so that they win)."""
    from dbexp.servers.options import known_options

    known = known_options(flavor, image.ref, image.id)
    wanted = flavor.capability("callgrind").settings(requested)
    return {k: v for k, v in wanted.items() if flavor.knows_option(k, known)}


def image_path(image_ref: str) -> str:
    """The PATH the image's own environment sets (the script looks the server's binary up in it)."""
    from dbexp.engine import client

    for entry in client().images.get(image_ref).attrs["Config"].get("Env") or []:
        if entry.startswith("PATH="):
            return entry[len("PATH="):]
    return "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass
class Valgrind:
    """One container's valgrind: the options, the host folder mounted at :data:`WORK`, the switch."""

    mode: str  # a key of MODES
    binary: str  # the server's command name, which the script stands in for
    options: tuple[str, ...]  # callgrind's options (the tool itself is named by the script)
    entry: str  # the function collection is on inside (--toggle-collect)
    version: str  # valgrind's, e.g. 'valgrind-3.19.0'
    command: tuple[str, ...] = ()  # the server's command, which the script runs under valgrind
    work: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="dbexp-callgrind-")))
    _excluding: bool = field(default=False, repr=False, compare=False)  # holds PROBES_LOCK exclusively

    @classmethod
    def for_server(cls, mode: str, flavor, command: list[str]) -> "Valgrind":
        """The valgrind of a server of ``flavor`` started with ``command`` (its first word the binary the
        script stands in for); its folder made, the server set to start natively."""
        if mode not in MODES:
            raise DbexpError(f"bad mode {mode!r} to run a server under valgrind: valid are {choices(MODES)}")
        cap = flavor.capability("callgrind")
        version = host_valgrind()
        options = ["--collect-atstart=no", f"--toggle-collect={cap.entry}", "--vgdb=no",
                   f"--callgrind-out-file={WORK}/out/callgrind.out.%p", *MODES[mode]]
        if cap.marker:
            options.append(f"--dump-before={cap.marker}")
        bad = [o for o in options if any(c.isspace() for c in o)]
        if bad:  # valgrind splits VALGRIND_OPTS at white space
            raise DbexpError(f"bad valgrind option {bad[0]!r}: options cannot hold white space")
        under = cls(mode, os.path.basename(command[0]), tuple(options), cap.entry, version, tuple(command))
        try:
            under.work.chmod(0o755)
            out = under.work / "out"
            out.mkdir()
            out.chmod(0o777)  # the server's own user (mysql, postgres) writes there
            script = under.work / under.binary
            script.write_text(SCRIPT)
            script.chmod(0o755)
            under.native = True
        except BaseException:
            under.close()
            raise
        return under

    @property
    def out(self) -> Path:
        """Where callgrind writes its output files, on this host."""
        return self.work / "out"

    @property
    def native(self) -> bool:
        """Whether the server's next start runs natively (not under valgrind)."""
        return (self.work / "native").exists()

    @native.setter
    def native(self, value: bool) -> None:
        flag = self.work / "native"
        if value:
            flag.touch()
        elif flag.exists():
            flag.unlink()

    def environment(self, path: str) -> dict[str, str]:
        """The container's environment for an image whose own PATH is ``path``."""
        return {"PATH": f"{WORK}:{path}", "DBEXP_IMAGE_PATH": path, "VALGRIND_LIB": f"{MOUNT}/lib",
                "VALGRIND_OPTS": " ".join(self.options)}

    def volumes(self) -> list[tuple[str, str, str]]:
        """Bind mounts (host path, container path, mode): valgrind read-only, the folder read-write."""
        launcher, lib = host_files()
        return [(launcher, f"{MOUNT}/valgrind.bin", "ro"), (lib, f"{MOUNT}/lib", "ro"), (str(self.work), WORK, "rw")]

    def command_line(self) -> str:
        """What runs the server, as a person would type it (for provenance): valgrind's version, then
        valgrind's command line (the image's entrypoint runs it as the server's user)."""
        return " ".join([f"{self.version}:", "valgrind", "--tool=callgrind", *self.options, *self.command])

    def readable(self, server) -> None:
        """Make the output files readable by this process (the server's user wrote them, mode 0600):
        nothing to do for root, else a chmod inside the container."""
        if os.geteuid() == 0:
            return
        code, out = server.container.exec_run(["chmod", "-R", "a+rX", f"{WORK}/out"], user="0")
        if code != 0:
            raise DbexpError(f"could not make callgrind's output readable: {out.decode(errors='replace')[-200:]}")

    def exclude_probes(self) -> None:
        """Before the server runs under valgrind: no uprobe on this host until :meth:`close` (see PROBES_LOCK)."""
        if not self._excluding:
            _take("ex", f"{self.binary} under valgrind")
            self._excluding = True

    def close(self) -> None:
        """Remove the folder (the container is gone: nothing writes there any more); uprobes allowed again."""
        if self._excluding:
            self._excluding = False
            _give("ex")
        if self.work.exists():
            shutil.rmtree(self.work)
