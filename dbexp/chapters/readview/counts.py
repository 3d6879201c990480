"""The readview chapter's counted part, analysed: instructions per read (a point select in autocommit, its own
view or snapshot) on each of two separately started servers per H and their agreement, the line of instructions per
read against H per server (least squares: its slope per open transaction and its largest residual), and the same for
the witness, the inclusive instructions of the functions that build and copy the view (counting.py): how much of the
slope is in them.

An instruction count is exact and repeatable where a time is not, so a line through the counts is judged by its
residuals, not by an interval: a count that grows in a straight line leaves residuals of the size of the two starts'
difference. The H fitted are those above 0 where there are two or more (InnoDB reuses an autocommit reader's view
while it lists no transaction: H = 0 is then another path, shown apart), else every H counted.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dbexp.chapters.readview import counting
from dbexp.chapters.readview.chapter import COUNTED, COUNTED_STARTS, of_run
from dbexp.experiments import counted
from dbexp.experiments.chapter import Results, memo

MEASURE = counting.MEASURE
VIEW = counting.VIEW


def counted_runs(res: Results) -> pd.DataFrame:
    """The counted part's runs (mode ``counted``, a count stored), one row each, with each run's engine family and
    the view functions callgrind named in it (``function``: '' where none matched)."""
    def compute():
        w = res.wide
        if w.empty or "mode" not in w or MEASURE not in w:
            return w.iloc[:0]
        w = w[(w["mode"] == COUNTED) & w[MEASURE].notna()].copy()
        if w.empty:
            return w
        for col in ("holders", "start", "ops"):
            w[col] = w[col].astype(int)
        for col in (VIEW, counting.VIEW_CALLS, "valgrind_start_s", "hold_s", "count_s", "count_ops_per_s"):
            if col not in w:
                w[col] = np.nan
        w["family"] = [of_run(f, v).family for f, v in zip(w["flavor"], w["version"])]
        c = res.counters
        names = {}
        if len(c) and "source" in c:
            views = c[(c["source"] == "callgrind_view") & c["run_id"].isin(w["run_id"])]
            names = views.groupby("run_id")["name"].agg(lambda x: ", ".join(f"`{n}`" for n in sorted(set(_short(n) for n in x))))
        w["function"] = w["run_id"].map(names).fillna("")
        return w
    return memo(res, "readview.counted_runs", compute)


def _short(label: str) -> str:
    """'MVCC::view_open(ReadView*&, trx_t*) (mysqld)' -> 'MVCC::view_open': no parameters, no binary."""
    name = label.rsplit(" (", 1)[0] if label.endswith(")") and " (" in label else label
    return name.split("(", 1)[0]


def points(res: Results) -> pd.DataFrame:
    """One row per counted server and H: the instructions per read on each start (``count_0``, ``count_1``), their
    mean, their largest difference over the mean (``spread``) and whether it is at most counted.AGREE (``agree``);
    the view functions' inclusive instructions per read (``view_0``, ``view_1``, ``view``) and calls per read; its
    name; the start under valgrind, the holders' change and the counted reads per second (medians)."""
    def compute():
        w = counted_runs(res)
        if w.empty:
            return pd.DataFrame()
        rows = []
        for (server, h), g in w.groupby(["series_name", "holders"], sort=False):
            g = g.sort_values("start")
            counts = [float(v) for v in g[MEASURE]]
            views = [float(v) for v in g[VIEW]]
            mean = float(np.mean(counts))
            spread = (max(counts) - min(counts)) / mean if len(counts) > 1 and mean else np.nan
            row = {"server": server, "flavor": g["flavor"].iloc[0], "family": g["family"].iloc[0], "holders": int(h),
                   "starts": int(g["start"].nunique()), "mean": mean, "spread": spread,
                   "agree": bool(spread <= counted.AGREE) if spread == spread else False,
                   "view": float(np.nanmean(views)) if any(v == v for v in views) else np.nan,
                   "calls": float(g[counting.VIEW_CALLS].mean()),
                   "function": ", ".join(sorted({f for f in g["function"] if f})),
                   "start_s": float(g["valgrind_start_s"].median()), "hold_s": float(g["hold_s"].median()),
                   "count_s": float(g["count_s"].median()), "ops": int(g["ops"].median()),
                   "ops_per_s": float(g["count_ops_per_s"].median())}
            for i in range(max(COUNTED_STARTS, len(counts))):
                row[f"count_{i}"] = counts[i] if i < len(counts) else np.nan
                row[f"view_{i}"] = views[i] if i < len(views) else np.nan
            rows.append(row)
        return pd.DataFrame(rows).sort_values(["server", "holders"]).reset_index(drop=True)
    return memo(res, "readview.counted_points", compute)


def fitted(hs) -> list[int]:
    """The H a line is fitted through: those above 0 where there are two or more, else all of them."""
    above = sorted(h for h in set(hs) if h > 0)
    return above if len(above) >= 2 else sorted(set(hs))


def _fitted_points(res: Results) -> list[tuple[str, pd.DataFrame, list[int], pd.DataFrame]]:
    """Per counted server: its name, its :func:`points`, the :func:`fitted` H and those H's points in order."""
    p = points(res)
    out = []
    for server, g in (p.groupby("server", sort=False) if len(p) else []):
        hs = fitted(g["holders"])
        out.append((server, g, hs, g[g["holders"].isin(hs)].sort_values("holders")))
    return out


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least squares through (x, y): slope, intercept and the largest residual in absolute value."""
    if len(x) < 2 or np.any(~np.isfinite(y)):
        return np.nan, np.nan, np.nan
    slope, intercept = np.polyfit(x.astype(float), y.astype(float), 1)
    resid = float(np.max(np.abs(y - (slope * x + intercept))))
    # counts are whole instructions over hundreds of reads: a slope of -1e-12 is a flat line, shown as 0, not -0
    return float(np.round(slope, 6)) + 0.0, float(intercept), float(np.round(resid, 6)) + 0.0


def lines(res: Results) -> pd.DataFrame:
    """Per counted server: the line of instructions per read against H (:func:`fitted` H; its slope per open
    transaction, intercept and largest residual, also as a share of the rise over those H), each start's own slope,
    the two starts' largest difference at those H, whether it is a straight line (every residual within the larger of
    that difference and 1% of the rise), whether the count grows (the rise above three times that difference); the
    count at H = 0 where it is not fitted; the view functions' line (``view_slope``, its residual) and its share of
    the read's slope; its calls per read and instructions per call and open transaction at the largest H."""
    def compute():
        w = counted_runs(res)
        rows = []
        for server, g, hs, f in _fitted_points(res):
            x = f["holders"].to_numpy()
            slope, intercept, resid = _line(x, f["mean"].to_numpy())
            vslope, _, vresid = _line(x, f["view"].to_numpy())
            rise = abs(slope) * (max(hs) - min(hs)) if slope == slope else np.nan
            diff = float(np.nanmax(np.abs(f["count_0"] - f["count_1"]))) if len(f) and "count_1" in f else np.nan
            diff = diff if diff == diff else 0.0
            per_start = {}
            for s, gs in w[(w["series_name"] == server) & w["holders"].isin(hs)].groupby("start"):
                gs = gs.sort_values("holders")
                per_start[int(s)] = _line(gs["holders"].to_numpy(), gs[MEASURE].to_numpy())[0]
            top = f.iloc[-1] if len(f) else None
            zero = g[g["holders"] == 0]
            rows.append({
                "server": server, "flavor": g["flavor"].iloc[0], "family": g["family"].iloc[0],
                "H": ", ".join(f"{h:,}" for h in hs), "lower": min(hs), "upper": max(hs), "points": len(hs),
                "slope": slope, "intercept": intercept, "residual": resid,
                "residual_share": resid / rise if rise and rise == rise else np.nan,
                "slope_0": per_start.get(0, np.nan), "slope_1": per_start.get(1, np.nan),
                "difference": diff, "straight": bool(len(hs) >= 3 and resid == resid and resid <= max(diff, 0.01 * rise)),
                "grows": bool(rise == rise and rise > 3 * diff and slope > 0),
                "at_0": float(zero["mean"].iloc[0]) if len(zero) and 0 not in hs else np.nan,
                "view_slope": vslope, "view_residual": vresid,
                "share": (float(np.round(vslope / slope, 6)) + 0.0 if slope and slope == slope and vslope == vslope
                          else np.nan),
                "function": ", ".join(sorted({x for x in g["function"] if x})),
                "calls": float(top["calls"]) if top is not None else np.nan,
                "per_call": (vslope / float(top["calls"]) if top is not None and top["calls"] and vslope == vslope
                             else np.nan),
                "bytes_per_holder": of_run(g["flavor"].iloc[0], w.loc[w["series_name"] == server, "version"].iloc[0]
                                           ).bytes_per_holder,
                "agree": bool(f["agree"].all())})
        return pd.DataFrame(rows)
    return memo(res, "readview.counted_lines", compute)


def pace(res: Results) -> pd.DataFrame:
    """Per counted server: the start under valgrind, the seconds a holder's preparation took (natively, before the
    start's first count: its holders over its largest H), the seconds of a count's passes per read counted and the
    seconds of each later point's rollbacks: what the default scale's counted part is sized from
    (:func:`default_minutes`)."""
    p = points(res)
    if p.empty:
        return pd.DataFrame()
    rows = []
    for server, g in p.groupby("server", sort=False):
        top = g[g["holders"] == g["holders"].max()]
        rest = g[g["holders"] < g["holders"].max()]
        rows.append({"server": server, "flavor": g["flavor"].iloc[0], "start_s": float(g["start_s"].median()),
                     "hold_per_holder_s": (float(top["hold_s"].median() / top["holders"].iloc[0])
                                           if top["holders"].iloc[0] else np.nan),
                     "rollback_s": float(rest["hold_s"].median()) if len(rest) else 0.0,
                     "read_s": float((g["count_s"] / g["ops"]).median())})
    return pd.DataFrame(rows)


def default_minutes(res: Results, native_start_s: float = 20.0) -> float:
    """The default scale's counted part in minutes at the pace these runs measured (:func:`pace`), per counted server
    start: a native start and load (``native_start_s``), the largest H's holders prepared, the start under
    valgrind, every H's count and the rollbacks between them, each server's flavor's median pace (a flavor not
    counted here: not counted in the sum). NaN without counted runs."""
    from dbexp.chapters.readview.chapter import CHAPTER, of_spec
    from dbexp.servers.registry import flavor_of_spec

    pc = pace(res)
    if pc.empty:
        return float("nan")
    sc = CHAPTER.scales["default"]
    by_flavor = pc.groupby("flavor")[["start_s", "hold_per_holder_s", "rollback_s", "read_s"]].median()
    hs = sorted(set(sc.counted_holders))
    total = 0.0
    for spec in sc.counted_servers:
        flavor = flavor_of_spec(spec).name
        if flavor not in by_flavor.index:
            continue
        f = by_flavor.loc[flavor].fillna(0.0)
        count = f["read_s"] * sc.counted_ops
        if of_spec(spec).registry_shrinks:  # one start: the largest H prepared, then rolled back H by H
            total += COUNTED_STARTS * (native_start_s + f["hold_per_holder_s"] * max(hs) + f["start_s"]
                                       + len(hs) * count + (len(hs) - 1) * f["rollback_s"])
        else:  # a start per H
            total += COUNTED_STARTS * sum(native_start_s + f["hold_per_holder_s"] * h + f["start_s"] + count for h in hs)
    return total / 60


def not_counted(res: Results) -> list[dict]:
    """The servers of the timed runs that the counted part did not count, each with why (chapter.COUNTED_LEFT_OUT's
    reason where its registry keeps its peak size, else that the scale did not name it)."""
    from dbexp.chapters.readview.analysis import tidy
    from dbexp.chapters.readview.chapter import COUNTED_LEFT_OUT

    w = tidy(res)
    done = set(counted_runs(res)["series_name"])
    out = []
    for name, g in w.groupby("series_name", sort=True):
        if name in done:
            continue
        part = of_run(g["flavor"].iloc[0], g["version"].iloc[0])
        why = next(iter(COUNTED_LEFT_OUT.values())) if not part.registry_shrinks and COUNTED_LEFT_OUT else \
            "not among the scale's counted servers"
        out.append({"server": name, "why": why})
    return out


def numbers(res: Results) -> dict:
    """What the page's counted section says (notebooks/readview/counted.md.j2)."""
    p = points(res)
    if p.empty:
        return {"counted": False}
    ln = lines(res)
    return {"counted": True, "not_counted": not_counted(res), "points": len(p), "agree": int(p["agree"].sum()), "starts": int(p["starts"].min()),
            "servers": list(ln["server"]), "holders": [f"{h:,}" for h in sorted(set(p["holders"]))], "ops": int(p["ops"].max()),
            "spread_max": float(p["spread"].max()), "within": counted.AGREE,
            "lines": ln.to_dict("records"), **verdicts_of(ln), **view_verdicts(res)}


def decided(res: Results) -> dict[str, dict]:
    """Per server whose separately started servers' counts agree (a verdict was read from them), its row of
    :func:`view_segments`: where a claim about CPU work is judged on the counts, not on the times (issue 48)."""
    vs = view_segments(res)
    return {r["server"]: r for r in vs.to_dict("records") if r["verdict"] == r["verdict"]} if len(vs) else {}


def view_verdicts(res: Results) -> dict:
    """The servers by the verdict the claims table reads from their view functions' counts (:func:`view_segments`):
    ``view_line`` (it grows, its bend within the band: a line), ``view_bent`` (it grows, the bend beyond the band),
    ``view_flat`` (no growth), and ``band``, the band."""
    from dbexp.experiments import verdicts

    rows = list(decided(res).values())
    return {"view_line": [r["server"] for r in rows if r["verdict"].startswith(verdicts.AGREES)],
            "view_bent": [r["server"] for r in rows if r["verdict"].startswith(verdicts.DISAGREES) and r["slope_min"] > 0],
            "view_flat": [r["server"] for r in rows if r["slope_min"] <= 0], "band": verdicts.LINE_BAND}


def verdicts_of(ln: pd.DataFrame) -> dict:
    """The servers by what their counts say of the claim that a view's cost grows linearly with the open
    transactions: ``linear`` (the count grows, a straight line through three H or more), ``bent`` (grows, not a
    straight line), ``grows`` (grows, too few H to judge the line), ``flat`` (no growth beyond the two starts'
    difference, nor its witness), ``small`` (the witness grows, the read by less than the two starts' difference),
    ``reused`` (of ``flat``, the servers that reuse a snapshot while no transaction ends: PostgreSQL 14
    and later)."""
    from dbexp.chapters.readview.engines import postgres

    out: dict[str, list] = {"linear": [], "bent": [], "grows": [], "flat": [], "reused": [], "small": []}
    for x in ln.to_dict("records"):
        rise = x["view_slope"] * (x["upper"] - x["lower"]) if x["view_slope"] == x["view_slope"] else 0.0
        if not x["grows"] and rise >= 1:  # the witness grows, the read by less than its two starts' difference
            out["small"].append(x["server"])
        elif not x["grows"]:
            out["flat"].append(x["server"])
            if x["family"] == postgres.Snapshots.FROM_14:
                out["reused"].append(x["server"])
        elif x["points"] < 3:
            out["grows"].append(x["server"])
        else:
            out["linear" if x["straight"] else "bent"].append(x["server"])
    return out


def view_segments(res: Results) -> pd.DataFrame:
    """Per counted server whose view functions callgrind named: the count of building a view (those functions'
    inclusive instructions per read) against H, judged as a line of counts (verdicts.counted_line): the
    slope per open transaction over the :func:`fitted` H (least squares), the lower segment (smallest H to the
    middle one) and the upper one (middle to largest), and the bend (upper minus lower), each per start; the
    interval of each is the range of the separately started servers' own values, since their counts are exact up
    to the starts' difference (``agree``: every point's read count agrees within counted.AGREE; where one does
    not, no verdict is read from the counts: ``verdict`` is NaN). The ``witness``: the functions' calls per read
    and the prepared transactions the server listed in every counted run of the fitted H."""
    from dbexp.experiments import verdicts

    def compute():
        w = counted_runs(res)
        rows = []
        for server, g, hs, f in _fitted_points(res):
            if len(hs) < 3 or not (g["function"] != "").all():
                continue
            h0, h1, h2 = hs[0], hs[-2], hs[-1]
            starts = [c for c in f if c.startswith("view_") and c[5:].isdigit() and f[c].notna().all()]
            by = f.set_index("holders")
            slope = [_line(f["holders"].to_numpy(), f[c].to_numpy())[0] for c in starts]
            low = [(by.loc[h1, c] - by.loc[h0, c]) / (h1 - h0) for c in starts]
            high = [(by.loc[h2, c] - by.loc[h1, c]) / (h2 - h1) for c in starts]
            bend = [hi - lo for lo, hi in zip(low, high)]
            runs = w[(w["series_name"] == server) & w["holders"].isin(hs)]
            seen = pd.to_numeric(runs.get("observed_prepared"), errors="coerce") if "observed_prepared" in runs else None
            held = int((seen == runs["holders"]).sum()) if seen is not None else 0
            calls = runs[counting.VIEW_CALLS]
            ok = bool(len(runs) and held == len(runs) and (calls >= 1).all())
            agree = bool(f["agree"].all())
            s = (float(np.mean(slope)), float(min(slope)), float(max(slope)))
            b = (float(np.mean(bend)), float(min(bend)), float(max(bend)))
            rows.append({
                "server": server, "family": g["family"].iloc[0], "function": f["function"].iloc[0],
                "lower": f"{h0:,} to {h1:,}", "upper": f"{h1:,} to {h2:,}", "from_h": h0, "to_h": h2,
                "starts": len(starts),
                "slope": s[0], "slope_min": s[1], "slope_max": s[2],
                "low_slope": float(np.mean(low)), "high_slope": float(np.mean(high)),
                "bend": b[0], "bend_min": b[1], "bend_max": b[2],
                "bend_share": b[0] / s[0] if s[0] else np.nan, "agree": agree,
                "verdict": verdicts.counted_line(s, b) if agree and len(starts) >= 2 else np.nan,
                "witness_ok": ok,
                "witness": (f"callgrind counted {f['function'].iloc[0]} {float(calls.min()):.2f} to "
                            f"{float(calls.max()):.2f} calls per read in {len(runs)} counted runs at H = "
                            f"{', '.join(f'{h:,}' for h in hs)}, each on a server that listed its H prepared "
                            f"transactions ({held} of {len(runs)})")})
        return pd.DataFrame(rows)
    return memo(res, "readview.counted_view_segments", compute)
