"""uprobes and servers under valgrind exclude each other on a host (dbexp.servers.valgrind.PROBES_LOCK): a uprobe's
breakpoint kills a process that valgrind runs (seen: a PostgreSQL backend under callgrind, as bpftrace attached to
another server of its image). No server, no bpftrace: the lock itself, across two processes and within one."""

from __future__ import annotations

import multiprocessing
import time

import pytest

from dbexp.errors import DbexpError
from dbexp.servers import valgrind

pytestmark = pytest.mark.unit


def _hold(mode: str, path: str, ready, release) -> None:
    valgrind.PROBES_LOCK = type(valgrind.PROBES_LOCK)(path)
    valgrind._take(mode, "the other process")
    ready.set()
    release.wait(30)
    valgrind._give(mode)


@pytest.fixture
def lock_file(tmp_path, monkeypatch):
    path = tmp_path / "probes.lock"
    monkeypatch.setattr(valgrind, "PROBES_LOCK", path)
    monkeypatch.setattr(valgrind, "PROBES_WAIT_S", 0.6)
    return path


@pytest.mark.parametrize("theirs, mine", [("ex", "sh"), ("sh", "ex"), ("ex", "ex")])
def test_a_server_under_valgrind_and_uprobes_wait_for_each_other_across_processes(lock_file, theirs, mine):
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    other = ctx.Process(target=_hold, args=(theirs, str(lock_file), ready, release))
    other.start()
    try:
        assert ready.wait(20)
        with pytest.raises(DbexpError, match=r"waited 0\.6 s for .*probes\.lock"):
            valgrind._take(mine, "mine")
        release.set()
        other.join(20)
        valgrind._take(mine, "mine")  # free now
        valgrind._give(mine)
    finally:
        release.set()
        other.join(5)


def test_uprobes_share_the_host_with_other_uprobes(lock_file):
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    other = ctx.Process(target=_hold, args=("sh", str(lock_file), ready, release))
    other.start()
    try:
        assert ready.wait(20)
        started = time.monotonic()
        with valgrind.probes_allowed("a binary"):
            assert time.monotonic() - started < 0.5
    finally:
        release.set()
        other.join(5)


def test_one_process_probing_its_own_server_under_valgrind_is_refused_at_once(lock_file):
    valgrind._take("ex", "postgres under valgrind")
    try:
        valgrind._take("ex", "a second server under valgrind")  # more servers of its own: allowed
        valgrind._give("ex")
        with pytest.raises(DbexpError, match="while this process has a server under valgrind: a uprobe would kill"):
            with valgrind.probes_allowed("GetSnapshotData in postgres"):
                pass
    finally:
        valgrind._give("ex")
    with valgrind.probes_allowed("GetSnapshotData in postgres"):  # released
        pass
