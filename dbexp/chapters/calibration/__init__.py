"""Calibration: the spread of single runs (and the machine's episodes in it), the harness, container
and pinning ratios in ABBA pairs (throughput and CPU per query), the sampler's cost against the
server's sessions, the run-length check, what active neighbours do to a server (co-tenancy), and the spread
split between instances and runs (the notebook notebooks/calibration.ipynb)."""

from dbexp.chapters.calibration.analysis import (EPISODE_BUSY_PCT, RATIOS, aa_intervals, aa_pairs, aa_summary,
                                                 cotenancy_table, cpu_table, episode_numbers, length_checks,
                                                 neighbour_server, ratio_numbers, ratio_table, relative_versions,
                                                 sampler_cost, scan_variance, settle_table, setup, spread_frame,
                                                 spread_numbers, spread_runs, spread_table, variance_components,
                                                 version_ratio)
from dbexp.chapters.calibration.charts import aa_chart
from dbexp.chapters.calibration.claims import claims
from dbexp.chapters.calibration.claims import conditions as claims_conditions
from dbexp.chapters.calibration.chapter import CHAPTER, Scale, estimated_s, run
from dbexp.chapters.calibration.findings import (cpu_reading, episodes_sentence, findings, length_reading,
                                                  ratio_design, ratio_reading, readme_block, sampler_cost_sentence,
                                                  spread_reading)

__all__ = ["CHAPTER", "EPISODE_BUSY_PCT", "RATIOS", "Scale", "aa_chart", "claims_conditions", "aa_intervals", "aa_pairs", "aa_summary", "claims",
           "scan_variance", "settle_table", "spread_frame", "cotenancy_table", "cpu_reading", "cpu_table", "episode_numbers",
           "episodes_sentence", "estimated_s", "findings", "length_checks", "length_reading", "ratio_design",
           "ratio_numbers", "ratio_reading", "ratio_table", "readme_block", "relative_versions", "run",
           "sampler_cost", "sampler_cost_sentence", "setup", "spread_numbers", "spread_reading", "spread_runs",
           "spread_table", "variance_components", "neighbour_server", "version_ratio"]
