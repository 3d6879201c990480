"""Tables the chapters show the same way: human headers with units, rounded, as many rows as the text
needs (the rest downloadable), the settings that still differ between the servers compared, and the
claims of a chapter's sources that its claims table does not test (its ledger)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from IPython.display import HTML, Markdown, display

from dbexp.book import prose
from dbexp.experiments import claims_ledger, verdicts
from dbexp.experiments import moved
from dbexp.results import drift, previous

TABLE_CLASS = 'class="dataframe dbexp-table"'  # book/_static/dbexp.css sizes these to fit the page

# A column of a displayed table: its header (with its unit), or (header, format) where the format is
# a str.format spec such as "{:,.0f}" or a callable.
Column = str | tuple[str, object]


def human(df: pd.DataFrame, columns: Mapping[str, Column]) -> tuple[pd.DataFrame, dict]:
    """The columns named in ``columns`` (in that order) renamed to their headers, and the formats by
    header. A column missing from ``df`` is skipped (older results may lack it)."""
    headers, formats = {}, {}
    for raw, spec in columns.items():
        if raw not in df.columns:
            continue
        header, fmt = (spec, None) if isinstance(spec, str) else spec
        headers[raw] = header
        if fmt is not None:
            formats[header] = fmt
    if len(set(headers.values())) != len(headers):
        raise ValueError(f"two columns share a header: {sorted(headers.values())}")
    return df[list(headers)].rename(columns=headers), formats


CLAIMS_CLASS = 'class="dataframe dbexp-table dbexp-blocks dbexp-claims"'  # dbexp.css: each claim a labelled block
UNTESTED_CLASS = 'class="dataframe dbexp-table dbexp-blocks dbexp-untested"'  # ... each untested claim
MOVED_CLASS = 'class="dataframe dbexp-table dbexp-blocks dbexp-moved"'  # ... each claim then and now
# the compact claims table (tables.claims): three columns, a table of the page's width, checked like any other
VERDICTS_CLASS = 'class="dataframe dbexp-table dbexp-verdicts"'


def claims(table: pd.DataFrame) -> None:
    """A chapter's claims table (verdicts.table: claim, the source's number and conditions, this lab's, what was
    measured, the witness, the verdict), every row shown, as a reader of a reference book wants it: one compact
    table of three columns (the claim with its source's link, what was measured here with its interval, the
    verdict), each claim expanding (a closed ``details``) to the source's number and conditions, this lab's and
    the witness; the conditions a verdict names by number (:func:`conditions_once`) said once, under the table,
    collapsed. The HTML keeps the table and its headers (a reader's copy keeps its columns)."""
    missing = [c for c in verdicts.COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"a claims table without {missing}: expected the columns {list(verdicts.COLUMNS)}")
    table, notes = conditions_once(table)
    display(HTML(verdicts_html(table[list(verdicts.COLUMNS)])))
    if notes:
        display(HTML(details(f"The conditions (1) to ({len(notes)}) the verdicts name, where this lab's differ from "
                             "a source's",
                             "<ol>" + "".join(f"<li>{inline_html(t)}</li>" for t in notes) + "</ol>")))


# The claims table's columns (verdicts.COLUMNS) shown in the row, and those its details hold, with their labels.
SHOWN = {"claim": ("claim", "38%"), "measured here": ("measured here [95%]", "36%"), "verdict": ("verdict", "26%")}
FOLDED = {"source: number, conditions": "The source", "here: conditions": "Here", "witness": "Witness"}


def verdicts_html(table: pd.DataFrame) -> str:
    """The claims table as one HTML table (class ``dbexp-claims``): SHOWN's columns in each row, FOLDED's in a
    closed ``details`` under the claim. Cells are HTML as the chapters write them (a claim carries its source's
    link); the fields a chapter writes in Markdown (``*x*``, `` `x` ``) are shown as such (:func:`inline_html`)."""
    head = "".join(f'<th style="width:{w}">{h}</th>' for h, w in SHOWN.values())
    rows = []
    for _, r in table.iterrows():
        folded = "".join(f"<p><b>{label}:</b> {inline_html(r[col])}</p>" for col, label in FOLDED.items()
                         if str(r[col]).strip())
        claim = inline_html(r["claim"]) + (details("its conditions and witness", folded, small=True) if folded else "")
        rows.append(f"<tr><td>{claim}</td><td>{lead(r['measured here'])}</td><td>{lead(r['verdict'])}</td></tr>")
    return (f'<table {VERDICTS_CLASS} style="table-layout:fixed;width:100%;font-size:0.74rem">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


LEAD_CHARS = 180  # a claims cell longer than this shows its first parts, the whole of it one click away


def lead(text, limit: int = LEAD_CHARS) -> str:
    """A claims cell as HTML (:func:`inline_html`); one longer than ``limit`` characters shows its first parts
    (whole "; "-separated parts, at least one) and, in a closed ``details``, the whole text: every number stays on
    the page, a row stays a few lines high."""
    text = "" if text is None or (isinstance(text, float) and pd.isna(text)) else str(text)
    if len(text) <= limit:
        return inline_html(text)
    parts, shown = text.split("; "), []
    for part in parts:
        if shown and len("; ".join(shown + [part])) > limit:
            break
        shown.append(part)
    if len(shown) == len(parts):
        return inline_html(text)
    return (inline_html("; ".join(shown)) + f"; \u2026 ({len(parts) - len(shown)} more)"
            + details("all of it", f"<p>{inline_html(text)}</p>", small=True))


def details(summary: str, body_html: str, *, small: bool = False) -> str:
    """A closed HTML ``details`` (a reader opens it; a page's height is measured closed): ``summary`` (text, escaped)
    over ``body_html``."""
    import html

    style = ' style="font-size:0.85em"' if small else ""
    return (f'<details class="dbexp-details"><summary{style}>{html.escape(summary, quote=False)}</summary>'
            f"{body_html}</details>")


def inline_html(text) -> str:
    """A table cell's text as HTML: the Markdown the chapters write in their cells' words (``*x*`` emphasis,
    `` `x` `` code) as the page would show it; HTML they carry (a source's link) kept."""
    import re

    text = "" if text is None or (isinstance(text, float) and pd.isna(text)) else str(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"(?<![\w*])\*(?!\s)([^*]+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", text)


def dropdown(title: str, markdown: str) -> None:
    """Display ``markdown`` (MyST: links, {download} roles, lists, HTML blocks without blank lines) folded under
    ``title`` in a closed dropdown (sphinx-design's, an HTML ``details``): detail a reader opens if wanted."""
    display(Markdown(f"::::{{dropdown}} {title}\n\n{markdown}\n\n::::"))


OTHER = "under other conditions ("


def conditions_once(table: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The claims table with each verdict's "under other conditions (...)" (verdicts.under_other_conditions)
    replaced by a number, and the conditions in the order first named: said once, under the table, not in
    every row they apply to."""
    notes: list[str] = []

    def shorten(text: str) -> str:
        out, rest = [], str(text)
        while OTHER in rest:
            head, tail = rest.split(OTHER, 1)
            depth, end = 1, 0
            for end, ch in enumerate(tail):  # the closing parenthesis of this one, nested ones skipped
                depth += {"(": 1, ")": -1}.get(ch, 0)
                if depth == 0:
                    break
            if depth:  # unbalanced: leave the text as it is
                return str(text)
            other = tail[:end]
            if other not in notes:
                notes.append(other)
            out.append(f"{head}under other conditions ({notes.index(other) + 1})")
            rest = tail[end + 1:]
        return "".join(out) + rest

    shown = table.copy()
    shown["verdict"] = [shorten(v) for v in shown["verdict"]]
    return shown, notes


def with_ci(df: pd.DataFrame, spec: Mapping[str, tuple[str, str, str]]) -> pd.DataFrame:
    """``df`` with each value and its 95% interval in one text column, so that a table shows one column where
    it had three: ``spec`` maps a new column to (value, low, high, format), e.g. {"misses": ("misses_per_q",
    "misses_low", "misses_high", ".3f")} gives "0.134 [0.124, 0.145]" (the value alone where it has no
    interval; a dash where it has no value)."""
    out = df.copy()
    for name, (value, low, high, fmt) in spec.items():
        cells = []
        for v, lo, hi in zip(df[value], df[low], df[high]):
            if pd.isna(v):
                cells.append("\u2014")
            elif pd.isna(lo) or pd.isna(hi):
                cells.append(prose.num(v, fmt))
            else:
                cells.append(f"{prose.num(v, fmt)} {prose.ci(lo, hi, fmt)}")
        out[name] = cells
    return out


def side_by_side(df: pd.DataFrame, index: str, by: str, values) -> pd.DataFrame:
    """One row per ``index`` with the ``values`` of each ``by`` beside each other, named
    ``"VALUE|BY"`` (e.g. ``"median|oltp_point_select"``), in the order of first appearance: halves the
    rows of a table whose two workloads share its servers, for :func:`show` to name."""
    wide = df.pivot_table(index=index, columns=by, values=list(values), aggfunc="first", sort=False)
    order = [(v, b) for b in dict.fromkeys(df[by]) for v in values if (v, b) in wide.columns]
    wide = wide[order]
    wide.columns = [f"{v}|{b}" for v, b in order]
    return wide.reset_index()


def show(df: pd.DataFrame, columns: Mapping[str, Column], *, res=None, name: str | None = None,
         rows: int | None = None, servers: str | None = None, csv: pd.DataFrame | None = None,
         what: str = "this table", na: str = "\u2014", nowrap: bool = False) -> None:
    """Display ``df`` with human headers (see :func:`human`), its first ``rows`` rows only if given,
    then (with ``res`` and ``name``) links to the whole table as CSV (or to ``csv``: the fuller rows
    a shortened table was made from) and to the chapter's published Parquet (dbexp.book.downloads).
    ``servers``: a column of server names to order the rows by (dbexp.book.charts.server_order:
    flavor, then version; stable otherwise). ``nowrap``: cells never wrap (a table of short numbers
    whose rows should stay one line each; headers still wrap)."""
    from dbexp.book import downloads

    if servers:
        from dbexp.book.charts import server_order

        rank = {name: i for i, name in enumerate(server_order(df[servers].unique()))}
        df = df.iloc[df[servers].map(rank).to_numpy().argsort(kind="stable")]
    table, formats = human(df, columns)
    shown = table if rows is None else table.head(rows)
    attributes = 'class="dataframe dbexp-table dbexp-nowrap"' if nowrap else TABLE_CLASS
    styler = shown.style.format(formats, na_rep=na).hide().set_table_attributes(attributes)
    display(styler)
    if len(shown) < len(table):
        more = (" All of them are in the CSV below." if res is not None and name else "")
        display(Markdown(f"The first {len(shown)} of {len(table)} rows.{more}"))
    if res is not None and name:
        downloads.links(res, table if csv is None else csv, name, what=what)


def settings_drift(wide: pd.DataFrame) -> None:
    """Display, per flavor, the effective settings that differ between the servers a chapter compares
    (from each run's stored settings), and any setting that changed between runs of one server."""
    tables = drift.drift_by_flavor(wide)
    if not tables:
        display(Markdown("No performance setting differs between the servers compared here."))
    for title, table in tables.items():
        display(Markdown(f"**{title}**: {len(table)} setting{'s' if len(table) != 1 else ''} differ"))
        # the flavor is in the heading: versions alone keep eight servers within a page's width
        table = table.rename(columns=lambda c: c.removeprefix(f"{title} "))
        display(table.style.set_table_attributes(TABLE_CLASS))
    moved = drift.unsteady(wide)
    if len(moved):
        display(Markdown("**Settings that changed between runs of the same server** (a problem: "
                         "nothing the chapter asked for changes them)"))
        display(moved.style.hide().set_table_attributes(TABLE_CLASS))


def baseline_note(wide: pd.DataFrame) -> str:
    """A sentence on whether the runs were started with their flavor's comparable baseline (runs
    published before the lab set one were not, and the drift table then shows what differed)."""
    from dbexp.servers.registry import flavor_class

    def has_baseline(row) -> bool:
        asked = row["config_requested"] if isinstance(row["config_requested"], dict) else {}
        wanted = flavor_class(row["flavor"])(str(row["version"])).comparable_settings()
        return all(k in asked for k in wanted)  # present: a chapter studying one sets its own value

    if wide.empty:
        return ""
    with_it = int(wide.apply(has_baseline, axis=1).sum())
    if with_it == len(wide):
        return "Every run here was started with its flavor's comparable baseline."
    return (f"{len(wide) - with_it} of {len(wide)} runs here were measured before the lab set a common "
            "baseline: they ran with each version's own defaults, and the table shows where those differed.")


LEDGER_COLUMNS = ("id", "source line", "claim", "status and why")


def untested(chapter: str) -> tuple[pd.DataFrame, str]:
    """The entries of ``chapter``'s ledger (dbexp.experiments.claims_ledger) that are not tested here, one
    row each (LEDGER_COLUMNS), those this lab could test first, and the sentence saying how many of the
    claims testable here are tested."""
    entries = claims_ledger.ledger(chapter)
    rows = [(e["id"], f"{e['source']}, line {e['line']}", e["claim"], f"{e['status']}: {e['why']}")
            for status in (claims_ledger.NOT_MEASURED, claims_ledger.NOT_TESTABLE)
            for e in entries if e["status"] == status]
    tested, testable = claims_ledger.coverage(entries)
    return (pd.DataFrame(rows, columns=list(LEDGER_COLUMNS)),
            f"{tested} of {testable} claims testable on this machine are tested.")


def untested_claims(chapter: str) -> None:
    """Display, beneath ``chapter``'s claims table, the claims of its sources that it does not test and
    how many of those testable here it does (:func:`untested`); nothing for a chapter without a ledger."""
    if not claims_ledger.path(chapter).is_file():
        return
    rows, sentence = untested(chapter)
    where = f"from the chapter's ledger, <code>dbexp/chapters/{chapter}/claims.yaml</code>, which places every claim at its line in the source"
    if not len(rows):
        display(Markdown(sentence))
        return
    # dbexp.css lays each row out as a labelled block (its id first); folded: a reader opens it if wanted
    table = rows.style.format(escape="html").hide().set_table_attributes(UNTESTED_CLASS).to_html()
    display(HTML(details(f"Claims of the sources not tested here: {len(rows)}. {sentence}",
                         f"<p>({where})</p>" + table)))


def since_last(chapter: str, res, claims: pd.DataFrame) -> None:
    """Display, where the chapter was measured again, how many claims moved from one verdict category to another
    since the last publication (dbexp.experiments.moved), the machine of each, the claims that moved (then and
    now), and the findings whose headline number moved further than either interval allows between two
    machines; nothing for a chapter published once, or for results of a run of one's own (``res.source``)."""
    if res.source != "published data/":
        return
    table = moved.moved(chapter, claims)
    if table is None:
        return
    from dbexp.experiments.chapter import cpu_models

    prev = previous.previous(chapter)
    then_host = str(prev["host"].iloc[0]) if "host" in prev and str(prev["host"].iloc[0]) else ""
    now_host = cpu_models(res.runs)
    where = (f"both on {now_host}" if then_host == now_host else
             f"then on {then_host or 'a machine not recorded'}, now on {now_host}")
    by_move = moved.counts(table)
    n = int((table["moved"] != "no").sum())
    summary = "; ".join(f"{k}: {v}" for k, v in by_move.items()) if n else "none"
    display(Markdown(f"**What moved since the last publication** (its runs ended "
                     f"{str(prev['published_until'].iloc[0])[:16]} UTC; {where}; its claims recomputed from its own "
                     f"data with the rules of this one): {n} of {len(table)} claims changed verdict category "
                     f"({summary})."))
    if n:
        display(HTML(details(f"The {n} claims that moved, then and now",
                             as_moved(table).style.format(escape="html").hide().set_table_attributes(MOVED_CLASS)
                             .to_html())))
    machine = moved.machine_moves(table, then_host, now_host)
    if len(machine):
        display(HTML(details(
            f"Findings that moved with the machine ({then_host} then, {now_host} now): {len(machine)}",
            "<p>The headline number of each claim below moved further than either publication's 95% interval "
            "allows, so it depends on the machine (or on what else changed between the two designs).</p>"
            + machine.assign(claim=machine["claim"].str.replace(r"<[^>]+>", "", regex=True))
            .style.format(escape="html").hide().set_table_attributes(MOVED_CLASS).to_html())))


def as_moved(table: pd.DataFrame) -> pd.DataFrame:
    """moved.moved's table as the page shows it: the claims that moved only, each claim's words without its
    source's link (the claims carry it as HTML, Source.cite, and the table is escaped)."""
    table = table[table["moved"] != "no"]
    table = table.assign(claim=table["claim"].str.replace(r"<[^>]+>", "", regex=True))
    cols = ["claim", "measured here then", "verdict then", "measured here now", "verdict now", "moved"]
    return table[[c for c in cols if c in table]].reset_index(drop=True)
