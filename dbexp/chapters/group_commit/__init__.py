"""The group_commit chapter: how many commits share one durable write, and how many times each
waiting committer is woken for it (chapter.py measures, analysis.py computes, claims.py judges,
findings.py words the page's numbers; engines/ holds one part each for MySQL's binlog, MariaDB's and
PostgreSQL's WAL flush)."""

from __future__ import annotations

from dbexp.experiments.verdicts import COLUMNS as CLAIM_COLUMNS

from . import charts
from .analysis import (WAIT_LINES, at_most_threads, curves, duration_s, probes, run_length, throughput, tidy,
                       waits_long)
from .claims import claims
from .claims import conditions as claims_conditions
from .chapter import ALL_SERVERS, CHAPTER, CONFIG_NAMES, CONFIGS, LEFT_OUT, PARTS, GroupPoint, Scale
from .commit_probe import CommitProbe
from .findings import findings, interval_labels, redo_note, repeats_note

__all__ = ["ALL_SERVERS", "CHAPTER", "charts", "claims_conditions", "CLAIM_COLUMNS", "LEFT_OUT", "CONFIGS", "CONFIG_NAMES", "CommitProbe", "GroupPoint", "PARTS", "Scale",
           "WAIT_LINES", "at_most_threads", "claims", "curves", "duration_s", "findings", "interval_labels", "probes",
           "redo_note", "repeats_note", "run_length", "throughput", "tidy", "waits_long"]
