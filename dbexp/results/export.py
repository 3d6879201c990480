"""The published results: Parquet files under data/ that the book renders from without servers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dbexp.results.store import Store

TABLES = ("runs", "measurements", "counters", "series")


def data_dir(root: str | Path | None = None) -> Path:
    from dbexp.paths import data_dir as default
    return Path(root) / "data" if root else default()


MEASURED_AGAIN = "measured_again"  # data/<experiment>/measured_again.parquet: the tries measured again


def export(store: Store, experiment: str, run_ids, root: str | Path | None = None,
           tables=TABLES) -> Path:
    """Write the given ok runs of an experiment to data/<experiment>/<table>.parquet, and the
    failed or noisy tries they were measured again after (their status, cause and steal) to
    data/<experiment>/measured_again.parquet, apart: every analysis reads runs.parquet, ok runs only."""
    out = data_dir(root) / experiment
    out.mkdir(parents=True, exist_ok=True)
    ids = list(run_ids)
    runs = store.runs(experiment)
    runs = runs[runs["run_id"].isin(ids)]
    runs.to_parquet(out / "runs.parquet", index=False)
    store.measured_again(ids).to_parquet(out / f"{MEASURED_AGAIN}.parquet", index=False)
    for table in tables:
        if table != "runs":
            df = store.table(table, ids)
            if table == "counters":
                df = df[df["delta"] != 0]  # unchanged counters say nothing and bloat the repository
            df.to_parquet(out / f"{table}.parquet", index=False)
    return out


def load(experiment: str, root: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """The published tables of an experiment, as exported."""
    folder = data_dir(root) / experiment
    missing = [t for t in TABLES if not (folder / f"{t}.parquet").exists()]
    if missing:
        from dbexp.errors import DbexpError
        raise DbexpError(f"no published results for {experiment!r} in {folder} (missing "
                         f"{', '.join(missing)}): run the chapter with run=True and publish=True first")
    return {t: _read(folder / f"{t}.parquet") for t in TABLES}


def _read(path: Path) -> pd.DataFrame:
    df = pd.read_parquet(path)
    strings = [c for c, t in df.dtypes.items() if isinstance(t, pd.StringDtype)]
    return df.astype({c: object for c in strings}) if strings else df


def load_measured_again(experiment: str, root: str | Path | None = None) -> pd.DataFrame:
    """The published tries that were measured again (rows of the runs table with status, error and
    steal), or an empty table for results published before the retry rule."""
    path = data_dir(root) / experiment / f"{MEASURED_AGAIN}.parquet"
    return pd.read_parquet(path) if path.exists() else pd.DataFrame(columns=["run_id", "status", "error"])


def published_summary(root: str | Path | None = None) -> pd.DataFrame:
    """One row per published experiment: how many runs, which servers, when and on what host."""
    import json

    from dbexp.catalog.versions import short as short_version
    from dbexp.results.provenance import hardware_label

    rows = []
    folder = data_dir(root)
    for runs_file in sorted(folder.glob("*/runs.parquet")):
        runs = pd.read_parquet(runs_file)
        if runs.empty:
            continue
        hosts = {hardware_label(json.loads(h) if isinstance(h, str) else h) for h in runs["host"]}
        versions = sorted({f"{f} {short_version(v)}" for f, v in zip(runs["flavor"], runs["version"])})
        rows.append({"experiment": runs_file.parent.name, "runs": len(runs),
                     "servers": ", ".join(versions), "hardware": "; ".join(sorted(hosts)),
                     "measured": f"{pd.to_datetime(runs['started_at']).min():%Y-%m-%d}",
                     "sysbench": "; ".join(sorted({(json.loads(h) if isinstance(h, str) else h).get('sysbench')
                                                  or '?' for h in runs["host"]}))})
    return pd.DataFrame(rows)
