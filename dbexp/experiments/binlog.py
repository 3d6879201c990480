"""MySQL's binary log as the chapters state it (gtid measures it; versions' regression ablation
starts from it): the binlog on with everything it writes stated, and GTIDs from the server's start.

Shared here so that no chapter imports another's engine part."""

from __future__ import annotations

from dbexp.errors import DbexpError


def gtid_settings(on: bool) -> dict[str, str]:
    """GTIDs from the server's start (with binlog_settings(), whose GTIDs are off)."""
    value = "ON" if on else "OFF"
    return {"gtid_mode": value, "enforce_gtid_consistency": value}


def binlog_settings(flavor, write_sets: str = "off") -> dict[str, str]:
    """The binlog on, everything it writes stated: row events with full images, GTIDs off
    (gtid_settings() turns them on from the start). ``write_sets``: "off" extracts none and tracks
    dependencies by commit order (5.7's defaults; 8.0 extracts them by default); "default" leaves both
    options to the server, as the sources' my.cnf files do (5.7: off; 8.0: extracted with XXHASH64,
    dependencies by commit order). 8.4 and 9.x have neither option: they always track dependencies by
    write sets, which the flavor's "series" capability leaves to them."""
    if write_sets not in ("off", "default"):
        raise DbexpError(f"bad write_sets {write_sets!r}: valid are off or default")
    own = {"transaction_write_set_extraction": "OFF", "binlog_transaction_dependency_tracking": "COMMIT_ORDER"} \
        if write_sets == "off" else {}
    return flavor.capability("series").supported({
        "log_bin": "binlog", "binlog_format": "ROW", "binlog_row_image": "FULL", **own, **gtid_settings(False)})
