"""Marks read from several servers at the same instants: the statements each has executed and its
container's CPU time, so that servers measured at once are compared over one common interval.

Workloads started together do not start (nor end) at the same instant: each client loads its script
and connects first, on a client CPU the others share. A server whose client starts first, or ends last,
has the shared CPU to fewer rivals for a moment, and a rate over its own run would favour it. Rates
between two marks read while every workload runs have no such edge. Each mark is a query, timed at
the middle of its round trip (a server sharing its CPU answers within a few scheduler slices), and its
container's cgroup CPU time read at once after it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from dbexp.errors import DbexpError
from dbexp.metrics.cgroup import ContainerCgroup


@dataclass(frozen=True)
class Mark:
    t: float  # time.monotonic(), the middle of the query's round trip
    statements: float  # the server's count of statements executed (its own counter)
    cpu_s: float  # the container's CPU time


class Marker:
    """One connection and one cgroup per server; ``read(order)`` marks every server, in that order."""

    def __init__(self, servers: list):
        self.servers = servers
        self.conns = []
        self.cgroups = [ContainerCgroup(s.main_pid()) for s in servers]
        if any(c.cpu_seconds() is None for c in self.cgroups):
            raise DbexpError("a server measured at once has no cgroup CPU time readable from this host")

    def __enter__(self) -> "Marker":
        try:
            for s in self.servers:
                self.conns.append(s.connect())
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for c in self.conns:
            c.close()
        self.conns = []

    def read(self, order: list[int]) -> dict[int, Mark]:
        out = {}
        for i in order:
            server = self.servers[i]
            before = time.monotonic()
            n = server.flavor.statements(self.conns[i])
            after = time.monotonic()
            out[i] = Mark((before + after) / 2, n, self.cgroups[i].cpu_seconds())
        return out


def between(a: Mark, b: Mark, active_s: float | None = None) -> dict[str, tuple[float | None, str]]:
    """Rates over the interval between two marks of one server (its own query at b counted out); with
    ``active_s``, the time of that interval its client ran (clients taking turns), the rate's time."""
    n = b.statements - a.statements - 1
    dt = b.t - a.t
    out = {"common_s": (dt, "s")}
    if active_s is not None:
        out["active_s"] = (active_s, "s")
    span = dt if active_s is None else active_s
    if span <= 0 or n <= 0:
        return {**out, "qps_common": (None, "1/s"), "cpu_per_op_common_us": (None, "us")}
    return {**out, "qps_common": (n / span, "1/s"), "cpu_per_op_common_us": ((b.cpu_s - a.cpu_s) * 1e6 / n, "us")}
