"""Version numbers as sortable tuples, parsed in this one place.

``version_key`` reads the first dotted number in a string, so one function takes a server's version
('8.0.15-log', '10.11.19-MariaDB-0+deb12u1', '16.14'), a series name ('mysql 8.0.15') and a server's
banner ('PostgreSQL 16.14 on x86_64-pc-linux-gnu, ...'). packaging.version is no help here: it
rejects '8.0.15-log' and MariaDB's '-MariaDB-0+deb12u1' (not PEP 440), so a regex does it.
"""

from __future__ import annotations

import re

_VERSION = re.compile(r"\d+(?:\.\d+)*")


def version_key(text) -> tuple[int, ...]:
    """The first dotted number in ``text`` as ints, () when there is none:
    '8.0.15-log' -> (8, 0, 15), 'mysql 5.7.22' -> (5, 7, 22), '10.11.19-MariaDB-0+deb12u1' ->
    (10, 11, 19). Tuples sort as versions do: (5, 7, 22) < (8, 0, 15) < (8, 0, 22), (9, 6) < (12,)."""
    found = _VERSION.search(str(text))
    return tuple(int(n) for n in found.group().split(".")) if found else ()


def major(text) -> int:
    """The major version, the first number of :func:`version_key`: 'postgres 17.10' -> 17."""
    key = version_key(text)
    if not key:
        raise ValueError(f"no version number in {text!r}")
    return key[0]


def short(version) -> str:
    """A server's version as series names and tables show it: what it reports up to a packaging suffix or a
    parenthesis, '8.0.15-log' -> '8.0.15', '10.11.19-MariaDB-0+deb12u1' -> '10.11.19', '19rc1 (Debian 19~rc1-1)'
    -> '19rc1' (cut at the first '-' alone, that one would read '19rc1 (Debian 19~rc1')."""
    return str(version).split(" (")[0].split("-")[0].strip()
