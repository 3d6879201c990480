"""Small DB-API helpers every flavor uses: run a statement, read numeric rows as counters."""

from __future__ import annotations

from decimal import Decimal


def query(conn, sql: str, params=None) -> list[tuple]:
    """Run one statement; its rows (none for a statement without a result)."""
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
        return list(cur.fetchall()) if cur.description else []
    finally:
        cur.close()


def number(value) -> float | None:
    """A counter's value as a float, or None when it is not a number."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def name_value_rows(conn, sql: str, source: str, params=None) -> dict[tuple[str, str], float]:
    """Rows of (name, value), e.g. SHOW GLOBAL STATUS: {(source, name): value} for numeric values."""
    out: dict[tuple[str, str], float] = {}
    for row in query(conn, sql, params):
        v = number(row[1])
        if v is not None:
            out[(source, str(row[0]))] = v
    return out


def column_rows(conn, sql: str, source: str, params=None, skip=()) -> dict[tuple[str, str], float]:
    """A view's numeric columns, e.g. pg_stat_wal: {(source, column): value} (last row wins)."""
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
        cols = [d[0] for d in cur.description]
        out: dict[tuple[str, str], float] = {}
        for row in cur.fetchall():
            for col, value in zip(cols, row):
                v = number(value)
                if v is not None and col not in skip:
                    out[(source, col)] = v
        return out
    finally:
        cur.close()
