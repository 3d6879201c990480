"""The scales every chapter runs at, and the check of a scale's name: what the command line and the
book's parameters need, without importing the chapters' machinery (pandas, the servers, the store)."""

from __future__ import annotations

from dbexp.errors import DbexpError, choices

SCALES = ("smoke", "default", "full")


def check_scale(scale: object) -> str:
    """Return ``scale`` if it is one of SCALES, else raise a one-line DbexpError."""
    if scale not in SCALES:
        raise DbexpError(f"unknown scale {scale!r}; valid scales are {choices(SCALES)}")
    return scale
