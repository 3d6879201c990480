"""A chapter's sentences that depend on its data, from Jinja templates beside its notebook.

The notebook is the one home of a chapter's narrative: its fixed prose is in its Markdown cells, and a
sentence whose words change with the numbers (which server was faster, whether an interval excludes
the source's figure) is a template in ``notebooks/<chapter>/<name>.md.j2``, filled with the numbers
the chapter's analysis returns. Analysis code returns numbers and labels, never English.

Filters for numbers: ``pct`` (0.123 -> 12.3%), ``signed_pct`` (+12.3%), ``num(fmt)``, ``ci(lo, hi)``
(``[0.94, 1.11]``), ``plural(word)`` (``n|plural('run')`` -> "1 run" / "2 runs").
"""

from __future__ import annotations

import re
from functools import cache

import jinja2

from dbexp.paths import project_root


_NEGATIVE_ZERO = re.compile(r"^-(0[0,.]*)(%?)$")


def _no_negative_zero(text: str) -> str:
    """'-0.00' (a small negative number rounded to zero) as '0.00'; '+' kept where it was asked for."""
    m = _NEGATIVE_ZERO.match(text)
    return m.group(1) + m.group(2) if m else text


def pct(x: float, digits: int = 1) -> str:
    return f"{x:z.{digits}%}"


def signed_pct(x: float, digits: int = 1) -> str:
    return f"{x:+z.{digits}%}"


def num(x: float, fmt: str = ",.2f") -> str:
    text = format(x, fmt)
    zero = _no_negative_zero(text)
    return "+" + zero if zero != text and "+" in fmt else zero


def ci(lo: float, hi: float, fmt: str = ".2f") -> str:
    return f"[{num(lo, fmt)}, {num(hi, fmt)}]"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


@cache
def environment(root: str) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(root), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters.update(pct=pct, signed_pct=signed_pct, num=num, plural=plural)
    env.globals.update(ci=ci)
    return env


def render(chapter: str, name: str, *, keep_lines: bool = False, **numbers) -> str:
    """The template ``notebooks/<chapter>/<name>.md.j2`` filled with ``numbers``, as Markdown
    paragraphs (line breaks and runs of spaces inside the template collapse to one space; a blank line
    in it stays a paragraph break), or, with ``keep_lines``, line by line as written (a table, a list).
    A name missing from ``numbers`` is an error, never an empty gap."""
    text = environment(str(project_root() / "notebooks")).get_template(f"{chapter}/{name}.md.j2").render(**numbers)
    if keep_lines:
        return text.rstrip("\n")
    paragraphs = [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", text)]
    return "\n\n".join(p for p in paragraphs if p)
