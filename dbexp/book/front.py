"""The front page's table of every chapter's answer (one row per chapter, the way ClickBench's front page is one
table): its question, linked; its headline with intervals; its verdicts counted by category; where, when and for
how long it was measured. Read from each chapter's data/<chapter>/summary.parquet (Chapter.summary, written when
the chapter is published), the same numbers its page opens with and README.md's measuring-time table."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pandas as pd

from dbexp.book.toc import BOOK_DIR, chapter_name, chapters, repo_root
from dbexp.results.export import data_dir

SUMMARY = "summary.parquet"


def summaries(root: Path | None = None) -> pd.DataFrame:
    """Every published chapter's summary row, in the book's order, with its page's title and document name."""
    root = Path(root) if root is not None else repo_root()
    rows = []
    for doc, title in chapters(root):
        name = chapter_name(doc)
        path = data_dir(root) / str(name) / SUMMARY
        if name and path.exists():
            rows.append(pd.read_parquet(path).iloc[0].to_dict() | {"title": title, "doc": doc})
    return pd.DataFrame(rows)


def _cell(text) -> str:
    return str(text or "\u2014").replace("\n", " ")


def headlines_markdown(root: Path | None = None, relative_to: str = BOOK_DIR) -> str:
    """The table as MyST (a ``list-table`` of the book's table class, so that it reads at the size of the chapters'
    tables): one row per published chapter, two columns: the chapter (its title a link to its page, then its
    verdicts, and where, when and for how long it was measured) and its answer."""
    s = summaries(root)
    if s.empty:
        return "No chapter has been published yet (data/ holds no summary.parquet)."
    lines = ["```{list-table}", ":header-rows: 1", ":widths: 32 68", ":class: dataframe dbexp-table", "",
             "* - chapter", "  - the answer"]
    for _, r in s.iterrows():
        path = PurePosixPath(r["doc"])
        target = path.name if path.parent == PurePosixPath(relative_to) else f"/{r['doc']}"
        title = str(r["title"]).replace("`", "'").replace("<", "(").replace(">", ")")
        lines += [f"* - {{doc}}`{_cell(title)} <{target}>`", "",
                  f"    **Verdicts:** {_cell(r['verdicts'])}", "",
                  f"    {_cell(r['cpu'])}, {_cell(str(r['measured_until'])[:10])}: {int(r['runs']):,} runs, "
                  f"{float(r['minutes']):.1f} min",
                  f"  - {_cell(r['headline'])}"]
    return "\n".join(lines + ["```"])
