"""A package whose names are imported on first use (PEP 562): its ``__getattr__`` and ``__dir__``."""

from __future__ import annotations

import sys
from importlib import import_module


def exports(package: str, names: dict[str, str]):
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps each exported name to the module that
    defines it, imported the first time the name is asked for (then kept in the package)."""

    def __getattr__(name: str):
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
