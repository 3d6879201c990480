"""What GTIDs and the binlog cost on write-heavy work (MySQL).

Four configurations of one version, measured side by side in ABBA order (every configuration of a
version is one group: its servers are started together and every repeat walks them forward, the
next one backward, so each pair of configurations is measured next to each other):

- *binlog off*: a server without a binary log;
- *binlog*: a server with the binlog on (row events, full images, no write sets, dependencies by commit
  order: every setting that changes what the binlog costs is stated) and GTIDs off;
- *binlog + GTID*: the same server with ``gtid_mode = ON`` and ``enforce_gtid_consistency = ON``, switched
  at run time (step by step, as MySQL requires) before each of its runs and back after;
- *binlog, P_S off*: a third server like the second, with performance_schema off.

Commits are relaxed (``innodb_flush_log_at_trx_commit = 2``, ``sync_binlog = 0``), as in the regression
source, so that what is measured is the CPU and the bytes of the binlog and GTIDs, not the disk's sync
latency. Per run: QPS, the server's CPU and context switches per query, KB written to the device per
query (the sampler), and binlog bytes per commit (SHOW BINARY LOGS, before and after).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dbexp.errors import DbexpError
from dbexp.experiments import stats, verdicts
from dbexp.experiments.chapter import Chapter, Cpus, Part, Results, check_names
from dbexp.experiments.measure import Measured, measure
from dbexp.experiments.sources import CALLAGHAN_GTID, KERNELMAKER_REGRESSION
from dbexp.experiments.sweep import Point
from dbexp.servers.mysql import MySQL
from dbexp.servers.registry import flavor_of_spec
from dbexp.workloads.sysbench import Workload

TESTS = {"insert": "oltp_insert", "update-index": "oltp_update_index", "update-non-index": "oltp_update_non_index",
         "update-inlist": "update_inlist", "write-only": "oltp_write_only"}
CONFIGS = ("binlog off", "binlog", "binlog + GTID", "binlog, P_S off")
# (A, B, what the ratio A / B measures)
RATIOS = (("binlog + GTID", "binlog", "GTIDs"), ("binlog", "binlog off", "the binlog"),
          ("binlog, P_S off", "binlog", "performance_schema off"))
CSV_NAMES = {"GTIDs": "ratio-gtid", "the binlog": "ratio-binlog", "performance_schema off": "ratio-ps-off"}
TARGET_HALF_WIDTH = 0.03  # the resolution: a 95% half-width of at most 3%


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    tests: tuple[str, ...]
    threads: tuple[int, ...]
    duration_s: int
    repeats: int
    table_size: int = 100_000
    warmup_s: float = 3.0


@dataclass(frozen=True)
class GtidPoint:
    config: str
    test: str


class Gtid(Chapter):
    name = "gtid"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline",), ("insert", "update-non-index"), (1,), 2, 1, 10_000, 1.0),
        "default": Scale(("mysql:5.7@offline", "mysql:8.0@offline"), tuple(TESTS), (1, 2), 3, 4),
        "full": Scale(("mysql:5.7@offline", "mysql:8.0@offline"), tuple(TESTS), (1, 2), 20, 10, 1_000_000, 20.0),
    }
    order = "abba"
    add_official = True

    def adjust(self, sc: Scale, scale: str, cpus: Cpus, overrides: dict) -> Scale:
        check_names(sc.tests, TESTS, "test")
        other = [s for s in sc.servers if flavor_of_spec(s).name != MySQL.name]
        if other:
            raise DbexpError(f"the gtid chapter measures MySQL's GTIDs; {other[0]!r} is not a MySQL server")
        return sc

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        points = []
        for spec in sc.servers:
            flavor = flavor_of_spec(spec)
            relaxed = flavor.relaxed_commit_settings()
            binlog = {**flavor.binlog_settings(), **relaxed}
            servers = {"binlog off": Chapter.server_config(spec, cpus.server, relaxed),
                       "binlog": Chapter.server_config(spec, cpus.server, binlog),
                       "binlog, P_S off": Chapter.server_config(spec, cpus.server,
                                                                {**binlog, "performance_schema": "OFF"})}
            servers["binlog + GTID"] = servers["binlog"]
            for test in sc.tests:
                for t in sc.threads:
                    wl = Workload(TESTS[test], t, sc.duration_s, 1, sc.table_size, cpuset=cpus.client)
                    for config in CONFIGS:
                        points.append(Point(servers[config], GtidPoint(config, test), wl, group=f"gtid {spec}"))
        return [Part(points, sc.repeats)]

    def measure(self, server, point: Point, state) -> Measured:
        p: GtidPoint = point.params
        flavor = server.flavor
        conn = server.connect()
        try:
            if p.config == "binlog + GTID":
                flavor.set_gtid(conn, True)
            before = flavor.binlog_bytes(conn)
            try:
                got = measure(server, point.workload, sql_series=False)
            finally:
                after = flavor.binlog_bytes(conn)
                if p.config == "binlog + GTID":
                    flavor.set_gtid(conn, False)
        finally:
            conn.close()
        m = got.measurements
        trx = m["transactions"][0]
        if before is not None and trx:
            m["binlog_bytes_per_commit"] = ((after - before) / trx, "bytes")
        return got

    def claims(self, res: Results) -> pd.DataFrame:
        return claims(res)


CHAPTER = Gtid()
run = CHAPTER.run


# --- analysis ---------------------------------------------------------------------------------------
VALUES = {"qps": "throughput", "cpu_per_op_us": "cpu/o", "cs_per_op": "cs/o", "wkb_per_op": "wKB/o",
          "binlog_bytes_per_commit": "binlog bytes per commit"}


def tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    if len(w):
        w["config"] = pd.Categorical(w["config"], list(CONFIGS), ordered=True)
    return w


def ratios(res: Results) -> pd.DataFrame:
    """Per server, test, threads and comparison: the ratio A / B of each value, paired by repeat (A and B
    of a repeat are neighbours in time), with its 95% interval and half-width."""
    w = tidy(res)
    rows = []
    if w.empty:
        return pd.DataFrame()
    for (name, test, threads), g in w.groupby(["series_name", "test", "threads"]):
        for a, b, what in RATIOS:
            ga = g[g["config"] == a].set_index("repeat")
            gb = g[g["config"] == b].set_index("repeat")
            if ga.empty or gb.empty:
                continue
            for value, label in VALUES.items():
                if value not in g or ga[value].isna().all() or gb[value].isna().all():
                    continue
                r, lo, hi, n = stats.pair_ratio_by(ga[value], gb[value])
                rows.append({"series_name": name, "test": test, "threads": threads, "comparison": what,
                             "a": a, "b": b, "value": label, "ratio": r, "ci_low": lo, "ci_high": hi, "pairs": n,
                             "half_width": (hi - lo) / 2 / r if r == r and r else np.nan})
    return pd.DataFrame(rows)


def source_table(res: Results, comparison: str = "GTIDs") -> pd.DataFrame:
    """Shaped like the GTID source's: per server, test and threads, throughput B / A (how much more B
    does: the source writes nogtid's throughput over gtid's) and A / B for cpu/o, cs/o, wKB/o."""
    r = ratios(res)
    if r.empty:
        return r
    r = r[r["comparison"] == comparison]
    wide = r.pivot_table(index=["series_name", "test", "threads"], columns="value", values="ratio", dropna=False).reset_index()
    hw = r.pivot_table(index=["series_name", "test", "threads"], columns="value", values="half_width", dropna=False).reset_index()
    if "throughput" in wide:
        wide["throughput B / A"] = 1 / wide["throughput"]
        wide["throughput half-width"] = hw["throughput"] if "throughput" in hw else np.nan
    return wide


def ablation(res: Results) -> pd.DataFrame:
    """8.0 over 5.7 on update-non-index, per configuration and threads: relative QPS with a Welch
    interval (the versions ran in groups of their own, not side by side)."""
    w = tidy(res)
    w = w[w["test"] == "update-non-index"]
    names = sorted(w["series_name"].unique(), key=lambda n: [int(x) for x in n.split()[-1].split(".")])
    if len(names) < 2:
        return pd.DataFrame()
    base, new = names[0], names[-1]
    rows = []
    for (config, threads), g in w.groupby(["config", "threads"], observed=True):
        a, b = g[g["series_name"] == new]["qps"], g[g["series_name"] == base]["qps"]
        r, lo, hi = stats.unpaired_ratio_ci(a, b)
        rows.append({"config": str(config), "threads": threads, "base": base, "new": new,
                     "qps_base": b.median(), "qps_new": a.median(), "ratio": r, "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(rows)


def resolution(res: Results) -> dict[str, float]:
    """The 95% half-widths the throughput ratios reached: median and largest."""
    r = ratios(res)
    r = r[r["value"] == "throughput"] if len(r) else r
    if r.empty:
        return {"median": float("nan"), "max": float("nan"), "within": 0, "n": 0}
    return {"median": float(r["half_width"].median()), "max": float(r["half_width"].max()),
            "within": int((r["half_width"] <= TARGET_HALF_WIDTH).sum()), "n": len(r)}


def _cells(g: pd.DataFrame) -> str:
    return "; ".join(f"{x.series_name} {x.threads}t {x.ratio:.3f} [{x.ci_low:.3f}, {x.ci_high:.3f}]"
                     for x in g.itertuples())


def resolution_sentence(res: Results) -> str:
    """The resolution the throughput ratios reached, in words (markdown)."""
    rs = resolution(res)
    if rs["n"] == 0 or rs["median"] != rs["median"]:
        return ("One repeat per configuration at this scale: no interval, so no resolution to state; the default "
                "scale measures four ABBA pairs.")
    return (f"the median 95% half-width of the throughput ratios is {100 * rs['median']:.1f}% (largest "
            f"{100 * rs['max']:.1f}%); {rs['within']} of {rs['n']} reach the {TARGET_HALF_WIDTH:.0%} this chapter "
            "aims at" + (", so most comparisons below are not resolved." if rs["within"] < rs["n"] / 2 else "."))


def claims(res: Results) -> pd.DataFrame:
    r = ratios(res)
    rows = []
    nm = verdicts.NOT_MEASURED
    if r.empty:
        return pd.DataFrame([(CALLAGHAN_GTID.cite("GTIDs cost throughput on write-heavy tests"), "", nm)],
                            columns=["claim", "measured here", "verdict"])
    g = r[(r["comparison"] == "GTIDs") & (r["value"] == "throughput")]
    rows.append((CALLAGHAN_GTID.cite("With gtid_mode and enforce_gtid_consistency ON, write-heavy tests typically get "
                                     "5 to 10% less throughput (up to about 15% on insert)"),
                 "GTID / no GTID throughput: " + _cells(g.assign(series_name=g["series_name"] + " " + g["test"])),
                 verdicts.combine(verdicts.interval(x.ci_low, x.ci_high, "below") for x in g.itertuples())))
    for label, low, claim in (("cpu/o", "1.10 to 1.15X", "more CPU per operation"),
                              ("cs/o", "1.23 to 1.45X", "more context switches per operation"),
                              ("wKB/o", "1.16 to 1.24X", "more KB written per operation")):
        g = r[(r["comparison"] == "GTIDs") & (r["value"] == label) & (r["test"] == "insert")]
        extra = ""
        if label == "wKB/o":
            bb = r[(r["comparison"] == "GTIDs") & (r["value"] == "binlog bytes per commit") & (r["test"] == "insert")]
            if len(bb):
                extra = ("; binlog bytes per commit, GTID / no GTID: " + ", ".join(f"{x.ratio:.3f}" for x in bb.itertuples())
                         + " (with GTIDs off each transaction still gets an anonymous GTID event of the same size)")
        rows.append((CALLAGHAN_GTID.cite(f"On insert, GTIDs cost {claim} ({low})"),
                     _cells(g) + extra,
                     verdicts.combine(verdicts.interval(x.ci_low, x.ci_high, "above") for x in g.itertuples())
                     if len(g) else nm))
    for comparison, claim, expect in (
            ("the binlog", "The binlog, even unsynced, costs CPU at every commit: on oltp_update_non_index, turning "
                           "it off was the largest single gain", "below"),
            ("performance_schema off", "performance_schema costs throughput on oltp_update_non_index (2.3 points of "
                                       "8.0's gap measured alone)", "above")):
        g = r[(r["comparison"] == comparison) & (r["value"] == "throughput") & (r["test"] == "update-non-index")]
        a, b = next((a, b) for a, b, what in RATIOS if what == comparison)
        rows.append((KERNELMAKER_REGRESSION.cite(claim),
                     f"{a} / {b} throughput on update-non-index: " + _cells(g),
                     verdicts.combine(verdicts.interval(x.ci_low, x.ci_high, expect) for x in g.itertuples())
                     if len(g) else nm))
    return pd.DataFrame(rows, columns=["claim", "measured here", "verdict"])
