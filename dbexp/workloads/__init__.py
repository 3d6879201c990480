"""Where a workload runs: sysbench (standard oltp_* scripts and the project's Lua scripts)."""

from dbexp.workloads.sysbench import STANDARD, Workload, prepare, project_scripts, run

__all__ = ["STANDARD", "Workload", "prepare", "project_scripts", "run"]
