"""The sources' numbers this chapter tests, as the sources print them, and what follows from them.

Only the sources' own figures are typed here (the regression source's TPS table, with the conditions
it was measured under); every ratio, gain and share of a gap the claims test is computed from them
below, so that it can be checked against the seed text (tests/unit/test_gtid.py reads
/work/shared/seeds/ where it is there).
"""

from __future__ import annotations

from dbexp.catalog.versions import version_key

# --- the regression source (kernelmaker.github.io, MySQL-regression-1), independent ablation ------
# "each factor is changed individually from the same common baseline": TPS of 5.7.44 and 8.0.45
ABLATION_TPS = {"baseline": (69_818, 47_509), "writer_threads=OFF": (69_818, 52_539),
                "performance_schema=0": (72_316, 50_798), "skip-log-bin": (116_588, 88_379),
                "db-ps-mode=auto": (74_406, 53_838), "flush_log_at_trx_commit=0": (81_952, 60_906)}
# the source's own rounding of what follows from them (its text and tables), to check against
PRINTED = {"gap": -0.320, "binlog_gain_5.7": 0.67, "binlog_gain_8.0": 0.86, "binlog_pp": 7.8, "pfs_pp": 2.3}
REGRESSION_CONDITIONS = ("5.7.44 against 8.0.45 (built with GCC 8.5 -O3); sysbench oltp_update_non_index, "
                         "8 threads, 90 s per run, one run per cell; mysqld and sysbench on 8 dedicated cores each; "
                         "1 table of 50M rows, 23 GB buffer pool; innodb_flush_log_at_trx_commit = 2, "
                         "sync_binlog = 0; baseline: binlog on, performance_schema on, log writer threads on "
                         "(8.0), --db-ps-mode=disable")
REGRESSION_VERSIONS = {"5.7": 0, "8.0": 1}  # the column of ABLATION_TPS each version family was measured in


def gap(factor: str = "baseline") -> float:
    """8.0's TPS over 5.7's with ``factor`` changed (or none)."""
    old, new = ABLATION_TPS[factor]
    return new / old


def gap_change(factor: str) -> float:
    """How ``factor`` moves the gap: 8.0 / 5.7 with it changed, over 8.0 / 5.7 at the baseline."""
    return gap(factor) / gap()


def gap_points(factor: str) -> float:
    """The same in percentage points of the gap, as the source states its attributions."""
    return 100 * (gap(factor) - gap())


def gain(factor: str, version: str) -> float | None:
    """TPS with ``factor`` changed over the baseline's, for the version family of ``version``
    ('mysql 8.0.15' -> 8.0's column), or None for a version the source did not measure."""
    col = REGRESSION_VERSIONS.get(".".join(str(n) for n in version_key(version)[:2]))
    if col is None:
        return None
    return ABLATION_TPS[factor][col] / ABLATION_TPS["baseline"][col]
