"""The server's own counters: snapshots taken over SQL, turned into deltas over a window."""

from __future__ import annotations

from decimal import Decimal

# Counters worth a per-second series beside the workload's own (the full set is kept as deltas).
SERIES = {
    "mysql": ("Questions", "Com_select", "Com_commit", "Innodb_rows_read", "Innodb_rows_updated",
              "Innodb_buffer_pool_reads", "Innodb_data_written", "Innodb_os_log_written", "Threads_running",
              "trx_rseg_history_len"),
    "postgres": ("xact_commit", "tup_returned", "tup_fetched", "tup_updated", "blks_read", "blks_hit",
                 "numbackends", "wal_bytes", "buffers_alloc"),
}
SERIES["mariadb"] = SERIES["mysql"]
GAUGES = {"Threads_running", "trx_rseg_history_len", "numbackends", "Threads_connected"}


def _number(value) -> float | None:
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


def _table(cur, sql: str, source: str, key: str | None = None) -> dict[tuple[str, str], float]:
    cur.execute(sql)
    cols = [d[0] for d in cur.description]
    out: dict[tuple[str, str], float] = {}
    for row in cur.fetchall():
        if key is None:  # name/value rows
            v = _number(row[1])
            if v is not None:
                out[(source, str(row[0]))] = v
            continue
        for col, value in zip(cols, row):
            v = _number(value)
            if v is not None and col != key:
                out[(source, col)] = v
    return out


def snapshot(flavor: str, conn, database: str = "sbtest") -> dict[tuple[str, str], float]:
    """{(source, name): value} for every numeric counter the server exposes cheaply."""
    out: dict[tuple[str, str], float] = {}
    cur = conn.cursor()
    try:
        if flavor in ("mysql", "mariadb"):
            out.update(_table(cur, "SHOW GLOBAL STATUS", "status"))
            try:
                out.update(_table(cur, "SELECT name, count FROM information_schema.innodb_metrics "
                                       "WHERE status = 'enabled'", "innodb_metrics"))
            except Exception:
                pass
        else:
            cur.execute("SELECT * FROM pg_stat_database WHERE datname = %s", (database,))
            cols = [d[0] for d in cur.description]
            for row in cur.fetchall():
                for col, value in zip(cols, row):
                    v = _number(value)
                    if v is not None and col not in ("datid",):
                        out[("pg_stat_database", col)] = v
            for view in ("pg_stat_bgwriter", "pg_stat_wal", "pg_stat_checkpointer"):
                cur.execute("SELECT 1 FROM pg_views WHERE viewname = %s", (view,))
                if cur.fetchall():
                    out.update(_table(cur, f"SELECT * FROM {view}", view, key=""))
    finally:
        cur.close()
    return out


def deltas(before: dict, after: dict) -> list[dict]:
    """Rows (source, name, before, after, delta) for counters present at both ends."""
    rows = []
    for key, end in after.items():
        if key in before:
            rows.append({"source": key[0], "name": key[1], "before": before[key], "after": end,
                         "delta": end - before[key]})
    return rows


def series_values(flavor: str, snap: dict) -> dict[str, float]:
    wanted = SERIES.get(flavor, ())
    return {name: value for (source, name), value in snap.items() if name in wanted}
