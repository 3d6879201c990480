"""The server's own counters over a window: snapshots come from each flavor's ``counters()``;
here they become deltas and per-second series."""

from __future__ import annotations


def deltas(before: dict, after: dict) -> list[dict]:
    """Rows (source, name, before, after, delta) for counters present at both ends."""
    rows = []
    for key, end in after.items():
        if key in before:
            rows.append({"source": key[0], "name": key[1], "before": before[key], "after": end,
                         "delta": end - before[key]})
    return rows


def series_values(flavor, snap: dict) -> dict[str, float]:
    """Of a snapshot, the counters the flavor wants a per-second series of."""
    wanted = flavor.counter_series
    return {name: value for (source, name), value in snap.items() if name in wanted}
