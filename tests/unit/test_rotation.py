"""Clients taking turns (dbexp.experiments.rotation): one runs at a time, whole rounds forward then
backward, each client's own time with the turn recorded; real processes stop and resume."""

from __future__ import annotations

import signal
import time

import pytest

from dbexp.errors import DbexpError
from dbexp.experiments.rotation import Reading, Rotation
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


# --- turns that pass only once the server is quiet -------------------------------------------------------

class Server:
    """A server as a turn reads it (rotation.Watch): its statement count (each read adds one, MySQL's way: the
    read's own value counts it), the client statement in flight when its client stops, which ends ``tail``
    reads later, its CPU, and its threads' switches. Its client executes ``per_slice`` statements a slice."""

    def __init__(self, per_slice=10, tail=0):
        self.per_slice, self.tail = per_slice, tail
        self.statements, self.running, self.left, self.cpu, self.vcs = 0.0, 0, 0, 0.0, 0.0

    def client(self):
        server = self

        class Client:
            def send(self, sig):
                if sig == signal.SIGSTOP:
                    server.statements += server.per_slice
                    server.cpu += 0.1
                    server.vcs += server.per_slice
                    server.running, server.left = (1, server.tail) if server.tail else (0, 0)

        return Client()

    def read(self) -> Reading:
        self.statements += 1
        self.cpu += 0.0002  # the read's own cost
        if self.left:
            self.left -= 1
            self.running = int(self.left > 0)
        return Reading(time.monotonic(), self.statements, self.running, self.cpu)

    def usage(self):
        return self.vcs

    def spent(self, before, after):
        return {"vcs": after - before}


def test_a_turn_passes_only_once_its_server_is_quiet_and_counts_the_statements_of_its_own_turn():
    servers = [Server(10, tail=0), Server(20, tail=3)]
    turns = Rotation([s.client() for s in servers], 0.001, watches=servers)
    turns.run_until(time.monotonic() + 0.05)
    assert turns.rounds >= 2 and len(turns.turns) == 2 * turns.rounds
    for t in turns.turns:
        s = servers[t.client]
        assert t.quiet and t.statements == s.per_slice  # the reads' own statements left out
        assert t.reads == (2 if not s.tail else s.tail + 1)  # two quiet reads in a row, the first as it ended
        assert t.usage == {"vcs": s.per_slice} and t.cpu_s == pytest.approx(0.1 + 0.0002 * t.reads)
        assert t.read_cpu_s == pytest.approx(0.0002)
    later = [t for t in turns.turns if t.outside is not None]
    assert later and all(t.outside == 0 for t in later)  # nothing ran between a server's turns
    assert all(t.cpu_outside_s == pytest.approx(0.0002) for t in later)  # the next turn's first read, no more
    assert all(t.gap_s is not None and t.gap_s >= 0 for t in turns.turns[1:]) and turns.turns[0].gap_s is None


def test_a_server_that_does_not_go_quiet_is_recorded_so_after_the_bounded_wait():
    server = Server(5, tail=10**9)
    turns = Rotation([server.client()], 0.001, watches=[server], quiet_timeout_s=0.02)
    turns.run_until(time.monotonic())
    (t,) = turns.turns
    assert not t.quiet and t.wait_s >= 0.02 and t.read_cpu_s is None


def test_statements_a_server_ran_outside_its_turns_are_counted():
    a, b = Server(10), Server(10)
    clients = [a.client(), b.client()]
    turns = Rotation(clients, 0.001, watches=[a, b])
    turns.turn(0)
    a.statements += 3  # its client ran on into b's turn
    turns.turn(1)
    turns.turn(0)
    assert [t.outside for t in turns.of(0)] == [None, 3]


def test_watches_are_one_per_client():
    with pytest.raises(DbexpError, match="1 for 2 clients"):
        Rotation([FakeClient("A", []), FakeClient("B", [])], 0.1, watches=[Server()])


def test_a_servers_figures_are_its_own_turns_only():
    from dbexp.experiments.measure import turn_figures
    from dbexp.experiments.rotation import Turn
    from dbexp.metrics.marks import Mark

    mine = [Turn(0, 0.0, 0.1, 0.001, True, 2, 100.0, 0.09, {"vcs": 150.0, "ivcs": 50.0, "wchar": 102400.0},
                 None, None, None, 0.0002),
            Turn(0, 1.0, 0.1, 0.003, True, 2, 300.0, 0.1, {"vcs": 450.0, "ivcs": 50.0, "wchar": 307200.0},
                 0.0, 0.01, 0.004, 0.0002)]
    a, b = Mark(10.0, 1000.0, 5.0), Mark(11.0, 1000.0 + 400 + 6 + 1, 5.25)  # 6 reads, b's own statement
    got = {k: v for k, (v, _) in turn_figures(mine, 0.2, a, b, 404.0, 1, 5).items()}
    assert got["qps_common"] == pytest.approx(2000.0) and got["statements_outside_turns"] == 0
    assert got["cs_per_op"] == pytest.approx(1.75) and got["vcs_per_op"] == pytest.approx(1.5)
    assert got["wchar_kb_per_op"] == pytest.approx(1.0) and got["cpu_per_op_turns_us"] == pytest.approx(475.0)
    assert got["cpu_per_op_common_us"] == pytest.approx(625.0)  # between the marks: background work included
    assert got["turn_share_pct"] == pytest.approx(100 * 400 / 404) and got["active_servers"] == 1
    assert got["turn_wait_ms_max"] == pytest.approx(3.0) and got["lat_avg_turns_ms"] == pytest.approx(0.5)
    leaked = {k: v for k, (v, _) in turn_figures(mine, 0.2, a, Mark(11.0, b.statements + 2, 5.25), 404.0, 1, 5).items()}
    assert leaked["statements_outside_turns"] == 2 and leaked["active_servers"] == 5


def test_the_witness_holds_only_where_every_turn_was_quiet_and_nothing_ran_outside_them():
    import pandas as pd

    from dbexp.experiments import rotation

    w = pd.DataFrame({"turns": [8.0, 8.0, 8.0, None], "turns_quiet": [8.0, 7.0, 8.0, None],
                      "statements_outside_turns": [0.0, 0.0, 0.0, None], "turn_share_pct": [99.5, 99.5, 90.0, None],
                      "turn_wait_ms_max": [0.8, 2000.0, 0.9, None], "slices": [8.0, 8.0, 8.0, 8.0],
                      "active_servers": [1.0, 5.0, 5.0, 1.0], "servers_at_once": [5.0] * 4,
                      "qps_common": [None, None, None, 1000.0], "active_s": [None, None, None, 0.8],
                      "queries": [None, None, None, 1000.0]})
    # the share of a run's statements in its own turns is said, not judged: the rest ran alone
    assert rotation.held(w).tolist() == [True, False, True, False]
    assert rotation.active_servers(w).tolist() == [1.0, 5.0, 1.0, 5.0]  # the last stored 1, its turns unwitnessed
    ok, what = rotation.describe(w)
    assert not ok and what.startswith("23 of 24 turns ended with the server quiet")
    assert "(2 of 3 runs held; 90.0% or more" in what and "1 runs stored no turn records" in what
    assert "(80% of a run's" in what and rotation.describe(w.iloc[:1])[0]
    assert not rotation.held(w.assign(start_quiet=[0.0, 1.0, 1.0, 1.0])).iloc[0]  # busy at the first mark
    n = rotation.numbers(w)
    assert (n["stored"], n["old"], n["held"], n["turns"], n["quiet"]) == (3, 1, 2, 24, 23)
    assert n["old_share"] == pytest.approx(0.8) and n["share_min"] == pytest.approx(0.9)


def test_the_turns_lighter_reading_of_a_process_set_agrees_with_the_full_snapshot():
    import os
    import threading

    from dbexp.metrics import procfs

    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)  # a second thread, asleep
    worker.start()
    try:
        full, light = procfs.snapshot([os.getpid()]), procfs.switches_and_bytes([os.getpid()])
    finally:
        stop.set()
        worker.join()
    assert set(light.switches) == set(full.switches) and len(light.switches) >= 2
    assert all(light.switches[t][0] >= full.switches[t][0] for t in full.switches)  # read just after
    assert light.io.keys() == full.io.keys() and light.io[os.getpid()][1] >= full.io[os.getpid()][1]
    assert procfs.switches_and_bytes([2 ** 22 + 7]).switches == {}  # a process that is not there


class LateServer(Server):
    """A server whose stopped client's last statement waits unread on its connection for ``unread`` reads (the
    reads' own thread ran first on the server CPU), then begins and runs for one read: without the unread bytes,
    two reads would find it quiet before that statement began, and it would run in the next server's turn."""

    def __init__(self, per_slice=10, unread=3):
        super().__init__(per_slice, tail=0)
        self.unread, self.waiting = unread, 0

    def client(self):
        inner = super().client()
        server = self

        class Client:
            def send(self, sig):
                inner.send(sig)
                if sig == signal.SIGSTOP:
                    server.waiting = server.unread

        return Client()

    def read(self) -> Reading:
        r = super().read()
        if self.waiting:
            self.waiting -= 1
            if not self.waiting:  # picked up now: it begins, and runs through this read
                self.statements += 1
                return Reading(r.t, self.statements, 1, r.cpu_s, 0)
            return Reading(r.t, r.statements, 0, r.cpu_s, 120)
        return r


def test_a_turn_waits_for_a_statement_still_unread_on_its_servers_connection():
    servers = [LateServer(10, unread=3), Server(20)]
    turns = Rotation([s.client() for s in servers], 0.001, watches=servers)
    turns.run_until(time.monotonic() + 0.05)
    late = turns.of(0)
    assert late and all(t.quiet and t.statements == 11 for t in late)  # its slice's 10 and the late one
    assert all(t.outside == 0 for t in turns.turns if t.outside is not None)


def test_the_unread_bytes_of_a_servers_connections_are_read_from_the_kernels_tcp_table(tmp_path):
    from dbexp.metrics.procfs import tcp_unread

    table = tmp_path / "tcp"
    table.write_text(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:0D3D 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 1\n"  # listening
        "   1: 0100007F:0D3D 0100007F:A1B2 01 00000000:0000004A 00:00000000 00000000   999        0 2\n"  # 74 unread
        "   2: 0100007F:A1B2 0100007F:0D3D 01 00000010:00000000 00:00000000 00000000     0        0 3\n"  # the client
        "   3: 0100007F:0D3E 0100007F:A1B3 01 00000000:00000020 00:00000000 00000000   999        0 4\n")  # another port
    assert tcp_unread(0x0D3D, tables=(str(table), str(tmp_path / "absent"))) == 0x4A


# --- turns of long statements: counted to their server's quiet (issue 47) -----------------------------------

def test_a_turns_tail_is_the_end_of_its_servers_last_statement_between_two_reads():
    """A statement still running at SIGSTOP ends between the last read that found it running and the next: the
    turn's tail is midway; a server quiet at the first read ended midway between SIGSTOP and that read."""
    servers = [Server(10, tail=0), Server(20, tail=4)]
    turns = Rotation([s.client() for s in servers], 0.001, watches=servers, quiet_poll_s=0.002)
    turns.run_until(time.monotonic() + 0.05)
    for t in turns.turns:
        assert t.quiet and t.tail_s is not None and 0 <= t.tail_s <= t.wait_s
    quiet_at_once = [t.tail_s for t in turns.of(0)]
    tailed = [t.tail_s for t in turns.of(1)]
    # 3 reads found the long one running (the first two back to back, then 2 ms apart): its end after the third
    assert min(tailed) >= 0.002 and max(quiet_at_once) < min(tailed)


def test_a_servers_rate_over_its_turns_to_quiet_counts_the_time_its_last_statements_took():
    """Scans of 0.9 s in turns of 0.1 s: one statement a turn, begun at its start, ended 0.8 s after its slice. Over
    the slices alone its rate is the slice's 10 a second whatever the server; over the turns to quiet, 1.1 a second."""
    from dbexp.experiments.measure import turn_figures
    from dbexp.experiments.rotation import Turn
    from dbexp.metrics.marks import Mark

    mine = [Turn(0, 3.0 * k, 0.1, 0.83, True, 40, 1.0, 0.9, {}, None if k == 0 else 0.0, None, None, 0.0007, 0.8)
            for k in range(4)]
    a, b = Mark(0.0, 100.0, 1.0), Mark(12.0, 100.0 + 4 + 4 * 41 + 1, 5.0)
    slices = {k: v for k, (v, _) in turn_figures(mine, 0.4, a, b, 5.0, 1, 5).items()}
    assert slices["qps_common"] == pytest.approx(10.0) and slices["active_s"] == pytest.approx(0.4)
    assert slices["turns_to_quiet"] == 0 and slices["to_quiet_s"] == pytest.approx(3.6)
    got = {k: v for k, (v, _) in turn_figures(mine, 0.4, a, b, 5.0, 1, 5, to_quiet=True).items()}
    assert got["qps_common"] == pytest.approx(1 / 0.9) and got["active_s"] == pytest.approx(3.6)
    assert got["slices_s"] == pytest.approx(0.4) and got["turns_to_quiet"] == 1
    assert got["lat_avg_turns_ms"] == pytest.approx(900.0) and got["turn_tail_ms_mean"] == pytest.approx(800.0)
    assert got["statements_per_turn"] == 1 and got["statements_outside_turns"] == 0 and got["active_servers"] == 1
    # a turn not found quiet counts its whole wait
    lost = [mine[0], Turn(0, 3.0, 0.1, 2.0, False, 3000, 1.0, 0.9, {}, 0.0, None, None, None, None)]
    assert turn_figures(lost, 0.2, a, b, 5.0, 1, 5, to_quiet=True)["active_s"][0] == pytest.approx(0.9 + 2.1)
