"""Which class serves which flavor name: the one list of flavors the lab knows how to run."""

from __future__ import annotations

from dbexp.errors import DbexpError, choices
from dbexp.servers.flavor import Flavor
from dbexp.servers.mariadb import MariaDB
from dbexp.servers.mysql import MySQL
from dbexp.servers.postgres import Postgres

FLAVORS: dict[str, type[Flavor]] = {cls.name: cls for cls in (MySQL, Postgres, MariaDB)}


def flavor_class(name: str) -> type[Flavor]:
    try:
        return FLAVORS[name]
    except KeyError:
        raise DbexpError(f"unknown server flavor {name!r}: valid are {choices(FLAVORS)}") from None


def flavor_for(build) -> Flavor:
    """The flavor object of a catalog build."""
    return flavor_class(build.flavor)(build.version)


def flavor_of_spec(spec: str) -> Flavor:
    """The flavor of a spec such as 'mysql:8.0@offline', without resolving or starting anything."""
    from dbexp.catalog import parse_spec

    parsed = parse_spec(spec)
    return flavor_class(parsed.flavor)(parsed.version)
