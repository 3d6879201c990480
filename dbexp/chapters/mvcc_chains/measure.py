"""One point measured: a fresh ``chains`` table, an old snapshot (or, for the control, none), V
committed updates to each hot row, both readers timed at the client and by the server's clock, and
at the largest V what the collector could not remove with the snapshot open and how long it took
to reclaim the versions once it ended."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np

from dbexp import waits
from dbexp.chapters.mvcc_chains import workload as vc
from dbexp.experiments.measure import Measured, client_pinned, cpu_window

WARMUP_SHARE = 4  # unrecorded reads per reader before the timed ones: samples / 4
HOLD_S = 3.0  # InnoDB: how long purge may try to catch up (the snapshot still open) before its lag is read
# how often the garbage is read while the collector reclaims it: the time to reclaim is known to this
# much, and a collector's pass that ends between two polls is bounded by it, not measured
RECLAIM_POLL_S = 0.1


@dataclass(frozen=True)
class ChainPoint:
    versions: int  # V: committed updates to each hot row while the old snapshot is open
    column: str  # v: not indexed (HOT-eligible in PostgreSQL); k: indexed
    fillfactor: int | None  # heap fillfactor; None where the engine has none
    samples: int
    hot_rows: int
    client_cpus: str
    gc_timeout_s: float  # > 0: try to reclaim with the snapshot open, then time the reclaim after it ends
    snapshot: bool = True  # False: the control, the same updates with no old snapshot (and no readers)
    loop: int = 1  # lookups per timed statement, repeated at the server (heap engines: EXPLAIN's clock is 1 us)
    # heap engines: every timed statement's plan checked to be index probes (engines/postgres.py); part of the
    # point's key, so that a resumed sweep measures again the points stored before the check
    plan_check: bool = False


def trimmed_mean(x: np.ndarray, cut: float = 0.1) -> float:
    """The mean of the middle values (``cut`` of them off each end): robust to a few statements
    delayed by something else, and finer than a median of times the server rounds to 1 us."""
    x = np.sort(np.asarray(x, dtype=float))
    k = int(len(x) * cut)
    return float(x[k:len(x) - k].mean()) if len(x) > 2 * k else float(x.mean())


def _summary(prefix: str, reads: vc.Reads) -> dict[str, tuple[float, str]]:
    out = {f"{prefix}_p50_us": (float(np.percentile(reads.client_us, 50)), "us"),
           f"{prefix}_p99_us": (float(np.percentile(reads.client_us, 99)), "us"),
           f"{prefix}_server_p50_us": (float(np.percentile(reads.server_us, 50)), "us"),
           f"{prefix}_server_p99_us": (float(np.percentile(reads.server_us, 99)), "us"),
           f"{prefix}_server_us": (trimmed_mean(reads.server_us), "us")}
    if reads.buffers is not None:
        out[f"{prefix}_buffers"] = (float(np.mean(reads.buffers)), "pages")
    if reads.probes is not None:  # every statement's plan checked: primary-key index scans per lookup
        out[f"{prefix}_index_probes"] = (float(np.mean(reads.probes)), "per lookup")
    return out


def _reclaim(server, part, g0: dict, timeout_s: float, m: dict) -> list[tuple]:
    """After the old snapshot ended: poll the garbage until purge/autovacuum has reclaimed it."""
    series: list[tuple] = []
    t0 = time.monotonic()
    peak = vc.garbage(server, part)

    def reclaimed() -> tuple[float] | None:
        t = time.monotonic() - t0
        g = vc.garbage(server, part)
        series.extend((round(t, 2), "garbage", k, val) for k, val in g.items())
        return (t,) if part.reclaimed(g, g0, peak) else None

    done = waits.poll(reclaimed, timeout_s - (time.monotonic() - t0), interval_s=RECLAIM_POLL_S)
    if done:
        m["reclaim_s"] = (done[0], "s")
    else:
        m["reclaim_s"] = (None, "s")  # not reclaimed within the timeout: kept as missing, not as a number
        m["reclaim_timeout_s"] = (timeout_s, "s")
    return series


@contextlib.contextmanager
def statement_clock(server, part, reader, database: str = "sbtest", loop: int = 1):
    """A clock at the server of ``reader``'s timed selects (the engine's kind), with a monitor
    connection of its own; ``loop``: lookups per timed statement."""
    monitor = server.connect(database)
    try:
        yield part.clock(reader, monitor, vc.SELECT, loop)
    finally:
        monitor.close()


def _read_both(server, part, old, fresh, spec: vc.ChainSpec, samples: int, loop: int = 1) -> dict[str, vc.Reads]:
    """Both readers, after an unrecorded warm-up each, in four blocks each, in ABBA order (old fresh,
    fresh old, ...), so that a drift of the machine that is linear in time hits both alike."""
    got: dict[str, list[vc.Reads]] = {"old": [], "fresh": []}
    with statement_clock(server, part, old, loop=loop) as c_old, \
            statement_clock(server, part, fresh, loop=loop) as c_fresh:
        for conn, clock in ((old, c_old), (fresh, c_fresh)):
            vc.timed_reads(conn, spec, max(1, samples // WARMUP_SHARE), clock)  # warm-up, not kept
        pair = (("old", old, c_old), ("fresh", fresh, c_fresh))
        for block in range(4):
            for reader, conn, clock in (pair if block % 2 == 0 else pair[::-1]):
                got[reader].append(vc.timed_reads(conn, spec, samples // 4, clock, cold=True))
    return {reader: vc.Reads.joined(parts) for reader, parts in got.items()}


def _readers(server, part, old, before: int, spec: vc.ChainSpec, p: ChainPoint, m: dict, series: list) -> None:
    """Time both readers (the old snapshot and a fresh one), check that each sees what it should
    (``before``: the old snapshot's value of the first hot row before the updates), and (heap engines,
    V = 10 of the non-indexed column) record the hot row's chain on its page."""
    fresh = vc.fresh_reader(server, part)
    try:
        reads = _read_both(server, part, old, fresh, spec, p.samples, p.loop)
        m["lookups_per_statement"] = (float(p.loop), "count")
        if vc.read_value(old, spec.hot_ids()[0]) != before:
            raise RuntimeError("the old snapshot is not old: it sees the writer's updates")
        if p.versions and vc.read_value(fresh, spec.hot_ids()[0]) == before:
            raise RuntimeError("the fresh reader does not see the writer's updates")
    finally:
        fresh.close()
    for reader, r in reads.items():  # hot rows as the reader, cold neighbours apart
        m.update(_summary(reader, r.part(hot=True)))
        m.update(_summary(f"{reader}_cold", r.part(hot=False)))
    if part.version_store == "heap" and p.column == "v" and p.versions == 10:
        for pos, item in enumerate(vc.chain_on_page(server, part, old)):
            series += [(float(pos), "pageinspect", k, float(val)) for k, val in item.items()]


def measure_point(server, part, p: ChainPoint) -> Measured:
    """One point on ``server``, whose engine part is ``part``."""
    spec = vc.ChainSpec(column=p.column, fillfactor=p.fillfactor or 100, hot=p.hot_rows)
    series: list[tuple] = []
    m: dict[str, tuple[float | None, str]] = {}
    with client_pinned(p.client_cpus), cpu_window(server, p.client_cpus) as cpu:
        server.ensure_database("sbtest")
        vc.reset_table(server, part, spec)
        # the previous point's versions are gone before this one starts (recorded if they were not)
        settled = vc.settle_garbage(server, part)
        m["settle_timed_out"] = (float(not settled), "bool")
        m["precondition_ok"] = (float(settled), "bool")  # the declared state: no earlier versions left
        g0 = vc.garbage(server, part)
        with (vc.old_snapshot(server, part) if p.snapshot else contextlib.nullcontext()) as old:
            before = vc.read_value(old, spec.hot_ids()[0]) if old is not None else None
            write_s = vc.update_hot_rows(server, spec, p.versions)
            commits = p.versions * spec.hot
            m["write_s"] = (write_s, "s")
            m["commits"] = (float(commits), "count")
            if commits:
                m["writer_us"] = (write_s * 1e6 / commits, "us per update")
            if old is not None:
                _readers(server, part, old, before, spec, p, m, series)
            g1 = vc.garbage(server, part)
            # how many updates were HOT, where the engine counts it (read after the readers: the counts have arrived)
            m.update(vc.update_kinds(server, part, commits))
            for name in ("history_list_length", "purge_lag_trx", "n_dead_tup"):
                if name in g1:
                    m[f"garbage_{name}"] = (g1[name] - g0.get(name, 0.0), "count")
            if "relation_bytes" in g1:
                m["relation_bytes"] = (g1["relation_bytes"], "bytes")
            if p.gc_timeout_s > 0:  # can the collector remove them now, while the snapshot (if any) is open?
                m.update(vc.held_versions(server, part, HOLD_S))
        if p.gc_timeout_s > 0:
            series += _reclaim(server, part, g0, p.gc_timeout_s, m)
    m.update(cpu)  # the VM's steal over the whole run
    what = "no snapshot (control)" if not p.snapshot else "old snapshot"
    return Measured(m, [], series, f"version chains: {p.versions} updates x {spec.hot} hot rows, "
                                   f"column {spec.column}, {what}")
