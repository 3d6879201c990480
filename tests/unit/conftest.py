"""Unit tests: fixed inputs with known answers; no server, no Docker engine, no network.

Every test collected under tests/unit/ gets the ``unit`` marker, so ``pytest -m unit`` selects
exactly this folder. Nothing here may start, or even reach, a Docker engine. Helpers shared by
the tests live in unit_support.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

UNIT_DIR = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.path)).resolve().is_relative_to(UNIT_DIR):
            item.add_marker(pytest.mark.unit)
