"""The group_commit chapter's claims table (verdicts.ClaimRow): the source's claims on MySQL's followers (the
herd judged; its 52.7% shown beside this lab's efficiency, not compared: other conditions) and this lab's
extensions (performance_schema's count, PostgreSQL's WALWriteLock, MariaDB's own wakeups, group sizes, run
length), each with the source's conditions, ours, the measured value with its interval over the repeats, the
ledger ids it tests, its witness (what the same runs stored that shows the mechanism happened in them) and the
verdict."""

from __future__ import annotations

import pandas as pd

from dbexp.experiments import verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import BINWANG

from .analysis import (CHECK_MEASURES, RARELY, SOURCE_EFFICIENCY, at_most_threads, check_witness, counter_witness,
                       duration_s, group_growth, last_threads, probe_runs, probe_witness, probes, run_length, served)


# the source's conditions for its 52.7% (section 8.1.2): the chapter's MySQL (8.0.27) patched to count
# each follower's waits, TPC-C with BenchmarkSQL (the section profiles its test at 500 concurrent users;
# the figure's own test is not described further), a NUMA server whose cores the section does not give
SOURCE_CONDITIONS = ("MySQL 8.0 (the chapter's 8.0.27) patched to count each follower's waits; TPC-C "
                     "(BenchmarkSQL), the section's test at 500 concurrent users; a multi-socket NUMA server "
                     "(cores not given); run length not given")
# why the source's efficiency is not compared with this lab's (the page says its efficiency is a statement about
# this machine): a follower is woken once for every group that finishes while it waits
NOT_COMPARABLE = ("the source's {pct} is one TPC-C test at 500 concurrent users on a multi-socket NUMA server; how "
                  "often a follower is woken in vain depends on how many groups finish while it waits, so on the "
                  "users, the cores and the disk, and this lab gives group commit one server CPU: its efficiency "
                  "is this machine's, not comparable with the source's number")
# "many" followers past 100 ms, one rule for every version: at least one waiting follower in RARELY's hundred
# (the share under which the page calls an event rare); the source's log line gives no share
MANY = RARELY


def _pct(mean: float, lo: float, hi: float, n: int, fmt: str = ".1%") -> str:
    """A mean with its interval over ``n`` repeats, as percentages."""
    if n < 2 or lo != lo:
        return f"{mean:{fmt}} (one run: no interval)"
    if lo == hi == mean:  # every run the same value: no spread to make an interval of
        return f"{mean:{fmt}} in each of {n} runs"
    return f"{mean:{fmt}} [{lo:{fmt}}, {hi:{fmt}}] (n = {n})"


def _cell(r, col: str, fmt: str = ".1%") -> str:
    """Column ``col`` of an over_repeats row, with its interval, as percentages."""
    return _pct(getattr(r, col), getattr(r, f"{col}_lo"), getattr(r, f"{col}_hi"), r.n, fmt)


def _num(mean: float, lo: float, hi: float, n: int, fmt: str = ".1f") -> str:
    if n < 2 or lo != lo:
        return f"{format(mean, fmt)} (one run: no interval)"
    if lo == hi == mean:  # every run the same value: no spread to make an interval of
        return f"{format(mean, fmt)} in each of {n} runs"
    return f"{format(mean, fmt)} [{format(lo, fmt)}, {format(hi, fmt)}] (n = {n})"


one_run = verdicts.one_repeat  # the results hold one run of the point a claim needs: no interval to test


def _of(table: pd.DataFrame, names) -> dict[str, dict]:
    """Rows of a witness table (analysis.probe_witness, counter_witness, check_witness) by server."""
    if table.empty:
        return {}
    return {r["series_name"]: r for r in table.to_dict("records") if r["series_name"] in set(names)}


def _named(found: dict[str, verdicts.Witness | None]) -> verdicts.Witness | None:
    """Several servers' witnesses as a row's (verdicts.witnesses), the servers whose witnesses read alike and
    held alike named together."""
    groups: dict[tuple[str, bool], list[str]] = {}
    for name, w in found.items():
        if w is not None:
            groups.setdefault((w.what, w.ok), []).append(name)
    return verdicts.witnesses({", ".join(names): verdicts.witness(ok, what) for (what, ok), names in groups.items()})


def _counted(r: dict, where: str, what_syncs: str) -> str:
    return (f"the probe counted in {where}, over {r['runs']} runs at {r['threads']} threads, {r['waiters']:,.0f} "
            f"waiting sessions and {r['waits']:,.0f} waits ({r['again']:,.0f} woken twice or more), with "
            f"{r['commits']:,.0f} commits in {r['syncs']:,.0f} {what_syncs} (groups of {r['commits'] / r['syncs']:.1f}); "
            f"waiting sessions in {r['waited']} of {r['runs']} runs, groups of more than one commit in {r['grouped']}")


def herd_witness(r: dict) -> verdicts.Witness:
    """MySQL's followers in its probe runs: groups with followers formed (more commits than binlog syncs) and
    followers waited inside Stage_manager::enroll_for, in every run."""
    return verdicts.witness(r["runs"] > 0 and r["waited"] == r["synced"] == r["grouped"] == r["runs"],
                            _counted(r, "Stage_manager::enroll_for", "binlog syncs"))


def flush_witness(r: dict) -> verdicts.Witness:
    """PostgreSQL's probe runs: flushes that waited for WALWriteLock inside XLogFlush and WAL syncs, every run."""
    return verdicts.witness(r["runs"] > 0 and r["waited"] == r["synced"] == r["grouped"] == r["runs"],
                            _counted(r, "XLogFlush (LWLockAcquireOrWait)", "WAL syncs"))


def herd(broadcast: pd.DataFrame, seen: dict[str, verdicts.Witness]) -> str:
    """The herd itself: followers woken more than once (waits per waiting follower above 1,
    verdicts.interval), each server's where its witness held, the verdict over the servers."""
    return verdicts.combine(
        one_run("probe run") if r.n < 2 or r.waits_per_waiter_lo != r.waits_per_waiter_lo else
        verdicts.witnessed(verdicts.interval(r.waits_per_waiter_lo, r.waits_per_waiter_hi, "above", 1.0),
                           seen.get(r.series_name))
        for r in broadcast.itertuples())


def waiters_beyond_followers(res: Results) -> tuple[int, int]:
    """MySQL's probe runs in which the sessions that waited outnumber the followers C - G (commits minus
    syncs) that performance_schema's (C - G) / W counts: where any do, (C - G) / W is no upper bound on
    followers over their waits. (runs where it is so, runs)"""
    pr = probe_runs(res)
    if pr.empty or not {"probe_waiters", "probe_commits", "probe_syncs"} <= set(pr):
        return 0, 0
    pr = pr[served(pr, "wakeup", "broadcast")]
    over = pr["probe_waiters"] > pr["probe_commits"] - pr["probe_syncs"]
    return int(over.sum()), len(pr)


def conditions(res: Results) -> str:
    """What every row's runs share, said once above the claims table (issue 45): the workload, the server's CPU,
    the runs' length."""
    w = res.wide
    host = (w["host"].iloc[0] or {}).get("cpus", "?") if "host" in w and len(w) else "?"
    cpus = str(w["server_cpus"].iloc[0]) if "server_cpus" in w and len(w) else "?"
    return (f"sysbench oltp_update_non_index (one-row autocommit updates), the server on CPU {cpus} of a {host}-CPU "
            f"VM, {duration_s(res):g} s runs")


def _here(res: Results, servers: str, threads: int, n: int, how: str) -> str:
    return f"{servers}; {threads} client threads, {n} runs per point; {how}"


def claims(res: Results) -> pd.DataFrame:
    rows: list[verdicts.ClaimRow] = []
    nm = verdicts.NOT_MEASURED
    top = at_most_threads(res)
    pr = probes(res)
    top_pr = last_threads(pr) if len(pr) else pr
    broadcast = top_pr[served(top_pr, "wakeup", "broadcast")] if len(top_pr) else top_pr
    lock = top_pr[served(top_pr, "wakeup", "lock release")] if len(top_pr) else top_pr
    pw = probe_witness(res)
    seen = {n: herd_witness(r) for n, r in _of(pw, broadcast["series_name"] if len(broadcast) else []).items()}
    probe_how = "each follower's waits counted inside Stage_manager::enroll_for with bpftrace (unpatched)"

    herd_claim = BINWANG.cite("MySQL's binlog group commit wakes every waiting follower with one broadcast; those "
                              "whose commit is not done go back to sleep, so a follower is woken more than once "
                              "(a thundering herd)", "source, section 8.1.2")
    efficiency_claim = BINWANG.cite(
        "Followers are activated with an efficiency of about 52.7% under high concurrency (a follower woken once "
        "100%, twice 50%, three times 33.3%)", "source, section 8.1.2")
    number = (f"{SOURCE_EFFICIENCY:.1%} (its text; from its figure 8-15, whose counts the text does not give, nor "
              f"how the followers' 1 / k are summed up); {SOURCE_CONDITIONS}")
    if len(broadcast) and broadcast["efficiency_waiters_over_waits"].notna().any():
        t, n = int(broadcast["threads"].max()), int(broadcast["n"].min())
        here = _here(res, ", ".join(broadcast["series_name"]), t, n, probe_how)
        rows.append(verdicts.ClaimRow(
            herd_claim, f"no number for the herd itself (its log showed threads woken several times); {SOURCE_CONDITIONS}",
            here,
            "; ".join(f"{r.series_name}: {_num(r.waits_per_waiter, r.waits_per_waiter_lo, r.waits_per_waiter_hi, r.n, '.2f')} "
                      f"waits per waiting follower, {1 - r.share_k1:.1%} of them woken twice or more"
                      for r in broadcast.itertuples()),
            verdicts.under_other_conditions(herd(broadcast, seen), f"{t} client threads on one server CPU here, "
                                            "500 users on a NUMA server there"),
            ids=("broadcast-herd",), witness=_named(seen)))
        rows.append(verdicts.ClaimRow(
            efficiency_claim, number, here,
            "; ".join(f"{r.series_name}: waiting followers over their waits (1 / mean k) "
                      f"{_cell(r, 'efficiency_waiters_over_waits')}, the mean of 1 / k {_cell(r, 'efficiency_mean_1_over_k')}"
                      for r in broadcast.itertuples()),
            verdicts.not_testable(NOT_COMPARABLE.format(pct=f"{SOURCE_EFFICIENCY:.1%}")),
            ids=("activation-efficiency", "efficiency-per-follower"), witness=_named(seen)))
    else:
        none = "no probe runs (MySQL with exported group-commit functions) in these results"
        rows.append(verdicts.ClaimRow(herd_claim, SOURCE_CONDITIONS, none, "\u2014", nm, ids=("broadcast-herd",)))
        rows.append(verdicts.ClaimRow(efficiency_claim, number, none, "\u2014",
                                      verdicts.not_testable(NOT_COMPARABLE.format(pct=f"{SOURCE_EFFICIENCY:.1%}")),
                                      ids=("activation-efficiency", "efficiency-per-follower")))
    if len(top):
        bound = top.dropna(subset=["efficiency_bound"])
        mine = bound[served(bound, "wakeup", "broadcast")]
        if len(mine):
            rows.append(bound_row(res, mine, pw))
    if len(lock):
        t, n = int(lock["threads"].max()), int(lock["n"].min())
        flushed = {n_: flush_witness(r) for n_, r in _of(pw, lock["series_name"]).items()}
        rows.append(verdicts.ClaimRow(
            "Our extension: on PostgreSQL every backend waiting for WALWriteLock wakes when it is released and one "
            "of them takes it, so a commit that arrived during a flush is woken twice by construction (k = 2: the "
            "flush without its record, then the one with it), not a group size, and rarely more (under "
            f"{RARELY:.0%} of waiting flushes woken three times or more)",
            "none: the source measures MySQL only",
            _here(res, ", ".join(lock["series_name"]), t, n,
                  "wakeups counted inside XLogFlush (LWLockAcquireOrWait returning false) with bpftrace"),
            "; ".join(f"{r.series_name}: woken once {r.share_k1:.1%}, twice {r.share_k2:.1%}, three times or more "
                      f"{_cell(r, 'share_k3_or_more', '.2%')} of waiting flushes (1 / mean k "
                      f"{r.efficiency_waiters_over_waits:.1%}, mean of 1 / k {r.efficiency_mean_1_over_k:.1%})"
                      for r in lock.itertuples()),
            verdicts.combine(one_run("probe run") if r.n < 2 else
                             verdicts.witnessed(verdicts.interval(r.share_k3_or_more_lo, r.share_k3_or_more_hi,
                                                                  "below", RARELY), flushed.get(r.series_name))
                             for r in lock.itertuples()),
            ids=("pg-flush-woken-twice",), witness=_named(flushed)))
    if len(top):
        own = top.dropna(subset=["efficiency_bound"])
        own = own[served(own, "wakeup", "own")]
        if len(own):
            rows.append(own_row(res, own))
        rows.append(growth_row(res))
    rows += wait_rows(res, broadcast, seen, _of(pw, broadcast["series_name"] if len(broadcast) else []))
    rows.append(length_row(res))
    return verdicts.table(rows)


def bound_row(res: Results, mine: pd.DataFrame, pw: pd.DataFrame) -> verdicts.ClaimRow:
    """performance_schema's W as a bound on followers over their waits: where any probe run counted more
    waiting sessions than C - G, it is none (verdicts.events: none should, one is enough to disagree)."""
    t, n = int(mine["threads"].max()), int(mine["n"].min())
    over, runs = waiters_beyond_followers(res)
    probed = _of(pw, mine["series_name"])
    found = {name: verdicts.witness(
        r["runs"] > 0 and r["waited"] == r["grouped"] == r["runs"],
        f"in {r['runs']} probe runs the probe counted {r['waiters']:,.0f} waiting sessions and {r['commits']:,.0f} "
        f"commits in {r['syncs']:,.0f} binlog syncs (C - G = {r['commits'] - r['syncs']:,.0f})"
        + (f"; performance_schema's W equal to the probe's waits ({r['waits']:,.0f} in all) in {r['pfs_same']} of "
           f"{r['pfs_runs']}" if r["pfs_runs"] else ""))
        for name, r in probed.items()}
    witness = _named(found)
    verdict = (verdicts.events(over, runs, float("nan"), "none") if runs else
               verdicts.not_measured("no MySQL probe run in these results counts the waiting sessions the bound is "
                                     "checked against"))
    if verdict == verdicts.DISAGREES:
        verdict = verdicts.disagrees(f"not a bound: more sessions waited than C - G in {over} of {runs} MySQL probe "
                                     "runs, so (C - G) / W can fall below followers over their waits")
    elif verdict == verdicts.AGREES:
        verdict = verdicts.agrees(f"in none of {runs} MySQL probe runs did more sessions wait than C - G")
    return verdicts.ClaimRow(
        "Our extension: without a probe, performance_schema's count W of waits on the commit condition bounds "
        "followers over their waits from above: (C - G) / W, C commits and G syncs, so C - G followers",
        "none: the source counted with a patched server",
        _here(res, ", ".join(mine["series_name"]), t, n,
              "W from performance_schema (MYSQL_BIN_LOG::COND_done, counted), G from the binlog's syncs; the "
              "probe runs' waiting sessions against their C - G"),
        "; ".join(f"{r.series_name}: (C - G) / W {_pct(r.efficiency_bound, r.efficiency_bound_lo, r.efficiency_bound_hi, r.n)}"
                  for r in mine.itertuples()) + (f"; in the probe runs, the sessions that waited outnumber C - G in "
                                                 f"{over} of {runs} MySQL runs" if runs else ""),
        verdict, ids=("pfs-waits-bound",), witness=witness)


def own_row(res: Results, own: pd.DataFrame) -> verdicts.ClaimRow:
    """MariaDB wakes each follower on its own condition: (C - G) / W near 1, where the server counted its
    waits and its groups in every run at the most threads."""
    t, n = int(own["threads"].max()), int(own["n"].min())
    counted = _of(counter_witness(res), own["series_name"])
    found = {name: verdicts.witness(
        r["runs"] > 0 and r["waited"] == r["groups"] == r["grouped"] == r["runs"],
        f"performance_schema counted waits on THD::COND_wakeup_ready in {r['waited']} of {r['runs']} runs at "
        f"{r['threads']} threads, the server its binlog groups in {r['groups']}, groups of more than one commit in "
        f"{r['grouped']}") for name, r in counted.items()}
    return verdicts.ClaimRow(
        "Our extension: MariaDB wakes each follower on a condition of its own, so a follower waits once "
        "(efficiency 100%)",
        "none: the source measures MySQL only",
        _here(res, ", ".join(own["series_name"]), t, n, "W from performance_schema (THD::COND_wakeup_ready, counted)"),
        "; ".join(f"{r.series_name}: {r.waits_per_commit:.3f} waits per commit, (C - G)/W "
                  f"{_pct(r.efficiency_bound, r.efficiency_bound_lo, r.efficiency_bound_hi, r.n)}"
                  for r in own.itertuples()),
        verdicts.combine(one_run("run") if r.n < 2 else
                         verdicts.witnessed(verdicts.interval(r.efficiency_bound_lo, r.efficiency_bound_hi, "near"),
                                            found.get(r.series_name))
                         for r in own.itertuples()),
        ids=("mariadb-own-wakeup",), witness=_named(found))


def wait_rows(res: Results, broadcast: pd.DataFrame, seen: dict[str, verdicts.Witness],
              probed: dict[str, dict]) -> list[verdicts.ClaimRow]:
    """The source's three claims on the followers' waits, where the probe timed each one (MySQL's probe
    runs at the most threads): waits past 100 ms (its log line), the waits of the followers that made them
    (long_woken_row), and a context switch per needless wakeup (switch_row). "Many" waits past 100 ms is read by one rule for every
    version: the share of waiting followers whose wait passed 100 ms, its interval over the runs against
    MANY (verdicts.interval: above agrees, below disagrees, else not resolved)."""
    timed = broadcast.dropna(subset=["long_share"]) if "long_share" in broadcast else broadcast.iloc[0:0]
    over = BINWANG.cite("Many followers waited longer than 100 ms for their group's commit (its patched server "
                        "logged 'wait too long')", "source, section 8.1.2")
    switch = BINWANG.cite("Each needless wakeup costs a context switch", "source, section 8.1.2")
    source = f"no number (a log line per wait past 100 ms); {SOURCE_CONDITIONS}"
    if timed.empty:
        none = "no probe run in these results timed the followers' waits"
        return [verdicts.ClaimRow(over, source, none, "\u2014", verdicts.NOT_MEASURED, ids=("waits-over-100-ms",)),
                verdicts.ClaimRow(LONG_WOKEN, source, none, "\u2014", verdicts.NOT_MEASURED,
                                  ids=("long-waits-woken-often",)),
                verdicts.ClaimRow(switch, f"no number; {SOURCE_CONDITIONS}", none, "\u2014", verdicts.NOT_MEASURED,
                                  ids=("context-switch-per-wakeup",))]
    t, n = int(timed["threads"].max()), int(timed["n"].min())
    here = _here(res, ", ".join(timed["series_name"]), t, n,
                 "each follower's time inside Stage_manager::enroll_for timed with bpftrace; 'many' read as at least "
                 f"{MANY:.0%} of waiting followers, for every version (the source's log line gives no share)")
    other = f"{t} client threads on one server CPU and this VM's disk, against the source's 500 users"
    waited = {name: verdicts.witness(
        r["runs"] > 0 and r["timed"] == r["waited"] == r["runs"] and r["long"] == r["long"],
        f"the probe timed the wait of each of {r['waiters']:,.0f} waiting followers inside Stage_manager::enroll_for "
        f"in {r['timed']} of {r['runs']} runs, {r['long']:,.0f} of them past 100 ms "
        f"({', '.join(str(k) for k in r['long_runs'])} by run)")
        for name, r in probed.items() if name in set(timed["series_name"])}
    long_cells = "; ".join(
        f"{r.series_name}: {_cell(r, 'long_share', '.2%')} of waiting followers past 100 ms"
        + (f" ({probed[r.series_name]['long']:,.0f} of {probed[r.series_name]['waiters']:,.0f})"
           if r.series_name in probed else "")
        + f", mean wait {_num(r.wait_ms, r.wait_ms_lo, r.wait_ms_hi, r.n, '.2f')} ms" for r in timed.itertuples())

    def long_verdict_of(r) -> str:
        if r.n < 2:
            return one_run("probe run")
        found = verdicts.interval(r.long_share_lo, r.long_share_hi, "above", MANY)
        return verdicts.under_other_conditions(verdicts.witnessed(found, waited.get(r.series_name)), other,
                                               disagreement_too=True)

    long_verdict = verdicts.combine(long_verdict_of(r) for r in timed.itertuples())
    return [verdicts.ClaimRow(over, source, here, long_cells, long_verdict, ids=("waits-over-100-ms",),
                              witness=_named(waited)),
            long_woken_row(res, timed, probed), switch_row(res, timed, probed)]


LONG_WOKEN = BINWANG.cite("When waits of over 100 ms appeared, the followers that made them had been woken several "
                          "times each", "source, section 8.1.2")


def _no_switch_count(claim: str, source: str, ids) -> verdicts.ClaimRow:
    why = ("needs probe runs that count the followers' own switches out and the waits of those past 100 ms, which "
           "the probe does from this code on: these results' probe runs predate it")
    return verdicts.ClaimRow(claim, source, "\u2014", "\u2014", verdicts.not_measured(why), ids=ids,
                             witness=verdicts.witness(
                                 False, "no count of the followers' own switches out stored with these probe runs"))


def long_woken_row(res: Results, timed: pd.DataFrame, probed: dict[str, dict]) -> verdicts.ClaimRow:
    """The followers whose wait passed 100 ms had been woken more than once (the source's 'wake up thread' logs
    beside its 'wait too long' ones): their waits per follower, the mean over the probe runs with its interval,
    above 1 (verdicts.interval)."""
    claim = LONG_WOKEN
    source = f"no number (its patched server's logs); {SOURCE_CONDITIONS}"
    lk = timed.dropna(subset=["long_k"]) if "long_k" in timed else timed.iloc[0:0]
    if "long_k" not in timed or timed["long_k"].isna().all() and not any(
            r["long_waits"] == r["long_waits"] for r in probed.values()):
        return _no_switch_count(claim, source, ("long-waits-woken-often",))
    if lk.empty:
        return verdicts.ClaimRow(claim, source, "the probe runs at the most threads", "no follower's wait passed "
                                 "100 ms in these probe runs", verdicts.not_measured("no wait past 100 ms to read"),
                                 ids=("long-waits-woken-often",))
    t, n = int(lk["threads"].max()), int(lk["n"].min())
    found = {name: verdicts.witness(
        r["runs"] > 0 and r["timed"] == r["runs"] and r["long"] == r["long"] and r["long"] > 0,
        f"the probe timed each waiting follower's wait inside Stage_manager::enroll_for and counted its waits in "
        f"{r['timed']} of {r['runs']} runs: {r['long']:,.0f} waits past 100 ms, made by followers woken "
        f"{r['long_waits']:,.0f} times in all") for name, r in probed.items() if name in set(lk["series_name"])}
    other = f"{t} client threads on one server CPU and this VM's disk, against the source's 500 users"
    cells = "; ".join(f"{r.series_name}: {_num(r.long_k, r.long_k_lo, r.long_k_hi, r.n, '.2f')} waits per follower "
                      f"whose wait passed 100 ms, {r.waits_per_waiter:.2f} per waiting follower in all"
                      for r in lk.itertuples())
    def judged(r) -> str:
        runs = [k for k in probed.get(r.series_name, {}).get("long_runs", []) if k > 0]
        if r.n < 2:
            return one_run("probe run")
        if len(runs) < 2:  # a mean over the runs that had such waits: one run gives no interval
            return verdicts.not_resolved(f"waits past 100 ms in {len(runs)} of {r.n} probe runs: no interval over "
                                         "the runs; more runs (or longer ones) would give one")
        return verdicts.under_other_conditions(verdicts.witnessed(verdicts.interval(r.long_k_lo, r.long_k_hi, "above",
                                                                                     1.0), found.get(r.series_name)),
                                               other)

    verdict = verdicts.combine(judged(r) for r in lk.itertuples())
    return verdicts.ClaimRow(
        claim, source, _here(res, ", ".join(lk["series_name"]), t, n,
                             "each follower's wait timed and its waits counted inside Stage_manager::enroll_for with "
                             "bpftrace; the waits of the followers past 100 ms over their number, per run"),
        cells, verdict, ids=("long-waits-woken-often",), witness=_named(found))


def switch_row(res: Results, timed: pd.DataFrame, probed: dict[str, dict]) -> verdicts.ClaimRow:
    """A needless wakeup costs a context switch: the follower woken before its commit is done goes back to sleep.
    The probe counts the followers' own switches out while they wait, asleep or preempted: their sleeps in a
    second wait or later (after a wakeup that found the commit not done) per such wakeup, the mean over the probe
    runs with its interval; at least one each agrees (within verdicts.NEAR_BAND), fewer disagrees (wakeups that
    found the commit not done and waited again without sleeping)."""
    claim = BINWANG.cite("Each needless wakeup costs a context switch", "source, section 8.1.2")
    source = f"no number; argued from the code; {SOURCE_CONDITIONS}"
    sw = timed.dropna(subset=["sleeps_per_needless"]) if "sleeps_per_needless" in timed else timed.iloc[0:0]
    if sw.empty:
        return _no_switch_count(claim, source, ("context-switch-per-wakeup",))
    t, n = int(sw["threads"].max()), int(sw["n"].min())
    floor = 1 - verdicts.NEAR_BAND
    found = {name: verdicts.witness(
        r["runs"] > 0 and r["slept"] == r["runs"] and r["waits"] > r["waiters"],
        f"the probe counted {r['waits'] - r['waiters']:,.0f} needless wakeups (waits beyond one per waiting follower) "
        f"in {r['runs']} runs and the followers' own switches out in {r['slept']} of them: {r['sleeps']:,.0f} asleep "
        f"({r['needless_sleeps']:,.0f} in a second wait or later), {r['preempted']:,.0f} preempted")
        for name, r in probed.items() if name in set(sw["series_name"])}
    other = f"{t} client threads on one server CPU, against the source's 500 users on a NUMA server"
    cells = "; ".join(f"{r.series_name}: {_num(r.sleeps_per_needless, r.sleeps_per_needless_lo, r.sleeps_per_needless_hi, r.n, '.2f')} "
                      f"sleeps per needless wakeup, {r.sleeps_per_wait:.2f} per wait in all" for r in sw.itertuples())
    verdict = verdicts.combine(one_run("probe run") if r.n < 2 else verdicts.under_other_conditions(
        verdicts.witnessed(verdicts.interval(r.sleeps_per_needless_lo, r.sleeps_per_needless_hi, "above", floor),
                           found.get(r.series_name)), other, disagreement_too=True) for r in sw.itertuples())
    return verdicts.ClaimRow(
        claim, source, _here(res, ", ".join(sw["series_name"]), t, n,
                             "the followers' own switches out while they wait inside Stage_manager::enroll_for "
                             f"(bpftrace on sched_switch): asleep in a second wait or later, per wait beyond the first; "
                             f"at least {floor:.2f} agrees (every needless wakeup put its follower to sleep again)"),
        cells, verdict, ids=("context-switch-per-wakeup",), witness=_named(found))


def growth_row(res: Results) -> verdicts.ClaimRow:
    """Group size grows with threads: per server, the group size at its most threads over that at its
    fewest, paired by repeat (group_growth), against 1."""
    gg = group_growth(res)
    claim = "Our extension: as threads grow, more commits share one durable sync (the group size grows)"
    if gg.empty:
        return verdicts.ClaimRow(claim, "none: the source gives no group size", "no server in these results counts "
                                 "its syncs at two thread counts", "\u2014", verdicts.NOT_MEASURED,
                                 ids=("group-size-grows",))
    t, n = int(gg["threads"].max()), int(gg["n"].min())
    counted = _of(counter_witness(res), gg["series_name"])
    found = {name: verdicts.witness(
        r["runs"] > 0 and r["synced_low"] == r["runs_low"] and r["synced"] == r["runs"],
        f"the server counted its syncs in {r['synced_low']} of {r['runs_low']} runs at {r['low_threads']} "
        f"thread{'' if r['low_threads'] == 1 else 's'} and {r['synced']} of {r['runs']} at {r['threads']}, its "
        f"settings read back as declared in {r['as_set']} of {r['all_runs']}") for name, r in counted.items()}
    return verdicts.ClaimRow(
        claim, "none: the source gives no group size",
        _here(res, ", ".join(gg["series_name"]), t, n,
              "C / G from the servers' own counts; the group size at the most threads over that at the fewest, "
              "paired by repeat (geometric mean, t interval on the logs)"),
        "; ".join(f"{r.series_name}: {r.group_size_low:.1f} commits per sync at {r.low_threads} thread{'' if r.low_threads == 1 else 's'}, "
                  f"{r.group_size_high:.1f} at {r.threads}: x{_num(r.growth, r.growth_lo, r.growth_hi, r.n)}"
                  for r in gg.itertuples()),
        verdicts.combine(one_run("run") if r.n < 2 else
                         verdicts.witnessed(verdicts.interval(r.growth_lo, r.growth_hi, "above"),
                                            found.get(r.series_name)) for r in gg.itertuples()),
        ids=("group-size-grows",), witness=_named(found))


CHECK_LABELS = {"tps": "TPS", "group_size": "group size", "efficiency_bound": "(C - G) / W"}
assert set(CHECK_LABELS) == set(CHECK_MEASURES)


def same_length(lo: float, hi: float) -> str:
    """A longer run's measure over the shorter runs': the same within verdicts.NEAR_BAND (its whole
    interval there: agrees; wholly outside: disagrees; else not resolved, too wide to tell)."""
    return verdicts.interval(lo, hi, "near")


def length_row(res: Results) -> verdicts.ClaimRow:
    """The run-length check: at the main curve's point where it ran, the check's runs (check_x times as
    long) give the same TPS, group size and (C - G) / W as the main curve's, within the interval."""
    rl = run_length(res)
    longer = "longer runs" if rl.empty else "runs " + "/".join(
        f"{x:g}" for x in sorted(set((rl["long_s"] / rl["short_s"]).round(1)))) + " times as long"
    claim = (f"Our extension: the answers do not depend on the runs' length: at the check point, {longer} give the "
             f"same TPS, group size and (C - G) / W as the page's runs, within {verdicts.NEAR_BAND:.0%}")
    source = "none: the source does not give its runs' length"
    if rl.empty:
        return verdicts.ClaimRow(claim, source, "no run-length check in these results", "\u2014",
                                 f"{verdicts.NOT_MEASURED} (no run-length check in these results)",
                                 ids=("run-length-enough",))
    checked = _of(check_witness(res), rl["series_name"])
    ran = {name: verdicts.witness(
        r["runs"] > 0 and r["full"] == r["as_set"] == r["runs"],
        f"{r['full']} of {r['runs']} check runs at {r['threads']} threads ran the {r['asked_s']:g} s asked (the "
        f"shortest {r['ran_s']:.2f} s by sysbench's clock), their settings read back as declared in {r['as_set']}")
        for name, r in checked.items()}
    cells, found = [], []
    for r in rl.itertuples():
        parts = []
        for c in CHECK_MEASURES:
            v, lo, hi = getattr(r, c), getattr(r, f"{c}_lo"), getattr(r, f"{c}_hi")
            if v == v:
                parts.append(f"{CHECK_LABELS[c]} x{v:.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if lo == lo else " (no interval)"))
                found.append(verdicts.witnessed(same_length(lo, hi), ran.get(r.series_name)))
        cells.append(f"{r.series_name} at {r.threads} threads: " + ", ".join(parts))
    here = "; ".join(dict.fromkeys(f"{r.n_long} run{'' if r.n_long == 1 else 's'} of {r.long_s:g} s against the {r.n_short} of {r.short_s:g} s"
                                   for r in rl.itertuples()))
    return verdicts.ClaimRow(
        claim, source,
        f"{', '.join(rl['series_name'])}, the durable update workload: {here}; the longer over the shorter, "
        "an interval on the logs (with one longer run, the shorter runs' spread as for one more of theirs)",
        "; ".join(cells), verdicts.combine(found), ids=("run-length-enough",), witness=_named(ran))
