"""A sysbench table brought back to the rows it was prepared with, before a run that must start from them:
the rows an insert run added (ids beyond the table's size) deleted, the rows a delete run removed (sysbench's
oltp_delete deletes by id and inserts nothing) inserted again under their ids, with values of sysbench's
shapes (k a random id, c and pad groups of 11 digits joined by dashes, as sysbench's prepare writes them).

Plain SQL that MySQL, MariaDB and PostgreSQL all take: the connection's server runs it, autocommit."""

from __future__ import annotations

import random

from dbexp.servers.sql import query

BATCH = 1_000  # rows per INSERT


def _digits(rng: random.Random, groups: int) -> str:
    return "-".join(f"{rng.randrange(10 ** 11):011d}" for _ in range(groups))


def restore_rows(conn, rows: int, table: str = "sbtest1") -> dict[str, int]:
    """``table`` holding ids 1 to ``rows`` and no other (what sysbench's prepare left): the rows deleted and
    inserted to get there."""
    rows = int(rows)
    gone = query(conn, f"SELECT count(*) FROM {table} WHERE id > {rows}")[0][0]
    if gone:
        query(conn, f"DELETE FROM {table} WHERE id > {rows}")
    have = query(conn, f"SELECT count(*) FROM {table}")[0][0]
    missing: list[int] = []
    if have < rows:
        present = {int(r[0]) for r in query(conn, f"SELECT id FROM {table}")}
        missing = [i for i in range(1, rows + 1) if i not in present]
    for start in range(0, len(missing), BATCH):
        chunk = missing[start:start + BATCH]
        values, params = [], []
        for i in chunk:
            rng = random.Random(i)  # the same values for an id every time it comes back
            values.append("(%s, %s, %s, %s)")
            params += [i, rng.randint(1, rows), _digits(rng, 10), _digits(rng, 5)]
        query(conn, f"INSERT INTO {table} (id, k, c, pad) VALUES {', '.join(values)}", params)
    return {"deleted": int(gone), "inserted": len(missing)}
