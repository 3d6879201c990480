"""Buffer eviction under a scan: the chapter object and what its notebook uses.

Modules: ``design`` (scales, points, one run), ``scanner`` (the scanning session), ``pool`` (what an
engine's part answers), ``innodb``/``mariadb``/``postgres`` (the parts: settings, SQL, samples,
variants), ``parts`` (which part serves which server), ``analysis`` (timeline, runs, summary),
``claims`` and ``findings`` (the page's tables and summary; its prose in notebooks/buffer_eviction/).
"""

from __future__ import annotations

from .analysis import (PHASES, chart_frame, page_numbers, per_run, phase_of, recovery_s, sizes_mb, summary,
                       tidy, timeline, usage_counts)
from .design import BufferEviction, Scale
from .parts import PARTS, VARIANT_NAMES, VARIANTS

CHAPTER = BufferEviction()
run = CHAPTER.run

__all__ = ["CHAPTER", "PARTS", "PHASES", "Scale", "VARIANTS", "VARIANT_NAMES", "chart_frame", "page_numbers",
           "per_run", "phase_of", "recovery_s", "run", "sizes_mb", "summary", "tidy", "timeline", "usage_counts"]
