"""The versions chapter: version over version, relative QPS in the sources' shape (four groups of
sysbench microbenchmarks as the source's harness defines them, each version against a base and against the
version before), each server measured on several independently started instances, their windows interleaved in
a random order, with 95% intervals from two variance components, and cpu/o and cs/o beside.
The notebook notebooks/versions.ipynb is the chapter's narrative."""

from dbexp.chapters.versions import regression
from dbexp.chapters.versions.regression import FACTORS, NOT_CHANGED
from dbexp.chapters.versions.analysis import (MODULE_KINDS, ablation, ablation_beside_source, ablation_gaps,
                                              active_totals, all_ratios, components, control, controls,
                                              design_estimate, headlines, host_speed, host_speed_summary,
                                              instance_logs, length_check, main_runs, moved, pool_reads, profile,
                                              profile_difference, profile_modules, ran_table, ratios, relative,
                                              relative_by_flavor, resolution, short_function, statements_check,
                                              summary, tests_table, tidy, timing, widest, widest_cells, windows)
from dbexp.chapters.versions.chapter import CHAPTER, PARTS, Scale, Versions
from dbexp.chapters.versions.counting import consecutive_table, functions_moved, instruction_ratios
from dbexp.chapters.versions.counting import pace as counted_pace
from dbexp.chapters.versions.counting import points as counted_points
from dbexp.chapters.versions.claims import claims
from dbexp.chapters.versions.claims import conditions as claim_conditions
from dbexp.chapters.versions.findings import sentence
from dbexp.chapters.versions.tests import GROUPS, HEADLINE, TESTS

run = CHAPTER.run

__all__ = ["CHAPTER", "FACTORS", "GROUPS", "HEADLINE", "MODULE_KINDS", "NOT_CHANGED", "PARTS", "Scale", "TESTS",
           "Versions", "ablation", "ablation_beside_source", "ablation_gaps", "active_totals", "all_ratios",
           "claim_conditions", "claims", "components", "control", "controls", "counted_pace", "counted_points",
           "consecutive_table", "design_estimate", "functions_moved", "headlines", "instruction_ratios",
           "host_speed", "host_speed_summary", "instance_logs", "length_check", "main_runs", "moved", "pool_reads",
           "profile", "profile_difference", "profile_modules", "ran_table", "ratios", "regression", "relative",
           "relative_by_flavor", "resolution", "run", "sentence", "short_function", "statements_check", "summary",
           "tests_table", "tidy", "timing", "widest", "widest_cells", "windows"]
