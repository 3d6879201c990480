"""One active server at a time among workloads started together: their clients take turns.

Servers compared in one window share the server CPU when every client runs at once, and a neighbour's
cache and TLB traffic then costs each server by how big it is: the comparison measures the co-tenancy
as much as the servers. Here every client but one is stopped (SIGSTOP to its process group), so only its
server works; the turn passes every ``slice_s`` seconds (SIGCONT to the next client, SIGSTOP to this
one), through every client in order and back (A B C | C B A | ...), whole rounds only, so each server
gets the same number of slices spread over the whole window. A slow spell of the host (this lab's VM
halves its speed for seconds at a time) then falls on every server alike, as it did when they ran at
once, but no two servers ever run together.

Each client's own time with the turn is recorded (monotonic stamps around the signals): a server's rate is
its statements over that time. A query in flight when its client stops finishes on the server within
microseconds, against slices of a tenth of a second or more.
"""

from __future__ import annotations

import signal
import time

from dbexp.errors import DbexpError


class Rotation:
    """Turns among ``clients`` (objects with ``send(sig)``: dbexp.process.Child in a process group)."""

    def __init__(self, clients: list, slice_s: float):
        if slice_s <= 0:
            raise DbexpError(f"bad slice {slice_s!r} s for clients taking turns: expected more than 0")
        self.clients = clients
        self.slice_s = slice_s
        self.active_s = [0.0] * len(clients)
        self.slices = [0] * len(clients)
        self.rounds = 0

    def stop_all(self) -> None:
        for c in self.clients:
            c.send(signal.SIGSTOP)

    def resume_all(self) -> None:
        """Every client running again (at the end, so their runs finish; before a kill, harmless). A client
        already reaped is skipped by its send(); an unreaped one, even exited, still has its process group."""
        for c in self.clients:
            c.send(signal.SIGCONT)

    def turn(self, i: int) -> None:
        """Client ``i`` alone for one slice (the others are stopped already)."""
        c = self.clients[i]
        start = time.monotonic()
        c.send(signal.SIGCONT)
        time.sleep(max(0.0, start + self.slice_s - time.monotonic()))
        c.send(signal.SIGSTOP)
        self.active_s[i] += time.monotonic() - start
        self.slices[i] += 1

    def run_until(self, deadline: float) -> None:
        """Whole rounds (forward, then backward) while one more fits before ``deadline`` (monotonic);
        at least one. Every client is stopped on return."""
        n = len(self.clients)
        order = list(range(n))
        while True:
            for i in (order if self.rounds % 2 == 0 else order[::-1]):
                self.turn(i)
            self.rounds += 1
            if time.monotonic() + n * self.slice_s > deadline:
                return
