"""Sweeps: points x repeats against real servers, resumable, with a progress bar.

A point is a server configuration plus the experiment's own typed parameters (a
frozen dataclass) and, for sysbench-driven experiments, a workload. The
experiment object says how a point is measured (:class:`Experiment`).

Points that share a *group* run against servers started together for that
group (one instance per distinct server in it), each with its dataset freshly
prepared; inside a group the order is repeat-major, so points compared with each
other are measured next to each other. The default order is ABBA: each repeat walks
the group's points forward, the next one backward (A B | B A | A B ...), so a pair
(A and B of one repeat) is adjacent in time and a drift that is linear in time
favours neither side over an even number of repeats. A repeat of a group already
recorded ``ok`` in full is skipped unless ``force`` is set; one with any run missing
is measured again in full, and a run measured again supersedes the older one.

Points of a group that share a ``together`` label are measured at once, in one window: their
workloads start at the same moment against their own servers (which share the server CPUs), and each
is stored as a run of its own. On a machine whose speed wanders, what such runs are compared on is
the same instant's machine; the walk's order (forward, then backward) is the order they are started in.

A run is ok only if it is clean: sysbench errors or reconnects fail it unless the
experiment names them in ``tolerates`` (then they are stored and shown).

A run is measured again, right away and in its place in the walk, when it fails with a
:class:`~dbexp.errors.RetryableError` (stored ``failed`` with the cause) or when it is noisy
(its server CPUs lost more than dbexp.metrics.noise.STEAL_LIMIT_PCT of their time to steal:
stored ``noisy``, measurements kept, never read as a result); a window of points measured
``together`` is measured again whole. A point gets at most :data:`RETRIES` more tries; the ok
run records the earlier ones (``measured_again``), and a point with no ok run after them fails
the sweep like any other failure. Any other error fails the run at once, as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import threading
import time
from contextlib import ExitStack, nullcontext
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from typing import Any

from tqdm import tqdm  # plain text: widgets would pull require.js from a CDN into the book

PROGRESS_FILE = "DBEXP_PROGRESS"  # env: a file each sweep's progress line is written to (dbexp book reads it)


class Progress(tqdm):
    """The sweep's progress bar, on stderr; where PROGRESS_FILE names a file (``dbexp book`` sets it for the
    kernel that executes a chapter, whose stderr it does not show), each line drawn is written there too,
    replacing the last, so that the command line can show it."""

    def display(self, msg=None, pos=None):
        shown = super().display(msg, pos)
        path = os.environ.get(PROGRESS_FILE)
        if path and not self.disable:
            tmp = f"{path}.tmp"
            with open(tmp, "w") as f:
                f.write(self.__str__() + "\n")
            os.replace(tmp, path)  # whole lines only, for a reader polling it
        return shown

from dbexp.errors import DbexpError, RetryableError, listed
from dbexp.experiments.measure import Measured, measure, measure_together
from dbexp.metrics.noise import STEAL_LIMIT_PCT, episode, noisy, wait_for_quiet
from dbexp.metrics.procfs import cpus_allowed
from dbexp.results.provenance import host_facts, image_provenance
from dbexp.results.store import Store
from dbexp.servers.config import ServerConfig, cpus_of
from dbexp.workloads import sysbench
from dbexp.workloads.sysbench import Workload

RUN_MODES = ("container", "bare")
ORDERS = ("abba", "alternate", "grouped", "shuffled")
UNCLEAN = ("errors", "reconnects")  # measurements that make a run failed unless tolerated
# Part of every point's key: raise it when how a run is measured changes, so that a resumed
# sweep measures again instead of mixing old and new methods.
METHOD_VERSION = 6  # 6: declared starting state checked, repeats spread over instances (5: perf counts the server CPUs' switches)
_MISSING = object()  # a (point, repeat) without an ok run, in pending()'s sweeps per unit
RETRIES = 2  # more tries a point (or a together window) gets after a retryable failure or a noisy run


@dataclass(frozen=True)
class Point:
    server: ServerConfig
    params: Any = None  # the experiment's parameters: a frozen dataclass (typed), or None
    workload: Workload | None = None  # a sysbench workload whose dataset the sweep prepares, or None
    group: str = ""  # points of one group share server instances and alternate
    server_mode: str = "container"  # container | bare (same binary, host process)
    sample: bool = True  # False: sysbench alone, as typed by hand
    block: str = ""  # order "shuffled": points of one block stay together, blocks in a random order per repeat
    together: str = ""  # points of a group with the same label are measured at once (one window)
    repeats: int = 0  # fewer repeats than the sweep's: only its first ``repeats`` (0: every repeat)

    def __post_init__(self):
        if self.server_mode not in RUN_MODES:
            raise DbexpError(f"bad server mode {self.server_mode!r}: valid are container or bare")
        if self.params is not None and not is_dataclass(self.params):
            raise DbexpError(f"point parameters must be a dataclass, not {type(self.params).__name__}")

    def param_dict(self) -> dict:
        return asdict(self.params) if self.params is not None else {}

    def describe(self) -> dict:
        out = {"server": {"spec": self.server.spec, "cpuset": self.server.cpuset, "memory": self.server.memory,
                          "settings": self.server.settings, "source": self.server.source,
                          "mode": self.server_mode},
               "workload": self.workload.params() if self.workload else None, "params": self.param_dict(),
               "sample": self.sample}
        if self.together:
            out["together"] = self.together
        return out

    def what(self) -> str:
        """A short label for progress lines and errors."""
        return " ".join(f"{k}={v}" for k, v in self.param_dict().items()) or (
            self.workload.script if self.workload else "")

    def key(self, experiment: str) -> str:
        blob = json.dumps([experiment, METHOD_VERSION, self.describe()], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    @property
    def group_name(self) -> str:
        """The group it runs in: its own, else one per server spec."""
        return self.group or self.server.spec

    def server_key(self) -> tuple:
        return (self.server.key(), self.server_mode)


class Experiment:
    """How the points of one experiment are measured; chapters subclass it (see chapter.py).

    The default measures a point's sysbench workload inside a sampling window."""

    name = "bench"
    tolerates: tuple[str, ...] = ()  # measurements ("errors", "reconnects") allowed to be non-zero
    # what a run's own precondition_ok measurement checks, as the stored precondition names it
    observed_check = "the run's own check of its state"

    def __init__(self, name: str | None = None):
        if name:
            self.name = name

    def session(self, server):
        """A context manager entered once per server instance of a group; what it yields is passed
        to :meth:`measure` for every point on that server (state kept across points, e.g. held
        sessions), and it is closed when the group ends."""
        return nullcontext(None)

    def measure(self, server, point: Point, state) -> Measured:
        return measure(server, point.workload, sample=point.sample)

    def measure_together(self, servers: list, points: list[Point], states: list) -> list[Measured]:
        """Points of one ``together`` label, each against its server, in one window (the order
        given is the order their workloads start in); one Measured per point, in that order."""
        return measure_together([(server, point.workload) for server, point in zip(servers, points)])

    def timed(self, point: Point) -> bool:
        """Whether the point's numbers depend on time (rates, durations): only then can steal or an episode
        of the machine make a run wrong, and the noise rule measure it again. A run that counts events
        (pins taken, rows returned) whatever the CPU's speed returns False; the steal is still stored."""
        return True

    def saturates(self, point: Point) -> bool:
        """Whether the point's workload should keep the server's CPUs busy all the window (a run that
        does not then fell in an episode of the machine, and is measured again: noise.episode)."""
        return False

    def prepare_dataset(self, server, workload: Workload) -> dict:
        """The point's sysbench dataset on a server just started for a group (once per server and dataset);
        what it did, stored with every run on it (``workload.dataset``). The default: sysbench's cleanup and
        prepare, then the flavor's settle (sysbench.prepare); a chapter may restore a saved one instead."""
        return sysbench.prepare(workload, server)

    def reset(self, server, point: Point, state) -> None:
        """Make the run's declared starting state, just before it (a restart that empties the caches, a
        table restored, a pool warmed); :meth:`precondition` then checks it. The default makes none."""

    def precondition(self, server, point: Point, state) -> dict[str, tuple[bool, Any]]:
        """The declared starting state of a run, checked just before it is measured: {check: (ok,
        what was seen)}. A run whose check fails is stored failed and measured again (as a retryable
        failure); the checks are stored with every run (``precondition``, ``precondition_ok``). A
        check only the run itself can see (say, holders really open during the window) is a
        measurement ``precondition_ok`` of 1 or 0, which counts the same. The default declares none."""
        return {}

    def unclean(self, measured: Measured) -> str | None:
        """Why a measured run is not clean (counts it does not tolerate), or None."""
        bad = [f"{int(value)} {name}" for name in UNCLEAN if name not in self.tolerates
               for value, _ in [measured.measurements.get(name, (None, ""))] if value]
        return f"sysbench reported {' and '.join(bad)}" if bad else None


def _sigterm_as_exit() -> None:
    """SIGTERM ends a sweep like ^C does (its runs are marked interrupted, its servers removed); only the
    main thread may install a handler, so a sweep run from another thread keeps the default."""
    def handler(signum, frame):
        raise SystemExit(128 + signum)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


@dataclass
class Sweep:
    experiment: Experiment
    points: list[Point]
    repeats: int = 3
    store: Store | None = None
    force: bool = False
    warmup_s: float = 0.0  # an unrecorded run before each group's first measurement
    # abba: A B | B A | ...; alternate: A B | A B | ...; grouped: a point's repeats together;
    # shuffled: each repeat walks the points' blocks in its own random order (seeded by the experiment's
    # name and the repeat, so a resumed sweep walks the same), inside a block forward or backward as abba
    order: str = "abba"
    # the noise rule's limit on the server CPUs' steal (percent); None keeps every run whatever its steal
    # (the smoke scale: see dbexp.metrics.noise.noisy). Stored with each ok run as steal_limit_pct.
    steal_limit_pct: float | None = STEAL_LIMIT_PCT
    # independently started servers per group: repeat r runs on instance r % instances, each instance's
    # repeats on servers of their own (fresh data directory, fresh process), one instance after another;
    # stored with each run as ``instance``
    instances: int = 1
    sweep_id: str = field(default_factory=lambda: time.strftime("%Y%m%dT%H%M%S"))
    run_ids: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.experiment.name

    def pending(self) -> list[tuple[Point, int]]:
        done = {} if self.force else self.store.done_sweeps(self.name)
        if self.order == "grouped":
            pairs = [(p, r) for p in self.points for r in range(self.repeats)]
        elif self.order == "abba":  # forward and backward in turn on each instance (repeat r runs on r % instances)
            pairs = [(p, r) for r in range(self.repeats)
                     for p in (self.points if (r // self.instances) % 2 == 0 else self.points[::-1])]
        elif self.order == "shuffled":
            pairs = [(p, r) for r in range(self.repeats) for p in shuffled(self.points, self.name, r)]
        else:
            pairs = [(p, r) for r in range(self.repeats) for p in self.points]
        pairs = [(p, r) for p, r in pairs if not p.repeats or r < p.repeats]
        if self.order == "grouped":
            return [(p, r) for p, r in pairs if (p.key(self.name), r) not in done]
        # a repeat of a group is one unit, and with several instances an instance of a group (its servers
        # and every repeat measured on them, the level the analysis nests runs in): if any of its runs is
        # missing, or its runs come from more than one sweep (an earlier design's, a resumed one's), all of
        # it is measured again, so that the runs compared with each other are always neighbours in time on
        # one server start (a resumed half of a pair would otherwise be paired with a partner measured hours
        # before, on another server start, and an instance would hold several starts)
        unit = ((lambda p, r: (p.group_name, r % self.instances)) if self.instances > 1  # noqa: E731
                else (lambda p, r: (p.group_name, r)))
        sweeps: dict[tuple, set] = {}
        for p, r in pairs:
            sweeps.setdefault(unit(p, r), set()).add(done.get((p.key(self.name), r), _MISSING))
        again = {u for u, seen in sweeps.items() if _MISSING in seen or len(seen) > 1}
        return [(p, r) for p, r in pairs if unit(p, r) in again]

    def run(self, progress: bool = True) -> list[str]:
        """Run every pending (point, repeat); returns the ok run ids of all points (old and new)."""
        if self.order not in ORDERS:
            raise DbexpError(f"bad sweep order {self.order!r}: valid are {', '.join(ORDERS)}")
        if self.repeats < 1:
            raise DbexpError(f"bad repeats {self.repeats!r}: expected 1 or more")
        if not 1 <= self.instances <= self.repeats:
            raise DbexpError(f"bad instances {self.instances!r}: expected 1 to the repeats ({self.repeats})")
        self.store = self.store or Store()
        self.store.mark_interrupted()
        _sigterm_as_exit()
        todo = self.pending()
        groups: dict[tuple[str, int], list[tuple[Point, int]]] = {}
        for p, r in todo:
            groups.setdefault((p.group_name, r % self.instances), []).append((p, r))
        bar = Progress(total=len(todo), desc=self.name, unit="run", disable=not progress or not todo,
                       file=sys.stderr)
        try:
            for name, items in groups.items():
                self._run_group(name, items, bar)
        finally:
            bar.close()
        if self.failures:
            raise DbexpError(f"{len(self.failures)} run(s) of {self.name} failed; first: {self.failures[0]}")
        return self.ok_run_ids()

    def ok_run_ids(self) -> list[str]:
        keys = {p.key(self.name) for p in self.points}
        runs = self.store.runs(self.name)
        runs = runs[runs["point_key"].isin(keys) & (runs["repeat"] < self.repeats)]
        # the newest ok run of each (point, repeat)
        runs = runs.sort_values("ended_at").groupby(["point_key", "repeat"]).tail(1)
        return list(runs["run_id"])

    def _run_group(self, name: str, items: list[tuple[Point, int]], bar) -> None:
        from dbexp.servers import bare, lifecycle

        with ExitStack() as stack:
            servers: dict[tuple, object] = {}
            states: dict[tuple, object] = {}
            prepared: dict[tuple, dict] = {}
            for point, _ in items:
                skey = point.server_key()
                if skey not in servers:
                    bar.set_postfix_str(f"starting {point.server.spec} ({point.server_mode})")
                    starter = bare.running if point.server_mode == "bare" else lifecycle.running
                    servers[skey] = stack.enter_context(starter(point.server))
                    states[skey] = stack.enter_context(self.experiment.session(servers[skey]))
                dkey = (skey, point.workload.dataset_key() if point.workload else None)
                if point.workload is None:
                    prepared[dkey] = {}
                elif dkey not in prepared:
                    bar.set_postfix_str(f"preparing {point.workload.tables}x{point.workload.table_size} rows")
                    prepared[dkey] = self.experiment.prepare_dataset(servers[skey], point.workload)
                    if self.warmup_s:
                        sysbench.run(_warmup(point.workload, self.warmup_s), servers[skey])
            for batch in batches(items):
                keys = [p.server_key() for p, _ in batch]
                datasets = [prepared[(k, p.workload.dataset_key() if p.workload else None)]
                            for k, (p, _) in zip(keys, batch)]
                point, repeat = batch[0]
                if len(batch) == 1:
                    bar.set_postfix_str(f"{point.server.spec} {point.what()} #{repeat}")
                    self._run_one(point, repeat, servers[keys[0]], states[keys[0]], datasets[0])
                else:
                    bar.set_postfix_str(f"{len(batch)} at once: {point.together} #{repeat}")
                    self._run_together(batch, [servers[k] for k in keys], [states[k] for k in keys], datasets)
                bar.update(len(batch))

    def _run_one(self, point: Point, repeat: int, server, state, dataset: dict) -> None:
        earlier: list[dict] = []  # the tries measured again: {run_id, status, why[, steal_server_pct]}
        for _ in range(RETRIES + 1):
            run_id = self.store.begin_run(self.name, point.key(self.name), point.describe(), repeat,
                                          self.sweep_id)
            try:
                self.experiment.reset(server, point, state)
                checks = self._precondition(server, point, state)
                measured = self.experiment.measure(server, point, state)
                _observed_precondition(measured)
                why = self._noisy(point, measured)
                if why is None:
                    self._finish(run_id, point, repeat, server, dataset, measured, earlier, checks)
                    return
                self._keep_noisy(run_id, point, server, dataset, measured, why)
                earlier.append(_earlier(run_id, "noisy", why, measured))
                self._wait_for_quiet([point], earlier[-1:], len(earlier))
            except (KeyboardInterrupt, SystemExit):
                self.store.fail_run(run_id, "interrupted")
                raise
            except RetryableError as exc:
                self.store.fail_run(run_id, str(exc) or type(exc).__name__)
                earlier.append(_earlier(run_id, "failed", str(exc) or type(exc).__name__))
            except Exception as exc:
                self.store.fail_run(run_id, str(exc) or type(exc).__name__)
                self.failures.append(f"{point.server.spec} {point.what()} repeat {repeat}: {exc}")
                return
        self.failures.append(f"{point.server.spec} {point.what()} repeat {repeat}: {never_ok(earlier, self.steal_limit_pct)}")

    def _run_together(self, batch: list[tuple[Point, int]], servers: list, states: list,
                      datasets: list[dict]) -> None:
        """One window for the batch's points; a failure of the window fails every run in it. A
        retryable failure, or a noisy run in it, has the whole window measured again."""
        points = [p for p, _ in batch]
        repeat = batch[0][1]
        earlier: list[list[dict]] = [[] for _ in points]  # per point, as in _run_one
        for _ in range(RETRIES + 1):
            run_ids = [self.store.begin_run(self.name, p.key(self.name), p.describe(), repeat, self.sweep_id)
                       for p in points]
            try:
                for sv, p, st in zip(servers, points, states):
                    self.experiment.reset(sv, p, st)
                checks = [self._precondition(sv, p, st) for sv, p, st in zip(servers, points, states)]
                measured = self.experiment.measure_together(servers, points, states)
                for m in measured:
                    _observed_precondition(m)
            except (KeyboardInterrupt, SystemExit):
                for run_id in run_ids:
                    self.store.fail_run(run_id, "interrupted")
                raise
            except RetryableError as exc:
                why = str(exc) or type(exc).__name__
                for run_id, tries in zip(run_ids, earlier):
                    self.store.fail_run(run_id, why)
                    tries.append(_earlier(run_id, "failed", why))
                continue
            except Exception as exc:
                for run_id in run_ids:
                    self.store.fail_run(run_id, str(exc) or type(exc).__name__)
                self.failures.append(f"{points[0].together} repeat {repeat}: {exc}")
                return
            for m in measured:  # clients taking turns say themselves how many servers worked at once
                m.measurements["servers_at_once"] = (float(len(points)), "count")
                m.measurements.setdefault("active_servers", (float(len(points)), "count"))
            reasons = [self._noisy(p, m) for p, m in zip(points, measured)]
            if any(reasons):
                # the window's servers share their CPUs: one noisy run makes the window noisy
                why = next(r for r in reasons if r)
                for run_id, point, server, dataset, m, tries in zip(run_ids, points, servers, datasets,
                                                                    measured, earlier):
                    own = self._noisy(point, m) or f"measured in a window where {why}"
                    self._keep_noisy(run_id, point, server, dataset, m, own)
                    tries.append(_earlier(run_id, "noisy", own, m))
                self._wait_for_quiet(points, [tries[-1] for tries in earlier], len(earlier[0]))
                continue
            for run_id, point, server, dataset, m, tries, ch in zip(run_ids, points, servers, datasets, measured,
                                                                    earlier, checks):
                try:
                    self._finish(run_id, point, repeat, server, dataset, m, tries, ch)
                except Exception as exc:
                    self.store.fail_run(run_id, str(exc) or type(exc).__name__)
                    self.failures.append(f"{point.server.spec} {point.what()} repeat {repeat}: {exc}")
            return
        self.failures.append(f"{points[0].together} repeat {repeat}: {never_ok(earlier[0], self.steal_limit_pct)}")

    def _wait_for_quiet(self, points: list[Point], tries: list[dict], done: int) -> None:
        """After a noisy try with tries left, wait for the steal episode on the points' server CPUs to pass
        (dbexp.metrics.noise.wait_for_quiet, its probe loading the server and client CPUs as the window did), the wait
        recorded in each try (``waited_s``, ``steal_after_pct``)."""
        if self.steal_limit_pct is None or done > RETRIES:
            return
        cpus = sorted({c for p in points for c in cpus_of(p.server.cpuset)})
        clients = {c for p in points if p.workload is not None and p.workload.cpuset
                   for c in cpus_of(p.workload.cpuset)}
        waited, seen = wait_for_quiet(cpus, self.steal_limit_pct, load_cpus=clients)
        for t in tries:
            t.update(waited_s=round(waited, 1), steal_after_pct=round(seen, 2))

    def _noisy(self, point: Point, measured: Measured) -> str | None:
        """Why the noise rule measures this run again (steal, or an episode of a saturating run), or None.
        Without a steal limit (the smoke scale), or for a run whose numbers do not depend on time
        (Experiment.timed), neither is judged."""
        if not self.experiment.timed(point):
            return None
        why = noisy(measured.measurements, self.steal_limit_pct)
        if why is None and self.steal_limit_pct is not None and self.experiment.saturates(point):
            why = episode(measured.measurements)
        return why

    def _precondition(self, server, point: Point, state) -> dict:
        """The experiment's checks of the starting state, as stored: {check: {"ok", "seen"}}; raises
        PreconditionFailed (retryable) naming the checks that failed."""
        checks = {name: {"ok": bool(ok), "seen": seen}
                  for name, (ok, seen) in (self.experiment.precondition(server, point, state) or {}).items()}
        bad = [f"{name} (saw {c['seen']})" for name, c in checks.items() if not c["ok"]]
        if bad:
            raise PreconditionFailed(f"precondition failed before the run: {', '.join(bad)}")
        return checks

    def _finish(self, run_id: str, point: Point, repeat: int, server, dataset: dict, measured: Measured,
                earlier: list[dict] = (), checks: dict | None = None) -> None:
        """Store a measured run with its provenance: ok, or failed if it was not clean."""
        if "settle_timed_out" in dataset:  # the dataset's load did not settle: shown with the run
            measured.measurements.setdefault("settle_timed_out", (dataset["settle_timed_out"], "bool"))
        measured.measurements["steal_limit_pct"] = (
            float("nan") if self.steal_limit_pct is None else float(self.steal_limit_pct), "%")
        prov = provenance(server, point, dataset, measured.command)
        prov.update(run_conditions(server, point, measured, checks, self.experiment.observed_check),
                    instance=repeat % self.instances)
        why = self.experiment.unclean(measured)
        if why:
            self.store.fail_run(run_id, why, prov)
            self.failures.append(f"{point.server.spec} {point.what()} repeat {repeat}: {why}")
            return
        self.store.finish_run(run_id, prov, measured.measurements, measured.counters, measured.series,
                              measured_again=list(earlier))
        self.store.supersede(run_id)
        self.run_ids.append(run_id)

    def _keep_noisy(self, run_id: str, point: Point, server, dataset: dict, measured: Measured, why: str) -> None:
        """Store a run the noise rule rejects: its measurements kept, status noisy, never a result."""
        if "settle_timed_out" in dataset:
            measured.measurements.setdefault("settle_timed_out", (dataset["settle_timed_out"], "bool"))
        self.store.finish_run(run_id, provenance(server, point, dataset, measured.command), measured.measurements,
                              measured.counters, measured.series, status="noisy", error=why)


class PreconditionFailed(RetryableError):
    """The state a run needs was not there (before it, or as the run itself saw it)."""


def _observed_precondition(measured: Measured) -> None:
    """Raise PreconditionFailed if the run's own ``precondition_ok`` measurement is 0."""
    value = measured.measurements.get("precondition_ok", (None, ""))[0]
    if value is not None and value == value and not value:
        raise PreconditionFailed("precondition failed during the run (its own check, precondition_ok, was 0)")


def run_conditions(server, point: Point, measured: Measured, checks: dict | None,
                   observed_check: str = Experiment.observed_check) -> dict:
    """The run columns that say what the run measured beside the servers: which server start it ran
    on (``server_instance``: the container's id, or a bare process's pid and start time), how many servers
    carried load in its window (``active_servers``), and the starting state checked
    (``precondition`` as {check: {ok, seen}}, ``precondition_ok``). The two measurements of the same
    names move into these columns."""
    m = measured.measurements
    active = m.pop("active_servers", (1.0, "count"))[0]
    seen = m.pop("precondition_ok", (None, ""))[0]
    container = getattr(server, "container", None)
    process = getattr(server, "process", None)
    start = (getattr(container, "short_id", None) or getattr(container, "id", None)
             or (f"pid {process.pid}" if getattr(process, "pid", None) else None))
    started = getattr(server, "started_at", None)
    checks = dict(checks or {})
    if seen is not None and seen == seen:
        checks[observed_check] = {"ok": bool(seen), "seen": "checked by the run itself"}
    # a container keeps its id across a restart (Server.restart: the same start, data directory and all);
    # a bare process, whose pid may come back, is told apart by when it started
    ident = start if container is not None and start else f"{start or f'object {id(server):x}'}@{float(started or 0):.0f}"
    return {"server_instance": ident,
            "active_servers": int(active), "precondition": checks,
            "precondition_ok": all(c["ok"] for c in checks.values())}


def _earlier(run_id: str, status: str, why: str, measured: Measured | None = None) -> dict:
    """One try that was measured again, as an ok run records it."""
    out = {"run_id": run_id, "status": status, "why": why[:500]}
    steal = measured.measurements.get("steal_server_pct", (None, ""))[0] if measured else None
    if steal is not None:
        out["steal_server_pct"] = round(float(steal), 2)
    return out


def never_ok(tries: list[dict], limit_pct: float | None = STEAL_LIMIT_PCT) -> str:
    """One line on a point none of whose tries was ok: the steal each noisy try saw, or the last cause."""
    seen = [f"{t['steal_server_pct']:.1f}%" for t in tries if "steal_server_pct" in t]
    if tries and seen and all(t["status"] == "noisy" for t in tries):
        return (f"no quiet run in {len(tries)} tries: the server's CPUs lost {listed(seen)} of their time to "
                f"steal (the limit is {limit_pct:g}%)")
    last = tries[-1]["why"] if tries else "?"
    return f"{len(tries)} tries, none ok (a run is measured again at most {RETRIES} times); last: {last}"


def batches(items: list[tuple[Point, int]]) -> list[list[tuple[Point, int]]]:
    """The walk cut into what is measured in one window: consecutive items of one repeat that share
    a ``together`` label form one batch; every other item is a batch of its own."""
    out: list[list[tuple[Point, int]]] = []
    for point, repeat in items:
        last = out[-1][-1] if out else None
        if point.together and last and last[0].together == point.together and last[1] == repeat:
            if point.server_key() in {p.server_key() for p, _ in out[-1]}:
                raise DbexpError(f"points measured together ({point.together!r}) need a server each; "
                                 f"{point.server.spec} with {point.what()} shares one")
            out[-1].append((point, repeat))
        else:
            out.append([(point, repeat)])
    return out


def shuffled(points: list[Point], seed: str, repeat: int) -> list[Point]:
    """One repeat's walk in order "shuffled": each group's blocks (consecutive points of one
    ``block``) in a random order drawn from (seed, repeat), a block's points forward in even
    repeats and backward in odd ones; the groups keep their order."""
    import random

    rng = random.Random(f"{seed}:{repeat}")
    out: list[Point] = []
    groups: dict[str, dict[str, list[Point]]] = {}
    for p in points:
        groups.setdefault(p.group_name, {}).setdefault(p.block or str(id(p)), []).append(p)
    for blocks in groups.values():
        keys = list(blocks)
        rng.shuffle(keys)
        for k in keys:
            out += blocks[k] if repeat % 2 == 0 else blocks[k][::-1]
    return out


def _warmup(workload: Workload, seconds: float) -> Workload:
    return replace(workload, duration_s=max(1, int(seconds)))


def provenance(server, point: Point, dataset: dict, command: str) -> dict:
    """Everything needed to say where a number came from."""
    image = server.image
    pid = server.main_pid()
    return {
        "flavor": server.build.flavor, "spec": point.server.spec, "version": server.version,
        "version_full": server.version_full,
        "source": server.build.source, **image_provenance(image), "server_kind": server.kind,
        "server_cpus": point.server.cpuset or "all",
        "server_cpus_observed": cpus_allowed(pid) if pid else None,
        "client_cpus": (point.workload.cpuset if point.workload else point.param_dict().get("client_cpus"))
        or "all", "memory_limit": point.server.memory,
        "config_requested": point.server.settings, "settings_effective": server.effective_settings(),
        "workload": dict(point.workload.params() if point.workload else point.param_dict(), dataset=dataset),
        "command": command,
        "host": host_facts(),
    }
