"""The sources' numbers the chapters test, as the sources print them, and what follows from them
(the ledger: citations are in sources.py). The gtid chapter tests both sources here; the versions
chapter's regression ablation tests the regression source's.

Only the sources' own figures are typed here (the regression source's TPS table, the GTID source's
rounded percentages and ratios, each with the conditions it was measured under); every ratio, gain
and share of a gap the claims test is computed from them below, so that it can be checked against
the seed text (tests/unit/test_gtid.py reads /work/shared/seeds/ where it is there).

Rounded figures are read as the rounding allows: "about 5%" as 4.5 to 5.5%, "1.10X" as 1.095 to
1.105 (half a unit of the last digit either way).
"""

from __future__ import annotations

from dataclasses import dataclass

from dbexp.catalog.versions import version_key

# --- the regression source (kernelmaker.github.io, MySQL-regression-1), independent ablation ------
# "each factor is changed individually from the same common baseline": TPS of 5.7.44 and 8.0.45
ABLATION_TPS = {"baseline": (69_818, 47_509), "writer_threads=OFF": (69_818, 52_539),
                "performance_schema=0": (72_316, 50_798), "skip-log-bin": (116_588, 88_379),
                "db-ps-mode=auto": (74_406, 53_838), "flush_log_at_trx_commit=0": (81_952, 60_906)}
# its table of steps, "applying changes one by one" (each step on top of the ones before): TPS of 5.7.44
# and 8.0.45 after each step (a step that does not apply to 5.7 repeats its TPS, in parentheses there)
STEP_TPS = {"baseline": (69_818, 47_509), "writer_threads=OFF": (69_818, 52_539),
            "performance_schema=0": (72_316, 54_919), "skip-log-bin": (128_140, 109_044),
            "db-ps-mode=auto": (135_664, 125_119), "flush_log_at_trx_commit=0": (149_577, 144_941)}
PRINTED_STEP_GAPS = (-0.320, -0.247, -0.241, -0.149, -0.078, -0.031)  # its Gap column, to check against
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


def step_gap(step: int) -> float:
    """8.0's TPS over 5.7's after the source's first ``step`` steps (0: its baseline)."""
    old, new = list(STEP_TPS.values())[step]
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


# --- the GTID source (smalldatum, 2025-12-17), GTID / no GTID ------------------------------------
GTID_VERSIONS = "8.0.44, 8.4.7, 9.4.0 and 9.5.0 (built from source)"
GTID_RANGE = "8.0.44 to 9.5.0"
WRITE_S = 900  # "the write-heavy [microbenchmarks are run] for 900 seconds"


@dataclass(frozen=True)
class Row:
    """One of the GTID source's servers: its conditions and what it printed for GTIDs."""

    name: str
    conditions: str


EIGHT = Row("8-core", f"{GTID_VERSIONS}; AMD Ryzen 7 7735HS, 8 cores; 1 client thread; 1 table of 50M rows, "
                      f"cached; {WRITE_S} s per write test")
TWENTY_FOUR = Row("24-core", f"{GTID_VERSIONS}; 2 sockets x 12 cores (Xeon Silver 4214R); 16 client threads; "
                             f"8 tables of 10M rows; {WRITE_S} s per write test")
FORTY_EIGHT = Row("48-core", f"{GTID_VERSIONS}; AMD EPYC 9454P, 48 cores; 40 client threads; 8 tables of 10M "
                             f"rows; {WRITE_S} s per write test")


def about_pct(pct: float, digits: int = 0) -> tuple[float, float]:
    """A rounded percentage change (-5 for "about 5% less") as a range of the ratio it allows."""
    half = 0.5 * 10 ** -digits
    return 1 + (pct - half) / 100, 1 + (pct + half) / 100


def about_x(x: float, digits: int = 2) -> tuple[float, float]:
    """A ratio printed to ``digits`` decimals ("1.10X") as the range it allows."""
    half = 0.5 * 10 ** -digits
    return x - half, x + half


# the 8-core server's summary (every version): throughput GTID / no GTID per test
EIGHT_TPUT = {"insert": about_pct(-5), "update-index": about_pct(+5), "update-non-index": about_pct(-1),
              "update-inlist": about_pct(-1), "write-only": about_pct(-1)}
EIGHT_TPUT_PRINTED = {"insert": "about 5% less", "update-index": "about 5% more", "update-non-index": "about 1% less",
                      "update-inlist": "about 1% less", "write-only": "about 1% less"}
# "typically 5% to 10% less with the -gtid configs ... with 40 clients on the 48-core server"
FORTY_EIGHT_TPUT = (0.90, 0.95)
# vmstat / iostat per operation on insert, 9.5.0-gtid over 9.5.0-nogtid, per server
INSERT_X = {"cpu/o": {"8-core": 1.10, "24-core": 1.15, "48-core": 1.13},
            "cs/o": {"8-core": 1.45, "24-core": 1.23, "48-core": 1.26},
            "wKB/o": {"8-core": 1.16, "24-core": 1.24, "48-core": 1.24}}
# vmstat / iostat per operation on update-index, 9.5.0-gtid over 9.5.0-nogtid, the 8-core server ("decreases by ~3%")
UPDATE_INDEX_X = {"cpu/o": about_pct(-3), "cs/o": about_pct(-2), "wKB/o": about_pct(-3)}
UPDATE_INDEX_PRINTED = {"cpu/o": "about 3% less", "cs/o": "about 2% less", "wKB/o": "about 3% less"}
# insert throughput, 9.5.0-nogtid over 9.5.0-gtid (the 8-core server's is the summary's "about 5%")
INSERT_NOGTID_OVER_GTID = {"24-core": 1.15, "48-core": 1.17}
