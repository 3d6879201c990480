"""Checking the built book in a real browser: does every chart draw, with no network, and does every
table fit a 1280 px page without breaking a number?

Each page with Altair charts is loaded from disk by Debian's headless Chromium with
every host name unresolvable (so nothing can come from a CDN); after the scripts have
run, the DOM is dumped and the charts expected (Altair's ``altair-viz-*`` containers)
are compared with the charts drawn (vega's ``class="marks"`` canvas or svg). The page is drawn
1280 px wide, and a script (``static/check-tables.js``) reports each table (``dbexp-table``, the labelled
blocks apart) that is wider than its column, so that it scrolls, or that breaks a number across
two lines of a cell. The page's height at that width is read too (:func:`screens`: the book's length in
screens of WINDOW).

Every page is loaded by one Chromium, in turn, into a 1280 px frame of a small harness page (written
beside them, removed after; its HTML and JavaScript are static files of this package, ``static/``):
one browser start for the whole book instead of one per page. Given a ``known`` file, a page whose
charts all drew is recorded there by its content key (:func:`page_key`: the page, every file under
``_static`` its scripts and styles come from, the browser, this module and its static files); a later
check does not load a page with the same key again, and says so in its result (``PageResult.known``).

Without a browser, :func:`defects` reads every built page for what no page may show: a code cell's
source, "nan" in its text, a share whose interval leaves [0%, 100%], a CSV download with a row that says nothing.
"""

from __future__ import annotations

import html as html_lib
import html.parser as html_lib_parser
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from dbexp.errors import DbexpError
from dbexp import process

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
VIRTUAL_TIME_BUDGET_MS = 10000
PAGE_TIMEOUT_S = 90

# A chart container in the page source: Altair's output div.
_EXPECTED = re.compile(r"<div\s+id=\"altair-viz-[0-9a-f]+\"")
_SKIP_PAGES = {"genindex.html", "search.html"}
# A table of the chapters (dbexp.book.tables.show): class dbexp-table.
_TABLE = re.compile(r"<table\b[^>]*\bdbexp-table\b")
WINDOW = (1280, 900)  # the width the book is read at (its pages' checks, and the screenshots)
CHART_WAIT_MS = 8000  # virtual time a page's charts get to draw after its load (and its fonts)
SETTLE_MS = 500  # then virtual time for the layout to settle, before the tables are read
# The harness, static files of this package (dbexp/book/static/, read when a check runs): check-harness.html,
# the page that loads each page into a WINDOW-sized frame in turn, waits for its charts and reads it (vega's drawn
# marks, Altair's error boxes, the tables, its height), writing what it saw so far into the pre element
# dbexp-seen after each page and everything into one dbexp-check at the end (check-harness.js); check-tables.js,
# the function that reads one page's tables (each ``dbexp-table``, the labelled blocks apart, that is wider
# than its column, so that it scrolls, or that breaks a number across two lines of a cell).
STATIC = ("check-harness.html", "check-harness.js", "check-tables.js")
_PLACEHOLDER = re.compile(r"\{\{(settings|tables|harness)\}\}")


def static_text(name: str) -> str:
    """One of the check's static files (STATIC), as installed with the package."""
    from importlib.resources import files

    if name not in STATIC:
        raise ValueError(f"not a static file of the browser check: {name!r}; they are {', '.join(STATIC)}")
    return files("dbexp.book").joinpath("static", name).read_text(encoding="utf-8")


def harness_html(pages: list[dict]) -> str:
    """The harness page for ``pages`` (each {"url", "expected"}): check-harness.html with its settings (the
    frame's size, the pages, the waits) and its two scripts filled in."""
    settings = json.dumps({"width": WINDOW[0], "height": WINDOW[1], "pages": pages, "wait": CHART_WAIT_MS,
                           "settle": SETTLE_MS}).replace("<", "\\u003c")  # no "</script>" inside the script
    fill = {"settings": settings, "tables": static_text("check-tables.js"),
            "harness": static_text("check-harness.js")}
    return _PLACEHOLDER.sub(lambda m: fill[m[1]], static_text("check-harness.html"))


_RESULT = re.compile(r'<pre id="dbexp-check"[^>]*>(.*?)</pre>', re.S)
_SEEN = re.compile(r'<pre id="dbexp-seen"[^>]*>(.*?)</pre>', re.S)


@dataclass
class PageResult:
    page: Path  # the HTML file
    expected: int  # chart containers in the page
    drawn: int  # charts that drew their marks
    errors: list[str] = field(default_factory=list)  # chart error messages shown on the page
    known: bool = False  # not loaded now: the same page drew all its charts in an earlier check
    tables: list[str] = field(default_factory=list)  # tables that scroll or break a number at WINDOW's width
    height: int = 0  # the page's height in px at WINDOW's width, as drawn (0: not loaded now)

    @property
    def ok(self) -> bool:
        return self.drawn >= self.expected and not self.errors and not self.tables

    def describe(self) -> str:
        text = f"{self.page.name}: {self.drawn} of {self.expected} charts drew"
        if self.errors:
            text += f" (first error: {self.errors[0]})"
        if self.tables:
            text += f"; {len(self.tables)} table(s) do not fit {WINDOW[0]} px (first: {self.tables[0]})"
        return text


def find_chromium() -> str:
    """Path of a Chromium executable: $DBEXP_CHROMIUM, else the first on PATH."""
    explicit = os.environ.get("DBEXP_CHROMIUM")
    if explicit:
        if shutil.which(explicit):
            return shutil.which(explicit)  # type: ignore[return-value]
        raise DbexpError(f"DBEXP_CHROMIUM={explicit} is not an executable")
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise DbexpError(
        "no Chromium to check the charts with: install Debian's chromium "
        "(apt-get install chromium) or set DBEXP_CHROMIUM, or build without the check"
    )


def _chromium(args: list[str], *, timeout_s: float = PAGE_TIMEOUT_S) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="dbexp-chromium-") as profile:
        cmd = [
            find_chromium(),
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            # No network at all: every host name fails to resolve, so a chart that
            # still wanted a CDN stays blank here even on a machine with internet.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--user-data-dir={profile}",
            *args,
        ]
        try:
            return process.run(
                cmd, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            raise DbexpError(f"chromium took longer than {timeout_s:g} s: {args[-1]}") from None


def screenshot(
    page: Path | str,
    png_path: Path | str,
    *,
    width: int = 1280,
    height: int = 4000,
    budget_ms: int = VIRTUAL_TIME_BUDGET_MS,
) -> Path:
    """Save a PNG of the page as headless Chromium draws it, offline."""
    page = Path(page).resolve()
    png_path = Path(png_path).resolve()
    png_path.parent.mkdir(parents=True, exist_ok=True)
    png_path.unlink(missing_ok=True)
    proc = _chromium(
        [
            f"--virtual-time-budget={budget_ms}",
            f"--window-size={width},{height}",
            f"--screenshot={png_path}",
            page.as_uri(),
        ]
    )
    if not png_path.is_file():
        raise DbexpError(
            f"chromium wrote no screenshot of {page.name} (exit {proc.returncode}): "
            f"{_last_line(proc.stderr)}"
        )
    return png_path


def expected_charts(page: Path) -> int:
    return len(_EXPECTED.findall(Path(page).read_text(encoding="utf-8", errors="replace")))


def has_tables(page: Path) -> bool:
    return bool(_TABLE.search(Path(page).read_text(encoding="utf-8", errors="replace")))


def check_pages(pages: list[Path]) -> list[PageResult]:
    """Load the pages in one headless Chromium, in turn, through the harness (see STATIC); one
    PageResult per page, in order. A page that never finishes loading stops the check, named."""
    pages = [Path(p).resolve() for p in pages]
    if not pages:
        return []
    todo = [{"url": p.as_uri(), "expected": expected_charts(p)} for p in pages]
    harness = pages[0].parent / ".dbexp-check.html"
    harness.write_text(harness_html(todo), encoding="utf-8")
    try:
        proc = _chromium(["--allow-file-access-from-files",
                          f"--virtual-time-budget={(CHART_WAIT_MS + VIRTUAL_TIME_BUDGET_MS) * len(pages)}",
                          f"--window-size={WINDOW[0]},{WINDOW[1]}", "--dump-dom", harness.as_uri()],
                         timeout_s=PAGE_TIMEOUT_S * len(pages))
    finally:
        harness.unlink(missing_ok=True)
    found = _RESULT.search(proc.stdout)
    if found is None:
        seen = _SEEN.search(proc.stdout)
        done = json.loads(html_lib.unescape(seen.group(1)) or "[]") if seen else []
        where = (f"it stopped at {pages[len(done)].name}" if seen and len(done) < len(pages)
                 else f"exit {proc.returncode}: {_last_line(proc.stderr)}")
        raise DbexpError(f"the browser check did not finish ({where})")
    return [PageResult(page, item["expected"], got["drawn"], [_text(e) for e in got["errors"]],
                       tables=got["tables"], height=int(got.get("height") or 0))
            for page, item, got in zip(pages, todo, json.loads(html_lib.unescape(found.group(1))))]


def check_page(page: Path | str) -> PageResult:
    return check_pages([Path(page)])[0]


def book_pages(html_dir: Path | str) -> list[Path]:
    """The built book's pages a reader reads: every HTML page but the index, search and redirect pages and the
    copied files (``_static``, ``_sources``, ``_images``, ``_downloads``)."""
    html_dir = Path(html_dir)
    pages = []
    for page in sorted(html_dir.rglob("*.html")):
        rel = page.relative_to(html_dir)
        if rel.parts[0] in ("_static", "_sources", "_images", "_downloads") or page.name in _SKIP_PAGES:
            continue
        if page.name.startswith(".") or _REDIRECT.search(page.read_text(encoding="utf-8", errors="replace")[:2000]):
            continue
        pages.append(page)
    return pages


_REDIRECT = re.compile(r"<meta\s+http-equiv=[\"']?refresh\b", re.I)


def chart_pages(html_dir: Path | str) -> list[Path]:
    """HTML pages of the built book that contain Altair charts or the chapters' tables."""
    return [page for page in book_pages(html_dir) if expected_charts(page) or has_tables(page)]


def check_charts(html_dir: Path | str, *, raise_on_failure: bool = True,
                 known: Path | str | None = None) -> list[PageResult]:
    """Load every page with charts offline; one PageResult per such page.

    Raises DbexpError naming each failing page and its counts unless
    ``raise_on_failure`` is False. ``known``: a JSON file of the
    pages that drew before, by :func:`page_key`; such a page is not loaded again, and the file is
    rewritten with the pages that drew now.
    """
    html_dir = Path(html_dir)
    if not (html_dir / "index.html").is_file():
        raise DbexpError(f"no built book to check: {html_dir / 'index.html'} does not exist")
    pages = chart_pages(html_dir)
    keys: dict[Path, str] = {}
    drew_before: dict = {}
    if known is not None:
        static = _static_hash(html_dir)
        keys = {page: page_key(page, static) for page in pages}
        drew_before = _read_known(Path(known))
    by_page: dict[Path, PageResult] = {}
    for page in pages:
        before = drew_before.get(keys.get(page, ""))
        if before is not None:
            by_page[page] = PageResult(page, before["expected"], before["drawn"], known=True)
    todo = [page for page in pages if page not in by_page]
    by_page.update(zip(todo, check_pages(todo)))
    results = [by_page[page] for page in pages]
    if known is not None:
        _write_known(Path(known), {keys[r.page]: {"page": r.page.relative_to(html_dir).as_posix(),
                                                  "expected": r.expected, "drawn": r.drawn}
                                   for r in results if r.ok})
    failed = [r for r in results if not r.ok]
    if failed and raise_on_failure:
        raise DbexpError(
            "pages failed the browser check (charts offline, tables at "
            f"{WINDOW[0]} px): " + "; ".join(r.describe() for r in failed)
        )
    return results


# --- the book's length: screens of WINDOW ------------------------------------------------------------

SCREENS_LIMIT = 150  # the whole book, in screens of WINDOW (issue 45: 285 before the chapters were shortened)


@dataclass
class Screens:
    """The book's length as a reader at WINDOW scrolls it: each page's height drawn at WINDOW's width, in px and
    in screens of WINDOW's height."""

    heights: dict[str, int]  # page (relative to the HTML folder) -> px, in the book's order of file names

    @property
    def per_page(self) -> dict[str, float]:
        return {page: px / WINDOW[1] for page, px in self.heights.items()}

    @property
    def total(self) -> float:
        return sum(self.per_page.values())

    def describe(self) -> list[str]:
        """One line per page (the longest first) and the total, as `dbexp book --screens` prints them."""
        width = max((len(p) for p in self.heights), default=0)
        lines = [f"{page:{width}}  {n:6.1f} screens ({self.heights[page]:,} px)"
                 for page, n in sorted(self.per_page.items(), key=lambda item: -item[1])]
        return lines + [f"{'the book':{width}}  {self.total:6.1f} screens of {WINDOW[0]} x {WINDOW[1]} "
                        f"(limit {SCREENS_LIMIT})"]


def screens(html_dir: Path | str) -> Screens:
    """Every page of the built book (:func:`book_pages`) drawn in one headless Chromium at WINDOW's width, its
    charts drawn first (they take their height when they draw), and its height read."""
    html_dir = Path(html_dir)
    if not (html_dir / "index.html").is_file():
        raise DbexpError(f"no built book to measure: {html_dir / 'index.html'} does not exist")
    results = check_pages(book_pages(html_dir))
    return Screens({r.page.relative_to(html_dir.resolve()).as_posix(): r.height for r in results})


# --- what no page may show: checked in the built pages' text, no browser --------------------------------

NAN = re.compile(r"(?<![A-Za-z0-9_])nan(?![A-Za-z0-9_])", re.I)  # pandas' and numpy's missing value, printed
# A share printed with its interval, "12.3% [10.1%, 14.6%]": the value unsigned (a change is printed signed, "+4.1%",
# and may have an interval below 0); its bounds, signed or not ("\u2212" the minus sign of a typeset number).
SHARE_CI = re.compile(r"(?<![+\-\u2212\d.,])(\d[\d,]*(?:\.\d+)?)% \[([+\-\u2212]?\d[\d,]*(?:\.\d+)?)%, "
                      r"([+\-\u2212]?\d[\d,]*(?:\.\d+)?)%\]")


def impossible_shares(text: str) -> list[str]:
    """The shares in ``text`` printed with an interval that leaves [0%, 100%] ("0.07% [-0.14%, 0.28%]": a normal
    approximation where an exact or Wilson interval belongs) or has no width at 0% or 100% ("100.0% [100.0%,
    100.0%]"), each as printed."""
    def number(x: str) -> float:
        return float(x.replace(",", "").replace("\u2212", "-"))

    def impossible(value: float, low: float, high: float) -> bool:
        # outside [0%, 100%], or no width at all at either end (an exact or Wilson interval never is [100%, 100%])
        return value <= 100 and (low < 0 or high > 100 or (low == high and low in (0.0, 100.0)))

    return [m.group(0) for m in SHARE_CI.finditer(text) if impossible(*(number(m.group(i)) for i in (1, 2, 3)))]


@dataclass
class Defect:
    where: str  # the page (relative to the HTML folder), and the CSV for a CSV's
    kind: str  # "code cell", "nan", "share interval" (a share's interval outside [0%, 100%]) or "empty CSV row"
    detail: str

    def describe(self) -> str:
        return f"{self.where}: {self.kind}: {self.detail}"


class _PageText(html_lib_parser.HTMLParser):
    """A page's text outside its scripts and styles, and the source of each code cell it shows (myst-nb's
    ``cell_input``, unless inside a ``details`` toggle: a cell tagged hide-input shows a "show code" button)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.code: list[str] = []
        self._skip = 0  # inside script or style
        self._details = 0
        self._cell = 0  # div depth inside a shown cell_input (0: outside)

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "details":
            self._details += 1
        elif tag == "div":
            if self._cell:
                self._cell += 1
            elif not self._details and "cell_input" in (dict(attrs).get("class") or "").split():
                self._cell = 1
                self.code.append("")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag == "details":
            self._details = max(0, self._details - 1)
        elif tag == "div" and self._cell:
            self._cell -= 1

    def handle_data(self, data):
        if self._skip:
            return
        self.text.append(data)
        if self._cell:
            self.code[-1] += data


def page_defects(page: Path | str, html_dir: Path | str | None = None) -> list[Defect]:
    """What one built page must not show: a code cell's source (every chapter cell is tagged remove-input or
    remove-cell), "nan" or "NaN" in its text outside scripts (a missing value printed), a share whose interval
    leaves [0%, 100%] (:func:`impossible_shares`), and a CSV it links
    (dbexp.book.downloads) with a row empty but for at most one cell."""
    page = Path(page)
    html_dir = Path(html_dir) if html_dir is not None else page.parent
    where = page.resolve().relative_to(html_dir.resolve()).as_posix() if page.resolve().is_relative_to(
        html_dir.resolve()) else page.name
    source = page.read_text(encoding="utf-8", errors="replace")
    parsed = _PageText()
    parsed.feed(source)
    found = [Defect(where, "code cell", _first_line(code)) for code in parsed.code]
    text = " ".join(" ".join(parsed.text).split())
    found += [Defect(where, "nan", f"...{text[max(0, m.start() - 40):m.end() + 20]}...") for m in NAN.finditer(text)]
    found += [Defect(where, "share interval", shown) for shown in impossible_shares(text)]
    for csv_path in linked_csvs(page):
        found += [Defect(f"{where} ({csv_path.name})", "empty CSV row", row) for row in empty_csv_rows(csv_path)]
    return found


def linked_csvs(page: Path | str) -> list[Path]:
    """The CSV files a built page links (Sphinx copies a {download} target to ``_downloads/<hash>/``)."""
    page = Path(page)
    hrefs = re.findall(r'href="([^"#?]+\.csv)"', page.read_text(encoding="utf-8", errors="replace"))
    return [p for p in dict.fromkeys((page.parent / html_lib.unescape(h)).resolve() for h in hrefs) if p.is_file()]


def empty_csv_rows(path: Path | str) -> list[str]:
    """The rows of a CSV of three or more columns that say nothing: every cell empty but at most one (a chart's
    reference mark written as a row, say), each as 'row N: its text'."""
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows or len(rows[0]) < 3:
        return []
    return [f"row {i}: {','.join(row)[:80]}" for i, row in enumerate(rows[1:], 1)
            if sum(bool(cell.strip()) for cell in row) <= 1]


def defects(html_dir: Path | str) -> list[Defect]:
    """:func:`page_defects` of every page of the built book, in its order of file names."""
    html_dir = Path(html_dir)
    return [d for page in book_pages(html_dir) for d in page_defects(page, html_dir)]


def _first_line(code: str) -> str:
    line = next((l.strip() for l in code.splitlines() if l.strip()), "")
    return line if len(line) <= 80 else line[:77] + "..."


def page_key(page: Path | str, static_hash: str) -> str:
    """What decides whether a page's charts draw: its HTML, the files under the book's _static
    (``static_hash``: its scripts and styles, vega among them; not the search index, which is data),
    the browser (its path, size and time), this module's source and its static files (the harness)."""
    from dbexp.book.freshness import Digest

    digest = Digest()
    browser = find_chromium()
    st = os.stat(browser)
    digest.add("page", Path(page).read_bytes())
    digest.add("static", static_hash)
    digest.add("browser", f"{browser} {st.st_size} {st.st_mtime_ns} {VIRTUAL_TIME_BUDGET_MS}")
    digest.add("checker", Path(__file__).read_bytes())
    for name in STATIC:
        digest.add(name, static_text(name))
    return digest.hexdigest()


def _static_hash(html_dir: Path) -> str:
    from dbexp.book.freshness import tree_hash

    return tree_hash(Path(html_dir) / "_static")


def _read_known(path: Path) -> dict:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items()
            if isinstance(v, dict) and isinstance(v.get("expected"), int) and isinstance(v.get("drawn"), int)}


def _write_known(path: Path, drew: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(drew, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def _text(fragment: str) -> str:
    text = html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment))
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."


def _last_line(text: str) -> str:
    lines = [l.strip() for l in text.splitlines() if l.strip() and "unexpected operator" not in l]
    return lines[-1][:300] if lines else "no output"
