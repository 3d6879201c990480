"""Which of a chapter's per-engine parts serves a server: the one place outside a flavor where a
flavor's name is read.

A chapter that needs engine-specific work (its own SQL, probes or settings) writes one class per
engine in its folder (``innodb.py``, ``postgres.py``) and declares them here by flavor name, with
the reason for every flavor it cannot measure::

    PARTS = Engines("readview", {"mysql": innodb.Views, "postgres": postgres.Snapshots},
                    skipped={"mariadb": "its mariadbd exports no ReadView symbol to time"})
    PARTS.of(server.flavor).open_snapshot(conn)

A flavor is served by the part of its own name or of the nearest flavor it derives from (MariaDB
derives from MySQL, so an InnoDB part declared for "mysql" serves MariaDB unless "mariadb" is given
or skipped). A part is built once per flavor class and version, with the flavor as its argument.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from dbexp.errors import DbexpError, choices
from dbexp.servers.flavor import Flavor

P = TypeVar("P")


class Engines(Generic[P]):
    def __init__(self, chapter: str, parts: dict[str, type[P]], skipped: dict[str, str] | None = None):
        self.chapter = chapter
        self.parts = dict(parts)
        self.skipped = dict(skipped or {})
        self._built: dict[tuple[type, str], P] = {}

    def _lookup(self, flavor_cls: type) -> tuple[str, type[P] | None]:
        for cls in flavor_cls.__mro__:
            name = getattr(cls, "name", None)
            if not isinstance(name, str):
                continue
            if name in self.skipped:
                return name, None
            if name in self.parts:
                return name, self.parts[name]
        return flavor_cls.__name__, None

    def why_not(self, flavor: Flavor | type[Flavor]) -> str | None:
        """None where this chapter measures the flavor, else the reason it cannot."""
        cls = flavor if isinstance(flavor, type) else type(flavor)
        name, part = self._lookup(cls)
        if part is not None:
            return None
        return self.skipped.get(name) or f"the chapter has no part for {cls.name}"

    def measures(self, flavor: Flavor | type[Flavor]) -> bool:
        return self.why_not(flavor) is None

    def check(self, spec: str) -> None:
        """Raise a one-line DbexpError if ``spec`` names a server this chapter cannot measure."""
        from dbexp.servers.registry import flavor_of_spec

        why = self.why_not(flavor_of_spec(spec))
        if why:
            can = [n for n in self.parts if n not in self.skipped]
            raise DbexpError(f"chapter {self.chapter} cannot measure {spec!r}: {why}; it measures {choices(can)}")

    def of(self, flavor: Flavor) -> P:
        """This chapter's part for ``flavor`` (built once per flavor class and version)."""
        key = (type(flavor), flavor.version)
        if key not in self._built:
            _, part = self._lookup(type(flavor))
            if part is None:
                raise DbexpError(f"chapter {self.chapter} cannot measure {flavor.name} {flavor.version}: "
                                 f"{self.why_not(flavor)}")
            self._built[key] = part(flavor)
        return self._built[key]

    def part_for_name(self, flavor_name: str) -> type[P]:
        """The part class serving a flavor named in stored results (a ``flavor`` column), for
        analysis that reads data rather than a running server."""
        from dbexp.servers.registry import flavor_class

        name, part = self._lookup(flavor_class(flavor_name))
        if part is None:
            raise DbexpError(f"chapter {self.chapter} has no part for {flavor_name}: {self.why_not(flavor_class(flavor_name))}")
        return part

    def skipped_note(self) -> str:
        """A sentence naming the flavors this chapter leaves out and why ('' if none)."""
        if not self.skipped:
            return ""
        return ("Not measured here: " + "; ".join(f"{name} ({why})" for name, why in self.skipped.items()) + ".")
