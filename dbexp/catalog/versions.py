"""Version numbers as sortable tuples: '8.0.15' < '8.0.22', '10.11.19-MariaDB-0+deb12u1' -> (10, 11, 19)."""

from __future__ import annotations


def version_key(version: str) -> tuple[int, ...]:
    """The numeric parts of a version string, before any '-suffix'; non-digits inside a part are dropped."""
    out = []
    for part in str(version).split("-")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)

