"""The same server binary as a bare host process, pinned with taskset: the control for
"does the container change what we measure?". Offline builds of the flavors in :data:`COMMANDS`
only: how each initializes a data directory and starts outside its image lives here, beside the
start itself (the flavor gives the server's own arguments, :meth:`Flavor.command`)."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

from dbexp import process
from dbexp.errors import DbexpError, choices
from dbexp.servers.config import ServerConfig
from dbexp.servers.flavor import Flavor
from dbexp.servers.lifecycle import Server, free_port, prepare_build, stop_process, wait_ready
from dbexp.servers.postgres import INITDB_ARGS

HOMES = Path(tempfile.gettempdir()) / "dbexp-homes"  # reachable by a non-root server user
# Options of the image's my.cnf that name paths of the image; a bare process gets its own.
PATH_OPTIONS = ("basedir", "datadir", "socket", "pid-file", "pid_file", "secure-file-priv", "secure_file_priv")
BARE_USER = "dbexp"  # PostgreSQL refuses to run as root


def mysql_command(flavor: Flavor, build, port: int, settings: dict[str, str], home: Path, data: Path,
                  run: Path) -> list[str]:
    """The image's own my.cnf minus its paths, the same first-start account set-up (init-root.sql)."""
    from dbexp.images.recipes import recipe_dir

    recipe = recipe_dir(build.recipe)
    lines = [line for line in (recipe / "my.cnf").read_text().splitlines()
             if not line.startswith("!include") and line.split("=")[0].strip() not in PATH_OPTIONS]
    defaults = run / "my.cnf"
    defaults.write_text("\n".join(lines) + "\n")
    mysqld = str(home / "bin" / "mysqld")
    base = [f"--defaults-file={defaults}", f"--basedir={home}", f"--datadir={data}", "--user=root",
            f"--secure-file-priv={run}"]
    proc = process.run([mysqld] + base + ["--initialize-insecure", f"--log-error={run / 'init.err'}"],
                       capture_output=True, text=True)
    if proc.returncode != 0:
        raise DbexpError(f"bare mysqld --initialize-insecure failed: {(run / 'init.err').read_text()[-300:]}")
    return [mysqld] + base + [f"--socket={run / 'mysqld.sock'}", f"--pid-file={run / 'mysqld.pid'}",
                              f"--init-file={recipe / 'init-root.sql'}"] + flavor.command(port, settings)[1:]


def postgres_command(flavor: Flavor, build, port: int, settings: dict[str, str], home: Path, data: Path,
                     run: Path) -> list[str]:
    """initdb as a non-root user with the image's locale where this host has it, then postgres."""
    uid, gid = _ensure_user()
    for path in (data, run):
        os.chown(path, uid, gid)
    os.chmod(data, 0o700)
    env = dict(os.environ, LANG=_locale())
    proc = process.run(_as_user(uid, gid) + [str(home / "bin" / "initdb"), "-D", str(data), "-U", "postgres",
                                             "--auth=trust", "-E", "UTF8", "--no-sync", *INITDB_ARGS],
                       capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise DbexpError(f"bare initdb failed: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return (_as_user(uid, gid) + [str(home / "bin" / "postgres"), "-D", str(data), "-k", str(run)]
            + flavor.command(port, settings)[1:])


# Initialize ``data`` and return the command that starts the build's binary from ``home``, by flavor
# name (exactly: MariaDB's Debian package is installed inside its image, there is no archive to unpack).
COMMANDS: dict[str, Callable[..., list[str]]] = {"mysql": mysql_command, "postgres": postgres_command}


def supports(flavor: Flavor) -> bool:
    """Whether an offline build of this flavor can run as a bare host process (calibration's control)."""
    return flavor.name in COMMANDS


@contextlib.contextmanager
def running(config: ServerConfig) -> Iterator[Server]:
    """Start the build's own binary on this host, pinned to ``config.cpuset``; removed on exit."""
    from dbexp import images

    build, flavor, image = prepare_build(config)
    if build.source != "offline" or not supports(flavor):
        raise DbexpError(f"bare runs need an offline build of a flavor that runs as a host process "
                         f"({choices(COMMANDS)}), not {build.spec}")
    home = images.server_home(build, under=HOMES)
    tmp = Path(tempfile.mkdtemp(prefix=f"dbexp-bare-{build.flavor}-"))
    os.chmod(tmp, 0o755)
    data, run = tmp / "data", tmp / "run"
    data.mkdir()
    run.mkdir()
    server = Server(config, build, flavor, image, free_port(), data_dir=str(data), log_path=run / "server.log")
    log = open(server.log_path, "w+")
    try:
        cmd = COMMANDS[flavor.name](flavor, build, server.port, config.settings, home, data, run)
        pin = ["taskset", "-c", config.cpuset] if config.cpuset else []
        server.started_at = time.monotonic()
        # tied to the lab (dbexp.process): it dies with a harness killed outright, or dbexp clean finds it
        server.process = process.Child(pin + cmd, group=True, stdout=log, stderr=subprocess.STDOUT)
        wait_ready(server)
        yield server
    finally:
        if server.process is not None:
            stop_process(server.process, flavor.stop_signal)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _ensure_user() -> tuple[int, int]:
    try:
        pw = pwd.getpwnam(BARE_USER)
    except KeyError:
        if os.geteuid() != 0:
            raise DbexpError(f"bare PostgreSQL needs a non-root user {BARE_USER!r}; create it (useradd) first")
        process.run(["useradd", "--system", "--no-create-home", BARE_USER], check=True)
        pw = pwd.getpwnam(BARE_USER)
    return pw.pw_uid, pw.pw_gid


def _as_user(uid: int, gid: int) -> list[str]:
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--init-groups"]


def _locale() -> str:
    """The image's locale (en_US.utf8) where this host has it, else C.UTF-8."""
    have = process.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
    return "en_US.utf8" if "en_US.utf8" in have else "C.UTF-8"
