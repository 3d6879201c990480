"""The calibration chapter's design and measurement.

Part 1, spread: every offline server, oltp_point_select and oltp_read_write at one fixed
configuration, repeated. Parts 2 and 3, A / B ratios in ABBA pairs of short runs: harness (sampling
on) / sysbench alone, container / bare process, pinned / unpinned (more pairs). Part 4, the harness
ratio again with N idle sessions held open on one server.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dbexp.catalog import OFFLINE
from dbexp.chapters.calibration.claims import claims
from dbexp.chapters.calibration.parts import PARTS
from dbexp.chapters.calibration.sentences import findings, readme_block
from dbexp.experiments.chapter import Chapter, Cpus, Part, Results
from dbexp.experiments.measure import Measured
from dbexp.experiments.sweep import Point
from dbexp.workloads.sessions import HolderPool
from dbexp.workloads.sysbench import Workload

ALL_OFFLINE = [f"{b.flavor}:{b.version}@offline" for b in OFFLINE]
WORKLOADS = ("oltp_point_select", "oltp_read_write")


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    ratio_servers: tuple[str, ...]
    repeats: int
    ratio_pairs: int
    duration_s: int
    table_size: int
    threads: int = 4
    warmup_s: int = 5  # one unrecorded run after each server's dataset is prepared
    ratio_duration_s: int = 4  # the ratios' runs: short, so that many pairs fit and a pair is close in time
    # Pairs of the pinning ratio (None: ratio_pairs). Unpinned throughput moves by about 11% run to run
    # on 2 CPUs (where the scheduler puts the server's and the client's threads), and the ratio itself
    # moves between sessions of pairs, so a 3% half-width needs several times the pairs the others need.
    pinning_pairs: int | None = None
    # Pairs of the sessions part (None: ratio_pairs): its 100-session ratio needed about 36 for 3%.
    sessions_pairs: int | None = None
    sessions_server: str = "postgres:16@offline"  # the sampler's cost against the server's process count
    session_counts: tuple[int, ...] = (10, 100, 1000)


@dataclass(frozen=True)
class CalibrationPoint:
    part: str  # spread, or the name of a ratio (analysis.RATIOS)
    variant: str | None = None  # A or B of a ratio
    sessions: int = 0  # idle sessions held open on the server during the run


class Calibration(Chapter):
    name = "calibration"
    # oltp_read_write's transactions can deadlock (4 threads on one table); sysbench retries them and
    # counts each as an error. They are part of that workload, so they are kept and shown, not failed.
    tolerates = ("errors",)
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), ("postgres:16@offline",), 2, 2, 3, 10000,
                       warmup_s=1, ratio_duration_s=2, session_counts=(10, 100)),
        "default": Scale(tuple(ALL_OFFLINE), ("mysql:8.0@offline", "postgres:16@offline"), 5, 24, 6, 100000,
                         pinning_pairs=192, sessions_pairs=40),
        "full": Scale(tuple(ALL_OFFLINE), ("mysql:5.7@offline", "mysql:8.0@offline", "postgres:12@offline",
                                           "postgres:16@offline", "postgres:18@offline"), 10, 30, 30, 1000000,
                      ratio_duration_s=10),
    }
    knob_help = {
        "servers": 'the servers of the spread part, e.g. ["mysql:8.0@offline"]',
        "ratio_servers": "the servers the three ratios are measured on",
        "repeats": "the repeats of the spread part",
        "ratio_pairs": "the A/B pairs of each ratio",
        "duration_s": "the seconds of each spread run",
        "table_size": "the rows of the sysbench table",
        "threads": "the client threads",
        "warmup_s": "the seconds of the unrecorded run after a server's dataset is prepared",
        "ratio_duration_s": "the seconds of each run of a pair",
        "pinning_pairs": "the A/B pairs of the pinning ratio",
        "sessions_pairs": "the A/B pairs of the sessions part",
        "sessions_server": "the server the sessions part holds its idle sessions on",
        "session_counts": "the idle sessions held in the sessions part, e.g. [10, 100, 1000]",
    }
    engines = PARTS

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        """Part 1, the spread: repeats of every server and workload. Part 2, the harness and container
        ratios, part 3 the pinning ratio (more pairs), part 4 the harness with N sessions held: A/B pairs
        (a repeat of a group is one pair, ABBA order)."""
        def wl(script: str, duration_s: int, pinned: bool = True) -> Workload:
            return Workload(script, sc.threads, duration_s, 1, sc.table_size,
                            cpuset=cpus.client if pinned else None)

        spread = [Point(self.server_config(spec, cpus.server), CalibrationPoint("spread"), wl(script, sc.duration_s),
                        group=f"spread {spec}") for spec in sc.servers for script in WORKLOADS]
        ratios: list[Point] = []
        pinning: list[Point] = []
        for spec in sc.ratio_servers:
            pinned = self.server_config(spec, cpus.server)
            ps = wl("oltp_point_select", sc.ratio_duration_s)
            ratios += [
                Point(pinned, CalibrationPoint("harness", "harness"), ps, f"harness {spec}", sample=True),
                Point(pinned, CalibrationPoint("harness", "hand"), ps, f"harness {spec}", sample=False),
                Point(pinned, CalibrationPoint("container", "container"), ps, f"container {spec}"),
                Point(pinned, CalibrationPoint("container", "bare"), ps, f"container {spec}", server_mode="bare"),
            ]
            pinning += [
                Point(pinned, CalibrationPoint("pinning", "pinned"), ps, f"pinning {spec}"),
                Point(self.server_config(spec, None), CalibrationPoint("pinning", "unpinned"),
                      wl("oltp_point_select", sc.ratio_duration_s, pinned=False), f"pinning {spec}"),
            ]
        held = self.server_config(sc.sessions_server, cpus.server,
                                  {"max_connections": str(max(sc.session_counts, default=0) + 100)})
        ps = wl("oltp_point_select", sc.ratio_duration_s)
        sessions = [Point(held, CalibrationPoint("sessions", variant, n), ps, f"sessions {sc.sessions_server}",
                          sample=variant == "harness")
                    for n in sorted(sc.session_counts) for variant in ("harness", "hand")]
        return [Part(spread, sc.repeats), Part(ratios, sc.ratio_pairs), Part(pinning, sc.pinning_pairs or sc.ratio_pairs),
                Part(sessions, sc.sessions_pairs or sc.ratio_pairs)]

    def session(self, server) -> HolderPool:
        return HolderPool(server)

    def measure(self, server, point: Point, pool: HolderPool) -> Measured:
        """The default sysbench measurement; with N sessions asked for, they are held open first
        (kept across the points that ask for the same N) and the server must see them all."""
        n = point.params.sessions
        if not n:
            return super().measure(server, point, pool)
        seen = pool.hold(n, "idle").observed()
        if seen["sessions"] < n:
            raise RuntimeError(f"asked for {n} idle sessions, the server sees {seen['sessions']}")
        got = super().measure(server, point, pool)
        got.measurements["observed_sessions"] = (float(seen["sessions"]), "count")
        return got

    def claims(self, res: Results) -> pd.DataFrame:
        return claims(res)

    def findings(self, res: Results) -> str:
        return findings(res)

    def readme_block(self, res: Results) -> str:
        return readme_block(res)


CHAPTER = Calibration()
run = CHAPTER.run
