"""The gtid chapter's configurations, the comparisons between them, and its tests."""

from __future__ import annotations

# test name -> sysbench script
TESTS = {"insert": "oltp_insert", "update-index": "oltp_update_index", "update-non-index": "oltp_update_non_index",
         "update-inlist": "update_inlist", "write-only": "oltp_write_only"}
CONTROL = "A/A control"
# one server per configuration, all of a version's measured in the same window
CONFIGS = ("binlog off", "binlog", "binlog + GTID", "binlog, P_S off", "binlog, twin")
# (A, B, what the ratio A / B measures)
RATIOS = (("binlog + GTID", "binlog", "GTIDs"), ("binlog", "binlog off", "the binlog"),
          ("binlog, P_S off", "binlog", "performance_schema off"), ("binlog, twin", "binlog", CONTROL))
CSV_NAMES = {"GTIDs": "ratio-gtid", "the binlog": "ratio-binlog", "performance_schema off": "ratio-ps-off",
             CONTROL: "ratio-control"}
TARGET_HALF_WIDTH = 0.03  # the resolution: a 95% half-width of at most 3%
