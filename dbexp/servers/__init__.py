"""Where servers start: containers (and bare processes for comparison), pinned and torn down."""

from dbexp.servers.config import ServerConfig, check_cpuset, cpus_of, parse_settings
from dbexp.servers.lifecycle import Server, clean, flavor_for, interactive_containers, running, start

__all__ = ["Server", "ServerConfig", "check_cpuset", "clean", "cpus_of", "flavor_for",
           "interactive_containers", "parse_settings", "running", "start"]
