"""Glue a result into the page's prose (myst-nb), as a plain Python value or Markdown text.

NumPy 2 scalars print as ``np.float64(0.4)``, which myst-nb cannot format with
``{glue:text}`name:.1%``; every glued number goes through :func:`glue`.
"""

from __future__ import annotations

import numbers


def plain(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def glue(name: str, value) -> None:
    """Numbers: use ``{glue:text}`name:fmt``` in the prose. Strings are glued as Markdown:
    use ``{glue:md}`name``` (``{glue:}`` would print them with quotes)."""
    from IPython.display import Markdown
    from myst_nb import glue as nb_glue

    value = plain(value)
    nb_glue(name, Markdown(value) if isinstance(value, str) else value, display=False)
