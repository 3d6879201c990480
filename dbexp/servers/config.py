"""What a user asks of a server: which build, pinned where, with which settings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dbexp.errors import DbexpError

_CPUSET = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
_MEMORY = re.compile(r"^\d+[bkmg]?$", re.I)
# Ways to run a server under valgrind (dbexp.servers.valgrind.MODES): callgrind counting instructions,
# or instructions and simulated caches and branches
UNDER = ("callgrind", "callgrind-sim")


def check_cpuset(value: str | None, what: str = "cpuset") -> str | None:
    """Validate a cpuset list ('1', '0-3', '0,2') against this host's CPUs."""
    if value in (None, "", "none", "all"):
        return None
    value = str(value)
    import os
    ncpu = os.cpu_count() or 1
    if not _CPUSET.match(value):
        raise DbexpError(f"bad {what} {value!r}: expected CPU numbers like 1, 0-3 or 0,2 "
                         f"(this host has CPUs 0-{ncpu - 1})")
    for part in value.split(","):
        lo, _, hi = part.partition("-")
        for cpu in (int(lo), int(hi or lo)):
            if cpu >= ncpu:
                raise DbexpError(f"bad {what} {value!r}: CPU {cpu} does not exist "
                                 f"(this host has CPUs 0-{ncpu - 1})")
    return value


def cpus_of(cpuset: str | None) -> list[int]:
    import os
    if not cpuset:
        return list(range(os.cpu_count() or 1))
    out: list[int] = []
    for part in cpuset.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def parse_settings(pairs) -> dict[str, str]:
    """``key=value`` strings (CLI ``--set``) into a dict."""
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = str(pair).partition("=")
        if not sep or not key.strip():
            raise DbexpError(f"bad setting {pair!r}: expected KEY=VALUE, e.g. max_connections=500")
        out[key.strip()] = value.strip()
    return out


@dataclass(frozen=True)
class ServerConfig:
    spec: str  # mysql:8.0, postgres:16.14@offline, ...
    cpuset: str | None = "1"  # CPUs the server may use; None: unpinned
    memory: str | None = "4g"  # container memory limit; None: unlimited
    settings: dict[str, str] = field(default_factory=dict)  # my.cnf options / postgresql.conf
    source: str | None = None  # overrides an @source suffix in spec
    under: str | None = None  # run under valgrind: one of UNDER (dbexp.servers.valgrind); None: natively

    def __post_init__(self):
        check_cpuset(self.cpuset, "server cpuset")
        if self.under is not None and self.under not in UNDER:
            raise DbexpError(f"bad way to run a server {self.under!r}: valid are {', '.join(UNDER)} (or none)")
        if self.memory is not None and not _MEMORY.match(str(self.memory)):
            raise DbexpError(f"bad memory limit {self.memory!r}: expected a size like 2g, 512m")

    def key(self) -> tuple:
        key = (self.spec, self.cpuset, self.memory, tuple(sorted(self.settings.items())), self.source)
        return key + (self.under,) if self.under else key
