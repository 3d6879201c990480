"""A probe run's bpftrace: where a commit waits for its durable write, counting per commit how many
times its session was woken before the write was done (the program is the engine part's)."""

from __future__ import annotations

from dbexp.metrics.uprobe import Bpftrace, maps, server_binary

COUNTS = ("enrolls", "waiters", "waits", "syncs", "commits")
TIMED = ("wait_ns", "long")  # where the program times each follower's wait (MySQL's): absent before the first, 0 then
# where the program also counts the followers' switches out and the waits of those past 100 ms (MySQL's): 0 if none
SWITCHED = ("fsleeps", "needless_sleeps", "fpreempted", "long_waits")


class CommitProbe(Bpftrace):
    """bpftrace on the server's binary with its engine part's program; after the run, ``counts``
    (every name of COUNTS, 0 where never hit), ``waits_hist`` ((k, sessions woken k times)) and the
    Bpftrace's ``stop_s``."""

    def __init__(self, server, part, pin: str | None = None):
        path = server_binary(server.main_pid(), server.flavor.capability("uprobes").executables)
        pid = int(path.split("/")[2])
        text, expected, what = part.probe_program(path, pid)
        super().__init__(text, expected, what, pin)
        self.counts: dict[str, int] = {}
        self.waits_hist: list[tuple[int, int]] = []

    def finished(self) -> None:
        got = maps(self.lines)
        self.counts = {k.lstrip("@"): int(v) for k, v in got.items() if isinstance(v, int)}
        for name in COUNTS + (TIMED if "@wait_ns" in self.text else ()) + (SWITCHED if "@fsleeps" in self.text else ()):
            self.counts.setdefault(name, 0)
        self.waits_hist = [(lo, n) for lo, hi, n in got.get("@khist", [])]
