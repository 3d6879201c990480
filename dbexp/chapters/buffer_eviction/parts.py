"""Which engine part serves which server, and every variant the chapter runs, in the page's order."""

from __future__ import annotations

from dbexp.servers.engines import Engines

from . import innodb, mariadb, postgres
from .pool import BufferPart

PARTS: Engines[BufferPart] = Engines("buffer_eviction", {"mysql": innodb.BufferPool,
                                                         "mariadb": mariadb.MariaDBBufferPool,
                                                         "postgres": postgres.SharedBuffers})
ENGINES = (innodb.BufferPool, postgres.SharedBuffers)  # the page's order: InnoDB's flavors, then PostgreSQL
VARIANTS = tuple(v for part in ENGINES for v in part.variants)
VARIANT_NAMES = tuple(v.name for v in VARIANTS)
MORE = ("old_blocks_pct=5", "UPDATE scan", "index scan, then pg_prewarm")  # by default on all_variants_on only
CORE = tuple(n for n in VARIANT_NAMES if n not in MORE)


def part_of(flavor_name: str) -> type[BufferPart]:
    """The part class serving a flavor named in stored results (its engine, page size, page cache)."""
    return PARTS.part_for_name(flavor_name)
