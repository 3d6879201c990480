"""The claims of the MVCC comparison beside what this chapter measured, each with its verdict."""

from __future__ import annotations

import pandas as pd

from dbexp.chapters.mvcc_chains.analysis import (at_largest_v, collector_passes, column_against_column, excess_at,
                                                 interval, per_version)
from dbexp.experiments import verdicts
from dbexp.experiments.chapter import Results
from dbexp.experiments.sources import KERNELMAKER_MVCC

def claims(res: Results) -> pd.DataFrame:
    t = at_largest_v(res)
    slopes = per_version(res)
    link = KERNELMAKER_MVCC.cite
    hot_v = 10  # the V whose chain still fits on one page (see the pageinspect table)
    ex10 = excess_at(res, hot_v)

    def pick(table: pd.DataFrame, store: str, variant: str | None = None) -> pd.DataFrame:
        if table.empty:
            return table
        g = table[table["store"] == store]
        return g[g["variant"] == variant] if variant else g

    def ns(r) -> str:
        return f"{r['ns_per_version']:+,.0f} ns [{r['ci_low']:+,.0f}, {r['ci_high']:+,.0f}]"

    # 1. InnoDB: the old reader pays per version (its excess over the fresh reader grows with V)
    my = pick(slopes, "undo")
    my = my[my["reader"] == "old - fresh"]
    claim1 = ("; ".join(f"{r['series_name']} ({r['variant']}): old over fresh {ns(r)} per version"
                        for _, r in my.iterrows()) or verdicts.NOT_MEASURED,
              verdicts.combine(verdicts.interval(r["ci_low"], r["ci_high"], "above", 0) for _, r in my.iterrows()))
    # 2. PostgreSQL, HOT chain on one page: the fresh reader pays for the older versions at V = 10
    pg = pick(ex10, "heap", "col v, ff 70")
    claim2 = ("; ".join(f"{r['series_name']}: fresh over old at V = {hot_v} {ns(r)} per version"
                        for _, r in pg.iterrows()) or verdicts.NOT_MEASURED,
              verdicts.combine(verdicts.interval(r["ci_low"], r["ci_high"], "above", 0) for _, r in pg.iterrows()))
    # 3. PostgreSQL, indexed column: a new index entry per version, so both readers visit every version;
    # judged only where k and v share a fillfactor (the column the one change)
    claim3 = _indexed_column(column_against_column(res))
    # 4. no collector removes what an open snapshot may need; it does once the snapshot ends (the time that
    # takes is when the collector next ran, said as such)
    cp = collector_passes(res)
    claim4 = (_held(t, cp), _held_verdict(t))
    # 5. the collectors' work: not testable on a table this small; what the polls say of it is shown
    claim5 = _collector_work(cp)
    rows = [
        (link("InnoDB keeps the newest version in the clustered index and walks undo records from new to old, "
              "so a reader with an old snapshot pays for every newer version"), *claim1),
        (link("PostgreSQL reaches versions from the oldest along the HOT chain (old to new), so a fresh reader "
              f"pays for the older versions it must step over (judged at V = {hot_v}, where the chain stays on "
              "one page)"), *claim2),
        (link("An update of an indexed column is not HOT: the new version gets its own index entries, so the "
              "chain is no longer walked within one page") + "; so, we infer, each such version costs a read more "
              "than a HOT one (judged for both readers, the indexed column k against v at the same fillfactor)",
         *claim3),
        (link("Purge (InnoDB) and VACUUM (PostgreSQL) cannot remove versions an open snapshot may still need; "
              "they reclaim them after it ends"), *claim4),
        (link("VACUUM scans the heap, then the indexes, for dead tuples, which for a frequently updated table can "
              "be much scanning; purge takes the undo logs of the oldest commits from a list kept in commit order"),
         *claim5),
    ]
    return pd.DataFrame(rows, columns=["claim", "measured here", "verdict"])


def _indexed_column(cmp: pd.DataFrame) -> tuple[str, str]:
    """Per PostgreSQL server and reader: the indexed column k's cost per version less v's (a Welch
    interval over the per-repeat slopes, :func:`column_against_column`), judged only where k and v were
    measured at the same fillfactor, so that the column is the one thing that differs. A pair whose
    fillfactor differs too is shown, with what else it changes, and the verdict is 'not measured at
    this scale'."""
    def pairs(t) -> str:
        return "; ".join(f"{r['series_name']} ({r['reader']} reader): k at fillfactor {r['ff_k']} less v at "
                         f"{r['ff_v']} {interval(r)} ns per version (k {r['k']:+,.0f}, v {r['v']:+,.0f})"
                         for _, r in t.iterrows())

    same = cmp[cmp["same_fillfactor"]] if len(cmp) else cmp
    if len(same):
        return pairs(same), verdicts.combine(verdicts.interval(r["ci_low"], r["ci_high"], "above", 0)
                                             for _, r in same.iterrows())
    if cmp.empty:
        return verdicts.NOT_MEASURED, verdicts.NOT_MEASURED
    return (f"{verdicts.NOT_MEASURED}: no fillfactor has both columns in these results. The pair they have "
            "changes two things at once, the column and the fillfactor, so it cannot say which made the "
            f"difference: {pairs(cmp)}", verdicts.NOT_MEASURED)


HELD_SHARE = 0.5  # "held": at least half the point's commits' versions unremoved with the snapshot open


def _held_verdict(t: pd.DataFrame) -> str:
    """Agrees where, with the snapshot open, the collector could not remove at least half of what
    the updates left (HELD_SHARE of the commits), the control without a snapshot left less than a
    tenth of that, and the versions were reclaimed after the snapshot ended."""
    if t.empty or t["held_snapshot"].isna().all():
        return verdicts.NOT_MEASURED
    held = t["held_snapshot"] >= HELD_SHARE * t["commits"]
    free = t["held_control"] < 0.1 * t["held_snapshot"]
    reclaimed = t["reclaim_s"].notna()
    n = len(t)
    if held.all() and free.all() and reclaimed.all():
        return (f"agrees: held with the snapshot, not without it, and reclaimed after it ended in {n} of {n}")
    if not held.all():
        return f"disagrees: the collector removed most versions under the open snapshot in {int((~held).sum())} of {n}"
    if not free.all():
        return f"not resolved: the control without a snapshot also kept its versions in {int((~free).sum())} of {n}"
    return (f"not resolved: reclaimed within the timeout in {int(reclaimed.sum())} of {n} only "
            "(a missing reclaim time cannot tell slow from never)")


HELD_WORDS = {"undo": "transaction numbers of purge lag", "heap": "dead tuples VACUUM could not remove"}
GARBAGE_WORDS = {"purge_lag_trx": "transaction numbers of purge lag", "n_dead_tup": "dead tuples"}


def _range(s: pd.Series, fmt: str) -> str:
    lo, hi = format(s.min(), fmt), format(s.max(), fmt)
    return lo if lo == hi else f"{lo} to {hi}"


def _held(t: pd.DataFrame, cp: pd.DataFrame) -> str:
    """Held with the snapshot open, not in the control, reclaimed after it ended: per server over its
    variants (the time to reclaim over every run, from ``cp``: :func:`collector_passes`), and that this
    time is when the collector next ran."""
    parts = []
    for name, g in t.groupby("series_name", sort=False) if len(t) else []:
        runs = cp[cp["series_name"] == name]["reclaim_s"] if len(cp) else pd.Series(dtype=float)
        reclaim = ("not reclaimed within the timeout" if g["reclaim_s"].isna().any() or runs.empty else
                   f"reclaimed {_range(runs, '.1f')} s after it ended ({len(runs)} runs)")
        words = HELD_WORDS.get(g["version_store"].iloc[0], g["held_unit"].iloc[0])
        parts.append(f"{name}: {_range(g['held_snapshot'], ',.0f')} {words} with the snapshot open, "
                     f"{_range(g['held_control'], ',.0f')} without; {reclaim}")
    if parts:
        parts[-1] += (". The time to reclaim is when each collector next ran after the snapshot ended (the next "
                      "claim), not how long its work took")
    return "; ".join(parts) or verdicts.NOT_MEASURED


def _collector_work(cp: pd.DataFrame) -> tuple[str, str]:
    """The source's contrast of the collectors' work (VACUUM scans heap and indexes, purge takes the oldest
    undo logs from an ordered list): not testable on a table this small, and what the polls do say (when
    each collector ran, and that its pass fitted within one poll) is shown."""
    if cp.empty:
        return verdicts.NOT_MEASURED, verdicts.NOT_MEASURED
    parts = []
    for name, g in cp.groupby("series_name"):
        rate = g["removed_per_s"].dropna()
        what = GARBAGE_WORDS.get(g["measure"].iloc[0], g["measure"].iloc[0])
        parts.append(f"{name}: its pass began after {_range(g['waited_s'], '.1f')} s and ended within one poll "
                     f"({g['poll_s'].median():.1f} s) in {int(g['one_poll'].sum())} of {len(g)} runs"
                     + (f", removing at least {rate.min():,.0f} {what} per second" if len(rate) else ""))
    poll = cp["poll_s"].median()
    verdict = verdicts.not_testable(
        f"a 1,000-row table whose versions sit on a few pages, so no scan is large; the time to reclaim is when "
        f"each collector next ran (InnoDB's purge thread when idle, autovacuum_naptime = 1), and each pass "
        f"fitted within one poll ({poll:.1f} s) in {int(cp['one_poll'].sum())} of {len(cp)} runs: the polls "
        "bound the work, they do not measure it")
    return "; ".join(parts), verdict
