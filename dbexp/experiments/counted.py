"""Counted runs: instructions per operation under callgrind (dbexp.metrics.callgrind), stored like every
other run (a sweep's provenance, the function table in the counters table), each point counted on two
separately started servers, and the two counts' agreement.

A chapter counts its sysbench points with :class:`Counted` (an Experiment for its Sweep, on points made
by :func:`point`), or its own statements with dbexp.metrics.callgrind.count_loop inside its own
measure hook; :func:`agreement` then reads the counts back per point. :func:`repeatability` does both
for one point, as ``dbexp count --twice`` does.
"""

from __future__ import annotations

import dataclasses
import json
import time

import pandas as pd

from dbexp.errors import DbexpError
from dbexp.experiments.measure import Measured
from dbexp.experiments.sweep import Experiment, Point, Sweep
from dbexp.metrics import callgrind
from dbexp.servers.config import ServerConfig
from dbexp.workloads import sysbench
from dbexp.workloads.sysbench import Workload

AGREE = 0.005  # two counts of a point agree when they differ by at most 0.5% of their mean (issue 48)
SEED = "1"  # sysbench's --rand-seed for the dataset: the same rows on every server
MEASURE = "instructions_per_op"


def count(server, workload: Workload, events: int = callgrind.EVENTS, *, warmup: int | None = None,
          head: int = callgrind.HEAD, top: int = callgrind.TOP) -> callgrind.Count:
    """Count ``events`` sysbench events of ``workload`` (its script, tables and options; one client
    thread, each pass its own sysbench run) on a counted server: dbexp.metrics.callgrind.count_passes,
    per statement (sysbench's queries), as the lab's timed runs are."""

    def run_pass(name: str, n: int, seed: int) -> callgrind.Ran:
        options = tuple((k, v) for k, v in workload.options if k not in ("events", "rand-seed", "time"))
        # a time limit far beyond the pass (one event a second): the events end it
        wl = dataclasses.replace(workload, threads=1, duration_s=max(60, n), report_interval=0,
                                 options=options + (("events", str(n)), ("rand-seed", str(seed))))
        started = time.monotonic()
        done = sysbench.run(wl, server)
        res = done.result
        if res.errors or res.reconnects:
            raise DbexpError(f"sysbench {workload.script} had {res.errors:.0f} errors and {res.reconnects:.0f} "
                             f"reconnects in the {name} pass of a count")
        if int(res.events) != n:
            raise DbexpError(f"sysbench ran {res.events:.0f} of the {n} events of the {name} pass of a count")
        return callgrind.Ran(int(res.queries), int(res.events), int(res.queries), time.monotonic() - started,
                             " ".join(done.cmd))

    return callgrind.count_passes(server, run_pass, events, warmup=warmup, head=head, top=top)


class Counted(Experiment):
    """A point's sysbench workload counted under callgrind: ``events`` operations after a warm-up pass,
    on a server of the point's (made by :func:`point`: started natively, its table loaded, restarted
    under valgrind by the first count)."""

    name = "counted"

    def __init__(self, name: str | None = None, events: int = callgrind.EVENTS, warmup: int | None = None,
                 head: int = callgrind.HEAD, top: int = callgrind.TOP):
        super().__init__(name)
        self.events, self.warmup, self.head, self.top = events, warmup, head, top

    def timed(self, point: Point) -> bool:
        """A count does not depend on the CPU's speed: steal does not make it noisy."""
        return False

    def measure(self, server, point: Point, state) -> Measured:
        done = count(server, point.workload, self.events, warmup=self.warmup, head=self.head, top=self.top)
        return Measured(done.measurements, done.counters, [], done.command)


def point(config: ServerConfig, workload: Workload, mode: str = "callgrind-sim", **kwargs) -> Point:
    """A counted point: ``config`` under ``mode`` with the flavor's counting settings
    (callgrind.counted_config), ``workload`` with one client and a fixed seed for its dataset (the
    chapter's own --rand-seed, if it names one, stays). ``kwargs`` go to Point (group, ...)."""
    options = dict(workload.options)
    options.setdefault("rand-seed", SEED)
    wl = dataclasses.replace(workload, threads=1, options=tuple(options.items()))
    return Point(callgrind.counted_config(config, mode), workload=wl, **kwargs)


def run(experiment: Counted, points: list[Point], store=None, instances: int = 2, force: bool = False,
        progress: bool = True) -> list[str]:
    """Count every point on ``instances`` separately started servers (one repeat on each); the ok run
    ids of every point."""
    sweep = Sweep(experiment, points, repeats=instances, instances=instances, store=store, force=force,
                  steal_limit_pct=None, order="grouped" if instances == 1 else "abba")
    return sweep.run(progress=progress)


def agreement(store, run_ids, measure: str = MEASURE, within: float = AGREE) -> pd.DataFrame:
    """One row per point: its server and workload, the counts of ``measure`` on each server start
    (``counts``, by instance), their mean, the largest difference relative to the mean
    (``spread``), and whether it is at most ``within`` (``agree``); with each point's start under valgrind
    and the pace of its counted passes (``start_s``, ``ops_per_s``: medians), for budgets."""
    ids = list(run_ids)
    runs = store.runs(None)
    runs = runs[runs["run_id"].isin(ids)]
    if runs.empty:
        raise DbexpError(f"no ok runs among the {len(ids)} run ids given: nothing to compare")
    wide = store.measurements_wide(runs)
    if measure not in wide:
        raise DbexpError(f"the runs have no measurement {measure!r}: they are not counted runs")
    rows = []
    for key, g in wide.groupby("point_key", sort=False):
        values = [float(v) for v in g.sort_values("instance")[measure]]
        mean = sum(values) / len(values)
        spread = (max(values) - min(values)) / mean if len(values) > 1 and mean else float("nan")
        wl = g["workload"].iloc[0]
        wl = json.loads(wl) if isinstance(wl, str) else (wl or {})
        rows.append({"point_key": key, "spec": g["spec"].iloc[0], "version": g["version"].iloc[0],
                     "script": wl.get("script"),
                     "servers": int(g["server_instance"].nunique()), "counts": values, "mean": mean,
                     "spread": spread, "agree": bool(spread <= within) if spread == spread else False,
                     "start_s": float(g["valgrind_start_s"].median()) if "valgrind_start_s" in g else float("nan"),
                     "ops_per_s": float(g["count_ops_per_s"].median()) if "count_ops_per_s" in g else float("nan")})
    return pd.DataFrame(rows)


def functions(store, run_id: str, kind: str = "inclusive", n: int = 15) -> pd.DataFrame:
    """A counted run's functions (``kind`` inclusive or exclusive), instructions per operation, the
    largest first: ``function``, ``per_op`` (the long pass less the short one, over the operations
    counted), ``share`` of all the instructions counted, and ``calls_per_op``."""
    if kind not in ("inclusive", "exclusive"):
        raise DbexpError(f"bad kind {kind!r}: expected inclusive or exclusive")
    counters = store.table("counters", [run_id])
    m = store.table("measurements", [run_id]).set_index("name")["value"]
    if "ops_counted" not in m:
        raise DbexpError(f"run {run_id} is not a counted run (no ops_counted)")
    ops, total = float(m["ops_counted"]), float(m["instructions_counted"])
    own = counters[counters["source"] == f"callgrind_{kind}"].set_index("name")["delta"]
    calls = counters[counters["source"] == "callgrind_calls"].set_index("name")["delta"]
    out = pd.DataFrame({"function": own.index, "per_op": own.to_numpy() / ops,
                        "share": own.to_numpy() / total if total else float("nan")})
    out["calls_per_op"] = out["function"].map(calls).astype(float) / ops
    return out.reindex(out["per_op"].abs().sort_values(ascending=False).index).head(n).reset_index(drop=True)


def repeatability(config: ServerConfig, workload: Workload, events: int = callgrind.EVENTS, *,
                  mode: str = "callgrind-sim", store=None, experiment: str = "counted", force: bool = False,
                  progress: bool = True) -> pd.DataFrame:
    """Count one point on two separately started servers and say whether the two counts agree
    (:func:`agreement`'s row)."""
    from dbexp.results.store import Store

    store = store or Store()
    ids = run(Counted(experiment, events), [point(config, workload, mode)], store, instances=2, force=force,
              progress=progress)
    return agreement(store, ids)
