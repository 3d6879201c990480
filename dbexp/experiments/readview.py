"""ReadView and snapshot scaling: what does an MVCC snapshot cost as active transactions grow?

H holder sessions each keep a write transaction open on their own row (or, in the
``idle`` variant, just stay connected); R reader threads run point selects, one per
statement, under READ COMMITTED, so every statement takes a new ReadView (MySQL,
MariaDB) or snapshot (PostgreSQL). The control runs the same readers under
REPEATABLE READ with long transactions: one view per 100 statements.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from dbexp.experiments import stats
from dbexp.experiments.chapter import Results, check_scale, collect
from dbexp.experiments.measure import Measured, measure
from dbexp.experiments.sweep import Point
from dbexp.servers.config import ServerConfig, cpus_of
from dbexp.workloads.sessions import HeldSessions
from dbexp.workloads.sysbench import Workload

EXPERIMENT = "readview"
TRX_STMTS_CONTROL = 100
MYSQL_WAITS = "wait/synch/mutex/innodb/trx_sys%"


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    holders: tuple[int, ...]
    readers_all: tuple[int, ...]  # reader counts swept at every H
    readers_ends: tuple[int, ...]  # reader counts added at the smallest and largest H only
    repeats: int
    duration_s: int
    table_size: int = 10000


DEFAULT_SERVERS = ("mysql:5.7@offline", "mysql:8.0@offline", "mariadb:10.11@offline", "postgres:12@offline",
                   "postgres:13@offline", "postgres:14@offline", "postgres:16@offline", "postgres:18@offline")
SCALES = {
    "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), (0, 64), (2,), (), 1, 2),
    "default": Scale(DEFAULT_SERVERS, (0, 16, 64, 256, 1024), (2,), (1,), 3, 3),
    "full": Scale(DEFAULT_SERVERS, (0, 16, 64, 256, 1024), (1, 2, 4), (), 5, 10, 100000),
}


def scale_for(scale: str, **overrides) -> Scale:
    base = SCALES[check_scale(scale)]
    return replace(base, **{k: tuple(v) if isinstance(v, list) else v
                            for k, v in overrides.items() if v is not None})


def server_config(spec: str, max_h: int, server_cpus: str) -> ServerConfig:
    settings = {"max_connections": str(max_h + 100)}
    if spec.startswith(("mysql", "mariadb")):
        settings["performance-schema-instrument"] = f"{MYSQL_WAITS}=ON"
    return ServerConfig(spec, server_cpus, settings=settings)


def points(sc: Scale, server_cpus: str = "1", client_cpus: str = "0") -> list[Point]:
    """Ordered so that one set of holders serves consecutive points (sweep order 'grouped')."""
    out = []
    hmax = max(sc.holders)
    ends = {min(sc.holders), hmax}
    for spec in sc.servers:
        cfg = server_config(spec, hmax, server_cpus)
        for mode in ("active", "idle"):
            for h in sorted(sc.holders):
                if mode == "idle" and h != hmax:
                    continue  # the idle variant: the largest H only (H=0 is shared with active)
                readers = sorted(set(sc.readers_all) | (set(sc.readers_ends) if h in ends else set()))
                for r in readers:
                    isolations = ["rc"] + (["rr"] if mode == "active" and h in ends and r == max(readers) else [])
                    for iso in isolations:
                        opts = (("isolation", iso), ("point-selects", "1"),
                                ("trx-stmts", str(TRX_STMTS_CONTROL if iso == "rr" else 0)))
                        wl = Workload("point_select_isolation", r, sc.duration_s, 1, sc.table_size,
                                      cpuset=client_cpus, options=opts)
                        out.append(Point(cfg, wl, group=f"readview {spec}",
                                         labels=(("holders", str(h)), ("mode", mode if h else "none"),
                                                 ("isolation", iso), ("readers", str(r)))))
    return out


def _pg_waits(conn) -> dict[str, float]:
    cur = conn.cursor()
    cur.execute("SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU'), count(*) FROM pg_stat_activity "
                "WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid() "
                "GROUP BY 1")
    rows = cur.fetchall()
    cur.close()
    return {name: float(n) for name, n in rows}


def _mysql_waits(conn) -> dict[str, float]:
    cur = conn.cursor()
    cur.execute("SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT FROM "
                "performance_schema.events_waits_summary_global_by_event_name WHERE EVENT_NAME LIKE %s",
                (MYSQL_WAITS,))
    out = {}
    for name, count, wait_ps in cur.fetchall():
        short = name.rsplit("/", 1)[-1]
        out[f"{short}.count"] = float(count)
        out[f"{short}.wait_ns"] = float(wait_ps) / 1000.0
    cur.close()
    return out


def measure_point(server, point: Point) -> Measured:
    """Hold H sessions (reusing the ones already open when the next point needs the same), check the
    server sees them, then measure the readers."""
    labels = dict(point.labels)
    h, mode = int(labels["holders"]), labels["mode"]
    want = (h, mode)
    held: HeldSessions | None = server.extra.get("held")
    if held is None or (held.n, held.mode) != want:
        if held is not None:
            held.close()
        held = HeldSessions(server, h, "active" if mode == "none" else mode).open()
        server.extra["held"] = held
    seen = held.observed()
    if mode == "active" and seen["open_write_trx"] < h:
        raise RuntimeError(f"holders not holding: asked for {h} open write transactions, "
                           f"the server sees {seen['open_write_trx']}")
    if server.flavor.name == "postgres":
        got = measure(server, point.workload, probes={"waits": _pg_waits})
    else:
        got = measure(server, point.workload, extra_counters={"perf_schema": _mysql_waits})
    got.measurements["observed_open_write_trx"] = (float(seen["open_write_trx"]), "count")
    got.measurements["observed_sessions"] = (float(seen["sessions"]), "count")
    return got


def run(scale: str = "smoke", *, run: bool = True, publish: bool = False, force: bool = False,
        server_cpus: str = "1", client_cpus: str = "0", **overrides) -> Results:
    sc = scale_for(scale, **overrides)
    if overrides.get("readers_all") is None and scale != "smoke":
        sc = replace(sc, readers_all=(2 * len(cpus_of(server_cpus)),))  # R = 2 x the server's CPUs
    return collect(EXPERIMENT, points(sc, server_cpus, client_cpus) if run else [], sc.repeats, run=run,
                   publish=publish, force=force, measure_fn=measure_point, order="grouped")


def tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    w["holders"] = w["holders"].astype(int)
    w["readers"] = w["readers"].astype(int)
    return w


def relative_to_h0(res: Results) -> pd.DataFrame:
    """Median QPS at each H over median QPS at H=0, per server, readers and variant (RC readers)."""
    w = tidy(res)
    w = w[w["isolation"] == "rc"]
    rows = []
    for (name, r), g in w.groupby(["series_name", "readers"]):
        base = g[g["holders"] == 0]["qps"]
        for (h, mode), gh in g.groupby(["holders", "mode"]):
            ratio, lo, hi = stats.ratio_ci(gh["qps"], base)
            rows.append({"server": name, "readers": r, "holders": h, "mode": mode, "relative_qps": ratio,
                         "ci_low": lo, "ci_high": hi, "qps": gh["qps"].median(),
                         "cpu_per_op_us": gh["cpu_per_op_us"].median(), "cs_per_op": gh["cs_per_op"].median(),
                         "lat_p95_ms": gh["lat_p95_ms"].median()})
    return pd.DataFrame(rows)


def slopes(res: Results) -> pd.DataFrame:
    """Least-squares slope of server CPU per query against active transactions (RC readers),
    in nanoseconds per additional active transaction, and the QPS change per 100 of them."""
    w = tidy(res)
    w = w[(w["isolation"] == "rc") & (w["mode"].isin(["active", "none"]))]
    rows = []
    for (name, r), g in w.groupby(["series_name", "readers"]):
        if g["holders"].nunique() < 2:
            continue
        x = g["holders"].to_numpy(float)
        cpu = g["cpu_per_op_us"].to_numpy(float) * 1000.0
        slope_cpu, icpt = np.polyfit(x, cpu, 1)
        base = g[g["holders"] == 0]["qps"].median()
        rel = g["qps"].to_numpy(float) / base
        slope_rel = np.polyfit(x, rel, 1)[0]
        rows.append({"server": name, "readers": int(r), "cpu/o at H=0 (ns)": icpt,
                     "ns of cpu/o per active trx": slope_cpu, "relative QPS per 100 trx": 100 * slope_rel,
                     "points": len(g)})
    return pd.DataFrame(rows)


def control(res: Results) -> pd.DataFrame:
    """RR with long transactions against RC, at the smallest and largest H."""
    w = tidy(res)
    w = w[w["mode"].isin(["active", "none"])]
    rows = []
    for (name, h, r), g in w.groupby(["series_name", "holders", "readers"]):
        if set(g["isolation"]) >= {"rc", "rr"}:
            rows.append({"server": name, "holders": h, "readers": r,
                         "qps rc": g[g["isolation"] == "rc"]["qps"].median(),
                         "qps rr (100 stmts/trx)": g[g["isolation"] == "rr"]["qps"].median()})
    out = pd.DataFrame(rows)
    if len(out):
        out["rr / rc"] = out["qps rr (100 stmts/trx)"] / out["qps rc"]
    return out


def waits(res: Results) -> pd.DataFrame:
    """Latch and wait figures per query: MySQL trx_sys mutex (performance_schema), PostgreSQL wait
    events sampled once a second from pg_stat_activity (share of samples)."""
    w = tidy(res)
    rows = []
    c = res.counters
    if len(c):
        ps = c[c["source"] == "perf_schema"]
        for run_id, g in ps.groupby("run_id"):
            r = w[w["run_id"] == run_id]
            if r.empty:
                continue
            r = r.iloc[0]
            d = dict(zip(g["name"], g["delta"]))
            for name in sorted(n for n in d if n.endswith(".count")):
                base = name[:-6]
                rows.append({"server": r["series_name"], "holders": r["holders"], "mode": r["mode"],
                             "isolation": r["isolation"], "readers": r["readers"], "wait": base,
                             "per query": d[name] / r["queries"] if r["queries"] else None,
                             "ns per query": d.get(base + ".wait_ns", 0) / r["queries"] if r["queries"] else None})
    s = res.series
    if len(s):
        pw = s[s["source"] == "waits"]
        for run_id, g in pw.groupby("run_id"):
            r = w[w["run_id"] == run_id]
            if r.empty:
                continue
            r = r.iloc[0]
            total = g["value"].sum()
            for name, v in g.groupby("name")["value"].sum().items():
                rows.append({"server": r["series_name"], "holders": r["holders"], "mode": r["mode"],
                             "isolation": r["isolation"], "readers": r["readers"], "wait": name,
                             "per query": None, "share of samples": v / total if total else None})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    keys = ["server", "holders", "mode", "isolation", "readers", "wait"]
    return out.groupby(keys, dropna=False).median(numeric_only=True).reset_index()


