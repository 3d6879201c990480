"""The same server binary as a bare host process, pinned with taskset: the control for
"does the container change what we measure?". Offline MySQL and PostgreSQL builds only."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

from dbexp.errors import DbexpError
from dbexp.servers.config import ServerConfig
from dbexp.servers.lifecycle import Server, free_port, prepare_build, wait_ready

BARE_USER = "dbexp"  # PostgreSQL refuses to run as root


def _ensure_user() -> tuple[int, int]:
    try:
        pw = pwd.getpwnam(BARE_USER)
    except KeyError:
        if os.geteuid() != 0:
            raise DbexpError(f"bare PostgreSQL needs a non-root user {BARE_USER!r}; create it (useradd) first")
        subprocess.run(["useradd", "--system", "--no-create-home", BARE_USER], check=True)
        pw = pwd.getpwnam(BARE_USER)
    return pw.pw_uid, pw.pw_gid


def _pin(cpuset: str | None) -> list[str]:
    return ["taskset", "-c", cpuset] if cpuset else []


def _as_user(uid: int, gid: int) -> list[str]:
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--init-groups"]


PATH_OPTIONS = ("basedir", "datadir", "socket", "pid-file", "pid_file", "secure-file-priv", "secure_file_priv")


def _mysql_defaults(run: Path) -> Path:
    """The image's own my.cnf, minus its paths and includes: the same server configuration."""
    from dbexp.images.recipes import recipe_dir

    lines = []
    for line in (recipe_dir("mysql") / "my.cnf").read_text().splitlines():
        key = line.split("=")[0].strip()
        if line.startswith("!include") or key in PATH_OPTIONS:
            continue
        lines.append(line)
    path = run / "my.cnf"
    path.write_text("\n".join(lines) + "\n")
    return path


def _mysql_cmd(server: Server, home: Path, data: Path, run: Path) -> list[str]:
    from dbexp.images.recipes import recipe_dir

    init = recipe_dir("mysql") / "init-root.sql"  # the same account set-up as the image's first start
    mysqld = str(home / "bin" / "mysqld")
    base = [f"--defaults-file={_mysql_defaults(run)}", f"--basedir={home}", f"--datadir={data}",
            "--user=root", f"--secure-file-priv={run}"]
    proc = subprocess.run([mysqld] + base + ["--initialize-insecure", f"--log-error={run / 'init.err'}"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise DbexpError(f"bare mysqld --initialize-insecure failed: {(run / 'init.err').read_text()[-300:]}")
    args = server.flavor.command(server.port, server.config.settings)[1:]
    return [mysqld] + base + [f"--socket={run / 'mysqld.sock'}", f"--pid-file={run / 'mysqld.pid'}",
                              f"--init-file={init}"] + args


def _postgres_cmd(server: Server, home: Path, data: Path, run: Path) -> list[str]:
    uid, gid = _ensure_user()
    for path in (data, run):
        os.chown(path, uid, gid)
    os.chmod(data, 0o700)
    env = dict(os.environ, LANG=_pg_locale())
    proc = subprocess.run(_as_user(uid, gid) + [str(home / "bin" / "initdb"), "-D", str(data), "-U", "postgres",
                                                "--auth=trust", "-E", "UTF8", "--no-sync"],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise DbexpError(f"bare initdb failed: {(proc.stderr or proc.stdout).strip()[-300:]}")
    args = server.flavor.command(server.port, server.config.settings)[1:]
    return _as_user(uid, gid) + [str(home / "bin" / "postgres"), "-D", str(data), "-k", str(run)] + args


def _pg_locale() -> str:
    """The image's locale (en_US.utf8) where this host has it, else C.UTF-8."""
    have = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
    return "en_US.utf8" if "en_US.utf8" in have else "C.UTF-8"


HOMES = Path(tempfile.gettempdir()) / "dbexp-homes"  # reachable by the non-root PostgreSQL user


@contextlib.contextmanager
def running(config: ServerConfig) -> Iterator[Server]:
    """Start the build's own binary on this host, pinned to ``config.cpuset``; removed on exit."""
    from dbexp import images

    build, flavor, image = prepare_build(config)
    if build.source != "offline" or build.flavor not in ("mysql", "postgres"):
        raise DbexpError(f"bare runs need an offline mysql or postgres build, not {build.spec}")
    home = images.server_home(build, under=HOMES)
    tmp = Path(tempfile.mkdtemp(prefix=f"dbexp-bare-{build.flavor}-"))
    os.chmod(tmp, 0o755)
    data, run = tmp / "data", tmp / "run"
    data.mkdir()
    run.mkdir()
    server = Server(config, build, flavor, image, free_port())
    server.extra["datadir"] = str(data)
    log = open(run / "server.log", "w+")
    try:
        cmd = (_mysql_cmd if build.flavor == "mysql" else _postgres_cmd)(server, home, data, run)
        import time
        server.started_at = time.monotonic()
        server.process = subprocess.Popen(_pin(config.cpuset) + cmd, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True)
        server.extra["stop"] = lambda: _stop(server.process)
        server.extra["log_tail"] = lambda: (run / "server.log").read_text()[-600:]
        wait_ready(server)
        yield server
    finally:
        if server.process is not None:
            _stop(server.process)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        # SIGINT is PostgreSQL's fast shutdown (SIGTERM would wait for clients); mysqld takes SIGTERM
        proc.send_signal(signal.SIGINT if "postgres" in " ".join(map(str, proc.args)) else signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
