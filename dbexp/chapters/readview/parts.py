"""Which engine part serves a server: InnoDB's for MySQL, its MariaDB variant, PostgreSQL's.

Every part answers the same questions (see innodb.Views): ``symbol`` (the function a probe run times,
None where none is exported), ``registry_shrinks``, ``bytes_per_holder``, ``family`` and ``panel``
(the analysis' labels), ``idle_sessions`` and ``double_latch`` (the extra runs it gets),
``settings(holders)``, ``prepare``/``rollback_prepared``/``prepared_xids``/``one_prepared_per_session``
(prepared transactions), ``latch_counters`` (None where nothing is counted) and ``view_latch`` (the
counted mutex the double latch is read from).
"""

from __future__ import annotations

from functools import cache

from dbexp.chapters.readview import innodb, mariadb, postgres
from dbexp.servers.engines import Engines
from dbexp.servers.registry import flavor_class, flavor_of_spec

PARTS = Engines("readview", {"mysql": innodb.Views, "mariadb": mariadb.Views, "postgres": postgres.Snapshots})


def of_spec(spec: str):
    """The part for a spec such as 'mysql:8.0@offline'."""
    return PARTS.of(flavor_of_spec(spec))


@cache
def of_run(flavor: str, version: str):
    """The part for a stored run's flavor and version (its columns in the results)."""
    return PARTS.of(flavor_class(flavor)(version))
