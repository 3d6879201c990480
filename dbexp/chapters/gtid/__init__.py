"""The gtid chapter: what GTIDs, the binlog and performance_schema cost on write-heavy sysbench tests
(MySQL), five configurations of a version measured in one window, one server at a time in turns. The notebook notebooks/gtid.ipynb is the
chapter's narrative."""

from dbexp.chapters.gtid import charts
from dbexp.chapters.gtid.analysis import (EFFECTS, ablation, binlog_per_commit, control, controls, effects, gap_changes,
                                          length_check, main_runs, ratios, resolution, source_table, spread, tidy,
                                          windows)
from dbexp.chapters.gtid.claims import claims, conditions
from dbexp.chapters.gtid.configs import CONFIGS, CONTROL, CSV_NAMES, RATIOS, TESTS
from dbexp.chapters.gtid.chapter import CHAPTER, PARTS, Gtid, Scale
from dbexp.chapters.gtid.findings import sentence

run = CHAPTER.run

__all__ = ["CHAPTER", "CONFIGS", "CONTROL", "CSV_NAMES", "EFFECTS", "PARTS", "RATIOS", "TESTS", "Gtid", "Scale",
           "ablation", "binlog_per_commit", "charts", "claims", "conditions", "control", "controls", "effects",
           "gap_changes", "length_check", "main_runs", "ratios", "resolution", "run", "sentence", "source_table",
           "spread", "tidy", "windows"]
