"""ReadView and snapshot scaling: what building an MVCC snapshot costs per open transaction (and,
PostgreSQL, per connected session). ``CHAPTER`` and the names the notebook uses."""

from dbexp.chapters.readview import charts
from dbexp.chapters.readview.analysis import (by_h, copy_cost, cpu_slopes, latch, loop_runs, mechanics, probe_cost,
                                              rebuild_bounds, recolor, relative_qps, reuse, segments,
                                              series_colors, statement_costs, tidy, view_slopes, views_per_statement,
                                              visibility, visibility_growth)
from dbexp.chapters.readview.chapter import CHAPTER, LATCH_STMTS, Scale, probe_note
from dbexp.chapters.readview.claims import claims
from dbexp.chapters.readview.counts import lines as counted_lines
from dbexp.chapters.readview.counts import points as counted_points
from dbexp.chapters.readview.findings import (copy_sentence, counted_sentence, findings, loop_sentence, mechanics_sentence,
                                              reuse_sentence, segments_sentence, sessions_sentence,
                                              statement_sentence, visibility_sentence)

run = CHAPTER.run

__all__ = ["CHAPTER", "LATCH_STMTS", "Scale", "by_h", "charts", "claims", "copy_cost", "copy_sentence",
           "counted_lines", "counted_points", "counted_sentence", "cpu_slopes",
           "findings", "latch", "loop_runs", "loop_sentence", "mechanics", "mechanics_sentence", "probe_cost",
           "probe_note", "rebuild_bounds", "recolor", "relative_qps", "reuse", "reuse_sentence", "run", "segments",
           "segments_sentence", "series_colors", "sessions_sentence", "statement_costs", "statement_sentence", "tidy",
           "view_slopes", "views_per_statement", "visibility", "visibility_growth", "visibility_sentence"]
