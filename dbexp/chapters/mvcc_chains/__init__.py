"""The mvcc_chains chapter: who pays to read rows with many versions (notebooks/mvcc_chains.ipynb).

``CHAPTER`` and what the page draws: the costs per version its findings quote (charts.py), each reader's time per read, the rows at
the largest V, the garbage after the snapshot ended (and when each collector ran), what a PostgreSQL lookup touched
(its checked plan and buffers), one hot row's chain on its page, and each engine's versions step by step (engines/page_mechanics.py, engines/undo_mechanics.py)."""

from dbexp.chapters.mvcc_chains.analysis import (GARBAGE_MEASURES, READERS, at_largest_v, at_v, clock_loop,
                                                 collector_passes, column_against_column, excess_at, first_versions, garbage_long,
                                                 garbage_series, largest_v_rows, lookup_rows, lookups, mechanics,
                                                 mechanics_rows, pageinspect_table, per_version,
                                                 per_version_rows, reader_latency, readers, tidy, variant_order)
from dbexp.chapters.mvcc_chains.claims import conditions as claims_conditions
from dbexp.chapters.mvcc_chains.claims import lab
from dbexp.chapters.mvcc_chains.chapter import CHAPTER, DEFAULT_SERVERS, PARTS, Scale, settings_for
from dbexp.chapters.mvcc_chains.measure import (HOLD_S, RECLAIM_POLL_S, WARMUP_SHARE, ChainPoint, statement_clock,
                                                trimmed_mean)
from dbexp.chapters.mvcc_chains import charts  # the chart of what the findings quote

run = CHAPTER.run

__all__ = ["CHAPTER", "ChainPoint", "charts", "claims_conditions", "DEFAULT_SERVERS", "GARBAGE_MEASURES", "HOLD_S", "PARTS", "READERS",
           "RECLAIM_POLL_S", "Scale", "WARMUP_SHARE", "at_largest_v", "at_v", "clock_loop", "collector_passes",
           "column_against_column", "excess_at", "first_versions", "garbage_long",
           "garbage_series", "lab", "largest_v_rows", "lookup_rows", "lookups", "mechanics", "mechanics_rows", "pageinspect_table", "per_version", "per_version_rows", "readers",
           "reader_latency", "run", "settings_for", "statement_clock", "tidy", "trimmed_mean", "variant_order"]
