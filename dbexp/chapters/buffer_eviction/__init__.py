"""Buffer eviction under a scan: the chapter object and what its notebook uses.

Modules: ``chapter`` (scales, points, which part serves which server, one run), ``scanner`` (the
scanning session), ``sessions`` (their CPU time), ``engines`` (what an engine's part answers) and
``engines/innodb``/``mariadb``/``postgres`` (the parts: settings, SQL, samples, variants),
``engines/pool_mechanics``/``shared_buffers_mechanics`` (each pool's steps, observed one at a time),
``analysis`` (timeline, runs, summary), ``claims`` and ``findings`` (the page's tables and summary;
its prose in notebooks/buffer_eviction/).
"""

from __future__ import annotations

from .analysis import (MECHANICS_ENGINES, PHASES, chart_frame, mechanics, mechanics_rows, page_numbers, per_run,
                       phase_of, recovery_s, sizes_mb, summary, tidy, timeline, usage_counts)
from . import charts
from .chapter import PARTS, VARIANT_NAMES, VARIANTS, BufferEviction, Scale

CHAPTER = BufferEviction()
run = CHAPTER.run

__all__ = ["CHAPTER", "MECHANICS_ENGINES", "PARTS", "PHASES", "Scale", "VARIANTS", "VARIANT_NAMES", "chart_frame",
           "charts", "mechanics",
           "mechanics_rows", "page_numbers",
           "per_run", "phase_of", "recovery_s", "run", "sizes_mb", "summary", "tidy", "timeline", "usage_counts"]
