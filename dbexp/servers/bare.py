"""The same server binary as a bare host process, pinned with taskset: the control for
"does the container change what we measure?". Offline builds whose flavor supports it only."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator

from dbexp.errors import DbexpError
from dbexp.servers.config import ServerConfig
from dbexp.servers.lifecycle import Server, free_port, prepare_build, stop_process, wait_ready

HOMES = Path(tempfile.gettempdir()) / "dbexp-homes"  # reachable by a non-root server user


@contextlib.contextmanager
def running(config: ServerConfig) -> Iterator[Server]:
    """Start the build's own binary on this host, pinned to ``config.cpuset``; removed on exit."""
    from dbexp import images

    build, flavor, image = prepare_build(config)
    if build.source != "offline" or not flavor.supports_bare:
        raise DbexpError(f"bare runs need an offline build of a flavor that runs as a host process, "
                         f"not {build.spec}")
    home = images.server_home(build, under=HOMES)
    tmp = Path(tempfile.mkdtemp(prefix=f"dbexp-bare-{build.flavor}-"))
    os.chmod(tmp, 0o755)
    data, run = tmp / "data", tmp / "run"
    data.mkdir()
    run.mkdir()
    server = Server(config, build, flavor, image, free_port(), data_dir=str(data), log_path=run / "server.log")
    log = open(server.log_path, "w+")
    try:
        cmd = flavor.bare_command(build, server.port, config.settings, home, data, run)
        pin = ["taskset", "-c", config.cpuset] if config.cpuset else []
        server.started_at = time.monotonic()
        server.process = subprocess.Popen(pin + cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_ready(server)
        yield server
    finally:
        if server.process is not None:
            stop_process(server.process, flavor.stop_signal)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
