"""Where servers start: containers (and bare processes for comparison), pinned and torn down.

The names below are imported on first use: a chapter rendered from data/ reaches this package (for
``ServerConfig`` and the registry) but never starts a server, so it does not load the docker SDK,
testcontainers or the database drivers that ``lifecycle`` brings.
"""

from dbexp import lazy

_EXPORTS = {
    "ServerConfig": "dbexp.servers.config",
    "check_cpuset": "dbexp.servers.config",
    "cpus_of": "dbexp.servers.config",
    "parse_settings": "dbexp.servers.config",
    "Server": "dbexp.servers.lifecycle",
    "clean": "dbexp.servers.lifecycle",
    "flavor_for": "dbexp.servers.lifecycle",
    "interactive_containers": "dbexp.servers.lifecycle",
    "running": "dbexp.servers.lifecycle",
    "start": "dbexp.servers.lifecycle",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy.exports(__name__, _EXPORTS)
