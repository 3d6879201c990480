"""The versions chapter: version over version, relative QPS in the sources' shape (four groups of
sysbench microbenchmarks, each version against a base and against the version before), with 95%
intervals from windows in which all of a flavor's versions ran at once, and cpu/o and cs/o beside.
The notebook notebooks/versions.ipynb is the chapter's narrative."""

from dbexp.chapters.versions import regression
from dbexp.chapters.versions.regression import FACTORS, NOT_CHANGED
from dbexp.chapters.versions.analysis import (MODULE_KINDS, ablation, ablation_beside_source, ablation_gaps, control,
                                              controls, headlines, length_check, main_runs, moved, pool_reads,
                                              profile, profile_difference, profile_modules, ratios, relative,
                                              short_function,
                                              relative_by_flavor, resolution, summary, tests_table, tidy, widest,
                                              widest_cells, windows)
from dbexp.chapters.versions.chapter import CHAPTER, PARTS, Scale, Versions
from dbexp.chapters.versions.claims import claims
from dbexp.chapters.versions.claims import conditions as claim_conditions
from dbexp.chapters.versions.findings import sentence
from dbexp.chapters.versions.tests import GROUPS, TESTS

run = CHAPTER.run

__all__ = ["CHAPTER", "FACTORS", "GROUPS", "MODULE_KINDS", "NOT_CHANGED", "PARTS", "Scale", "TESTS", "Versions",
           "ablation", "ablation_beside_source", "ablation_gaps", "claim_conditions", "claims", "control", "controls", "headlines",
           "length_check", "main_runs", "moved", "pool_reads", "profile", "profile_difference", "profile_modules",
           "ratios", "regression", "relative", "relative_by_flavor", "resolution", "run", "sentence", "short_function",
           "summary",
           "tests_table", "tidy", "widest", "widest_cells", "windows"]
