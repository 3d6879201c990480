"""The readview page's sentences that depend on the results, rendered from the templates in
notebooks/readview/ with the numbers of dbexp.chapters.readview.analysis."""

from __future__ import annotations

from dbexp.book import prose
from dbexp.chapters.readview import analysis
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
    out = {"innodb": [], "pg_old": [], "pg_new": []}
    for r in _rows(vs):
        r = {**r, "segment": seg.get(r["server"]), "bounds": bounds.get(r["server"]),
             "mixed": r["calls"] == analysis.MIXED}
        if r["family"] == innodb.Views.family:
            out["innodb"].append(r)
        elif r["family"] == postgres.Snapshots.BEFORE_14:
            out["pg_old"].append(r)
        elif r["family"] == postgres.Snapshots.FROM_14:
            out["pg_new"].append(r)
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
    return prose.render("readview", "findings", relative=_rows(top),
                        top_holders=int(top["holders"].iloc[0]) if len(top) else 0, copy=copy, pairs=idle["pairs"],
                        calls={(p["old"], p["new"]): p for p in _per_call_pairs(res)}, said=said, **views)


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


def statement_sentence(res: Results) -> str:
    """Servers whose CPU per statement at H = 0 is more than twice the others'."""
    costly = analysis.costly_statements(res)
    return prose.render("readview", "statement", compared=costly is not None, costly=_rows(costly))
