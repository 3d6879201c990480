"""The chapter's estimates from its runs: each reader's cost per version at the server (fitted over
V, and at V = 10 within each run against the cold neighbours), what each reader and the writer took
at the largest V, what the collector held, and the garbage and pageinspect series as tables; and what the
page's charts and tables draw: each reader's time per read by server, variant and V, the garbage series in
words, the rows at the largest V and the costs per version with their intervals, in the chapter's order of
panels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dbexp.chapters.mvcc_chains.chapter import PARTS
from dbexp.experiments import stats, steps
from dbexp.experiments.chapter import Results, memo
from dbexp.servers.registry import flavor_class

READERS = ("fresh", "old")  # the order of the readers in every legend (the first drawn solid, the old dashed)
PAYER = {"undo": "old", "heap": "fresh"}  # who the sources say pays, per kind of version store


def _payer_and_other(store: str) -> tuple[str, str]:
    payer = PAYER.get(store, "old")
    return payer, READERS[1 - READERS.index(payer)]


def mechanics(res: Results) -> pd.DataFrame:
    """The step-by-step runs (engines/page_mechanics.py, engines/undo_mechanics.py), one row each with its
    observations and its engine's ``version_store``."""
    w = res.wide
    if w.empty:
        return w
    m = w[steps.is_step_run(w)].copy()
    m["version_store"] = [PARTS.part_for_name(f).version_store for f in m["flavor"]]
    return m


# the page steps' observations as the page names them (engines/page_mechanics.py), in the steps' order
MECHANICS_LABELS = {
    "tuple_old_bytes": "1. old tuple (bytes)", "tuple_new_bytes": "1. new tuple after an update of 4 bytes (bytes)",
    "hot_versions_on_page": "2. versions on the page when the chain left it",
    "free_before_break": "2. free space before that update (bytes)", "version_needs": "2. what a version needs (bytes)",
    "key_index_pointers": "3. index pointers for the key",
    "cross_ctid_other_page": "3. the first page's last version points to another page",
    "cross_hot_updated": "3. ... and is marked HOT-updated", "cross_next_heap_only": "3. the next version is heap-only",
    "cross_lookup_rows_fresh": "3. rows a lookup of the key returned to a new snapshot",
    "cross_lookup_rows_old": "3. ... to the old snapshot",
    "prune_normal_before": "4. normal line pointers before the read", "prune_normal_after": "4. ... after it (no VACUUM)",
    "redirect_root_flags": "5. the root's lp_flags after VACUUM (2: redirect)",
    "redirect_to_live": "5. it points to the live version", "redirect_key_pointers": "5. index pointers for the key",
    "redirect_lookup_found": "5. a lookup through the index finds the row",
    "xid_holder_has_xid": "6. the holder has a transaction id", "xid_holder_has_snapshot": "6. ... and a snapshot",
    "xid_held_dead": "6. dead versions VACUUM could not remove (of 10)",
    "xid_removed_after": "6. ... removed once the holder ended",
    "vm_scanned_pages": "7. pages VACUUM scanned after one row changed", "vm_table_pages": "7. ... of the table's",
    "read_saw_committed": "8. a read under a writer's lock got the committed value",
    "read_under_write_ms": "8. ... in (ms)", "write_under_read_ms": "8. an update under a reader's snapshot took (ms)",
    "reader_still_sees_old": "8. ... the snapshot still sees the old value",
    "tag_insert_xmin": "9. the first version's xmin is the inserter's id", "tag_update_xmax": "9. ... its xmax the updater's",
    "tag_ctid_to_new": "9. ... its ctid the new version", "tag_new_xmin": "9. the new version's xmin is the updater's",
    "tag_new_ctid_self": "9. ... its ctid itself", "tag_delete_xmax": "9. a deleted tuple's xmax is the deleter's id",
    "tag_delete_ctid_self": "9. ... its ctid itself",
    "rule_old_snapshot": "9. xmin visible and xmax not picks the version the old snapshot read",
    "rule_new_snapshot": "9. ... and the one a new snapshot read",
    # undo (engines/undo_mechanics.py)
    "undo_int_bytes_per_row": "1. undo per row, a 4-byte integer changed (bytes; 1 page = 8.2)",
    "undo_string_bytes_per_row": "1. undo per row, a 400-byte string changed (bytes; 1 page = 8.2)",
    "lag_after_commits": "2. purge's lag right after 300 commits (transaction numbers, 2 per commit)",
    "lag_older_writer": "2. ... lowest seen with an older writer open (polled for up to 10 s)",
    "purge_older_writer_s": "2. ... reached in (s)",
    "lag_older_reader": "2. ... with a consistent snapshot open instead (3 s)",
    "index_pages_before": "4. the table's clustered index pages before the updates",
    "index_pages_after": "4. ... after its 4,000 updates",
    "id_gap_after_commit": "5. the id counter moved by a committed write (median of 20)",
    "id_gap_after_locking": "5. ... by a committed locking read (no undo)",
    "id_gap_after_rollback": "5. ... by a rolled-back write (it ends in a commit)",
    "own_change_seen": "6. a snapshot's transaction sees its own later write",
    "other_change_hidden": "6. ... and not another session's later commit",
    "lob_partial_update": "7. this version updates a LOB partially (MySQL from 8.0.3)",
    "lob_pages_per_row": "7. LOB pages per document of about 66 KB",
    "lob_small_new_pages_per_row": "7. new LOB pages per row, a 50-byte change",
    "lob_small_undo_bytes_per_row": "7. ... undo per row (bytes; 1 page = 164)",
    "lob_large_new_pages_per_row": "7. new LOB pages per row, a 2,000-byte change",
    "lob_large_undo_bytes_per_row": "7. ... undo per row (bytes)",
    "lob_snapshot_sees_old": "7. the older snapshot still reads the old documents",
}
UNDO_STEPS = ("undo_int_bytes_per_row", "undo_string_bytes_per_row", "lag_after_commits", "lag_older_writer",
              "purge_older_writer_s", "lag_older_reader", "read_saw_committed", "read_under_write_ms",
              "write_under_read_ms", "reader_still_sees_old", "index_pages_before", "index_pages_after",
              "id_gap_after_commit", "id_gap_after_locking", "id_gap_after_rollback", "own_change_seen", "other_change_hidden",
              "lob_partial_update", "lob_pages_per_row", "lob_small_new_pages_per_row", "lob_small_undo_bytes_per_row",
              "lob_large_new_pages_per_row", "lob_large_undo_bytes_per_row", "lob_snapshot_sees_old")
# the undo probe numbers its no-waits step 3 (the heap's is 8)
UNDO_LABELS = {**MECHANICS_LABELS, "read_saw_committed": "3. a read under a writer's lock got the committed value",
               "read_under_write_ms": "3. ... in (ms)", "write_under_read_ms": "3. an update under a reader's snapshot took (ms)",
               "reader_still_sees_old": "3. ... the snapshot still sees the old value"}
YES_NO = ("redirect_to_live", "redirect_lookup_found", "xid_holder_has_xid", "xid_holder_has_snapshot",
          "read_saw_committed", "reader_still_sees_old", "cross_ctid_other_page", "cross_hot_updated",
          "cross_next_heap_only", "tag_insert_xmin", "tag_update_xmax", "tag_ctid_to_new", "tag_new_xmin",
          "tag_new_ctid_self", "tag_delete_xmax", "tag_delete_ctid_self", "rule_old_snapshot", "rule_new_snapshot",
          "own_change_seen", "other_change_hidden", "lob_partial_update", "lob_snapshot_sees_old")
# times, which differ run to run, and pages per row (fractions): a range, to a tenth
MS = ("read_under_write_ms", "write_under_read_ms", "purge_older_writer_s", "lob_pages_per_row",
      "lob_small_new_pages_per_row", "lob_large_new_pages_per_row")


def mechanics_rows(res: Results, store: str) -> pd.DataFrame:
    """The step-by-step runs of one kind of version store ("heap", "undo") as the page's table: one row per
    observation, one column per server (steps.table)."""
    m = mechanics(res)
    if m.empty:
        return m
    m = m[m["version_store"] == store]
    # the observations this store's runs have, in its probe's order (the undo probe numbers its steps its own way)
    labels = ({c: UNDO_LABELS[c] for c in UNDO_STEPS} if store == "undo" else MECHANICS_LABELS)
    return steps.table(m, labels, YES_NO, MS)


def tidy(res: Results) -> pd.DataFrame:
    """The chain points' runs (the page-mechanics runs apart: mechanics()). Computed once per results."""
    return memo(res, "mvcc_chains.tidy", lambda: _tidy(res))


def _version_stores(flavors: pd.Series) -> list[str]:
    """Each run's kind of version store, from its flavor (looked up once per flavor)."""
    store = {f: PARTS.part_for_name(f).version_store for f in flavors.unique()}
    return [store[f] for f in flavors]


def _tidy(res: Results) -> pd.DataFrame:
    w = res.wide.copy()
    w = w[~steps.is_step_run(w)]
    w["versions"] = w["versions"].astype(int)
    # a heap fillfactor where the engine has one (results stored before typed parameters say "-")
    ff = w["fillfactor"].where(w["fillfactor"].notna() & (w["fillfactor"].astype(str) != "-"))
    w["variant"] = "col " + w["column"] + np.where(ff.notna(), ", ff " + ff.astype(str).str.replace(
        r"\.0$", "", regex=True), "")
    w["ff"] = pd.to_numeric(ff, errors="coerce")  # the fillfactor as a number (NaN: the engine has none)
    w["version_store"] = _version_stores(w["flavor"])
    snap = w["snapshot"] if "snapshot" in w else pd.Series(True, index=w.index)
    w["snapshot"] = [_snapshot_on(x) for x in snap]
    return w


def _snapshot_on(x) -> bool:
    """A point's ``snapshot`` parameter as stored (runs from before the controls have none: True)."""
    if isinstance(x, str):
        return x.strip().lower() not in ("false", "0")
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return True
    return bool(x)


def readers(res: Results) -> pd.DataFrame:
    """The runs with an old snapshot and both readers timed (the controls have neither). Computed once
    per results."""
    def compute():
        w = tidy(res)
        return w[w["snapshot"]]
    return memo(res, "mvcc_chains.readers", compute)


def per_version(res: Results, value: str = "server_us") -> pd.DataFrame:
    """Each reader's cost per version at the server: the slope of its time per read (ns) on V, each
    repeat fitted on its own and a t interval over the repeats; and the same for the payer's
    excess over the other reader, paired within each run (both read the same rows, interleaved). Computed
    once per results and value."""
    return memo(res, f"mvcc_chains.per_version.{value}", lambda: _per_version(res, value))


def _by_variant(w: pd.DataFrame, value: str):
    """The runs of ``w`` per server, variant and kind of version store (sorted), each group with only the
    columns the per-version estimates read: ``versions``, ``repeat`` and each reader's ``value`` (and
    ``cold_`` value, where the runs have one)."""
    keys = ["series_name", "variant", "version_store"]
    cols = [c for r in READERS for c in (f"{r}_{value}", f"{r}_cold_{value}") if c in w]
    return w[keys + ["versions", "repeat"] + cols].groupby(keys)


def _has_cold(g: pd.DataFrame, payer: str, value: str) -> bool:
    """Whether every run of ``g`` timed the payer on the hot rows' cold neighbours too."""
    return f"{payer}_cold_{value}" in g and bool(g[f"{payer}_cold_{value}"].notna().all())


def _excess_over_cold(g: pd.DataFrame, payer: str, other: str, value: str) -> np.ndarray:
    """Per run (ns): the payer's time on the hot rows less its time on their cold neighbours, less the
    same difference for the other reader."""
    def col(c: str) -> np.ndarray:
        return g[c].to_numpy(float)
    return ((col(f"{payer}_{value}") - col(f"{payer}_cold_{value}"))
            - (col(f"{other}_{value}") - col(f"{other}_cold_{value}"))) * 1000


def _payer_excess(g: pd.DataFrame, payer: str, other: str, value: str) -> np.ndarray:
    """Per run (ns): the payer's time less the other reader's."""
    return (g[f"{payer}_{value}"].to_numpy(float) - g[f"{other}_{value}"].to_numpy(float)) * 1000


def _mean_per_repeat(values: np.ndarray, g: pd.DataFrame, v: int) -> pd.Series:
    """The mean of ``values`` (one per run of ``g``) over the runs at V = v, per repeat (sorted)."""
    at = g["versions"].to_numpy() == v
    return pd.Series(values[at]).groupby(g["repeat"].to_numpy()[at]).mean()


def _per_version(res: Results, value: str) -> pd.DataFrame:
    w = readers(res)
    rows = []
    for (name, variant, store), g in _by_variant(w, value):
        payer, other = _payer_and_other(store)
        versions, repeat = g["versions"].to_numpy(), g["repeat"].to_numpy()
        series = {r: g[f"{r}_{value}"].to_numpy() * 1000 for r in READERS}
        series[f"{payer} - {other}"] = _payer_excess(g, payer, other, value)
        for what, y in series.items():
            slope, lo, hi = stats.slope_ci(versions, y, repeat)
            rows.append({"series_name": name, "variant": variant, "store": store, "reader": what,
                         "ns_per_version": slope, "ci_low": lo, "ci_high": hi, "repeats": g["repeat"].nunique(),
                         "vmax": int(versions.max())})
    return pd.DataFrame(rows)


def excess_at(res: Results, v: int, value: str = "server_us") -> pd.DataFrame:
    """What a chain of v versions costs the reader the sources say pays, per version, one value per
    repeat with a t interval over the repeats (excess_repeats). Computed once per results, v and value."""
    return memo(res, f"mvcc_chains.excess_at.{v}.{value}", lambda: _excess_at(res, v, value))


def _excess_at(res: Results, v: int, value: str) -> pd.DataFrame:
    rows = []
    for (name, variant, store, payer), g in excess_repeats(res, v, value).groupby(
            ["series_name", "variant", "store", "payer"]):
        m, lo, hi = stats.mean_ci(g["ns_per_version"].to_numpy())
        rows.append({"series_name": name, "variant": variant, "store": store, "payer": payer, "versions": v,
                     "ns_per_version": m, "ci_low": lo, "ci_high": hi, "repeats": len(g)})
    return pd.DataFrame(rows)


def excess_repeats(res: Results, v: int, value: str = "server_us") -> pd.DataFrame:
    """What a chain of v versions costs the reader the sources say pays, per version, one row per
    repeat. Within each run: the payer's time on the hot rows less its time on their cold neighbours
    (same page, no versions), less the same difference for the other reader (a difference in
    differences: what the rows, the run and a reader's own statement share drops out). Runs measured
    before the cold rows: the payer's excess over the other reader at V = v less that at V = 0, across
    runs. Computed once per results, v and value."""
    return memo(res, f"mvcc_chains.excess_repeats.{v}.{value}", lambda: _excess_repeats(res, v, value))


def _excess_repeats(res: Results, v: int, value: str) -> pd.DataFrame:
    w = readers(res)
    rows = []
    for (name, variant, store), g in _by_variant(w, value):
        payer, other = _payer_and_other(store)
        if _has_cold(g, payer, value):
            d = _mean_per_repeat(_excess_over_cold(g, payer, other, value), g, v).dropna()
        else:
            ex = _payer_excess(g, payer, other, value)
            d = (_mean_per_repeat(ex, g, v) - _mean_per_repeat(ex, g, 0)).dropna()
        if d.empty or not v:
            continue
        rows += [{"series_name": name, "variant": variant, "store": store, "payer": payer, "versions": v,
                  "repeat": r, "ns_per_version": x / v} for r, x in d.items()]
    return pd.DataFrame(rows, columns=["series_name", "variant", "store", "payer", "versions", "repeat",
                                       "ns_per_version"])


def beyond_variant(res: Results, v: int, variant: str, control: str, value: str = "server_us") -> pd.DataFrame:
    """excess_repeats of ``variant`` less that of ``control`` in the same repeat (a variant with the same
    page room and no chain to walk: what the two share, the clock's rounding included, drops out), per
    server: the mean per version with a t interval over the repeats."""
    e = excess_repeats(res, v, value)
    rows = []
    for name, g in e.groupby("series_name"):
        a = g[g["variant"] == variant].set_index("repeat")["ns_per_version"]
        b = g[g["variant"] == control].set_index("repeat")["ns_per_version"]
        d = (a - b).dropna()
        if d.empty:
            continue
        m, lo, hi = stats.mean_ci(d.to_numpy())
        rows.append({"series_name": name, "variant": variant, "control": control, "versions": v,
                     "ns_per_version": m, "ci_low": lo, "ci_high": hi, "repeats": len(d)})
    return pd.DataFrame(rows)


def clock_loop(res: Results) -> int:
    """Lookups per timed statement of the heap engines' runs with readers (1 where they predate the loop,
    or none ran)."""
    w = tidy(res)
    if "lookups_per_statement" not in w or w.empty:
        return 1
    heap = w[w["version_store"] == "heap"]["lookups_per_statement"].dropna()
    return int(heap.min()) if len(heap) else 1


PAGE_BYTES = 8192  # PostgreSQL's block size: the relation's heap pages are its bytes over it
# each reader's lookups, hot rows and their cold neighbours: (column prefix, reader, rows)
LOOKUPS = tuple((f"{r}{c}", r, "cold" if c else "hot") for r in READERS for c in ("", "_cold"))


def lookups(res: Results) -> pd.DataFrame:
    """The heap engines' runs with readers, one row each: server, variant, V, repeat; each reader's buffers per
    lookup on the hot rows and on their cold neighbours (``fresh_buffers``, ``fresh_cold_buffers``, ...); the
    primary-key index scans per lookup that every statement's checked plan ran (``..._index_probes``, 1: an
    index probe; NaN where the runs predate the plan check); the lookups per statement, the table's heap pages
    after the updates, the updates and how many of them were HOT (NaN where not counted). Computed once per
    results."""
    return memo(res, "mvcc_chains.lookups", lambda: _lookups(res))


def _lookups(res: Results) -> pd.DataFrame:
    w = readers(res)
    w = w[w["version_store"] == "heap"]
    cols = ["run_id", "series_name", "variant", "column", "ff", "versions", "repeat", "commits"]
    values = ([f"{p}_buffers" for p, _, _ in LOOKUPS] + [f"{p}_index_probes" for p, _, _ in LOOKUPS]
              + ["lookups_per_statement", "relation_bytes", "updates", "hot_updates"])
    out = w[[c for c in cols if c in w]].copy()
    for c in values + ["commits"]:
        out[c] = pd.to_numeric(w[c], errors="coerce") if c in w else float("nan")
    out["heap_pages"] = out["relation_bytes"] / PAGE_BYTES
    return out.drop(columns=["relation_bytes"]).sort_values(["series_name", "variant", "versions", "repeat"],
                                                            kind="stable").reset_index(drop=True)


def plan_checked(g: pd.DataFrame) -> bool:
    """Whether every run of ``g`` (rows of :func:`lookups`) stored its plan check for both readers, hot rows
    and cold neighbours, each an index probe per lookup (the check fails a run that is not, so a stored value
    is 1)."""
    cols = [f"{p}_index_probes" for p, _, _ in LOOKUPS]
    return bool(len(g)) and bool(g[cols].notna().all().all()) and bool((g[cols] == 1).all().all())


def chains_on_page(res: Results) -> pd.DataFrame:
    """Per run whose hot row's chain was read with pageinspect (the non-indexed column at V = 10): the
    versions on the chain from the one the old snapshot sees (``versions``), how many are heap-only (reached
    only along the chain, ``heap_only``) and the pages they lie on (``pages``)."""
    s = res.series
    p = s[s["source"] == "pageinspect"] if len(s) else s
    if p.empty:
        return pd.DataFrame(columns=["run_id", "versions", "heap_only", "pages"])
    wide = p.pivot_table(index=["run_id", "t"], columns="name", values="value").reset_index()
    return wide.groupby("run_id").agg(versions=("t", "count"), heap_only=("heap_only", "sum"),
                                      pages=("block", "nunique")).reset_index()


def lookup_rows(res: Results) -> pd.DataFrame:
    """What a PostgreSQL lookup touched, per server, variant and V, for the page's table: whether every
    statement's plan was checked to be index probes of the primary key (``plan``), each reader's buffers per
    lookup on the hot rows and their cold neighbours (medians over repeats), the buffers a statement touched
    against the table's heap pages, and the updates that were HOT."""
    t = lookups(res)
    if t.empty:
        return t
    rows = []
    for (name, variant, v), g in t.groupby(["series_name", "variant", "versions"], sort=False):
        loop = g["lookups_per_statement"].max()
        checked = plan_checked(g)
        plan = f"{loop:.0f} index probes, checked" if checked else "not stored"
        row = {"series_name": name, "variant": variant, "versions": int(v), "repeats": len(g), "plan": plan,
               **{f"{p}_buffers": g[f"{p}_buffers"].median() for p, _, _ in LOOKUPS},
               "statement_buffers": g["fresh_buffers"].median() * loop, "heap_pages": g["heap_pages"].median()}
        upd, hot = g["updates"].median(), g["hot_updates"].median()
        row["hot_updates"] = (f"{hot:,.0f} of {upd:,.0f}" if upd == upd and hot == hot else
                              "not counted" if v else "none")
        rows.append(row)
    return _in_order(pd.DataFrame(rows))


def _in_order(t: pd.DataFrame) -> pd.DataFrame:
    """Rows per server, its variants in the chapter's order, V rising."""
    t = t.copy()
    t["short"] = t["variant"].str.removeprefix("col ")
    order = {label: i for i, label in enumerate(variant_order(t["short"]))}
    return (t.assign(_o=t["short"].map(order)).sort_values(["series_name", "_o", "versions"], kind="stable")
            .drop(columns="_o").reset_index(drop=True))


def column_against_column(res: Results, value: str = "server_us") -> pd.DataFrame:
    """PostgreSQL: each reader's cost per version of the indexed column k less that of v (ns per
    version), for every pair of a k and a v variant of one server: the mean of k's per-repeat slopes
    less v's with a Welch interval (the two are different points, each repeat walking them in its own
    order, so nothing pairs them). ``same_fillfactor``: only the column differs, the comparison of a
    HOT against a non-HOT update; otherwise the fillfactor differs too and the difference mixes both.
    Computed once per results and value."""
    return memo(res, f"mvcc_chains.column_against_column.{value}", lambda: _column_against_column(res, value))


def _column_against_column(res: Results, value: str) -> pd.DataFrame:
    w = readers(res)
    heap = w[w["version_store"] == "heap"]
    rows = []
    for name, g in heap.groupby("series_name"):
        slopes = {}
        for (column, ff), gv in g.groupby(["column", g["ff"].fillna(-1)]):
            for reader in READERS:
                slopes[(column, ff, reader)] = stats.repeat_slopes(gv["versions"], gv[f"{reader}_{value}"] * 1000,
                                                                   gv["repeat"])
        for (ck, ffk, reader), sk in slopes.items():
            for (cv, ffv, rv), sv in slopes.items():
                if ck != "k" or cv != "v" or rv != reader:
                    continue
                d, lo, hi = stats.difference_ci(sk, sv)
                rows.append({"series_name": name, "reader": reader, "ff_k": int(ffk), "ff_v": int(ffv),
                             "same_fillfactor": ffk == ffv, "ns_per_version": d, "ci_low": lo, "ci_high": hi,
                             "k": float(sk.mean()), "v": float(sv.mean()), "repeats": min(len(sk), len(sv))})
    return pd.DataFrame(rows, columns=["series_name", "reader", "ff_k", "ff_v", "same_fillfactor", "ns_per_version",
                                       "ci_low", "ci_high", "k", "v", "repeats"])


def first_versions(res: Results, v: int = 10) -> pd.DataFrame:
    """The payer's excess at V = v (:func:`excess_at`, per repeat) less its fitted excess per version
    (the per-repeat slopes of :func:`per_version`'s excess), with a Welch interval: above 0 where a
    short chain costs more per version than the fit over every V says."""
    w = readers(res)
    rows = []
    for (name, variant, store), g in _by_variant(w, "server_us"):
        payer, other = _payer_and_other(store)
        if not _has_cold(g, payer, "server_us") or not (g["versions"] == v).any():
            continue
        at = (_mean_per_repeat(_excess_over_cold(g, payer, other, "server_us"), g, v) / v).dropna()
        fit = stats.repeat_slopes(g["versions"].to_numpy(), _payer_excess(g, payer, other, "server_us"),
                                  g["repeat"].to_numpy())
        d, lo, hi = stats.difference_ci(at, fit)
        rows.append({"series_name": name, "variant": variant, "store": store, "payer": payer,
                     "at_v": float(at.mean()), "fitted": float(fit.mean()), "ns_per_version": d,
                     "ci_low": lo, "ci_high": hi, "repeats": min(len(at), len(fit))})
    return pd.DataFrame(rows)


HELD = {  # what the collector could not remove while the snapshot was open: (measurement, unit)
    "undo": ("held_purge_lag_trx", "purge lag (trx numbers)"),
    "heap": ("held_dead_tuples", "dead, not removable"),
}


def at_largest_v(res: Results) -> pd.DataFrame:
    return at_v(res, int(tidy(res)["versions"].max()))


def at_v(res: Results, vmax: int) -> pd.DataFrame:
    """At V = vmax beside V = 0: each reader's time per read at the server (median over repeats of
    each run's trimmed mean) and at the client (median), the pages a read touched (PostgreSQL), the
    writer's time per update; and at the largest V what the collector could not remove with the
    snapshot open and in the control without one, and how long the reclaim took. Computed once per
    results and vmax."""
    return memo(res, f"mvcc_chains.at_v.{vmax}", lambda: _at_v(res, vmax))


def _held_values(held: pd.DataFrame) -> pd.Series:
    """What each run's collector could not remove with the snapshot open, in its store's measurement
    (HELD; NaN where the store has none, or the runs lack its column)."""
    out = pd.Series(float("nan"), index=held.index)
    for store, (column, _) in HELD.items():
        if column in held:
            mine = held["version_store"] == store
            out[mine] = held.loc[mine, column]
    return out


def _at_v(res: Results, vmax: int) -> pd.DataFrame:
    w = tidy(res)
    r = w[w["snapshot"]]
    g = r[r["versions"] == vmax]
    cols = {c: (c, "median") for c in ("old_server_us", "fresh_server_us", "old_p50_us", "fresh_p50_us",
                                       "old_buffers", "fresh_buffers", "writer_us", "reclaim_s") if c in g}
    out = g.groupby(["series_name", "variant", "version_store"]).agg(
        repeats=("run_id", "count"), **cols).reset_index()
    for c in ("old_buffers", "fresh_buffers", "reclaim_s", "writer_us"):
        if c not in out:
            out[c] = float("nan")
    base = r[r["versions"] == 0].groupby(["series_name", "variant"])[["old_server_us", "fresh_server_us"]].median()
    out = out.join(base.rename(columns={"old_server_us": "old_server_at_v0", "fresh_server_us": "fresh_server_at_v0"}),
                   on=["series_name", "variant"])
    out["old / fresh"] = out["old_server_us"] / out["fresh_server_us"]
    held = w[w["versions"] == vmax].copy()
    held["held"] = _held_values(held)
    for snap, label in ((True, "held_snapshot"), (False, "held_control")):
        h = held[held["snapshot"] == snap].groupby(["series_name", "variant"])["held"].median().rename(label)
        out = out.join(h, on=["series_name", "variant"])
    ctl = held[~held["snapshot"]].groupby(["series_name", "variant"])["reclaim_s"].median().rename("reclaim_control_s") \
        if "reclaim_s" in held else pd.Series(dtype=float, name="reclaim_control_s")
    out = out.join(ctl, on=["series_name", "variant"])
    out["held_unit"] = out["version_store"].map(lambda s: HELD.get(s, ("", ""))[1])
    out["commits"] = vmax * r["hot_rows"].astype(int).max() if len(r) else float("nan")
    out.insert(2, "versions", vmax)
    return out


RECLAIM_MEASURE = {"undo": "purge_lag_trx", "heap": "n_dead_tup"}  # the garbage a collector's pass removes
PASS_LEFT = 0.5  # a pass has begun once less than this share of the garbage polled first is left


def collector_passes(res: Results) -> pd.DataFrame:
    """Per run whose reclaim was timed (the largest V, with the old snapshot), from the garbage polled
    after the snapshot ended: ``reclaim_s`` (the first poll at which the collector had reclaimed it),
    ``waited_s`` (the last poll at which at least PASS_LEFT of the garbage was still there: the
    collector's pass had not begun, or had barely), ``pass_s`` (between the two: the collector's own
    work lies within it, an upper bound that cannot be finer than ``poll_s``, the polls' spacing) and
    ``removed_per_s`` (the garbage removed over ``pass_s``: a lower bound of the pass's rate).
    ``waited_s`` is the collector's cadence (when it next ran), not its work. Computed once per results."""
    return memo(res, "mvcc_chains.collector_passes", lambda: _collector_passes(res))


def _polls_by_run(gs: pd.DataFrame) -> dict:
    """The garbage polled after the old snapshot ended, per run and measure: (run_id, name) -> the polls'
    times and values, in the order of their times."""
    g = gs[gs["snapshot"]]
    t, value = g["t"].to_numpy(float), g["value"].to_numpy(float)
    out = {}
    for key, at in g.groupby(["run_id", "name"]).indices.items():
        order = at[np.argsort(t[at], kind="quicksort")]  # as sort_values("t") orders them
        out[key] = (t[order], value[order])
    return out


def _collector_passes(res: Results) -> pd.DataFrame:
    gs = garbage_series(res)
    cols = ["series_name", "variant", "store", "repeat", "run_id", "measure", "garbage", "poll_s", "waited_s",
            "reclaim_s", "pass_s", "one_poll", "removed_per_s"]
    if gs.empty:
        return pd.DataFrame(columns=cols)
    w = tidy(res)
    runs = w.set_index("run_id")[["series_name", "variant", "version_store", "repeat"]
                                 + (["reclaim_s"] if "reclaim_s" in w else [])].to_dict("index")
    polls = _polls_by_run(gs)
    rows = []
    for run_id in sorted(gs.loc[gs["snapshot"], "run_id"].unique()):
        run = runs[run_id]
        store = run["version_store"]
        measure = RECLAIM_MEASURE.get(store)
        reclaim = run.get("reclaim_s", float("nan"))
        if (run_id, measure) not in polls or reclaim != reclaim:
            continue
        t, val = polls[(run_id, measure)]
        if len(t) == 1:  # reclaimed by the first poll: the pass lies between the snapshot's end and that poll
            t, val = np.array([0.0, t[0]]), np.array([float("nan"), val[0]])
        poll = float(np.median(np.diff(t)))
        left = np.flatnonzero(val >= PASS_LEFT * val[0])
        waited = float(t[left[-1]]) if len(left) else 0.0
        end = float(t[-1])
        pass_s = max(end - waited, min(poll, end))
        rows.append({"series_name": run["series_name"], "variant": run["variant"],
                     "store": store, "repeat": int(run["repeat"]), "run_id": run_id, "measure": measure,
                     "garbage": float(np.nanmax(val)), "poll_s": poll, "waited_s": waited, "reclaim_s": float(reclaim),
                     "pass_s": pass_s, "one_poll": end - waited <= 1.5 * poll,
                     # unknown where the first poll found it reclaimed already (no garbage seen before)
                     "removed_per_s": float((val.max() - val[-1]) / pass_s) if val[0] == val[0] else float("nan")})
    return pd.DataFrame(rows, columns=cols)


def garbage_series(res: Results) -> pd.DataFrame:
    """The garbage polled after each run's snapshot ended, with the run's server, variant, repeat and
    whether it held the old snapshot. Computed once per results."""
    return memo(res, "mvcc_chains.garbage_series", lambda: _garbage_series(res))


def _garbage_series(res: Results) -> pd.DataFrame:
    s = res.series
    g = s[s["source"] == "garbage"] if len(s) else s
    if g.empty:
        return g
    w = tidy(res)[["run_id", "series_name", "variant", "repeat", "snapshot"]]
    return g.merge(w, on="run_id")


def pageinspect_table(res: Results) -> pd.DataFrame:
    s = res.series
    p = s[s["source"] == "pageinspect"] if len(s) else s
    if p.empty:
        return pd.DataFrame()
    w = tidy(res)[["run_id", "series_name", "variant", "repeat"]]
    p = p.merge(w, on="run_id")
    first = p.sort_values(["series_name", "repeat"]).groupby("series_name")["run_id"].first()
    p = p[p["run_id"].isin(first.values)]
    wide = p.pivot_table(index=["series_name", "variant", "t"], columns="name", values="value").reset_index()
    wide["t_ctid"] = "(" + wide["ctid_block"].astype(int).astype(str) + "," + wide["ctid_lp"].astype(int).astype(str) + ")"
    cols = ["series_name", "variant", "lp", "lp_flags", "t_xmin", "t_xmax", "t_ctid", "hot_updated", "heap_only"]
    out = wide[cols].rename(columns={"series_name": "server"})
    for c in ("lp", "lp_flags", "t_xmin", "t_xmax", "hot_updated", "heap_only"):
        out[c] = out[c].astype(int)
    return out




def interval(r) -> str:
    """An estimate per version with its 95% interval, as the tables and the findings print it."""
    def ns(x: float) -> str:  # a whole number of ns with its sign, and no sign on a 0 ('-0' is 0)
        text = f"{x:+,.0f}"
        return "0" if text in ("+0", "-0") else text

    if r["ci_low"] != r["ci_low"]:
        return ns(r["ns_per_version"])
    return f"{ns(r['ns_per_version'])} [{ns(r['ci_low'])}, {ns(r['ci_high'])}]"


# --- what the page draws ---------------------------------------------------------------------------

COLUMN_WORDS = {"k": "k (indexed)", "v": "v (no index)"}


def _engine_label(store: str, flavors) -> str:
    titles = sorted({flavor_class(f).title for f in flavors})
    return f"{' and '.join(titles)} ({store} versions)"


def _variant_words(w: pd.DataFrame) -> pd.Series:
    """'k (indexed)' or 'k (indexed), ff 70': the updated column and, where the engine has one, the
    heap fillfactor, in words a chart's panel header can carry."""
    ff = w["fillfactor"].where(w["fillfactor"].notna() & (w["fillfactor"].astype(str) != "-"))
    words = w["column"].map(lambda c: COLUMN_WORDS.get(c, f"column {c}"))
    return words + np.where(ff.notna(), ", ff " + ff.astype(str).str.replace(r"\.0$", "", regex=True), "")


def variant_order(labels) -> list[str]:
    """Panels in the chapter's order: the non-indexed column first (the HOT case), fillfactor 100 before
    70."""
    def key(label: str):
        column = 0 if label.startswith("v") else 1
        ff = int(label.rsplit("ff ", 1)[1]) if "ff " in label else 1000
        return (column, -ff, label)
    return sorted(dict.fromkeys(labels), key=key)


def reader_latency(res: Results, value: str = "server_us") -> pd.DataFrame:
    """Each reader's ``value`` (its time per read at the server by default; ``buffers``: pages per read;
    ``p50_us``: median latency at the client) per server, variant and V, the median over repeats,
    with the engine's kind of version store (``store``: undo or heap), its label (``engine``) and
    the variant in words (``panel``): one chart per store, a panel per server and variant, a line
    per reader."""
    w = readers(res).copy()
    w["panel"] = _variant_words(w)
    rows = []
    stores = list(dict.fromkeys(part.version_store for part in PARTS.parts.values()))  # undo first, as the text
    w = w.assign(_store=w["version_store"].map(lambda s: stores.index(s) if s in stores else len(stores)))
    engines = {store: _engine_label(store, g["flavor"]) for store, g in w.groupby("version_store")}
    cols = {reader: f"{reader}_{value}" for reader in READERS if f"{reader}_{value}" in w}
    groups = w.groupby(["_store", "version_store", "series_name", "panel", "versions"])
    medians, sizes = groups[list(cols.values())].median(), groups.size()
    for (_, store, name, panel, v), m, n in zip(medians.index, medians.to_dict("records"), sizes.to_numpy()):
        for reader, col in cols.items():
            if m[col] != m[col]:  # no value of this reader in the group
                continue
            rows.append({"store": store, "engine": engines[store], "server": name, "panel": panel,
                         "versions": int(v), "reader": reader, "value": m[col], "repeats": int(n)})
    return pd.DataFrame(rows, columns=["store", "engine", "server", "panel", "versions", "reader", "value", "repeats"])


GARBAGE_MEASURES = {
    # InnoDB: how far purge trails the transaction counter; PostgreSQL: dead tuples. Different units:
    # (a chart's title, its y axis).
    "purge_lag_trx": ("InnoDB: purge lag behind the transaction counter", "purge lag (transaction numbers)"),
    "n_dead_tup": ("PostgreSQL: dead tuples in the table", "dead tuples (n_dead_tup)"),
}


def garbage_long(res: Results, repeat: int = 0) -> pd.DataFrame:
    """The garbage series after the old snapshot ended, one repeat, for :data:`GARBAGE_MEASURES`, with
    the variant in words."""
    gs = garbage_series(res)
    if gs.empty:
        return gs
    gs = gs[gs["name"].isin(list(GARBAGE_MEASURES)) & (gs["repeat"] == repeat) & gs["snapshot"]].copy()
    words = tidy(res).assign(panel=lambda d: _variant_words(d))[["run_id", "panel"]]
    return gs.merge(words, on="run_id")[["series_name", "panel", "name", "t", "value", "run_id"]]


def ordered(t: pd.DataFrame) -> pd.DataFrame:
    t = t.copy()
    t["short"] = t["variant"].str.removeprefix("col ")  # "k, ff 70": the text says which column is indexed
    order = {label: i for i, label in enumerate(variant_order(t["short"]))}
    return t.assign(_o=t["short"].map(order)).sort_values(["series_name", "_o"], kind="stable").drop(columns="_o")


def largest_v_rows(res: Results) -> pd.DataFrame:
    """:func:`at_largest_v` with the variant in words, the writer's time per update at the smallest
    V beside the largest, and from :func:`collector_passes` (medians over repeats) when the collector
    next ran after the snapshot ended (``waited_s``) and the most its pass took (``pass_s``, a bound
    set by the polls), for the page's tables."""
    t = at_largest_v(res)
    cp = collector_passes(res)
    if len(cp):
        t = t.join(cp.groupby(["series_name", "variant"]).agg(waited_s=("waited_s", "median"),
                                                              pass_s=("pass_s", "max")),
                   on=["series_name", "variant"])
    else:
        t = t.assign(waited_s=float("nan"), pass_s=float("nan"))
    r = readers(res)
    first = r[r["versions"] > 0]["versions"].min()
    if "writer_us" in r and first == first:
        w1 = r[r["versions"] == first].groupby(["series_name", "variant"])["writer_us"].median().rename("writer_us_first")
        t = t.join(w1, on=["series_name", "variant"])
    else:
        t["writer_us_first"] = float("nan")
    return ordered(t)


def per_version_rows(res: Results) -> pd.DataFrame:
    """:func:`per_version` and, at V = 10, :func:`excess_at`, one row per server and variant, each
    estimate with its 95% interval as text (ns per version), for the page's table."""
    pv = per_version(res)
    if pv.empty:
        return pv
    out = pv.pivot_table(index=["series_name", "variant", "store", "repeats", "vmax"], columns="reader",
                         values="ns_per_version", aggfunc="first").reset_index()[["series_name", "variant", "store",
                                                                                  "repeats", "vmax"]]
    cells: dict[str, dict] = {}  # column -> (series_name, variant) -> text, the columns in the order first met
    for r in pv.to_dict("records"):
        col = "excess" if " - " in r["reader"] else r["reader"]
        cells.setdefault(col, {})[(r["series_name"], r["variant"])] = interval(r)
        if col == "excess":
            cells.setdefault("payer", {})[(r["series_name"], r["variant"])] = r["reader"].split(" - ")[0]
    ex = excess_at(res, 10)
    for r in ex.to_dict("records"):
        cells.setdefault("excess_v10", {})[(r["series_name"], r["variant"])] = interval(r)
    keys = list(zip(out["series_name"], out["variant"]))
    for col, texts in cells.items():
        out[col] = pd.Series([texts.get(k, float("nan")) for k in keys], index=out.index, dtype="str")
    return ordered(out)

