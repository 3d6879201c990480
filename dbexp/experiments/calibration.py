"""Calibration: how far can we trust a number from this lab?

Part 1, spread: every offline server, oltp_point_select and oltp_read_write at one
fixed configuration, repeated: median and coefficient of variation.
Part 2, three ratios, each measured side by side with A and B alternating:
  harness   the harness (sampling on) / the same sysbench command alone, as typed by hand
  container the server in a container / the same binary as a bare process, pinned alike
  pinning   server and client pinned / neither pinned
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from dbexp.catalog import OFFLINE
from dbexp.experiments import stats
from dbexp.experiments.chapter import Results, check_scale, collect
from dbexp.experiments.sweep import Point
from dbexp.servers.config import ServerConfig
from dbexp.workloads.sysbench import Workload

EXPERIMENT = "calibration"
ALL_OFFLINE = [f"{b.flavor}:{b.version}@offline" for b in OFFLINE]
WORKLOADS = ("oltp_point_select", "oltp_read_write")
RATIOS = {  # name: (label of A, label of B, what it answers)
    "harness": ("harness", "hand", "harness (sampling on) / the same sysbench command by hand"),
    "container": ("container", "bare", "server in a container / same binary as a bare process"),
    "pinning": ("pinned", "unpinned", "server and client pinned / neither pinned"),
}


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    ratio_servers: tuple[str, ...]
    repeats: int
    ratio_pairs: int
    duration_s: int
    table_size: int
    threads: int = 4


SCALES = {
    "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), ("postgres:16@offline",), 2, 2, 3, 10000),
    "default": Scale(tuple(ALL_OFFLINE), ("mysql:8.0@offline", "postgres:16@offline"), 5, 6, 10, 100000),
    "full": Scale(tuple(ALL_OFFLINE), ("mysql:5.7@offline", "mysql:8.0@offline", "postgres:12@offline",
                                       "postgres:16@offline", "postgres:18@offline"), 10, 10, 30, 1000000),
}


def scale_for(scale: str, **overrides) -> Scale:
    base = SCALES[check_scale(scale)]
    return replace(base, **{k: tuple(v) if isinstance(v, list) else v
                            for k, v in overrides.items() if v is not None})


def points(sc: Scale, server_cpus: str = "1", client_cpus: str = "0") -> list[Point]:
    def wl(script: str, pinned: bool = True) -> Workload:
        return Workload(script, sc.threads, sc.duration_s, 1, sc.table_size,
                        cpuset=client_cpus if pinned else None)

    out: list[Point] = []
    for spec in sc.servers:
        for script in WORKLOADS:
            out.append(Point(ServerConfig(spec, server_cpus), wl(script), group=f"spread {spec}",
                             labels=(("part", "spread"),)))
    for spec in sc.ratio_servers:
        pinned = ServerConfig(spec, server_cpus)
        ps = wl("oltp_point_select")
        out += [
            Point(pinned, ps, f"harness {spec}", (("part", "harness"), ("variant", "harness")), sample=True),
            Point(pinned, ps, f"harness {spec}", (("part", "harness"), ("variant", "hand")), sample=False),
            Point(pinned, ps, f"container {spec}", (("part", "container"), ("variant", "container"))),
            Point(pinned, ps, f"container {spec}", (("part", "container"), ("variant", "bare")),
                  server_mode="bare"),
            Point(pinned, ps, f"pinning {spec}", (("part", "pinning"), ("variant", "pinned"))),
            Point(ServerConfig(spec, None), wl("oltp_point_select", pinned=False), f"pinning {spec}",
                  (("part", "pinning"), ("variant", "unpinned"))),
        ]
    return out


def run(scale: str = "smoke", *, run: bool = True, publish: bool = False, force: bool = False,
        server_cpus: str = "1", client_cpus: str = "0", **overrides) -> Results:
    sc = scale_for(scale, **overrides)
    spread_pts = [p for p in points(sc, server_cpus, client_cpus) if dict(p.labels)["part"] == "spread"]
    ratio_pts = [p for p in points(sc, server_cpus, client_cpus) if dict(p.labels)["part"] != "spread"]
    if not run:
        return collect(EXPERIMENT, [], 0, run=False)
    # the two parts have different repeat counts: collect each, then publish them together
    first = collect(EXPERIMENT, spread_pts, sc.repeats, run=True, force=force)
    second = collect(EXPERIMENT, ratio_pts, sc.ratio_pairs, run=True, force=force) if ratio_pts else None
    return _merge(first, second, publish)


def _merge(a: Results, b: Results | None, publish: bool) -> Results:
    if b is not None:
        a = Results(a.experiment, pd.concat([a.wide, b.wide], ignore_index=True),
                    pd.concat([a.series, b.series], ignore_index=True),
                    pd.concat([a.counters, b.counters], ignore_index=True),
                    pd.concat([a.runs, b.runs], ignore_index=True), a.source)
    if publish:
        from dbexp.results import Store, export
        store = Store()
        export(store, EXPERIMENT, list(a.runs["run_id"]))
        store.close()
    return a


def spread_table(res: Results) -> pd.DataFrame:
    df = res.wide[res.wide["part"] == "spread"]
    out = stats.spread(df, ["flavor", "version", "script"], "qps")
    per_op = df.groupby(["flavor", "version", "script"])[["cpu_per_op_us", "cs_per_op", "wkb_per_op",
                                                          "lat_p95_ms"]].median().reset_index()
    return out.merge(per_op, on=["flavor", "version", "script"])


def ratio_table(res: Results) -> pd.DataFrame:
    rows = []
    for part, (a, b, meaning) in RATIOS.items():
        df = res.wide[res.wide["part"] == part]
        for (flavor, version), g in df.groupby(["flavor", "version"]):
            qa, qb = g[g["variant"] == a]["qps"], g[g["variant"] == b]["qps"]
            ratio, lo, hi = stats.ratio_ci(qa, qb)
            rows.append({"ratio": part, "meaning": meaning, "flavor": flavor, "version": version,
                         "pairs": int(min(len(qa), len(qb))), "median_a": qa.median(), "median_b": qb.median(),
                         "ratio_qps": ratio, "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(rows)
