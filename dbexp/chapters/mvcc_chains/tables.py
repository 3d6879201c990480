"""What the page's charts and tables draw: each reader's time per read by server, variant and V,
the garbage series in words, the rows at the largest V and the costs per version with their
intervals, in the chapter's order of panels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dbexp.chapters.mvcc_chains.analysis import (READERS, at_largest_v, collector_passes, excess_at, garbage_series,
                                                 interval, per_version, readers, tidy)
from dbexp.chapters.mvcc_chains.chapter import PARTS
from dbexp.experiments.chapter import Results
from dbexp.servers.registry import flavor_class

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
    for (_, store, name, panel, v), g in w.groupby(["_store", "version_store", "series_name", "panel", "versions"]):
        for reader in READERS:
            col = f"{reader}_{value}"
            if col not in g or g[col].isna().all():
                continue
            rows.append({"store": store, "engine": _engine_label(store, w[w["version_store"] == store]["flavor"]),
                         "server": name, "panel": panel, "versions": int(v), "reader": reader,
                         "value": g[col].median(), "repeats": len(g)})
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
    for _, r in pv.iterrows():
        key = (out["series_name"] == r["series_name"]) & (out["variant"] == r["variant"])
        col = "excess" if " - " in r["reader"] else r["reader"]
        out.loc[key, col] = interval(r)
        if col == "excess":
            out.loc[key, "payer"] = r["reader"].split(" - ")[0]
    ex = excess_at(res, 10)
    for _, r in ex.iterrows():
        key = (out["series_name"] == r["series_name"]) & (out["variant"] == r["variant"])
        out.loc[key, "excess_v10"] = interval(r)
    return ordered(out)
