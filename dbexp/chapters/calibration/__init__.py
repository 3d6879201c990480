"""Calibration: the spread of single runs, the harness, container and pinning ratios in ABBA pairs,
and the sampler's cost against the server's sessions (the notebook notebooks/calibration.ipynb)."""

from dbexp.chapters.calibration.analysis import (RATIOS, ratio_numbers, ratio_table, relative_versions, sampler_cost,
                                                 setup, spread_numbers, spread_table, version_ratio)
from dbexp.chapters.calibration.claims import claims
from dbexp.chapters.calibration.design import CHAPTER, Scale, run
from dbexp.chapters.calibration.sentences import findings, ratio_reading, readme_block, sampler_cost_sentence

__all__ = ["CHAPTER", "RATIOS", "Scale", "claims", "findings", "ratio_numbers", "ratio_reading", "ratio_table",
           "readme_block", "relative_versions", "run", "sampler_cost", "sampler_cost_sentence", "setup",
           "spread_numbers", "spread_table", "version_ratio"]
