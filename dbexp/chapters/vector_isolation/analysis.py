"""Tables from the chapter's runs: how often a reader's repeated k-NN answer changed (per engine and
setting, with an exact binomial interval over every transaction of every instance, and each instance's own
rate beside it), what the changed transactions lost, and what the index costs."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from dbexp.chapters.vector_isolation.chapter import PARTS
from dbexp.experiments import stats
from dbexp.experiments.chapter import Results, memo
from dbexp.servers.registry import flavor_class

LEVEL = 0.95


def rate_ci(count: int, n: int, level: float = LEVEL) -> tuple[float, float, float]:
    """count / n with its exact (Clopper-Pearson) interval; NaNs where n is 0."""
    if n <= 0:
        return float("nan"), float("nan"), float("nan")
    return (count / n, *stats.proportion_ci(count, n, level))


def difference_ci(c1: int, n1: int, c2: int, n2: int, level: float = LEVEL) -> tuple[float, float, float]:
    """p1 - p2 with Newcombe's hybrid score interval (from each share's Wilson interval: it keeps its
    coverage where a count is 0, which the normal approximation does not)."""
    if not n1 or not n2:
        return float("nan"), float("nan"), float("nan")
    p1, p2 = c1 / n1, c2 / n2
    w1 = binomtest(int(c1), int(n1)).proportion_ci(confidence_level=level, method="wilson")
    w2 = binomtest(int(c2), int(n2)).proportion_ci(confidence_level=level, method="wilson")
    d = p1 - p2
    return (d, d - float(np.hypot(p1 - w1.low, w2.high - p2)), d + float(np.hypot(w1.high - p1, p2 - w2.low)))


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


def writer_label(r) -> str:
    if r["writer"] == "none":
        return "no writer"
    return f"{r['writer']} x{int(r['gap_writes'])}"


def runs(res: Results) -> pd.DataFrame:
    """The ok runs with their engine, setting and writer labels."""
    def compute():
        w = res.wide
        if w.empty:
            return w
        w = w[w["status"] == "ok"].copy() if "status" in w else w.copy()
        w["engine"] = _engine(w)
        w["index"] = [PARTS.part_for_name(f).label for f in w["flavor"]]
        w["setting"] = [setting_label(r) for _, r in w.iterrows()]
        if w["m"].nunique() > 1:  # more than one graph degree: each setting names its m
            w["setting"] = w["setting"] + [f", m={int(m)}" for m in w["m"]]
        w["writer_label"] = [writer_label(r) for _, r in w.iterrows()]
        return w
    return memo(res, "vector_runs", compute)


def changed_rates(res: Results) -> pd.DataFrame:
    """One row per engine, setting and writer (reader points): transactions, how many saw a different set
    the second time (rate and interval over all instances), order-only changes, short answers, plan changes,
    rows leaked, the writer's achieved rate, recall, and each instance's own rate (computed once per results)."""
    return memo(res, "vector_isolation.changed_rates", lambda: _changed_rates(res))


def _changed_rates(res: Results) -> pd.DataFrame:
    w = runs(res)
    if w.empty:
        return pd.DataFrame()
    w = w[w["kind"] == "readers"]
    keys = ["engine", "index", "setting", "writer_label", "writer", "gap_writes", "k", "ef_search", "iterative", "exact",
            "m"]
    rows = []
    for key, g in w.groupby(keys, sort=False, dropna=False):
        n, c = int(g["reader_transactions"].sum()), int(g["set_changed"].sum())
        r, lo, hi = rate_ci(c, n)
        per = g.groupby("instance").apply(lambda x: x["set_changed"].sum() / x["reader_transactions"].sum(),
                                          include_groups=False)
        rows.append(dict(zip(keys, key)) | {
            "instances": int(g["instance"].nunique()), "transactions": n, "set_changed": c, "changed_rate": r,
            "ci_low": lo, "ci_high": hi,
            "instance_rates": " / ".join(f"{v:.1%}" for v in per.values),
            "instances_inside": bool(((per >= lo) & (per <= hi)).all()),
            "changed_shorter": int(g["changed_shorter"].sum()), "changed_replaced": int(g["changed_replaced"].sum()),
            "order_only": int(g["order_only"].sum()), "short_answers": int(g["short_answers"].sum()),
            "plan_changed": int(g["plan_changed"].sum()), "leaked": int(g["leaked"].sum()),
            "lost": int(g["lost"].sum()), "lost_visible": int(g["lost_visible"].sum()),
            "lost_in_exact": int(g["lost_in_exact"].sum()),
            "recall": float(g["recall"].mean()), "rows_mean": float(g["rows_mean"].mean()),
            "writes_per_s": float(g["writes_per_s"].mean()),
            "writes_between": float(g["writes_between"].mean()),
            "index_pages_written": float(g["index_pages_written"].mean()) if "index_pages_written" in g else np.nan,
            "index_pages": float(g["index_pages"].mean()) if "index_pages" in g else np.nan,
        })
    return pd.DataFrame(rows)


def chart_rows(res: Results) -> pd.DataFrame:
    """changed_rates with one label per line of the chart: the setting and the writer."""
    t = changed_rates(res)
    return t.assign(label=[f"{s} | {wl}" for s, wl in zip(t["setting"], t["writer_label"])]) if len(t) else t


def changed_table(res: Results) -> pd.DataFrame:
    """changed_rates as the page prints it: the changed count, share and interval in one cell."""
    t = changed_rates(res)
    if t.empty:
        return t
    cell = [f"{c} of {n} ({r:.1%} [{lo:.1%}, {hi:.1%}])" for c, n, r, lo, hi in
            zip(t["set_changed"], t["transactions"], t["changed_rate"], t["ci_low"], t["ci_high"])]
    return t.assign(changed=cell)


def lost_rows(res: Results) -> pd.DataFrame:
    """Per engine: the transactions whose set changed, the rows the second answer lost, how many of them
    the snapshot still saw, how many were in the snapshot's exact answer, and the rows leaked."""
    t = changed_rates(res)
    if t.empty:
        return t
    g = t[~t["exact"]].groupby("engine", sort=False)
    return g[["transactions", "set_changed", "lost", "lost_visible", "lost_in_exact", "leaked",
              "plan_changed"]].sum().reset_index()


def costs(res: Results) -> pd.DataFrame:
    """Per engine, candidate-list size and iterative scan: queries per second with no writer, recall@k under
    the main insert writer (the smallest k), and inserts per second with no reader (mean and the instances'
    range)."""
    w = runs(res)
    if w.empty:
        return pd.DataFrame()
    keys = ["engine", "m", "ef_search", "iterative"]
    q = w[w["kind"] == "query_rate"].groupby(keys)["queries_per_s"].agg(["mean", "min", "max"])
    ins = w[w["kind"] == "insert_rate"].groupby("engine")["writes_per_s"].agg(["mean", "min", "max"])
    t = changed_rates(res)
    main = t[(~t["exact"]) & (t["writer"] == "insert") & (t["k"] == t["k"].min())
             & (t["gap_writes"] == t["gap_writes"].max())]
    rec = main.groupby(keys)["recall"].mean()
    out = q.rename(columns=lambda c: f"qps_{c}").join(rec).reset_index()
    out = out.merge(ins.rename(columns=lambda c: f"inserts_{c}").reset_index(), on="engine", how="left")
    return out


def settings_table(res: Results) -> pd.DataFrame:
    """What every run of the chapter shared: the data set, the index and the reader's gap."""
    w = runs(res)
    if w.empty:
        return pd.DataFrame()
    cols = ["rows", "dims", "m", "ef_construction", "gap_s"]
    return w.groupby("engine")[cols].agg(lambda s: ", ".join(str(v) for v in sorted(s.unique()))).reset_index()


def shared_text(res: Results) -> str:
    """One sentence on what every run shared: the data set, the index and the readers' design."""
    w = runs(res)
    if w.empty:
        return ""
    one = lambda c: ", ".join(f"{v:,}" if isinstance(v, (int, np.integer)) else f"{v:g}" for v in sorted(w[c].unique()))
    readers = w[w["kind"] == "readers"]
    gaps = sorted(int(g) for g in readers[readers["writer"] != "none"]["gap_writes"].unique())
    return (f"Data: {one('rows')} vectors of {one('dims')} dimensions; HNSW m = {one('m')} (pgvector's "
            f"ef_construction {one('ef_construction')}; MariaDB has no such setting); "
            f"{', '.join(f'{v:,}' for v in sorted(readers['transactions'].unique()))} reader transactions per "
            f"point; between a reader's two queries the writer commits {' or '.join(str(g) for g in gaps)} rows "
            f"(the {' or '.join(f'x{g}' for g in gaps)} after the writer in the labels below).")
