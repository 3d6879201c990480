"""The flavors this chapter measures, each with its versions' part (every flavor: the measurement
itself is sysbench on the flavor's core, no engine-specific SQL)."""

from __future__ import annotations

from dbexp.chapters.calibration import mariadb, mysql, postgres
from dbexp.servers.engines import Engines

PARTS = Engines("calibration", {"mysql": mysql.MySQLVersions, "postgres": postgres.PostgresVersions,
                                "mariadb": mariadb.MariaDBVersions})
