"""dbexp: the laboratory under "Database Internals, Measured".

Where things live:
  engine/       the Docker engine: reach it, start it, report on it
  catalog/      which server builds exist (flavor x version x source)
  images/       how offline images are built from registry-shipped binaries
  servers/      where servers start, stop and are validated
  workloads/    where a workload runs (sysbench and its Lua scripts, sessions)
  metrics/      where metrics are sampled (procfs, cgroups, server counters)
  results/      where results are stored (DuckDB, provenance, Parquet export)
  experiments/  sweeps and the experiments behind each chapter
  book/         executing notebooks and building the Jupyter Book
  chapters/     one folder per chapter: its design, analysis, claims, findings and engine parts
  process.py    every child process's start and stop; lazy.py: packages whose names load on first use
"""

__version__ = "0.1.0"
