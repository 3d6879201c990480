"""A prepared data directory, saved once per server image and table size and restored into every instance: the
table of a million rows (or more) is loaded once per version, not once per server started.

The first server of an image that needs the table loads it with sysbench's prepare, settles it (the flavor's own
way: dirty pages flushed, VACUUM and a checkpoint), runs the source harness's post-load steps (the engine part's
post_write: statistics, dirty pages written back), stops cleanly and its data directory is saved as a tar
(docker's archive of the volume) under the lab's cache. Every later server of that image is started as usual,
stopped, its fresh data directory emptied and the saved one unpacked in its place by a short-lived helper
container of the same image sharing its volume, and started again: the image's entrypoint starts a server on a
data directory it finds. Both steps time themselves; what the dataset record of a run says (``dataset``: rows,
the template's name, how it came) is stored with every run.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from docker.errors import NotFound

from dbexp.engine import LABEL, client
from dbexp.errors import DbexpError
from dbexp.paths import cache_dir
from dbexp.servers import lifecycle
from dbexp.workloads import sysbench

FOLDER = "versions-datadirs"  # under the lab's cache
RECIPE = 1  # raise when how a template is made changes: older templates are then made again
STOP_S = 120


def folder() -> Path:
    path = cache_dir() / FOLDER
    path.mkdir(parents=True, exist_ok=True)
    return path


def template_name(server, workload, variant: str = "") -> str:
    """One template per image (its id), table count and size, recipe, and ``variant`` (the settings under which
    the table is created differently: a server charset)."""
    image = str(getattr(server.image, "id", "") or "").split(":")[-1][:16]
    if not image:
        raise DbexpError(f"{server.build.spec} has no image id to key its saved data directory by")
    safe = lambda text: "".join(ch if ch.isalnum() or ch in ".+-" else "_" for ch in text)  # noqa: E731
    tail = f"-{safe(variant)}" if variant else ""
    return (f"{server.build.flavor}-{safe(server.version or 'unknown')}-{image}-{workload.tables}x"
            f"{workload.table_size}-r{RECIPE}{tail}.tar")


def _stop(server) -> None:
    server.container.stop(timeout=STOP_S)
    server.container.reload()
    if server.container.status not in ("exited", "created"):
        raise DbexpError(f"{server.build.spec} did not stop within {STOP_S} s (status {server.container.status})")


def _start(server) -> None:
    server.container.start()
    server.started_at = time.monotonic()
    lifecycle.wait_ready(server)


def save(server, datadir: str, path: Path) -> float:
    """Stop ``server`` cleanly, save its data directory as the tar ``path``, start it again; the seconds taken."""
    if server.container is None:
        raise DbexpError(f"{server.build.spec} runs as a bare process: only a container's data directory is saved")
    t0 = time.monotonic()
    _stop(server)
    part = path.with_suffix(f".part{os.getpid()}")
    try:
        stream, _ = server.container.get_archive(datadir)
        with open(part, "wb") as out:
            for chunk in stream:
                out.write(chunk)
        part.replace(path)  # whole or not at all
    finally:
        part.unlink(missing_ok=True)
        _start(server)
    return time.monotonic() - t0


def restore(server, datadir: str, path: Path) -> float:
    """``server`` stopped, its data directory replaced by the tar ``path`` (unpacked where the directory's parent
    is), started again; the seconds taken."""
    if server.container is None:
        raise DbexpError(f"{server.build.spec} runs as a bare process: only a container's data directory is restored")
    t0 = time.monotonic()
    _stop(server)
    parent = datadir.rsplit("/", 1)[0] or "/"
    script = (f"find {datadir} -mindepth 1 -delete && tar -C {parent} -xpf /restore/{path.name} "
              f"&& test -n \"$(ls -A {datadir})\"")
    helper = None
    try:  # the helper removed whatever happens, ^C included (waited on, not run with remove=True, which leaves it)
        helper = client().containers.run(server.image.ref, ["sh", "-c", script], detach=True, network_mode="none",
                                         volumes_from=[server.container.id],
                                         volumes={str(path.parent): {"bind": "/restore", "mode": "ro"}},
                                         labels={LABEL: "1", "dbexp.role": "helper", "dbexp.owner": str(os.getpid())})
        code = int(helper.wait().get("StatusCode", -1))
        if code != 0:
            said = helper.logs().decode(errors="replace").strip()
            raise DbexpError(f"exit {code}: {said.splitlines()[-1] if said else 'no output'}")
    except Exception as exc:  # the helper's exit status or the engine's refusal, in one line
        raise DbexpError(f"restoring {path.name} into {server.build.spec} failed: "
                         f"{str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}") from exc
    finally:
        if helper is not None:
            with contextlib.suppress(NotFound):  # already gone; any other refusal is raised (a helper left behind)
                helper.remove(force=True)
    _start(server)
    return time.monotonic() - t0


def dataset(server, workload, datadir: str, after_load, variant: str = "") -> dict:
    """``workload``'s table on ``server``: restored from the image's saved data directory, or loaded and saved
    first where there is none yet (``after_load(server)`` runs the post-load steps before the save). The dataset
    record: rows, tables, the template's name, whether it was made here and the seconds each step took."""
    path = folder() / template_name(server, workload, variant)
    if path.exists():
        took = restore(server, datadir, path)
        return {"rows": float(workload.table_size), "tables": float(workload.tables), "template": path.name,
                "made": 0.0, "restore_s": took}
    made = sysbench.prepare(workload, server)
    after_load(server)
    took = save(server, datadir, path)
    return {**made, "template": path.name, "made": 1.0, "save_s": took}
