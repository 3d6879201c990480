"""One shape for every chapter: design the points, measure one point, analyse, state the claims.

A chapter subclasses :class:`Chapter` and writes only what is its own:

- ``Scale``: a frozen dataclass of its knobs, and ``scales``: one per name in SCALES;
- ``design(scale, cpus)``: the points, as :class:`Part` (points measured with a repeat count);
- ``measure(server, point, state)`` (and ``session(server)`` for state kept across points),
  unless the default sysbench measurement is what it needs;
- its analysis functions, and beside the chapter's module ``claims.py`` with ``claims(results)`` (a
  table with a verdict per claim) and ``findings.py`` with ``findings(results)`` (and ``readme_block``
  where it has one), found by convention.

Scales, overrides (as papermill passes them), running the sweeps, reading the results
back, publishing them to ``data/`` and README blocks are done here, once for all chapters.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dbexp.catalog import OFFICIAL_ONLY
from dbexp.catalog.versions import short as short_version
from dbexp.errors import DbexpError, choices, listed
from dbexp.experiments import verdicts
from dbexp.experiments.sweep import Experiment, Point, Sweep
from dbexp.metrics.noise import EPISODE_BUSY_PCT, STEAL_LIMIT_PCT
from dbexp.results.export import data_dir
from dbexp.results.export import export as export_runs
from dbexp.results.export import load as load_published
from dbexp.results.previous import keep as keep_previous
from dbexp.results.readme import write_block
from dbexp.results.store import Store, with_measurements
from dbexp.servers.config import ServerConfig
from dbexp.servers.registry import flavor_of_spec

from dbexp.experiments.scales import SCALES, check_scale  # noqa: F401  (the chapters' names for them)

CLAIMS_FILE = "claims"  # data/<chapter>/claims.parquet: the claims table by ledger id, written with the runs
SUMMARY_FILE = "summary"  # data/<chapter>/summary.parquet: the chapter's answer, verdict counts, machine, runs, minutes

# what every chapter notebook's parameters cell declares besides one override per Scale field
NOTEBOOK_SWITCHES = ("scale", "run", "publish", "force", "server_cpus", "client_cpus")


@dataclass(frozen=True)
class Cpus:
    server: str = "1"  # CPUs the server may use
    client: str = "0"  # CPUs the load generator (and the lab's sampler) may use


@dataclass(frozen=True)
class Part:
    """Points measured together with one repeat count (a chapter may have parts with different counts),
    its repeats spread over ``instances`` independently started servers (see Sweep.instances)."""

    points: list[Point]
    repeats: int
    instances: int = 1


@dataclass
class Results:
    experiment: str
    wide: pd.DataFrame  # one row per run: provenance + parameters + measurements
    series: pd.DataFrame
    counters: pd.DataFrame
    runs: pd.DataFrame
    source: str  # "this run" or "published data/"

    @property
    def host(self) -> dict:
        return self.wide["host"].iloc[0] if len(self.wide) else {}


def memo(res, key: str, compute):
    """A table derived from results ``res``, computed once per results object and handed out as a
    copy: analysis that several tables, claims and findings read (e.g. a per-second timeline of every
    run)."""
    cache = res.__dict__.setdefault("_memo", {})
    if key not in cache:
        cache[key] = compute()
    value = cache[key]
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return value.copy(deep=False)  # copy-on-write (pandas 3): a change to it copies, the memo stays
    return value.copy() if hasattr(value, "copy") else value


def _json(value):
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def tidy(runs: pd.DataFrame, measurements: pd.DataFrame) -> pd.DataFrame:
    """One row per run: provenance, the point's parameters as columns, one column per measurement."""
    runs = runs.copy()
    for col in ("point", "workload", "host", "config_requested"):
        if col in runs:
            runs[col] = runs[col].map(_json)
    # results stored before points carried typed parameters named them "labels"
    params = pd.DataFrame([p.get("params", p.get("labels")) or {} for p in runs["point"]], index=runs.index)
    # a chapter that names its own instances in its parameters (vector_isolation) keeps them
    runs = pd.concat([runs.drop(columns=[c for c in params if c in runs]), params], axis=1)
    runs["script"] = [(w or {}).get("script") for w in runs["workload"]]
    runs["threads"] = [(w or {}).get("threads") for w in runs["workload"]]
    runs["series_name"] = runs["flavor"] + " " + runs["version"].map(short_version)
    return with_measurements(runs, measurements)


def read_results(store: Store, experiment: str, ids: list[str]) -> Results:
    runs = store.runs(experiment)
    runs = runs[runs["run_id"].isin(ids)]
    tables = {t: store.table(t, ids) for t in ("measurements", "series", "counters")}
    return Results(experiment, tidy(runs, tables["measurements"]), tables["series"], tables["counters"], runs,
                   "this run")


def published(experiment: str, root=None) -> Results:
    tables = load_published(experiment, root)
    return Results(experiment, tidy(tables["runs"], tables["measurements"]), tables["series"],
                   tables["counters"], tables["runs"], "published data/")


def is_published(experiment: str, root=None) -> bool:
    """Whether data/ holds every table of ``experiment``'s published runs."""
    from dbexp.results.export import TABLES, data_dir

    folder = data_dir(root) / experiment
    return all((folder / f"{t}.parquet").exists() for t in TABLES)


def empty_results(experiment: str) -> Results:
    """Results with no run (a chapter rendered before its first publication)."""
    empty = pd.DataFrame()
    return Results(experiment, pd.DataFrame(columns=["series_name", "flavor", "version", "point_key", "sweep_id",
                                                     "started_at", "ended_at", "host"]),
                   empty, empty, empty, "no published results yet")


def _coerce(name: str, default, value):
    """An override as a notebook or papermill passes it: a list, a JSON string, or one value where
    the knob is a tuple ('postgres:17' or '[\"postgres:17\"]' for servers)."""
    if isinstance(default, tuple):
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                try:
                    value = json.loads(text)
                except ValueError:
                    raise DbexpError(f"bad value for {name}: {value!r} is not a JSON list") from None
            else:
                value = [v.strip() for v in text.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            value = [value]
        return tuple(value)
    if isinstance(default, (int, float)) and not isinstance(default, bool) and isinstance(value, str):
        try:
            return type(default)(value)
        except ValueError:
            raise DbexpError(f"bad value for {name}: {value!r} is not a number") from None
    return value


def check_names(given, valid, what: str) -> None:
    """Raise a one-line DbexpError naming the first of ``given`` not in ``valid`` and what is valid."""
    unknown = [g for g in given if g not in valid]
    if unknown:
        raise DbexpError(f"unknown {what} {unknown[0]!r}; valid are {choices(list(valid))}")


def check_whole(values, what: str, least: int = 1) -> None:
    """Raise a one-line DbexpError naming the first of ``values`` (one value or several) that is not a whole
    number of at least ``least``."""
    values = values if isinstance(values, (list, tuple)) else (values,)
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, int) or v < least]
    if bad:
        raise DbexpError(f"bad {what} {bad[0]!r}: expected a whole number, {least} or more")


def among_named(sc, overrides: dict, field: str) -> tuple[str, ...]:
    """The servers a part of a chapter measures besides its main servers (``field`` of the scale, e.g. the counted
    part's): as the scale lists them, or, where the caller named ``servers`` but not ``field``, those of them among
    the servers named (a run on one server measures that server alone)."""
    given = tuple(getattr(sc, field))
    if overrides.get("servers") is None or overrides.get(field) is not None:
        return given
    return tuple(s for s in given if s in tuple(sc.servers))


class Chapter(Experiment):
    """The protocol every chapter implements (see the module's docstring)."""

    Scale: type
    scales: dict[str, object]
    order = "abba"  # abba: repeats walk the points forward, then backward; grouped: a point's repeats together
    add_official = False  # at default and full scale, add MySQL 8.4 and 9.x where their images can be pulled
    knob_help: dict[str, str] = {}  # Scale field -> what an override sets, e.g. "the servers, e.g. [...]"
    engines = None  # a dbexp.servers.engines.Engines where the chapter has per-engine parts (and skips some)
    # True: rendering before anything was published gives empty results (the page then says so) instead of
    # an error, for a chapter built before its first publication
    empty_until_published = False

    # --- what a chapter writes -------------------------------------------------------------
    def design(self, sc, cpus: Cpus) -> list[Part]:
        raise NotImplementedError

    # claims, findings and the README block are found by convention in the chapter's folder: its
    # claims.py's claims(res), its findings.py's findings(res) and readme_block(res), imported when asked
    # for (the analysis they read may import the chapter's module: an import there would close a circle)
    def _own(self, module: str, function: str):
        """The chapter folder's ``module``.``function`` (e.g. claims.claims), or None where it has none."""
        package = type(self).__module__.rpartition(".")[0]
        if not package or importlib.util.find_spec(f"{package}.{module}") is None:
            return None
        return getattr(importlib.import_module(f"{package}.{module}"), function, None)

    def claims(self, res: Results) -> pd.DataFrame:
        """The claims table (verdicts.table): the chapter folder's claims.claims(res), computed once per results
        (the page's table, its findings and the since-last table all read it)."""
        own = self._own("claims", "claims")
        if own is None:
            raise NotImplementedError(f"chapter {self.name} has no claims.py with claims(res)")
        return memo(res, f"{self.name}.claims", lambda: own(res))

    def readme_block(self, res: Results) -> str | None:
        """Markdown for README.md's block named after the chapter, regenerated on publish: the chapter
        folder's findings.readme_block(res), or None where it has none."""
        own = self._own("findings", "readme_block")
        return None if own is None else own(res)

    def derived(self, res: Results) -> dict[str, pd.DataFrame]:
        """Tables computed from the runs that publishing writes beside them, data/<chapter>/<name>.parquet
        (the A/A controls of gtid and versions): the chapter folder's analysis.derived(res), or none."""
        own = self._own("analysis", "derived")
        return {} if own is None else own(res)

    def write_derived(self, root=None) -> list:
        """Write derived() of the published runs beside them (data/<chapter>/<table>.parquet), and their claims
        table, one row per ledger id (CLAIMS_FILE: id, claim, measured, witness, witness_ok, verdict), and its summary
        (SUMMARY_FILE: the answer, verdict counts, machine, runs and minutes); the paths written (none where the
        chapter is not published)."""
        if not is_published(self.name, root):
            return []
        res = published(self.name, root)
        out = []
        tables = {CLAIMS_FILE: verdicts.by_id(self.claims(res)), SUMMARY_FILE: self.summary(res), **self.derived(res)}
        for table, frame in tables.items():
            path = data_dir(root) / self.name / f"{table}.parquet"
            frame.to_parquet(path, index=False)
            out.append(path)
        return out

    def recompute_previous(self, root=None) -> Path | None:
        """Rewrite data/<chapter>/previous_claims.parquet from the publication before the current one, as git
        keeps it (data/<chapter>/ at the parent of the last commit that replaced its runs), with this code's
        claims rules: what moved then compares like with like, by ledger id, where a rule or a claim's words
        changed since. The path written, or None where git has no earlier publication."""
        from dbexp import process
        from dbexp.paths import project_root
        from dbexp.results.export import TABLES

        repo = Path(root) if root is not None else project_root()
        folder = f"data/{self.name}"
        last = process.run(["git", "-C", str(repo), "log", "-1", "--format=%H", "--", f"{folder}/runs.parquet"],
                           capture_output=True, text=True, check=True).stdout.strip()
        if not last:
            return None
        with tempfile.TemporaryDirectory(prefix="dbexp-previous-") as tmp:
            (Path(tmp) / folder).mkdir(parents=True)
            for table in TABLES:
                shown = process.run(["git", "-C", str(repo), "show", f"{last}^:{folder}/{table}.parquet"],
                                    capture_output=True)
                if shown.returncode != 0:  # no publication before that commit
                    return None
                (Path(tmp) / folder / f"{table}.parquet").write_bytes(shown.stdout)
            before = published(self.name, tmp)
            return keep_previous(self.name, self.claims(before), before.runs["ended_at"].max(),
                                 cpu_models(before.runs), root)

    def headline(self, res: Results) -> str:
        """The chapter's answer in one or two sentences with its headline numbers and their 95% intervals (Markdown),
        from its analysis: the chapter folder's findings.headline(res) ('' where it has none)."""
        own = self._own("findings", "headline")
        return "" if own is None else own(res)

    def summary(self, res: Results) -> pd.DataFrame:
        """One row: what the page's answer, the front page and the README say of these results, from one place:
        the headline, the verdicts counted by category, the machine, when, the runs and the minutes measuring."""
        from dbexp.results.provenance import hardware_label

        w = res.wide
        minutes, sweeps = measuring_time(w)
        return pd.DataFrame([{
            "chapter": self.name, "headline": self.headline(res), "verdicts": verdicts.counts(self.claims(res)),
            "hardware": " and ".join(dict.fromkeys(hardware_label(_json(h)) for h in w["host"] if _json(h)))
            if len(w) else "", "cpu": cpu_models(res.runs) if len(res.runs) else "",
            "measured_until": str(pd.to_datetime(w["ended_at"]).max())[:16] if len(w) else "",
            "runs": len(w), "minutes": round(minutes, 1), "sweeps": sweeps}])

    def findings(self, res: Results) -> str:
        """The page's summary: three to five findings with their numbers (Markdown), from the analysis:
        the chapter folder's findings.findings(res) ('' where it has none)."""
        own = self._own("findings", "findings")
        return "" if own is None else own(res)

    def notes(self, res: Results) -> list[str]:
        """The chapter's own run notes (e.g. probes left out), after the lab's."""
        return []

    def adjust(self, sc, scale: str, cpus: Cpus, overrides: dict):
        """A last change to the scale once the CPUs are known (default: none)."""
        return sc

    # --- done once for all chapters -----------------------------------------------------------
    @staticmethod
    def server_config(spec: str, cpuset: str | None, settings: dict[str, str] | None = None,
                      comparable: bool = True) -> ServerConfig:
        """A server as chapters start it: the flavor's comparable baseline (durability, logging,
        instrumentation; the same for every version compared), then the chapter's own settings,
        which win where a chapter studies one of them. ``comparable=False``: the chapter's settings
        alone (a server at its version's own defaults, or settings that already hold the baseline)."""
        base = flavor_of_spec(spec).comparable_settings() if comparable else {}
        return ServerConfig(spec, cpuset, settings={**base, **(settings or {})})

    def scale(self, scale: str, **overrides):
        """The named scale with the overrides that are not None applied."""
        base = self.scales[check_scale(scale)]
        fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
        given = {k: v for k, v in overrides.items() if v is not None}
        unknown = sorted(set(given) - set(fields))
        if unknown:
            raise DbexpError(f"unknown parameter {unknown[0]!r} for chapter {self.name}; "
                             f"valid are {choices(sorted(fields))}")
        return dataclasses.replace(base, **{k: _coerce(k, fields[k], v) for k, v in given.items()})

    def run(self, scale: str = "smoke", *, run: bool = True, publish: bool = False, force: bool = False,
            server_cpus: str = "1", client_cpus: str = "0", store: Store | None = None, root=None,
            **overrides) -> Results:
        """Measure (resuming what the store has) and read back this chapter's runs, or, with
        ``run=False``, load the published ones from data/."""
        sc = self.scale(scale, **overrides)
        if not run:
            if self.empty_until_published and not is_published(self.name, root):
                return empty_results(self.name)
            return published(self.name, root)
        cpus = Cpus(str(server_cpus), str(client_cpus))
        if self.add_official and scale != "smoke" and overrides.get("servers") is None:
            sc = dataclasses.replace(sc, servers=tuple(sc.servers) + tuple(servers_available(OFFICIAL_ONLY)[0]))
        sc = self.adjust(sc, scale, cpus, overrides)
        if self.engines is not None:
            for spec in getattr(sc, "servers", ()):
                self.engines.check(spec)
        st = store or Store()
        try:
            ids: list[str] = []
            for part in self.design(sc, cpus):
                if part.points:
                    ids += Sweep(self, part.points, part.repeats, store=st, force=force, instances=part.instances,
                                 warmup_s=getattr(sc, "warmup_s", 0.0), order=self.order,
                                 steal_limit_pct=None if scale == "smoke" else STEAL_LIMIT_PCT).run()
            res = read_results(st, self.name, ids)
            if publish:
                if is_published(self.name, root):  # what the page said before: kept for "what moved"
                    before = published(self.name, root)
                    keep_previous(self.name, self.claims(before), before.runs["ended_at"].max(),
                                  cpu_models(before.runs), root)
                export_runs(st, self.name, ids, root)
                self.write_derived(root)
                block = self.readme_block(res)
                if block is not None:
                    write_block(self.name, block)
        finally:
            if store is None:
                st.close()  # release the file: DuckDB lets one process write it at a time
        return res

    def run_from(self, namespace: dict) -> Results:
        """:meth:`run` with a notebook's parameters: the switches, the CPU sets and one override per
        field of ``Scale``, read by name from ``namespace`` (the notebook's ``globals()``), as the
        parameters cell that dbexp.book.parameters writes declares them."""
        given = {n: namespace[n] for n in NOTEBOOK_SWITCHES if n in namespace}
        knobs = {f.name: namespace.get(f.name) for f in dataclasses.fields(self.Scale)}
        return self.run(given.pop("scale", "smoke"), **given, **knobs)


def servers_available(specs) -> tuple[list[str], dict[str, str]]:
    """Split specs into those some source can provide here and those it cannot (with the reason)."""
    from dbexp.catalog import parse_spec
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


def left_out_note(left_out: dict[str, str], res: Results) -> str:
    """Which servers a scale leaves out (``left_out``: spec -> why) these results lack, as sentences, or ''."""
    ran = set(res.wide["spec"]) if len(res.wide) and "spec" in res.wide else set()
    gone: dict[str, list[str]] = {}  # why -> the specs left out for it
    for spec, why in left_out.items():
        if spec not in ran:
            gone.setdefault(why, []).append(spec.split("@")[0])
    return " ".join(f"{listed(specs)} {'is' if len(specs) == 1 else 'are'} not measured at default scale: "
                    f"{why}." for why, specs in gone.items())


def measuring_time(wide: pd.DataFrame) -> tuple[float, int]:
    """Minutes spent measuring and the number of sweeps: each sweep's first start to its last end,
    summed (a resumed sweep measures only what was missing, hours later maybe: the gap between them
    is not measuring time)."""
    if wide.empty:
        return 0.0, 0
    spans = wide.groupby("sweep_id").agg(first=("started_at", "min"), last=("ended_at", "max"))
    minutes = (pd.to_datetime(spans["last"]) - pd.to_datetime(spans["first"])).dt.total_seconds().sum() / 60
    return float(minutes), len(spans)


def cpu_models(runs: pd.DataFrame) -> str:
    """The CPU models the runs' hosts report (their provenance), joined."""
    models = dict.fromkeys((_json(h) or {}).get("cpu_model", "?") for h in runs.get("host", pd.Series(dtype=object)))
    return " and ".join(m for m in models if m) or "?"


def run_notes(res: Results) -> str:
    """Sentences on what could bend these runs, from the runs themselves: the CPU steal the VM
    suffered, the runs measured again under the noise and retry rule (and why), datasets whose
    settle step timed out, and sysbench errors a chapter tolerated."""
    w = res.wide
    if w.empty:
        return ""
    out = []
    if "steal_client_pct" in w and w["steal_client_pct"].notna().any():
        c = w["steal_client_pct"]
        s = w["steal_server_pct"] if "steal_server_pct" in w else pd.Series(float("nan"), index=w.index)
        where = (f"median {s.median():.2f}% of the server's CPUs and {c.median():.2f}% of the client's"
                 if s.notna().any() else f"median {c.median():.2f}% of the client's CPUs")
        worst = w.loc[s.idxmax()] if s.notna().any() else w.loc[c.idxmax()]
        missing = int(c.isna().sum())
        out.append(f"CPU steal (time the hypervisor ran something else on this VM's CPUs) was recorded for "
                   f"{int(c.notna().sum())} of {len(w)} runs: {where}; the worst run lost "
                   f"{max(s.max(), c.max()):.2f}% ({worst['series_name']})."
                   + (f" The other {missing} were measured before the lab recorded it there." if missing else ""))
    else:
        out.append("CPU steal was not recorded for these runs (they were measured before the lab recorded it).")
    out.append(_measured_again_note(w))
    out.append(_conditions_note(w))
    if "cs_from_perf" in w and (w["cs_from_perf"] == 0).any():
        edge = w["cs_from_perf"] == 0
        shared = edge & (w["servers_at_once"] > 1) if "servers_at_once" in w else edge & False
        if shared.any():
            n = int(shared.sum())
            out.append(f"{n} run{'s' if n != 1 else ''} shared the server's CPUs with other servers measured at "
                       "once, so their context switches are the server threads' own counters at the window's edges "
                       "(perf on those CPUs would count the neighbours'), which miss the switches of a thread that "
                       "exits inside the window.")
        if (edge & ~shared).any():
            n = int((edge & ~shared).sum())
            out.append(f"{n} run{'s' if n != 1 else ''} counted context switches from the server threads' own "
                       "counters at the window's edges instead of perf on the server's CPUs (unpinned, or perf could "
                       "not be used): those miss threads that exit inside the window, so their cs/o is not "
                       "comparable.")
    if "settle_timed_out" in w and (w["settle_timed_out"] > 0).any():
        n = int((w["settle_timed_out"] > 0).sum())
        out.append(f"{n} run{'s' if n != 1 else ''} used a dataset whose settle step timed out "
                   "(background work from loading may have overlapped them).")
    if "errors" in w and (w["errors"] > 0).any():
        out.append(f"sysbench reported {int(w['errors'].sum())} errors that this chapter tolerates, in "
                   f"{int((w['errors'] > 0).sum())} runs.")
    return " ".join(o for o in out if o)


def server_starts(w: pd.DataFrame) -> pd.Series:
    """Which server start each run ran on: ``server_instance`` without the restart time that runs
    stored before a container's id sufficed appended to it (a restart keeps the start)."""
    return w["server_instance"].astype(str).str.replace(r"^([0-9a-f]{10,})@\d+$", r"\1", regex=True)


def _conditions_note(w: pd.DataFrame) -> str:
    """What the runs say of the lab around them (issue 32's rules, for runs stored since): on how many
    independently started servers each server ran, how many servers carried load beside it, and its
    declared starting state, checked. '' for runs stored before the lab recorded these."""
    if "server_instance" not in w or w["server_instance"].isna().all():
        return ""
    known = w[w["server_instance"].notna()]
    per = server_starts(known).groupby(known["spec"]).nunique()
    span = f"{per.min()}" if per.min() == per.max() else f"{per.min()} to {per.max()}"
    out = [f"Each server ran on {span} independently started server{'s' if per.max() != 1 else ''} of its own "
           f"(a fresh container and data directory each; {len(known)} runs)"]
    active = known["active_servers"].dropna().astype(int) if "active_servers" in known else pd.Series(dtype=int)
    if len(active):
        alone = int((active == 1).sum())
        out.append("every run was the only server under load on the server CPU" if alone == len(active) else
                   f"{alone} of {len(active)} runs were the only server under load on the server CPU, the others "
                   f"shared it with up to {active.max() - 1} more")
    if "precondition_ok" in known and known["precondition_ok"].notna().any():
        checks = sorted({name for v in known.get("precondition", pd.Series(dtype=object)).dropna()
                         for name in (_json(v) or {})})
        ok = int(known["precondition_ok"].fillna(False).astype(bool).sum())
        out.append(f"{ok} of {len(known)} held their declared starting state, checked and stored with each run"
                   + (f" ({', '.join(checks)})" if checks else ""))
    return "; ".join(out) + "."


def _measured_again_note(w: pd.DataFrame) -> str:
    """How many runs were measured again under the noise and retry rule and why, from the ok runs'
    ``measured_again`` lists; for runs stored before the rule, how many of them it would have
    rejected."""
    from dbexp.experiments.sweep import RETRIES

    limits = w["steal_limit_pct"] if "steal_limit_pct" in w else pd.Series(dtype=float)
    if len(limits) and limits.isna().all():
        steal = w["steal_server_pct"] if "steal_server_pct" in w else pd.Series(dtype=float)
        over = int((steal > STEAL_LIMIT_PCT).sum())
        return (f"These runs were measured at smoke scale, which keeps every run whatever the steal (the lab's "
                f"noise rule, which measures again a run whose server CPUs lose more than {STEAL_LIMIT_PCT:g}% "
                f"of their time to steal, holds at the other scales): {over} of {len(w)} lost more than that.")
    lists = [_json(v) for v in w["measured_again"] if isinstance(v, (str, list))] if "measured_again" in w else []
    if not lists:
        steal = w["steal_server_pct"] if "steal_server_pct" in w else pd.Series(dtype=float)
        over = int((steal > STEAL_LIMIT_PCT).sum())
        if steal.notna().any():
            return (f"These runs were measured before the lab's noise rule (a run whose server CPUs lose more than "
                    f"{STEAL_LIMIT_PCT:g}% of their time to steal is measured again); "
                    + (f"{over} of them lost more than that." if over else "none of them lost more than that."))
        return ""
    tries = [t for tl in lists for t in (tl if isinstance(tl, list) else [])]
    if not tries:
        return (f"The noise and retry rule held with no run measured again: no run's server CPUs lost more than "
                f"{STEAL_LIMIT_PCT:g}% of their time to steal, and none failed for a cause the lab retries.")
    parts = []
    episodes = [t for t in tries if t.get("status") == "noisy" and str(t.get("why", "")).startswith("an episode")]
    noisy = [t for t in tries if t.get("status") == "noisy" and t not in episodes]
    if noisy:
        steal = sorted(t["steal_server_pct"] for t in noisy if t.get("steal_server_pct") is not None)
        seen = (f" ({steal[0]:.1f}%)" if len(steal) == 1 or steal[0] == steal[-1] else
                f" ({steal[0]:.1f} to {steal[-1]:.1f}%)") if steal else ""
        parts.append(f"{len(noisy)} lost more than {STEAL_LIMIT_PCT:g}% of the server's CPU time to steal{seen}")
    if episodes:
        parts.append(f"{len(episodes)} fell in an episode of the machine (a run that should saturate the "
                     f"server's CPUs kept them busy less than {EPISODE_BUSY_PCT:g}% of its window)")
    causes: dict[str, int] = {}
    for t in tries:
        if t.get("status") != "noisy":
            cause = str(t.get("why") or "?").split(" (")[0][:120]
            causes[cause] = causes.get(cause, 0) + 1
    parts += [f"{n} failed: {cause}" for cause, n in causes.items()]
    n = len(tries)
    return (f"{n} run{'s were' if n != 1 else ' was'} measured again under the lab's noise and retry rule (at most "
            f"{RETRIES} more tries per point; the earlier tries are kept, never read as results): "
            + "; ".join(parts) + ".")
