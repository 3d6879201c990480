"""The gtid chapter: what GTIDs, the binlog and performance_schema cost on write-heavy sysbench tests
(MySQL), five configurations of a version measured in one window, one server at a time in turns. The notebook notebooks/gtid.ipynb is the
chapter's narrative."""

from dbexp.chapters.gtid.analysis import (ablation, control, gap_changes, length_check, main_runs, ratios, resolution,
                                          source_table, spread, tidy, windows)
from dbexp.chapters.gtid.claims import claims
from dbexp.chapters.gtid.configs import CONFIGS, CONTROL, CSV_NAMES, RATIOS, TESTS
from dbexp.chapters.gtid.chapter import CHAPTER, PARTS, Gtid, Scale
from dbexp.chapters.gtid.findings import sentence

run = CHAPTER.run

__all__ = ["CHAPTER", "CONFIGS", "CONTROL", "CSV_NAMES", "PARTS", "RATIOS", "TESTS", "Gtid", "Scale", "ablation",
           "claims", "control", "gap_changes", "length_check", "main_runs", "ratios", "resolution", "run", "sentence",
           "source_table", "spread", "tidy", "windows"]
