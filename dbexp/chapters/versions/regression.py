"""The regression source's gap (8.0.45's TPS over 5.7.44's, its tables) beside each of the ablation's
configurations that it measured: its baseline, its steps one on top of the other, and its factors
changed alone (dbexp.experiments.ledger holds its numbers)."""

from __future__ import annotations

from dbexp.chapters.versions.ablation import STEPS, configurations
from dbexp.experiments import ledger as source

# the ablation's factors -> the source's rows of its independent ablation (each factor alone)
ALONE_ROWS = {"writer threads off": "writer_threads=OFF", "P_S off": "performance_schema=0",
              "binlog off": "skip-log-bin", "prepared statements": "db-ps-mode=auto",
              "flush_log_at_trx_commit=0": "flush_log_at_trx_commit=0"}


def source_gap(config: str) -> float | None:
    """8.0 / 5.7 in the source for ``config``, or None where the source did not measure it."""
    factors = configurations()[config]
    if factors == STEPS[:len(factors)]:
        return source.step_gap(len(factors))
    if len(factors) == 1 and factors[0] in ALONE_ROWS:
        return source.gap(ALONE_ROWS[factors[0]])
    return None
