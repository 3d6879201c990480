"""The readview page's sentences that depend on the results, rendered from the templates in
notebooks/readview/ with the numbers of dbexp.chapters.readview.analysis."""

from __future__ import annotations

from dbexp.book import prose
from dbexp.chapters.readview import analysis, counts
from dbexp.chapters.readview.claims import _per_call_pairs
from dbexp.chapters.readview.engines import innodb, postgres
from dbexp.experiments.chapter import Results


def _rows(df) -> list[dict]:
    return [] if df is None or len(df) == 0 else df.to_dict("records")


def _views(res: Results) -> dict:
    """The slopes of calls that build a view (prepared transactions), by engine, with the segments'
    shape and PostgreSQL 14+'s bounds where rebuilds were not timed apart."""
    vs = analysis.building(analysis.view_slopes(res))
    vs = vs[vs["holding"] == "prepared"] if len(vs) else vs
    seg = analysis.segments(res)
    seg = {r["server"]: r for r in _rows(seg)}
    bounds = {r["server"]: r for r in _rows(analysis.rebuild_bounds(res))}
    out = {"readviews": [], "snapshots_old": [], "snapshots_new": []}
    for r in _rows(vs):
        r = {**r, "segment": seg.get(r["server"]), "bounds": bounds.get(r["server"]),
             "mixed": r["calls"] == analysis.MIXED}
        if r["family"] == innodb.Views.family:
            out["readviews"].append(r)
        elif r["family"] == postgres.Snapshots.BEFORE_14:
            out["snapshots_old"].append(r)
        elif r["family"] == postgres.Snapshots.FROM_14:
            out["snapshots_new"].append(r)
    return out


def findings(res: Results) -> str:
    """The page's summary: reads per second at the largest H (lowest first), InnoDB's view cost
    against the copy and its shape, PostgreSQL's per prepared transaction (rebuilds, or their bounds),
    and idle sessions before and from 14 (the difference of their slopes)."""
    top = analysis.relative_at_top(res)
    copy = analysis.copy_cost(res)
    idle = analysis.idle_sessions(res)
    views = _views(res)
    said = bool(len(top)) or any(views.values()) or bool(idle["pairs"])
    return "\n".join(prose.render("readview", "findings", relative=_rows(top), counted=counts.decided(res),
                                   top_holders=int(top["holders"].iloc[0]) if len(top) else 0, copy=copy,
                                   pairs=idle["pairs"], visibility=_rows(analysis.visibility_growth(res)), said=said,
                                   **views).split("\n\n"))


def copy_sentence(res: Results) -> str:
    """How this host's copy cost per byte was measured (or refitted from older runs), with its call."""
    return prose.render("readview", "copy", copy=analysis.copy_cost(res))


def segments_sentence(res: Results) -> str:
    """Whether each server's view cost per holder is the same in its lower and upper segment of H."""
    return prose.render("readview", "segments", segments=_rows(analysis.segments(res)))


def reuse_sentence(res: Results) -> str:
    """PostgreSQL 14+: rebuilt snapshots apart from reused ones, or what the stored quantiles bound."""
    t = analysis.reuse(res)
    split = _rows(t[t["rebuilt share"].notna()]) if len(t) else []
    top = t[t["holders"] == t["holders"].max()] if len(t) else t
    return prose.render("readview", "reuse", servers=sorted(set(t["server"])) if len(t) else [],
                        split=[r for r in split if r["holders"] == max(x["holders"] for x in split)] if split else [],
                        bounds=_rows(analysis.rebuild_bounds(res)), top=_rows(top))


def visibility_sentence(res: Results) -> str:
    """The visibility runs: per server the check's growth from the smaller H to the larger, with its interval."""
    return prose.render("readview", "visibility", growth=_rows(analysis.visibility_growth(res)),
                        ran=bool(len(analysis.visibility(res))))


def mechanics_sentence(res: Results) -> str:
    """The mechanics runs: per server what the trials saw (snapshot at BEGIN or at the first read, the id)."""
    return prose.render("readview", "mechanics", rows=_rows(analysis.mechanics(res)))


def loop_sentence(res: Results) -> str:
    """MariaDB (no function to time): what the readers keep at the largest H, then the loop's time per
    read at each H, its repeats at the largest in the order they ran (a drift, not a cost per holder)."""
    lr = analysis.loop_runs(res)
    servers = []
    for name, g in lr.groupby("server") if len(lr) else []:
        g = g.sort_values("holders")
        servers.append({"server": name, "top": g.iloc[-1].to_dict(), "rows": _rows(g)})
    return prose.render("readview", "loop", ran=bool(len(lr)), servers=servers)


def sessions_sentence(res: Results) -> str:
    """PostgreSQL: the view's slope per idle session beside its slope per prepared transaction, and
    each server before 14 against each from 14 on (the difference of their slopes per idle session)."""
    idle = analysis.idle_sessions(res)
    return prose.render("readview", "sessions", servers=idle["servers"], pairs=idle["pairs"])


def counted_sentence(res: Results) -> str:
    """The counted part: each point's two starts' agreement, per server the line of instructions per read against
    H with its residual and its witness (the inclusive count of the functions that build and copy the view), and what that says of the claim that
    a view's cost grows linearly with the open transactions."""
    return prose.render("readview", "counted", **counts.numbers(res))


def statement_sentence(res: Results) -> str:
    """Servers whose CPU per statement at H = 0 is more than twice the others'."""
    costly = analysis.costly_statements(res)
    return prose.render("readview", "statement", compared=costly is not None, costly=_rows(costly))


def headline(res: Results) -> str:
    """The page's answer in two sentences, from the data: on the runs' CPU, what each open transaction adds to a
    view (one server per kind of view: the median slope of InnoDB's ReadViews, of PostgreSQL's snapshots before 14
    and of its rebuilds from 14), each with its 95% interval; and the readers' reads per second at the largest H
    over none, the lowest and the highest ('' without a slope)."""
    from dbexp.experiments.chapter import cpu_models

    views = _views(res)
    counted = counts.decided(res)
    picked = []
    for key, what in (("readviews", "a MySQL ReadView"), ("snapshots_old", "a PostgreSQL snapshot before 14"),
                      ("snapshots_new", "a PostgreSQL snapshot rebuilt from 14 on")):
        rows = sorted(views[key], key=lambda r: r["slope"])
        if rows:
            r = rows[len(rows) // 2]
            c = counted.get(r["server"])
            picked.append(f"{_ns(r['slope'], r['low'], r['high'])} to {what} ({r['server']}"
                          + (f"; counted, {c['slope']:,.2f} instructions per read" if c else "") + ")")
    if not picked:
        return ""
    text = (f"On an {cpu_models(res.runs)}, each open transaction adds " + ", ".join(picked[:-1])
            + (" and " if len(picked) > 1 else "") + picked[-1] + ".")
    top = analysis.relative_at_top(res)
    if len(top) >= 2:
        low, high = top.iloc[0], top.iloc[-1]
        text += (f" With {int(top['holders'].iloc[0]):,} open, the readers keep from {_ratio(low)} ({low['server']}) to "
                 f"{_ratio(high)} ({high['server']}) of their reads per second with none (95% intervals).")
    return text


def _ns(x: float, lo: float, hi: float) -> str:
    return f"{prose.num(x, '.2f')} ns" + (f" {prose.ci(lo, hi, '.2f')}" if lo == lo else " (one repeat)")


def _ratio(r) -> str:
    fmt = ".3f" if r["low"] < 0.1 else ".2f"
    return f"{prose.num(r['relative'], fmt)}" + (f" {prose.ci(r['low'], r['high'], fmt)}" if r["low"] == r["low"] else "")
