"""Where results are stored: a DuckDB file of runs, their measurements, counters and series.

A run is inserted as ``running`` before it starts and becomes ``ok`` in one
transaction together with its measurements; an exception marks it ``failed``
with the error and drops anything it measured. A process killed mid-run leaves
``running``, which :meth:`Store.mark_interrupted` turns into ``failed`` the next
time a sweep opens the store. A run the lab's noise rule rejects (dbexp.metrics.noise)
becomes ``noisy``: stored like an ok run, measurements and all, with the reason in
``error``, and measured again. An ok run lists in ``measured_again`` (JSON) the earlier
tries of its point and repeat that the sweep measured again (``[]`` when none; NULL for
runs stored before the rule). Readers only ever see ``ok`` runs unless they ask.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pandas as pd

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY,
    sweep_id VARCHAR,
    experiment VARCHAR NOT NULL,
    point_key VARCHAR NOT NULL,
    point JSON,
    repeat INTEGER NOT NULL,
    status VARCHAR NOT NULL,
    error VARCHAR,
    pid INTEGER,
    started_at TIMESTAMPTZ,
    ended_at TIMESTAMPTZ,
    flavor VARCHAR,
    spec VARCHAR,
    version VARCHAR,
    version_full VARCHAR,
    source VARCHAR,
    image VARCHAR,
    image_id VARCHAR,
    image_digest VARCHAR,
    artifact VARCHAR,
    artifact_sha256 VARCHAR,
    server_kind VARCHAR,
    server_cpus VARCHAR,
    server_cpus_observed VARCHAR,
    client_cpus VARCHAR,
    memory_limit VARCHAR,
    config_requested JSON,
    settings_effective JSON,
    workload JSON,
    command VARCHAR,
    host JSON,
    measured_again JSON
);
CREATE TABLE IF NOT EXISTS measurements (
    run_id VARCHAR, name VARCHAR, value DOUBLE, unit VARCHAR
);
CREATE TABLE IF NOT EXISTS counters (
    run_id VARCHAR, source VARCHAR, name VARCHAR, before DOUBLE, after DOUBLE, delta DOUBLE
);
CREATE TABLE IF NOT EXISTS series (
    run_id VARCHAR, t DOUBLE, source VARCHAR, name VARCHAR, value DOUBLE
);
"""


def default_path() -> Path:
    from dbexp.paths import results_db
    return results_db()


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Store:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = duckdb.connect(str(self.path))
        self.db.execute(SCHEMA)
        # stores made before the retry rule: the column is added, NULL for their runs
        self.db.execute("ALTER TABLE runs ADD COLUMN IF NOT EXISTS measured_again JSON")
        # stores made before offline builds recorded their artifact (results.provenance.image_provenance)
        for column in ("artifact", "artifact_sha256"):
            self.db.execute(f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {column} VARCHAR")
        # stores made before runs recorded their server start, their neighbours and their checked state
        for column, kind in (("instance", "INTEGER"), ("server_instance", "VARCHAR"), ("active_servers", "INTEGER"),
                             ("precondition", "JSON"), ("precondition_ok", "BOOLEAN")):
            self.db.execute(f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {column} {kind}")

    def close(self) -> None:
        self.db.close()

    # --- writing -------------------------------------------------------------------------
    def begin_run(self, experiment: str, point_key: str, point: dict, repeat: int,
                  sweep_id: str | None = None) -> str:
        run_id = uuid.uuid4().hex[:16]
        self.db.execute(
            "INSERT INTO runs (run_id, sweep_id, experiment, point_key, point, repeat, status, pid, started_at) "
            "VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)",
            [run_id, sweep_id, experiment, point_key, json.dumps(point, default=str), repeat, os.getpid(), _now()])
        return run_id

    def finish_run(self, run_id: str, provenance: dict, measurements: dict[str, tuple[float | None, str]],
                   counters: list[dict] = (), series: list[tuple] = (), status: str = "ok",
                   error: str | None = None, measured_again: list[dict] | None = None) -> None:
        """Mark a run ok (or ``noisy``, with ``error`` saying why) together with everything it
        measured, atomically; ``measured_again``: the earlier tries of its point and repeat."""
        if status not in ("ok", "noisy"):
            raise ValueError(f"a finished run is ok or noisy, not {status!r}")
        extra = dict(provenance, error=None if error is None else error[:2000])
        if measured_again is not None:
            extra["measured_again"] = list(measured_again)
        cols = [k for k in extra]
        values = [json.dumps(v, default=str) if isinstance(v, (dict, list)) else v for v in extra.values()]
        self.db.execute("BEGIN TRANSACTION")
        try:
            self.db.execute(
                f"UPDATE runs SET {', '.join(f'{c} = ?' for c in cols)}, status = ?, ended_at = ? "
                "WHERE run_id = ?", values + [status, _now(), run_id])
            rows = [(run_id, k, None if v is None else float(v), unit) for k, (v, unit) in measurements.items()]
            if rows:
                self.db.executemany("INSERT INTO measurements VALUES (?, ?, ?, ?)", rows)
            if counters:
                df = pd.DataFrame(list(counters)).assign(run_id=run_id)
                self._insert_df("counters", df[["run_id", "source", "name", "before", "after", "delta"]])
            if series:
                df = pd.DataFrame(list(series), columns=["t", "source", "name", "value"]).assign(run_id=run_id)
                self._insert_df("series", df[["run_id", "t", "source", "name", "value"]])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def supersede(self, run_id: str) -> int:
        """Older ok runs of the same experiment, point and repeat as ``run_id`` become 'superseded'
        (kept for the record, never read as results)."""
        key = self.db.execute("SELECT experiment, point_key, repeat FROM runs WHERE run_id = ?",
                              [run_id]).fetchone()
        rows = self.db.execute(
            "UPDATE runs SET status = 'superseded' WHERE status = 'ok' AND run_id <> ? AND experiment = ? "
            "AND point_key = ? AND repeat = ? RETURNING run_id", [run_id, *key]).fetchall()
        return len(rows)

    def discard(self, run_ids, why: str) -> int:
        """Ok runs that must not be read as results for a reason found after they ran (other work on
        the machine during them, say) become 'discarded', with the reason; their data are kept, and a
        resumed sweep measures those points again."""
        ids = list(run_ids)
        if not ids:
            return 0
        rows = self.db.execute(
            f"UPDATE runs SET status = 'discarded', error = ? WHERE status = 'ok' AND run_id IN "
            f"({', '.join('?' for _ in ids)}) RETURNING run_id", [why[:2000], *ids]).fetchall()
        return len(rows)

    def _insert_df(self, table: str, df: pd.DataFrame) -> None:
        self.db.register("_incoming", df)
        try:
            self.db.execute(f"INSERT INTO {table} SELECT * FROM _incoming")
        finally:
            self.db.unregister("_incoming")

    def fail_run(self, run_id: str, error: str, provenance: dict | None = None) -> None:
        """Keep a failed run, apart from the valid ones, with what is known of it."""
        self.db.execute("DELETE FROM measurements WHERE run_id = ?", [run_id])
        self.db.execute("DELETE FROM counters WHERE run_id = ?", [run_id])
        self.db.execute("DELETE FROM series WHERE run_id = ?", [run_id])
        sets, values = ["status = 'failed'", "error = ?", "ended_at = ?"], [error[:2000], _now()]
        for k, v in (provenance or {}).items():
            sets.append(f"{k} = ?")
            values.append(json.dumps(v, default=str) if isinstance(v, (dict, list)) else v)
        self.db.execute(f"UPDATE runs SET {', '.join(sets)} WHERE run_id = ?", values + [run_id])

    def mark_interrupted(self) -> int:
        """Runs left 'running' by a process that no longer exists become failed."""
        stale = [r[0] for r in self.db.execute(
            "SELECT run_id, pid FROM runs WHERE status = 'running'").fetchall()
                 if not _alive(r[1])]
        for run_id in stale:
            self.fail_run(run_id, "interrupted: the process running it ended before it finished")
        return len(stale)

    # --- reading -------------------------------------------------------------------------
    def done_keys(self, experiment: str) -> set[tuple[str, int]]:
        return set(self.done_sweeps(experiment))

    def done_sweeps(self, experiment: str) -> dict[tuple[str, int], str]:
        """Per (point key, repeat) with an ok run: the sweep of its newest ok run (the one a sweep reads)."""
        rows = self.db.execute("SELECT point_key, repeat, sweep_id FROM runs WHERE experiment = ? AND status = 'ok' "
                               "ORDER BY ended_at", [experiment]).fetchall()
        return {(k, r): sweep for k, r, sweep in rows}

    def runs(self, experiment: str | None = None, status: str | None = "ok",
             sweep_id: str | None = None) -> pd.DataFrame:
        where, args = [], []
        for col, val in (("experiment", experiment), ("status", status), ("sweep_id", sweep_id)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        sql = "SELECT * FROM runs" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY started_at"
        return self.db.execute(sql, args).df()

    def measured_again(self, run_ids) -> pd.DataFrame:
        """The earlier tries (failed or noisy runs) that the given runs were measured again after, as
        rows of the runs table with their server CPUs' steal (``steal_server_pct``,
        ``steal_client_pct``) where they recorded it."""
        ids = list(run_ids)
        rows = self.db.execute("SELECT measured_again FROM runs WHERE run_id IN (SELECT UNNEST(?)) "
                               "AND measured_again IS NOT NULL", [ids]).fetchall() if ids else []
        earlier = sorted({e["run_id"] for (text,) in rows for e in json.loads(text)})
        runs = self.db.execute("SELECT * FROM runs WHERE run_id IN (SELECT UNNEST(?)) ORDER BY started_at",
                               [earlier]).df() if earlier else self.db.execute("SELECT * FROM runs LIMIT 0").df()
        steal = self.db.execute(
            "SELECT run_id, name, value FROM measurements WHERE run_id IN (SELECT UNNEST(?)) "
            "AND name IN ('steal_server_pct', 'steal_client_pct')", [earlier]).df()
        for name in ("steal_server_pct", "steal_client_pct"):
            values = steal[steal["name"] == name].set_index("run_id")["value"]
            runs[name] = runs["run_id"].map(values).astype(float)
        return runs

    def table(self, name: str, run_ids) -> pd.DataFrame:
        ids = list(run_ids)
        if not ids:
            return self.db.execute(f"SELECT * FROM {name} LIMIT 0").df()
        return self.db.execute(f"SELECT * FROM {name} WHERE run_id IN (SELECT UNNEST(?))", [ids]).df()

    def measurements_wide(self, runs: pd.DataFrame) -> pd.DataFrame:
        """One row per run: its provenance columns beside one column per measurement."""
        return with_measurements(runs, self.table("measurements", runs["run_id"]))


def with_measurements(runs: pd.DataFrame, measurements: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with one column per measurement name (the long measurements table pivoted)."""
    # dropna=False: a measurement missing in every run (say, a timeout everywhere) stays a column of NaN
    wide = measurements.pivot_table(index="run_id", columns="name", values="value", aggfunc="first", dropna=False)
    return runs.merge(wide.reset_index(), on="run_id", how="left")


def _alive(pid) -> bool:
    if pid is None:
        return False
    try:
        os.kill(int(pid), 0)
        return True
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
