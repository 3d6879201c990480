"""What every chapter does with its results: run the sweep (or load the published copy),
then hand back tidy frames with provenance columns expanded."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from dbexp.experiments.sweep import Point, Sweep
from dbexp.results.export import export as export_runs
from dbexp.results.export import load as load_published
from dbexp.results.store import Store, with_measurements

SCALES = ("smoke", "default", "full")


@dataclass
class Results:
    experiment: str
    wide: pd.DataFrame  # one row per run: provenance + labels + measurements
    series: pd.DataFrame
    counters: pd.DataFrame
    runs: pd.DataFrame
    source: str  # "this run" or "published data/"

    @property
    def host(self) -> dict:
        return self.wide["host"].iloc[0] if len(self.wide) else {}


def check_scale(scale: str) -> str:
    from dbexp.errors import DbexpError, choices
    if scale not in SCALES:
        raise DbexpError(f"bad scale {scale!r}: valid scales are {choices(SCALES)}")
    return scale


def _json(value):
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def tidy(runs: pd.DataFrame, measurements: pd.DataFrame) -> pd.DataFrame:
    runs = runs.copy()
    for col in ("point", "workload", "host", "config_requested"):
        if col in runs:
            runs[col] = runs[col].map(_json)
    labels = pd.DataFrame([p.get("labels", {}) for p in runs["point"]], index=runs.index)
    runs = pd.concat([runs, labels], axis=1)
    runs["script"] = [(w or {}).get("script") for w in runs["workload"]]
    runs["threads"] = [(w or {}).get("threads") for w in runs["workload"]]
    runs["series_name"] = runs["flavor"] + " " + runs["version"].str.split("-").str[0]
    return with_measurements(runs, measurements)


def collect(experiment: str, points: list[Point], repeats: int, *, run: bool, publish: bool = False,
            force: bool = False, warmup_s: float = 0.0, measure_fn=None, store: Store | None = None,
            root=None, order: str = "alternate") -> Results:
    """Run (resuming) and read back this chapter's runs, or load the published ones."""
    if run:
        kwargs = {"measure_fn": measure_fn} if measure_fn else {}
        sweep = Sweep(experiment, points, repeats, store=store, force=force, warmup_s=warmup_s, order=order,
                      **kwargs)
        ids = sweep.run()
        st = sweep.store
        runs = st.runs(experiment)
        runs = runs[runs["run_id"].isin(ids)]
        tables = {t: st.table(t, ids) for t in ("measurements", "series", "counters")}
        if publish:
            export_runs(st, experiment, ids, root)
        if store is None:
            st.close()  # release the file: DuckDB lets one process write it at a time
        source = "this run"
    else:
        published = load_published(experiment, root)
        runs = published["runs"]
        tables = published
        source = "published data/"
    return Results(experiment, tidy(runs, tables["measurements"]), tables["series"], tables["counters"],
                   runs, source)


OFFICIAL_ONLY = ("mysql:8.4", "mysql:9.5")  # versions no package registry ships


def servers_available(specs) -> tuple[list[str], dict[str, str]]:
    """Split specs into those some source can provide here and those it cannot (with the reason):
    chapters add MySQL 8.4 and 9.x where official images can be pulled and say so where not."""
    from dbexp.catalog import parse_spec
    from dbexp.errors import DbexpError
    from dbexp.images import resolve

    ok, missing = [], {}
    for spec in specs:
        try:
            resolve(parse_spec(spec))
            ok.append(spec)
        except DbexpError as exc:
            missing[spec] = str(exc)
    return ok, missing


def missing_official(res: Results) -> str:
    """A sentence naming the official-only versions absent from these results, or ''."""
    have = set(res.wide["version"].astype(str)) if len(res.wide) else set()
    absent = [s for s in OFFICIAL_ONLY if not any(v.startswith(s.split(":")[1]) for v in have)]
    if not absent:
        return ""
    return (f"{' and '.join(absent)} are missing from these results: no package registry ships them, and "
            "their official images could not be pulled where these results were measured.")


def add_official_only(servers: tuple, scale: str, run: bool, overrides: dict) -> tuple:
    """At default and full scale (unless servers were given), add MySQL 8.4 and 9.x wherever their
    official images can be pulled; missing_official() says so where they cannot."""
    if run and scale != "smoke" and overrides.get("servers") is None:
        extra, _ = servers_available(OFFICIAL_ONLY)
        return tuple(servers) + tuple(extra)
    return tuple(servers)
