"""The numbers of the page's answer and findings, rendered by ``notebooks/buffer_pins/findings.md.j2``, each with its
95% interval: the thread's benchmark (N held, a FIFO of one buffer) per version, its step past the array, its edge
at 8 held and its growth to 10,000; what one probe of the overflow table costs on each version (19~rc1's private
refcount path differs) and in a pin, lock, unlock, unpin sequence; an array of 32 entries and a layout-only build
on raw time; the overflow table alone, keyed by buffer numbers with and without murmurhash32; and what real
queries hold (shares with exact intervals), their I/O starts on hits."""

from __future__ import annotations

import numpy as np

from dbexp.book import prose
from dbexp.chapters.buffer_pins import counting
from dbexp.chapters.buffer_pins.analysis import (GROWTH, KIND_LABELS, STEP, THREAD_KIND, array_table, hash_table,
                                                 io_table, overflow_ns, pooled_share, shape_table, share_text,
                                                 slot_shares, source_ratio)
from dbexp.experiments.chapter import Results

PREVIEW = "19.0~rc1"  # the preview release whose bufmgr.c changed the private refcount path


def _ci(r, lo, hi, fmt: str = ".2f", unit: str = "") -> str:
    """A number with its 95% interval ("1.27x [1.22, 1.32]"); the number alone where there is no interval."""
    if unit.startswith(" "):  # a unit of its own after the interval: "14.2 [12.4, 15.9] ns"
        return f"{prose.num(r, fmt)}{unit}" if np.isnan(lo) else f"{prose.num(r, fmt)} {prose.ci(lo, hi, fmt)}{unit}"
    if np.isnan(lo):
        return f"{prose.num(r, fmt)}{unit}"
    return f"{prose.num(r, fmt)}{unit} {prose.ci(lo, hi, fmt)}"


def _span(g, col: str, lo: str, hi: str, fmt: str = ".2f", unit: str = "x") -> dict | None:
    """The lowest and the highest of ``col`` over the versions in ``g``, each with its interval and its version, as
    one text ("1.24x [1.16, 1.32] (18.4) to 1.29x [1.28, 1.29] (13.23)"; one version: once)."""
    g = g.dropna(subset=[col])
    if g.empty:
        return None
    a, b = g.loc[g[col].idxmin()], g.loc[g[col].idxmax()]
    one = _ci(a[col], a[lo], a[hi], fmt, unit)
    text = (f"{one} ({a['version']})" if a["version"] == b["version"] else
            f"{one} ({a['version']}) to {_ci(b[col], b[lo], b[hi], fmt, unit)} ({b['version']})")
    return {"text": text, "low": float(a[col]), "high": float(b[col]), "low_version": a["version"],
            "high_version": b["version"], "resolved_above": bool((g[lo] > 1).all()) if unit == "x" else False}


def _curve(res: Results) -> dict | None:
    """The thread's benchmark (else *pin N, release N*) in random order: step, edge and growth over the versions."""
    t = shape_table(res)
    if t.empty:
        return None
    kind = THREAD_KIND if (t["kind"] == THREAD_KIND).any() else "cycle"
    g = t[(t["kind"] == kind) & (t["pattern"] == "random")]
    spans = {c: _span(g, c, f"{c}_lo", f"{c}_hi") for c in ("step", "edge", "growth")}
    if spans["step"] is None or spans["growth"] is None:
        return None
    versions = list(dict.fromkeys(g["version"]))
    return {"kind": kind, "label": KIND_LABELS[kind], "thread": kind == THREAD_KIND, **spans,
            "edge_low": int(g["edge_pair"].iloc[0].split()[0]), "edge_high": int(g["edge_pair"].iloc[0].split()[-1]),
            "first": versions[0], "last": versions[-1],
            "source_step": source_ratio("random", STEP), "source_growth": source_ratio("random", GROWTH)}


def _probe(res: Results) -> dict | None:
    """What 8 held add over 7 (the operation's pin misses the full array and probes the overflow table), ns: on the
    thread's benchmark (else N held) 19~rc1 against the released versions; and in a pin, lock, unlock, unpin."""
    for kind in (THREAD_KIND, "hold"):
        o = overflow_ns(res, kind)
        if len(o):
            break
    else:
        return None
    out = {"kind": KIND_LABELS[kind], "preview": None, "released": None, "locked": None}
    rest = o[o["version"] != PREVIEW]
    if len(rest):
        out["released"] = _span(rest, "ns", "lo", "hi", ".1f", " ns")
    if PREVIEW in set(o["version"]):
        mine = o[o["version"] == PREVIEW].iloc[0]
        out["preview"] = {"text": _ci(mine["ns"], mine["lo"], mine["hi"], ".1f", " ns"),
                          "below": bool(len(rest) and mine["hi"] < rest["lo"].min())}
    locked = overflow_ns(res, "hold_lock")
    if len(locked):
        out["locked"] = _span(locked, "ns", "lo", "hi", ".1f", " ns")
    return out


def _array(res: Results) -> dict | None:
    """The builds of one source against its 8 entries on raw time, the thread's benchmark in random order: 32 with no
    linear search and 32 searched at 19 held; the layout-only build's span over every N."""
    t = array_table(res)
    if t.empty or not t["paired"].all():
        return None
    t = t[(t["kind"] == THREAD_KIND) & (t["pattern"] == "random")]
    out = {}
    for build, key in (("32 direct", "direct"), ("32", "stock")):
        g = t[(t["build"] == build)].set_index("n")
        if 19 in g.index:
            r = g.loc[19]
            out[key] = {"text": _ci(r["ratio"], r["lo"], r["hi"]), "below": bool(r["hi"] < 1),
                        "above": bool(r["lo"] > 1)}
    aligned = t[t["build"] == "8 aligned"].assign(version=lambda d: "N = " + d["n"].map("{:,}".format))
    if len(aligned):
        out["aligned"] = _span(aligned, "ratio", "lo", "hi")
        out["aligned"]["under"] = bool((aligned["hi"] < 1.03).all())
    return out or None


def _hash(res: Results) -> dict | None:
    """The overflow table alone at its largest N: keys 1,024 apart with the identity over murmurhash32 (and how the
    identity's table grew), and the buffers of neighbouring blocks with murmurhash32 over the identity."""
    t = hash_table(res)
    if t.empty:
        return None
    out = {}
    s = t[t["pattern"] == "stride"]
    if len(s):
        top = s[s["n"] == s["n"].max()].assign(inv=lambda d: 1 / d["ratio"], inv_lo=lambda d: 1 / d["hi"],
                                               inv_hi=lambda d: 1 / d["lo"])
        out["stride"] = {"n": int(top["n"].iloc[0]), **_span(top, "inv", "inv_lo", "inv_hi"),
                         "size": int(top["identity_size"].max()), "grows": int(top["identity_grows"].max()),
                         "dib": int(top["identity_max_dib"].max()), "murmur_size": int(top["murmur_size"].max())}
    q = t[t["pattern"] == "sequential"]
    if len(q):
        top = q[q["n"] == q["n"].max()]
        out["sequential"] = {"n": int(top["n"].iloc[0]), **_span(top, "ratio", "lo", "hi")}
    return out or None


def _queries(res: Results) -> dict | None:
    """What real queries hold (every query shape and version pooled): new pins with at most 2 others held, pins with
    a content lock, new pins whose slot in an array of 32 indexed by buffer number was taken; and the I/O starts
    of hits (16 and later, warm runs)."""
    k, n = pooled_share(res, "held_at_pin", lambda v: v <= 3)
    if not n:
        return None
    lk, ln = pooled_share(res, "locks_per_pin", lambda v: v >= 1)
    out = {"le2": share_text(k, n), "n": n, "locked": share_text(lk, ln) if ln else "", "slots": None, "io": None}
    s = slot_shares(res)
    if len(s):
        out["slots"] = share_text(int(s["taken"].sum()), int(s["pins"].sum()))
    io = io_table(res)
    if len(io):
        warm = io[io["resowner"] & ~io["cold"].astype(bool) & (io["shape"] != "flush")]
        if len(warm):
            starts = int(warm["io_read"].sum() + warm["io_write"].sum())
            out["io"] = {"starts": starts, "hits": int(warm["hit"].sum()), "read": int(warm["read"].sum()),
                         "versions": ", ".join(dict.fromkeys(warm["version"]))}
    return out


def _counted(res: Results) -> dict | None:
    """The thread's benchmark's step on the stock build, counted under callgrind (counting.steps, random order):
    instructions per operation with 7 held and with 8, the two starts' largest difference, and the two functions
    whose own instructions carry most of it; None where it was not counted."""
    s = counting.steps(res)
    if s.empty:
        return None
    s = s[(s["kind"] == THREAD_KIND) & (s["pattern"] == "random") & (s["entries"] == 8)]
    if s.empty:
        return None
    x = s.iloc[0]
    p = counting.points(res)
    p = p[(p["build"] == x["build"]) & (p["kind"] == THREAD_KIND) & (p["pattern"] == "random")
          & p["n"].isin([x["lo"], x["hi"]])]
    f = counting.carriers(res)
    f = f[(f["build"] == x["build"]) & (f["kind"] == THREAD_KIND) & (f["pattern"] == "random") & (f["moved"] > 0)] \
        if len(f) else f
    return {"build": x["build"], "lo": int(x["lo"]), "hi": int(x["hi"]), "lo_value": float(x["instructions_per_op_lo"]),
            "hi_value": float(x["instructions_per_op_hi"]), "agree": bool(x["agree"]),
            "spread": float(p["spread"].max()), "functions": list(f["function"])[:2]}


def numbers(res: Results) -> dict:
    curve = _curve(res)
    return {"enough": curve is not None, "curve": curve, "probe": _probe(res), "array": _array(res),
            "hash": _hash(res), "queries": _queries(res), "counted": _counted(res)}


def findings(res: Results) -> str:
    return prose.render("buffer_pins", "findings", **numbers(res))


def headline(res: Results) -> str:
    """The page's answer in one or two sentences, from the data: on the runs' CPU, the thread's benchmark's step past
    the 8-entry array (11 held over 7) and its growth to 10,000 (over 1), the lowest and highest version with their
    95% intervals, against the thread's; and the 32-entry array without its linear search at 19 held ('' without a
    curve)."""
    from dbexp.experiments.chapter import cpu_models

    c = _curve(res)
    if c is None:
        return ""
    what = ("the thread's benchmark (N pins held, one more buffer pinned and released again)" if c["thread"] else
            f"our reading *{c['label']}* (no run of the thread's benchmark in these results)")
    text = (f"On an {cpu_models(res.runs)}, {what} costs {c['step']['text']} as much with 11 pins as with 7 and "
            f"{c['growth']['text']} as much with 10,000 as with 1 on PostgreSQL {c['first']} to {c['last']} (the thread: "
            f"{c['source_step']:.2f}x and {c['source_growth']:.2f}x; random order, 95% intervals).")
    a = _array(res)
    if a and "direct" in a:
        text += (f" An array of 32 entries without its linear search (18.6 built again) takes "
                 f"{a['direct']['text']} of the 8-entry build's time at 19 held.")
    return text

