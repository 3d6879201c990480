"""The CPU time of chosen server sessions, read from this host's /proc once a second: the hot
workload's sessions and the scanning session, so that what the scan takes from the server's one CPU
can be told apart from what eviction costs a hot query.

A session is a thread (InnoDB: ``performance_schema.threads.THREAD_OS_ID``) or a process (a
PostgreSQL backend's pid), numbered in the server's own pid namespace; the ``NSpid`` line of
/proc/<pid>/task/<tid>/status gives both numbers, the host's first and the namespace's last. Where
this host cannot see the server's processes (a remote engine), no session is found and nothing is
sampled: the chapter's CPU columns are then missing, never zero.

Usage::

    clock = SessionClock(server)
    clock.watch("hot", [412, 413])   # ids as the server knows them; how many were found
    clock.sample()                   # {"cpu.hot": seconds so far, summed over those threads}
"""

from __future__ import annotations

from collections.abc import Iterable

from dbexp.engine import is_local
from dbexp.metrics import procfs
from dbexp.metrics.cgroup import ContainerCgroup


def server_pids(server) -> list[int]:
    """The server's processes as this host numbers them; [] where this host cannot see them."""
    pid = server.main_pid()
    if not pid:
        return []
    if server.kind == "bare":
        return procfs.descendants(pid)
    return ContainerCgroup(pid).pids() if is_local() else []


class SessionClock:
    """CPU seconds of groups of server threads, each group named by a role."""

    def __init__(self, server):
        self.server = server
        self._tasks: dict[str, tuple[tuple[int, int], ...]] = {}

    def watch(self, role: str, session_ids: Iterable[int]) -> int:
        """Follow, as ``role``, the threads whose id in the server's namespace is one of
        ``session_ids``; the number found (0 where this host cannot see the server). The server's
        processes are listed now: a PostgreSQL backend is a process forked when its session connected."""
        wanted = {int(i) for i in session_ids}
        found = tuple((pid, tid) for pid in server_pids(self.server) for tid in procfs.thread_ids(pid)
                      if procfs.namespace_id(pid, tid) in wanted)
        self._tasks = {**self._tasks, role: found}  # one assignment: the sampler's thread reads it
        return len(found)

    def sample(self) -> dict[str, float]:
        """{"cpu.<role>": CPU seconds so far of that role's threads} for each role with threads."""
        out = {}
        for role, tasks in self._tasks.items():
            seconds = [procfs.task_cpu_seconds(pid, tid) for pid, tid in tasks]
            if tasks and all(s is not None for s in seconds):  # a thread gone: no value, not a smaller one
                out[f"cpu.{role}"] = sum(seconds)
        return out
