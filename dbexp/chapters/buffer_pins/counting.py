"""The counted part, analysed (counted.py measures it): instructions, simulated first-level and last-level data misses
and branch mispredictions per buffer operation against N, per build (the stock 8-entry array and the 32-entry one)
and curve; each N's two counts, from two separately started servers, and their agreement (within
dbexp.experiments.counted.AGREE, 0.5%); the step where the array overflows (the operation's pin the array's
entries + 1st: at ``entries`` held for the curves that hold N and pin one more, at ``entries + 1`` pinned for
``cycle``), count by count; and the functions whose own (exclusive) instructions per operation carry that step, read
from the runs' function tables (callgrind's output), not named by hand.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from dbexp.book import prose
from dbexp.experiments import counted as experiments_counted
from dbexp.experiments.chapter import Results, memo

# the figures per operation shown, in the page's order, and their labels
FIGURES = {"instructions_per_op": "instructions", "d1_misses_per_op": "D1 misses", "ll_misses_per_op": "LL misses",
           "branch_mispredicts_per_op": "branch mispredictions"}
MEASURE = "instructions_per_op"
AGREE = experiments_counted.AGREE
KIND_LABELS = {"fifo": "N held, one buffer again (thread's)", "cycle": "pin N, release N", "hold": "N held",
               "hold_lock": "N held, locked"}
_COLS = ["build", "entries", "spec", "kind", "pattern", "n", "start", "run_id", *FIGURES, "ops_counted"]


def entries_of(spec: str) -> int:
    """The private refcount array's entries of a build: the source builds name it (postgres:18.6+pinbench-src32),
    every other build has PostgreSQL's 8."""
    m = re.search(r"\+pinbench-src(\d+)", str(spec))
    return int(m[1]) if m else 8


def build_label(spec: str) -> str:
    """A counted build's name on the page: its version and its array ("18.6, 8 entries")."""
    m = re.search(r":([^+@]+)\+pinbench-src(\d+)([a-z]*)", str(spec))
    if m is None:
        version = re.search(r":([^+@]+)", str(spec))
        return version[1] if version else str(spec)
    return f"{m[1]}, {m[2]} entries" + (f" {m[3]}" if m[3] else "")


def edge(kind: str, entries: int) -> tuple[int, int]:
    """The two N around an array's overflow: the operation's pin is the (entries + 1)st with ``entries`` held (fifo,
    hold), or with ``entries + 1`` pinned per round (cycle)."""
    return (entries, entries + 1) if kind == "cycle" else (entries - 1, entries)


def ordinal(n: int) -> str:
    """9th, 33rd, 21st, 12th."""
    n = int(n)
    tail = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{tail}"


def counted_runs(res: Results) -> pd.DataFrame:
    """The counted part's ok runs (they carry a ``count_kind``), one row each."""
    w = res.wide
    if w.empty or "count_kind" not in w:
        return w.iloc[:0]
    return w[w["count_kind"].notna() & (w["status"] == "ok")]


def timed_only(w: pd.DataFrame) -> pd.DataFrame:
    """The runs of ``w`` (one row each) but the counted part's (curves and queries): a counted server runs under
    valgrind with counting settings of its own, which the timed servers' settings table does not compare."""
    for col in ("count_kind", "count_query"):
        if col in w:
            w = w[w[col].isna()]
    return w


def counts(res: Results) -> pd.DataFrame:
    """One row per counted run and N: build, entries, spec, kind, pattern, n, start (which server start), run_id,
    the figures per operation (FIGURES' names) and the operations counted."""
    def compute():
        w = counted_runs(res)
        rows = []
        for r in w.to_dict("records"):
            for n in r["count_ns"]:
                n = int(n)
                if pd.isna(r.get(f"{MEASURE}_{n}", np.nan)):
                    continue
                rows.append({"build": build_label(r["spec"]), "entries": entries_of(r["spec"]), "spec": r["spec"],
                             "kind": r["count_kind"], "pattern": r["count_pattern"], "n": n,
                             "start": int(r["count_start"]), "run_id": r["run_id"],
                             **{f: float(r.get(f"{f}_{n}", np.nan)) for f in FIGURES},
                             "ops_counted": float(r.get(f"ops_counted_{n}", np.nan))})
        out = pd.DataFrame(rows, columns=_COLS)
        return out.sort_values(["entries", "build", "kind", "pattern", "n", "start"],
                               key=lambda c: c.map(list(KIND_LABELS).index) if c.name == "kind" else c
                               ).reset_index(drop=True)
    return memo(res, "buffer_pins.counts", compute)


def points(res: Results) -> pd.DataFrame:
    """One row per counted point (build, kind, pattern, N): the instructions per operation on each server start
    (``count_0``, ``count_1``), their mean, the largest difference over the mean (``spread``), whether it is at most
    AGREE (``agree``), the starts counted (``servers``) and each figure's mean over the starts."""
    def compute():
        c = counts(res)
        if c.empty:
            return pd.DataFrame()
        rows = []
        for key, g in c.groupby(["build", "entries", "kind", "pattern", "n"], sort=False):
            g = g.sort_values("start")
            values = [float(v) for v in g[MEASURE]]
            mean = float(np.mean(values))
            spread = (max(values) - min(values)) / mean if len(values) > 1 and mean else np.nan
            row = dict(zip(["build", "entries", "kind", "pattern", "n"], key))
            row.update({"servers": int(g["start"].nunique()), "count_0": values[0],
                        "count_1": values[1] if len(values) > 1 else np.nan, "mean": mean, "spread": spread,
                        "agree": bool(spread <= AGREE) if spread == spread else False,
                        **{f: float(g[f].mean()) for f in FIGURES}})
            rows.append(row)
        return pd.DataFrame(rows)
    return memo(res, "buffer_pins.counted_points", compute)


def steps(res: Results) -> pd.DataFrame:
    """Per build, kind and pattern where both N around its array's overflow were counted (:func:`edge`): each
    figure per operation at the N below (``<figure>_lo``) and at the overflow (``<figure>_hi``) and what the
    overflow adds (``<figure>_step``), the means over the starts; ``agree``: all four counts agree."""
    def compute():
        p = points(res)
        if p.empty:
            return pd.DataFrame()
        rows = []
        for (build, entries, kind, pattern), g in p.groupby(["build", "entries", "kind", "pattern"], sort=False):
            lo, hi = edge(kind, int(entries))
            g = g.set_index("n")
            if lo not in g.index or hi not in g.index:
                continue
            row = {"build": build, "entries": int(entries), "kind": kind, "pattern": pattern, "lo": lo, "hi": hi,
                   "agree": bool(g.loc[lo, "agree"] and g.loc[hi, "agree"])}
            for f in FIGURES:
                row[f"{f}_lo"], row[f"{f}_hi"] = float(g.loc[lo, f]), float(g.loc[hi, f])
                row[f"{f}_step"] = row[f"{f}_hi"] - row[f"{f}_lo"]
            rows.append(row)
        return pd.DataFrame(rows)
    return memo(res, "buffer_pins.counted_steps", compute)


def function_name(label: str) -> str:
    """callgrind's label ``GetPrivateRefCountEntry (postgres)`` as the function's name alone."""
    return re.sub(r" \([^()]*\)$", "", str(label))


def per_function(res: Results, run_id: str, n: int, kind: str = "exclusive") -> pd.Series:
    """A counted run's functions at ``n``, instructions per operation (``kind`` exclusive or inclusive), by name."""
    c = res.counters
    if c.empty:
        return pd.Series(dtype=float)
    c = c[(c["run_id"] == run_id) & (c["source"] == f"callgrind_{kind}_{n}")]
    ops = counts(res).set_index(["run_id", "n"])["ops_counted"].get((run_id, n), np.nan)
    out = c.groupby(c["name"].map(function_name))["delta"].sum() / ops
    return out


def carriers(res: Results, top: int = 5) -> pd.DataFrame:
    """Per step of :func:`steps`: the ``top`` functions whose own (exclusive) instructions per operation moved the
    most from the N below the overflow to the overflow (the mean over the starts' runs; a function outside one N's
    stored top counts 0 there), each with both values and the share of the step's instructions it carries."""
    def compute():
        s = steps(res)
        c = counts(res)
        if s.empty or res.counters.empty:
            return pd.DataFrame()
        rows = []
        for x in s.itertuples():
            sel = c[(c["build"] == x.build) & (c["kind"] == x.kind) & (c["pattern"] == x.pattern)]
            side = {}
            for n in (x.lo, x.hi):
                ids = sel.loc[sel["n"] == n, "run_id"]
                side[n] = pd.concat([per_function(res, rid, n) for rid in ids], axis=1).fillna(0).mean(axis=1)
            both = pd.DataFrame({"lo_value": side[x.lo], "hi_value": side[x.hi]}).fillna(0)
            both["moved"] = both["hi_value"] - both["lo_value"]
            both = both.reindex(both["moved"].abs().sort_values(ascending=False).index).head(top)
            for fn, y in both.iterrows():
                rows.append({"build": x.build, "kind": x.kind, "pattern": x.pattern, "lo": x.lo, "hi": x.hi,
                             "function": fn, "lo_value": y["lo_value"], "hi_value": y["hi_value"],
                             "moved": y["moved"],
                             "share": y["moved"] / x.instructions_per_op_step if x.instructions_per_op_step else np.nan})
        return pd.DataFrame(rows)
    return memo(res, "buffer_pins.counted_carriers", compute)


def chart_rows(res: Results) -> pd.DataFrame:
    """The chart's rows: instructions per operation (the mean over the starts) per build, curve and N."""
    p = points(res)
    if p.empty:
        return pd.DataFrame(columns=["build", "curve", "pattern", "n", "instructions"])
    return p.assign(curve=p["kind"].map(KIND_LABELS), instructions=p["mean"])[
        ["build", "curve", "pattern", "n", "instructions", "agree"]]


def numbers(res: Results) -> dict:
    """What the page's counted section says (notebooks/buffer_pins/counted.md.j2): the points and how many agree, the
    builds, curves and N, each step count by count with the functions that carry it, and the 32-entry build at the
    8-entry build's overflow."""
    p = points(res)
    if p.empty:
        return {"counted": False}
    s, f = steps(res), carriers(res)
    items = []
    for x in s.to_dict("records") if len(s) else ():
        fs = f[(f["build"] == x["build"]) & (f["kind"] == x["kind"]) & (f["pattern"] == x["pattern"])] if len(f) else f
        items.append({**x, "label": KIND_LABELS.get(x["kind"], x["kind"]), "nth": ordinal(x["entries"] + 1),
                      "functions": [{"name": y["function"], "moved": y["moved"], "share": y["share"]}
                                    for y in fs.to_dict("records") if abs(y["moved"]) >= 0.5][:3]})
    # the 32-entry build where the stock build overflows: the same N, both counted
    wider = []
    base = p[p["entries"] == 8]
    for x in p[p["entries"] > 8].itertuples():
        lo, hi = edge(x.kind, 8)
        if x.n != hi:
            continue
        b = base[(base["kind"] == x.kind) & (base["pattern"] == x.pattern) & (base["n"] == hi)]
        if len(b):
            wider.append({"build": x.build, "base": b["build"].iloc[0], "kind": x.kind,
                          "label": KIND_LABELS.get(x.kind, x.kind), "pattern": x.pattern, "n": hi,
                          "instructions": x.mean, "base_instructions": float(b["mean"].iloc[0]),
                          "ratio": x.mean / float(b["mean"].iloc[0]),
                          "agree": bool(x.agree and b["agree"].iloc[0])})
    return {"counted": True, "points": len(p), "agree": int(p["agree"].sum()), "servers": int(p["servers"].min()),
            "builds": list(dict.fromkeys(p["build"])), "kinds": [KIND_LABELS.get(k, k) for k in dict.fromkeys(p["kind"])],
            "ns": sorted(int(n) for n in p["n"].unique()), "spread_max": float(p["spread"].max()),
            "within": AGREE, "steps": items, "wider": wider}


def section(res: Results) -> str:
    return prose.render("buffer_pins", "counted", **numbers(res), **hit_numbers(res))


# --- cache hit ratios: the microbenchmark's operations against a query's statements (issue 44) ----------------------

THREAD_KIND = "fifo"  # the thread's benchmark (analysis.THREAD_KIND)
QUERY_LABELS = {"seq_scan": "sequential scan (whole table)", "point_select": "point select by id"}
_HIT_COLS = ["source", "what", "kind", "pattern", "n", "start", "run_id", "instructions_per_op", "accesses_per_op",
             "d1_misses_per_op", "ll_misses_per_op", "d1_hit", "ll_hit", "ops_counted", "buffers_per_statement",
             "buffers_read_per_statement", "rows_per_statement", "statements_seen", "statements_sent"]


def query_runs(res: Results) -> pd.DataFrame:
    """The counted queries' ok runs (they carry a ``count_query``), one row each."""
    w = res.wide
    if w.empty or "count_query" not in w:
        return w.iloc[:0]
    return w[w["count_query"].notna() & (w["status"] == "ok")]


def _hit(row: dict, reads: float, writes: float, d1: float, ll: float) -> dict:
    """A hit ratio is 1 - misses / accesses: the data reads and writes per operation callgrind's simulated caches
    saw, and the first-level (D1) and last-level (LL) misses among them, each over the same accesses. Misses per
    operation are a difference of two passes: one below zero (the passes' setup varies by a few misses) is read as
    none, a hit ratio of 1."""
    acc = reads + writes
    ok = acc == acc and acc > 0
    return {**row, "accesses_per_op": acc, "d1_misses_per_op": d1, "ll_misses_per_op": ll,
            "d1_hit": 1 - max(d1, 0.0) / acc if ok else np.nan, "ll_hit": 1 - max(ll, 0.0) / acc if ok else np.nan}


def hit_ratios(res: Results) -> pd.DataFrame:
    """One row per counted item and server start on the stock counted build (the builds' one with the queries): the
    curves' operations at each N (``source`` pinbench) and the queries' statements (``source`` query), each with its
    instructions and data accesses (reads and writes) per operation, its D1 and LL misses per operation and the hit
    ratios they give (``d1_hit``, ``ll_hit``: 1 - misses / accesses); a query's also with its witness (the buffers
    and rows one statement touched, EXPLAIN's, and the statements the server entered against those sent)."""
    def compute():
        q = query_runs(res)
        rows = []
        specs = set(q["spec"]) if len(q) else set()
        w = counted_runs(res)
        for r in w[w["spec"].isin(specs)].to_dict("records") if len(w) else ():
            for n in r["count_ns"]:
                n = int(n)
                g = lambda f: float(r.get(f"{f}_{n}", np.nan))  # noqa: E731
                if np.isnan(g("instructions_per_op")):
                    continue
                rows.append(_hit({"source": "pinbench", "what": KIND_LABELS.get(r["count_kind"], r["count_kind"]),
                                  "kind": r["count_kind"], "pattern": r["count_pattern"], "n": n,
                                  "start": int(r["count_start"]), "run_id": r["run_id"],
                                  "instructions_per_op": g("instructions_per_op"), "ops_counted": g("ops_counted")},
                                 g("data_reads_per_op"), g("data_writes_per_op"), g("d1_misses_per_op"),
                                 g("ll_misses_per_op")))
        for r in q.to_dict("records"):
            g = lambda f: float(r.get(f, np.nan))  # noqa: E731
            rows.append(_hit({"source": "query", "what": QUERY_LABELS.get(r["count_query"], r["count_query"]),
                              "kind": r["count_query"], "pattern": "", "n": np.nan, "start": int(r["count_start"]),
                              "run_id": r["run_id"], "instructions_per_op": g("instructions_per_op"),
                              "ops_counted": g("ops_counted"), "buffers_per_statement": g("buffers_per_statement"),
                              "buffers_read_per_statement": g("buffers_read_per_statement"),
                              "rows_per_statement": g("rows_per_statement"), "statements_seen": g("statements_seen"),
                              "statements_sent": g("statements_sent")},
                             g("data_reads_per_op"), g("data_writes_per_op"), g("d1_misses_per_op"),
                             g("ll_misses_per_op")))
        return pd.DataFrame(rows, columns=_HIT_COLS)
    return memo(res, "buffer_pins.hit_ratios", compute)


def hit_table(res: Results) -> pd.DataFrame:
    """One row per counted item of :func:`hit_ratios` (a curve at one N, a query): each start's D1 and LL hit
    ratios (``d1_hit_0``, ``d1_hit_1``, ``ll_hit_0``, ``ll_hit_1``), the means of its figures per operation, its
    instructions' spread over the starts and whether they agree (within AGREE, the counted part's rule)."""
    def compute():
        h = hit_ratios(res)
        if h.empty:
            return pd.DataFrame()
        rows = []
        for key, g in h.groupby(["source", "what", "kind", "pattern", "n"], sort=False, dropna=False):
            g = g.sort_values("start")
            ins = [float(v) for v in g["instructions_per_op"]]
            mean = float(np.mean(ins))
            spread = (max(ins) - min(ins)) / mean if len(ins) > 1 and mean else np.nan
            row = dict(zip(["source", "what", "kind", "pattern", "n"], key))
            row.update({"servers": int(g["start"].nunique()), "spread": spread,
                        "agree": bool(spread <= AGREE) if spread == spread else False})
            for f in ("instructions_per_op", "accesses_per_op", "d1_misses_per_op", "ll_misses_per_op",
                      "buffers_per_statement", "rows_per_statement"):
                row[f] = float(g[f].mean())
            for f in ("d1_hit", "ll_hit"):
                by = dict(zip(g["start"], g[f]))
                row[f"{f}_0"], row[f"{f}_1"] = float(by.get(0, np.nan)), float(by.get(1, np.nan))
            row["witness_ok"] = bool((g["source"] == "pinbench").all() or (
                (g["buffers_per_statement"] > 0).all() and (g["statements_seen"] == g["statements_sent"]).all()))
            rows.append(row)
        out = pd.DataFrame(rows)
        out["order"] = out["source"].map({"query": 0, "pinbench": 1})
        kinds = list(KIND_LABELS) + list(QUERY_LABELS)
        out["korder"] = out["kind"].map(lambda k: kinds.index(k) if k in kinds else len(kinds))
        return out.sort_values(["order", "korder", "n"]).drop(columns=["order", "korder"]).reset_index(drop=True)
    return memo(res, "buffer_pins.hit_table", compute)


def hit_numbers(res: Results) -> dict:
    """What the page says of the hit ratios: per query its ratios on each start and its witness, and the thread's
    curve's lowest ratios over its counted N on each start (and the N where each is lowest)."""
    t = hit_table(res)
    if t.empty or not (t["source"] == "query").any():
        return {"hits": False}
    q = t[t["source"] == "query"]
    f = t[(t["source"] == "pinbench") & (t["kind"] == THREAD_KIND)]
    out = {"hits": True, "queries": q.to_dict("records"), "thread": KIND_LABELS[THREAD_KIND], "curve": bool(len(f))}
    if len(f):
        for col in ("d1_hit", "ll_hit"):
            lows = f[[f"{col}_0", f"{col}_1"]].min(axis=1)
            at = f.loc[lows.idxmin()]
            out[f"{col}_low"], out[f"{col}_low_n"] = float(lows.min()), int(at["n"])
            out[f"{col}_high"] = float(f[[f"{col}_0", f"{col}_1"]].max(axis=1).max())
        out["hit_ns"] = len(f)
        out["pattern"] = f["pattern"].iloc[0]
    # the chapter's other curves: each one's lowest and highest ratios over its N and both starts, and the N where
    # its D1 ratio is lowest
    others = []
    o = t[(t["source"] == "pinbench") & (t["kind"] != THREAD_KIND)]
    for kind, g in o.groupby("kind", sort=False):
        lows = g[["d1_hit_0", "d1_hit_1"]].min(axis=1)
        others.append({"label": KIND_LABELS.get(kind, kind), "d1_low": float(lows.min()),
                       "d1_low_n": int(g.loc[lows.idxmin(), "n"]),
                       "d1_high": float(g[["d1_hit_0", "d1_hit_1"]].max(axis=1).max()),
                       "ll_low": float(g[["ll_hit_0", "ll_hit_1"]].min(axis=1).min())})
    out["others"] = others
    return out
