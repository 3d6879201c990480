"""Checking the built book in a real browser: does every chart draw, with no network, and does every
table fit a 1280 px page without breaking a number?

Each page with Altair charts is loaded from disk by Debian's headless Chromium with
every host name unresolvable (so nothing can come from a CDN); after the scripts have
run, the DOM is dumped and the charts expected (Altair's ``altair-viz-*`` containers)
are compared with the charts drawn (vega's ``class="marks"`` canvas or svg). The page is drawn
1280 px wide, and a script (TABLE_CHECK) reports each table (``dbexp-table``, the labelled
blocks apart) that is wider than its column, so that it scrolls, or that breaks a number across
two lines of a cell.

Every page is loaded by one Chromium, in turn, into a 1280 px frame of a small harness page (written
beside them, removed after): one browser start for the whole book instead of one per page. Given a
``known`` file, a page whose charts all drew is
recorded there by its content key (:func:`page_key`: the page, every file under ``_static`` its
scripts and styles come from, the browser and this module); a later check does not load a page
with the same key again, and says so in its result (``PageResult.known``).
"""

from __future__ import annotations

import html as html_lib
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
# Reads one loaded page (its document): each table (``dbexp-table``, the labelled blocks apart) that is
# wider than its column, so that it scrolls, or that breaks a number across two lines of a cell.
TABLE_CHECK = r"""function dbexpTables(doc){
  const out=[];
  doc.querySelectorAll('table.dbexp-table:not(.dbexp-blocks)').forEach((t,i)=>{
    let h=t.closest('section'); h=h?h.querySelector('h1,h2,h3'):null;
    const heads=[...t.querySelectorAll('thead th')].slice(0,3).map(x=>x.textContent.trim()).join(', ');
    const where=(h?h.textContent.replace('#','').trim():'table '+(i+1)).slice(0,60)+' (columns '+heads+', ...)';
    const box=t.parentElement;
    if(box.scrollWidth>box.clientWidth+1) out.push(where+': '+box.scrollWidth+' px wide in a column of '+box.clientWidth);
    const broken=[];
    t.querySelectorAll('td').forEach(td=>{
      const w=doc.createTreeWalker(td,NodeFilter.SHOW_TEXT); let n;
      while((n=w.nextNode())){
        for(const m of n.textContent.matchAll(/(?<![\w.,])(?:[+\u2212-](?=\d))?\d[\d,.]*%?/g)){
          const r=doc.createRange(); r.setStart(n,m.index); r.setEnd(n,m.index+m[0].length);
          const tops=new Set([...r.getClientRects()].map(x=>Math.round(x.top)));
          if(tops.size>1) broken.push(m[0]);
        }
      }
    });
    if(broken.length) out.push(where+': numbers broken across lines ('+broken.slice(0,3).join(', ')+')');
  });
  return out;
}"""
CHART_WAIT_MS = 8000  # virtual time a page's charts get to draw after its load (and its fonts)
SETTLE_MS = 500  # then virtual time for the layout to settle, before the tables are read
# The harness: loads each page into a WINDOW-sized frame in turn, waits for its charts, reads it
# (vega's drawn marks, Altair's error boxes, the tables), writes what it saw so far into
# <pre id="dbexp-seen"> after each page and everything into <pre id="dbexp-check"> at the end.
HARNESS = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" style="width:%(width)dpx;height:%(height)dpx;border:0"></iframe>
<pre id="dbexp-seen"></pre>
<script>
%(tables)s
const pages=%(pages)s, seen=[], frame=document.getElementById('f');
const sleep=ms=>new Promise(r=>setTimeout(r,ms));
const marks=d=>d.querySelectorAll('canvas.marks, svg.marks').length;
async function read(p){
  await new Promise(r=>{frame.onload=r; frame.src=p.url;});
  const d=frame.contentDocument;
  if(!d) return {page:p.url, drawn:0, errors:['the page could not be read (no document)'], tables:[]};
  if(d.fonts) await d.fonts.ready;
  for(let t=0; marks(d)<p.expected && t<%(wait)d; t+=50) await sleep(50);
  await sleep(%(settle)d);
  return {page:p.url, drawn:marks(d), tables:dbexpTables(d),
          errors:[...d.querySelectorAll('div.error')].map(e=>e.textContent.trim())};
}
(async()=>{
  for(const p of pages){
    seen.push(await read(p));
    document.getElementById('dbexp-seen').textContent=JSON.stringify(seen.map(s=>s.page));
  }
  const pre=document.createElement('pre'); pre.id='dbexp-check'; pre.textContent=JSON.stringify(seen);
  document.body.appendChild(pre);
})();
</script></body></html>"""
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
    """Load the pages in one headless Chromium, in turn, through the harness (see HARNESS); one
    PageResult per page, in order. A page that never finishes loading stops the check, named."""
    pages = [Path(p).resolve() for p in pages]
    if not pages:
        return []
    todo = [{"url": p.as_uri(), "expected": expected_charts(p)} for p in pages]
    harness = pages[0].parent / ".dbexp-check.html"
    harness.write_text(HARNESS % {"width": WINDOW[0], "height": WINDOW[1], "tables": TABLE_CHECK,
                                  "pages": json.dumps(todo), "wait": CHART_WAIT_MS, "settle": SETTLE_MS},
                       encoding="utf-8")
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
                       tables=got["tables"])
            for page, item, got in zip(pages, todo, json.loads(html_lib.unescape(found.group(1))))]


def check_page(page: Path | str) -> PageResult:
    return check_pages([Path(page)])[0]


def chart_pages(html_dir: Path | str) -> list[Path]:
    """HTML pages of the built book that contain Altair charts or the chapters' tables."""
    html_dir = Path(html_dir)
    pages = []
    for page in sorted(html_dir.rglob("*.html")):
        rel = page.relative_to(html_dir)
        if rel.parts[0] in ("_static", "_sources", "_images") or page.name in _SKIP_PAGES:
            continue
        if expected_charts(page) or has_tables(page):
            pages.append(page)
    return pages


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


def page_key(page: Path | str, static_hash: str) -> str:
    """What decides whether a page's charts draw: its HTML, the files under the book's _static
    (``static_hash``: its scripts and styles, vega among them; not the search index, which is data),
    the browser (its path, size and time) and this module's source."""
    from dbexp.book.freshness import Digest

    digest = Digest()
    browser = find_chromium()
    st = os.stat(browser)
    digest.add("page", Path(page).read_bytes())
    digest.add("static", static_hash)
    digest.add("browser", f"{browser} {st.st_size} {st.st_mtime_ns} {VIRTUAL_TIME_BUDGET_MS}")
    digest.add("checker", Path(__file__).read_bytes())
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
