"""A run's starting state, made on the host: the page cache emptied, so that a server that reads
through it (PostgreSQL) finds none of its files there at the start of a run.

The server's own caches are emptied by a restart (lifecycle.Server.restart); what a chapter then
loads and checks is the chapter's (its Experiment.reset and precondition).
"""

from __future__ import annotations


from dbexp.errors import DbexpError
from dbexp.metrics import tracing
from dbexp import process

DROP_CACHES = "/proc/sys/vm/drop_caches"


def drop_page_cache() -> None:
    """Write back dirty pages and drop the host's clean page cache (``echo 1`` to drop_caches: pages
    only, not dentries and inodes). Needs root: as root, or through ``sudo -n`` where it asks no
    password (tracing.as_root); raises DbexpError saying so otherwise."""
    cmd = tracing.as_root() + ["sh", "-c", f"sync && echo 1 > {DROP_CACHES}"]
    done = process.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        last = ((done.stderr or done.stdout).strip().splitlines() or ["no output"])[-1]
        raise DbexpError(f"could not drop the page cache ({DROP_CACHES} needs root, or sudo without a "
                         f"password): {last}")
