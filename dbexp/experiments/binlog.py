"""MySQL's binary log as the chapters state it (gtid measures it; versions' regression ablation
starts from it): the binlog on with everything it writes stated, and GTIDs from the server's start.

Shared here so that no chapter imports another's engine part."""

from __future__ import annotations


def gtid_settings(on: bool) -> dict[str, str]:
    """GTIDs from the server's start (with binlog_settings(), whose GTIDs are off)."""
    value = "ON" if on else "OFF"
    return {"gtid_mode": value, "enforce_gtid_consistency": value}


def binlog_settings(flavor) -> dict[str, str]:
    """The binlog on, everything it writes stated: row events with full images, no write sets
    (5.7's default; 8.0 extracts them by default), dependencies by commit order, GTIDs off
    (gtid_settings() turns them on from the start). 8.4 and 9.x have neither write-set option:
    they always track dependencies by write sets, which the flavor's "series"
    capability leaves to them."""
    return flavor.capability("series").supported({
        "log_bin": "binlog", "binlog_format": "ROW", "binlog_row_image": "FULL",
        "transaction_write_set_extraction": "OFF", "binlog_transaction_dependency_tracking": "COMMIT_ORDER",
        **gtid_settings(False)})
