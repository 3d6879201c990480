"""Tables from the chapter's runs: every trial as stored (one transaction, its own query), how often a reader's
repeated k-NN answer changed (per engine, setting and writer, with an exact binomial interval over the trials,
which are independent: each has its own query and starts from the state the writes before it left, and each
instance's own rate beside it), how each changed answer changed (cut short or replaced, the lost rows as the
same snapshot sees them, the rows it could not see inside the first answer's radius), and what the index costs."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from dbexp.chapters.vector_isolation.chapter import PARTS
from dbexp.experiments import stats
from dbexp.experiments.chapter import Results, memo
from dbexp.servers.registry import flavor_class

LEVEL = 0.95
VECTOR_KINDS = ("readers", "query_rate", "insert_rate", "graph")  # the points of measure.VectorPoint
NEW_ROW_WRITERS = ("insert", "near")  # writers whose rows have new ids (the rows a snapshot cannot see)


def rate_ci(count: int, n: int, level: float = LEVEL) -> tuple[float, float, float]:
    """count / n with its exact (Clopper-Pearson) interval, within [0, 1]; NaNs where n is 0."""
    if n <= 0:
        return float("nan"), float("nan"), float("nan")
    return (count / n, *stats.proportion_ci(count, n, level))


def difference_ci(c1: int, n1: int, c2: int, n2: int, level: float = LEVEL) -> tuple[float, float, float]:
    """p1 - p2 with Newcombe's hybrid score interval (from each share's Wilson interval: it keeps its
    coverage where a count is 0, which the normal approximation does not), within [-1, 1]."""
    if not n1 or not n2:
        return float("nan"), float("nan"), float("nan")
    p1, p2 = c1 / n1, c2 / n2
    w1 = binomtest(int(c1), int(n1)).proportion_ci(confidence_level=level, method="wilson")
    w2 = binomtest(int(c2), int(n2)).proportion_ci(confidence_level=level, method="wilson")
    d = p1 - p2
    return (d, max(-1.0, d - float(np.hypot(p1 - w1.low, w2.high - p2))),
            min(1.0, d + float(np.hypot(w1.high - p1, p2 - w2.low))))


def _engine(w: pd.DataFrame) -> pd.Series:
    """'pgvector 0.8.0 on PostgreSQL 17.10' / 'MariaDB 11.8.9' from the run's image and version."""
    out = []
    for flavor, version, art in zip(w["flavor"], w["version"].astype(str), w["artifact"] if "artifact" in w else [""] * len(w)):
        v = version.split("-")[0]
        if isinstance(art, str) and "pgvector=" in art:
            pgv = art.split("pgvector=")[1].split("-")[0]
            out.append(f"pgvector {pgv} on PostgreSQL {v}")
        else:
            out.append(f"{flavor_class(flavor).title} {v}")
    return pd.Series(out, index=w.index)


def setting_label(r) -> str:
    s = f"k={int(r['k'])}, ef={int(r['ef_search'])}"
    if r.get("iterative", "off") not in ("off", None):
        s += f", iterative {r['iterative']}"
    return s + (", exact scan" if bool(r["exact"]) else "")


WRITER_WORDS = {"insert": "mixture", "near": "near", "update": "update", "delete": "delete"}


def writer_label(r) -> str:
    """'no writer', 'near x10', 'mixture x10', 'near x10, reader between' (rows committed between the searches)."""
    if r["writer"] == "none":
        return "no writer"
    word = WRITER_WORDS.get(r["writer"], r["writer"])
    # runs stored before the writers were paced and named wrote from the mixture as fast as they went
    if "rate" in r and not pd.notna(r["rate"]) and r["writer"] == "insert":
        word = "insert"
    label = f"{word} x{int(r['gap_writes'])}"
    return label + (", reader between" if _true(r.get("reader_between")) else "")


def _true(v) -> bool:
    return bool(v) if v is not None and v == v else False


def runs(res: Results) -> pd.DataFrame:
    """The ok runs with their engine, setting and writer labels."""
    def compute():
        w = res.wide
        if w.empty:
            return w
        w = w[w["status"] == "ok"].copy() if "status" in w else w.copy()
        for col, default in (("rate", np.nan), ("reader_between", False), ("writer", ""), ("gap_writes", np.nan),
                             ("k", np.nan), ("ef_search", np.nan), ("iterative", "off"), ("exact", False),
                             ("transactions", np.nan), ("m", np.nan)):
            if col not in w:
                w[col] = default
        w["reader_between"] = [_true(v) for v in w["reader_between"]]
        w["engine"] = _engine(w)
        w["index"] = [PARTS.part_for_name(f).label for f in w["flavor"]]
        # the vector trials' own points (the ann runs and the B-tree trials have settings of their own)
        vec = w["kind"].isin(VECTOR_KINDS)
        w["setting"] = [setting_label(r) if v else "" for v, (_, r) in zip(vec, w.iterrows())]
        if w.loc[vec, "m"].nunique() > 1:  # more than one graph degree: each setting names its m
            w.loc[vec, "setting"] = w.loc[vec, "setting"] + [f", m={int(m)}" for m in w.loc[vec, "m"]]
        w["writer_label"] = [writer_label(r) if v else "" for v, (_, r) in zip(vec, w.iterrows())]
        return w
    return memo(res, "vector_runs", compute)


RUN_KEYS = ["run_id", "engine", "index", "setting", "writer_label", "writer", "gap_writes", "rate", "k", "ef_search",
            "iterative", "exact", "reader_between", "m", "instance"]
TRIAL_FIELDS = ("rows1", "rows2", "set_changed", "changed_shorter", "changed_replaced", "order_only", "head_kept",
                "lost", "gained", "lost_visible", "lost_in_exact", "leaked", "plan_changed", "plan_is_index",
                "recall1", "recall2", "writes_between", "gap_s", "new_nearer", "index_pages_written", "index_pages",
                "graph_rows_updated", "between_rows", "start_rows", "start_max_id")


def trials(res: Results) -> pd.DataFrame:
    """One row per reader trial (a transaction that asked its query twice), as its run stored it (series source
    ``txn``), with the run's engine, setting and writer; a field the run did not record is NaN."""
    def compute():
        w = runs(res)
        s = res.series
        if w.empty or s is None or s.empty:
            return pd.DataFrame(columns=RUN_KEYS + ["trial", *TRIAL_FIELDS])
        w = w[w["kind"] == "readers"]
        s = s[(s["source"] == "txn") & s["run_id"].isin(w["run_id"])]
        if w.empty or s.empty:
            return pd.DataFrame(columns=RUN_KEYS + ["trial", *TRIAL_FIELDS])
        t = s.pivot_table(index=["run_id", "t"], columns="name", values="value", aggfunc="first").reset_index()
        t = t.rename(columns={"t": "trial"})
        for f in TRIAL_FIELDS:
            if f not in t:
                t[f] = np.nan
        t = t.merge(w[RUN_KEYS], on="run_id", how="inner")
        t["trial"] = t["trial"].astype(int)
        return t.sort_values(["run_id", "trial"]).reset_index(drop=True)
    return memo(res, "vector_isolation.trials", compute)


def mechanism_columns(t: pd.DataFrame) -> pd.DataFrame:
    """Each trial's changed answer classified from its stored record: ``cut_short`` (fewer rows the second time,
    under k), ``replaced`` (as many rows, others in place of the lost), ``replaced_visible`` (replaced, every lost
    row still visible to the snapshot), ``replaced_true`` (replaced, a lost row among the snapshot's exact k
    nearest: a true neighbour the index no longer led to), ``crowded`` (cut short with at least as many rows the
    snapshot could not see inside the first answer's radius as places lost), ``unseen_inside`` (rows it could
    not see inside that radius, changed or not)."""
    t = t.copy()
    ch = t["set_changed"] > 0
    t["cut_short"] = ch & (t["changed_shorter"] > 0)
    t["replaced"] = ch & ~t["cut_short"]
    t["replaced_visible"] = t["replaced"] & (t["lost"] > 0) & (t["lost_visible"] == t["lost"])
    t["replaced_true"] = t["replaced"] & (t["lost_in_exact"] > 0)
    t["crowded"] = t["cut_short"] & (t["new_nearer"] >= (t["k"] - t["rows2"]))
    t["unseen_inside"] = t["new_nearer"] > 0
    t["lost_cut"] = np.where(t["cut_short"], t["lost"], 0.0)
    t["lost_replaced"] = np.where(t["replaced"], t["lost"], 0.0)
    t["lost_replaced_visible"] = np.where(t["replaced"], t["lost_visible"], 0.0)
    return t


GROUP_KEYS = ["engine", "index", "setting", "writer_label", "writer", "gap_writes", "k", "ef_search", "iterative",
              "exact", "reader_between", "m"]


def _count(x: pd.Series) -> int:
    return int(np.nansum(x.astype(float)))


def summarize(t: pd.DataFrame) -> dict:
    """What a set of trials shows: the counts every table and claim reads (NaN-safe: a field a run did not
    record counts as not seen, and ``recorded`` says in how many trials it was)."""
    t = mechanism_columns(t)
    n = len(t)
    c = _count(t["set_changed"])
    r, lo, hi = rate_ci(c, n)
    return {
        "transactions": n, "set_changed": c, "changed_rate": r, "ci_low": lo, "ci_high": hi,
        "changed_shorter": int(t["cut_short"].sum()), "changed_replaced": int(t["replaced"].sum()),
        "replaced_visible": int(t["replaced_visible"].sum()), "replaced_true": int(t["replaced_true"].sum()),
        "head_kept": _count(t["head_kept"]), "head_recorded": int(t["head_kept"].notna().sum()),
        "crowded": int(t["crowded"].sum()),
        "unseen_inside": int(t["unseen_inside"].sum()), "unseen_recorded": int(t["new_nearer"].notna().sum()),
        "order_only": _count(t["order_only"]),
        "short_answers": int(((t["rows1"] < t["k"]) | (t["rows2"] < t["k"])).sum()),
        "plan_changed": _count(t["plan_changed"]), "plans_recorded": int(t["plan_is_index"].notna().sum()),
        "leaked": _count(t["leaked"]),
        "lost": _count(t["lost"]), "lost_visible": _count(t["lost_visible"]),
        "lost_in_exact": _count(t["lost_in_exact"]),
        "lost_cut": _count(t["lost_cut"]), "lost_replaced": _count(t["lost_replaced"]),
        "lost_replaced_visible": _count(t["lost_replaced_visible"]),
        "recall": float(np.nanmean(np.r_[t["recall1"], t["recall2"]])) if n else np.nan,
        "rows_mean": float(np.nanmean(np.r_[t["rows1"], t["rows2"]])) if n else np.nan,
        "writes_between": float(t["writes_between"].mean()) if n else np.nan,
        "writes_per_s": (float(t["writes_between"].sum() / t["gap_s"].sum())
                         if n and t["gap_s"].notna().all() and t["gap_s"].sum() > 0 else np.nan),
        "index_pages_written": float(t["index_pages_written"].mean()) if n else np.nan,
        "index_pages": float(t["index_pages"].mean()) if n else np.nan,
        "graph_rows_updated": float(t["graph_rows_updated"].mean()) if n else np.nan,
        "between_rows": float(t["between_rows"].mean()) if n else np.nan,
    }


def changed_rates(res: Results) -> pd.DataFrame:
    """One row per engine, setting and writer (reader points): trials, how many saw a different set the second
    time (rate and exact interval over every trial of every instance), how they changed (cut short, replaced),
    what they lost, rows the snapshot could not see inside the first answer's radius, the writer's achieved
    pace, recall, and each instance's own rate (computed once per results)."""
    return memo(res, "vector_isolation.changed_rates", lambda: _changed_rates(res))


def _changed_rates(res: Results) -> pd.DataFrame:
    t = trials(res)
    if t.empty:
        return pd.DataFrame()
    run_rate = runs(res).set_index("run_id")["writes_per_s"] if "writes_per_s" in runs(res) else None
    rows = []
    for key, g in t.groupby(GROUP_KEYS, sort=False, dropna=False):
        s = summarize(g)
        if not s["writes_per_s"] == s["writes_per_s"] and run_rate is not None:
            # runs stored before each trial recorded its gap: the runs' own rates (a writer that never paused)
            s["writes_per_s"] = float(run_rate.reindex(g["run_id"].unique()).mean())
        per = g.groupby("instance")["set_changed"].mean()
        rows.append(dict(zip(GROUP_KEYS, key)) | s | {
            "instances": int(g["instance"].nunique()),
            "instance_rates": " / ".join(f"{v:.1%}" for v in per.values),
            "instances_inside": bool(((per >= s["ci_low"]) & (per <= s["ci_high"])).all()),
        })
    return pd.DataFrame(rows)


def chart_rows(res: Results) -> pd.DataFrame:
    """changed_rates with one label per line of the chart: the setting and the writer."""
    t = changed_rates(res)
    return t.assign(label=[f"{s} | {wl}" for s, wl in zip(t["setting"], t["writer_label"])]) if len(t) else t


def changed_table(res: Results) -> pd.DataFrame:
    """changed_rates as the page prints it: the changed count, share and interval in one cell, and how the
    changed answers changed."""
    t = changed_rates(res)
    if t.empty:
        return t
    cell = [f"{c} of {n} ({r:.1%} [{lo:.1%}, {hi:.1%}])" for c, n, r, lo, hi in
            zip(t["set_changed"], t["transactions"], t["changed_rate"], t["ci_low"], t["ci_high"])]
    unseen = [f"{u} of {n}" if rec else "not recorded" for u, n, rec in
              zip(t["unseen_inside"], t["transactions"], t["unseen_recorded"])]
    return t.assign(changed=cell, unseen=unseen)


def lost_rows(res: Results) -> pd.DataFrame:
    """Per engine (index scans under a writer, one reader): the trials whose set changed, cut short or
    replaced, the rows the second answer lost, how many of them the snapshot still saw, how many were in its
    exact answer, and the rows leaked."""
    t = trials(res)
    if t.empty:
        return pd.DataFrame()
    t = t[~t["exact"].astype(bool) & (t["writer"] != "none") & ~t["reader_between"].astype(bool)]
    out = []
    for engine, g in t.groupby("engine", sort=False):
        s = summarize(g)
        out.append({"engine": engine} | {k: s[k] for k in (
            "transactions", "set_changed", "changed_shorter", "changed_replaced", "lost", "lost_visible",
            "lost_in_exact", "leaked", "plan_changed")})
    return pd.DataFrame(out)


def costs(res: Results) -> pd.DataFrame:
    """Per engine, candidate-list size and iterative scan: queries per second with no writer, recall@k under
    the main writer (the smallest k, one reader), and inserts per second with no reader (mean and the
    instances' range)."""
    w = runs(res)
    if w.empty:
        return pd.DataFrame()
    keys = ["engine", "m", "ef_search", "iterative"]
    q = w[w["kind"] == "query_rate"].groupby(keys)["queries_per_s"].agg(["mean", "min", "max"])
    ins = w[w["kind"] == "insert_rate"].groupby("engine")["writes_per_s"].agg(["mean", "min", "max"])
    t = changed_rates(res)
    main = t[(~t["exact"].astype(bool)) & (t["writer"] != "none") & ~t["reader_between"].astype(bool)
             & (t["k"] == t["k"].min())]
    main = main[main["writer"] == ("near" if (main["writer"] == "near").any() else main["writer"].iloc[0])] \
        if len(main) else main
    rec = main.groupby(keys)["recall"].mean()
    out = q.rename(columns=lambda c: f"qps_{c}").join(rec).reset_index()
    out = out.merge(ins.rename(columns=lambda c: f"inserts_{c}").reset_index(), on="engine", how="left")
    return out


def settings_table(res: Results) -> pd.DataFrame:
    """What every run of the chapter shared: the data set, the index and the writer's pace."""
    w = runs(res)
    w = w[w["kind"].isin(VECTOR_KINDS)] if len(w) else w
    if w.empty:
        return pd.DataFrame()
    cols = [c for c in ("rows", "dims", "m", "ef_construction", "gap_writes", "rate") if c in w]
    return w.groupby("engine")[cols].agg(lambda s: ", ".join(str(v) for v in sorted(s.dropna().unique()))).reset_index()


def shared_text(res: Results) -> str:
    """One sentence on what every run shared: the data set, the index and the trials' design."""
    w = runs(res)
    w = w[w["kind"].isin(VECTOR_KINDS)] if len(w) else w
    if w.empty:
        return ""
    one = lambda c: ", ".join(f"{v:,}" if isinstance(v, (int, np.integer)) else f"{v:g}" for v in sorted(w[c].unique()))
    readers = w[w["kind"] == "readers"]
    written = readers[readers["writer"] != "none"]
    gaps = sorted(int(g) for g in written["gap_writes"].unique())
    rates = sorted(float(r) for r in written["rate"].dropna().unique())
    pace = (f" at a pace of {' or '.join(f'{r:g}' for r in rates)} rows/s (the same on every engine)" if rates
            else " as fast as it went")
    return (f"Data: {one('rows')} vectors of {one('dims')} dimensions; HNSW m = {one('m')} (pgvector's "
            f"ef_construction {one('ef_construction')}; MariaDB has no such setting); "
            f"{', '.join(f'{v:,}' for v in sorted(readers['transactions'].unique()))} trials per point, each its "
            f"own transaction and query; between a trial's two searches the writer commits "
            f"{' or '.join(str(g) for g in gaps)} rows{pace} (the x{gaps[-1] if gaps else 0} after the writer in "
            "the labels below).")
