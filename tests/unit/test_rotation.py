"""Clients taking turns (dbexp.experiments.rotation): one runs at a time, whole rounds forward then
backward, each client's own time with the turn recorded; real processes stop and resume."""

from __future__ import annotations

import signal
import time

import pytest

from dbexp.errors import DbexpError
from dbexp.experiments.rotation import Rotation
from dbexp.process import Child


class FakeClient:
    def __init__(self, name, log):
        self.name, self.log = name, log

    def send(self, sig):
        self.log.append((self.name, sig))


def test_one_client_runs_at_a_time_in_whole_rounds_forward_then_backward():
    log = []
    turns = Rotation([FakeClient(n, log) for n in "ABC"], 0.001)
    turns.stop_all()
    began = time.monotonic()
    turns.run_until(time.monotonic())  # the deadline has passed: one round still runs
    assert turns.rounds == 1 and turns.slices == [1, 1, 1]
    turns.run_until(time.monotonic() + 1.0)
    spent = time.monotonic() - began
    running = set()
    order = []
    for name, sig in log[3:]:  # after stop_all
        if sig == signal.SIGCONT:
            assert not running  # nobody else runs when a client gets the turn
            running.add(name)
            order.append(name)
        else:
            running.discard(name)
    assert not running
    assert order[:9] == list("ABC") + list("CBA") + list("ABC")
    assert len(set(turns.slices)) == 1  # whole rounds: every client got as many slices
    # each client's time with the turn is at least its slices (a sleep never ends early), and the turns
    # together take no more than the wall time they ran in (invariants, not speeds: a loaded host only
    # lengthens slices)
    assert all(a >= n * 0.001 for a, n in zip(turns.active_s, turns.slices))
    assert sum(turns.active_s) <= spent


def test_a_slice_of_no_time_is_refused():
    with pytest.raises(DbexpError, match="bad slice 0"):
        Rotation([], 0)


def test_a_real_process_stopped_between_turns_makes_no_progress():
    child = Child(["sh", "-c", "while :; do :; done"], group=True)
    try:
        turns = Rotation([child], 0.05)
        turns.stop_all()
        time.sleep(0.1)
        state = open(f"/proc/{child.pid}/stat").read().split(")")[1].split()[0]
        assert state == "T"  # stopped
        began = time.monotonic()
        turns.run_until(began + 0.2)
        spent = time.monotonic() - began
        assert turns.slices[0] >= 1 and turns.active_s[0] >= turns.slices[0] * 0.05
        assert turns.active_s[0] <= spent  # invariants, not speeds: a loaded host only lengthens slices
        turns.resume_all()
        time.sleep(0.05)
        state = open(f"/proc/{child.pid}/stat").read().split(")")[1].split()[0]
        assert state in ("R", "S")
    finally:
        child.end(5)
