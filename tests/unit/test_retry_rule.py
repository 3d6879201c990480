"""The noise and retry rule: a run that fails for a retryable cause, or is noisy (its server CPUs
lost more than STEAL_LIMIT_PCT to steal), is kept and its point measured again, at most RETRIES more
times; the ok run records the earlier tries, the export keeps them apart, and the run notes count
them. Without a server: the sweep's server start and provenance are replaced by stand-ins."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from types import SimpleNamespace

import pandas as pd
import pytest

from dbexp.errors import DbexpError, RetryableError
from dbexp.experiments import sweep as sweep_module
from dbexp.experiments.chapter import published, read_results, run_notes
from dbexp.experiments.measure import Measured
from dbexp.experiments.sweep import RETRIES, Experiment, Point, Sweep, never_ok
from dbexp.metrics.noise import STEAL_LIMIT_PCT, noise_rows, noisy
from dbexp.results.export import export, load, load_measured_again
from dbexp.results.store import Store
from dbexp.servers.config import ServerConfig


@dataclass(frozen=True)
class P:
    name: str


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "r.duckdb")
    yield s
    s.close()


@pytest.fixture(autouse=True)
def no_servers(monkeypatch):
    """Sweeps here start no server: a stand-in server, and a provenance of a few columns."""
    @contextlib.contextmanager
    def running(config, *args, **kwargs):
        yield SimpleNamespace(config=config)

    from dbexp.servers import lifecycle
    monkeypatch.setattr(lifecycle, "running", running)
    waits: list = []  # the sweep's waits for a steal episode to pass: recorded, none spent
    monkeypatch.setattr(sweep_module, "wait_for_quiet", lambda cpus, limit, load_cpus: waits.append((cpus, limit, load_cpus)) or (12.0, 1.5))
    monkeypatch.setattr(sweep_module, "provenance", lambda server, point, dataset, command: {
        "flavor": "postgres", "spec": point.server.spec, "version": "16.14", "host": {"cpus": 2}})
    return waits


class Scripted(Experiment):
    """Measures each point by the next item of its script: a steal figure (a run), or an exception."""

    def __init__(self, script: dict[str, list]):
        super().__init__("t")
        self.script = {k: list(v) for k, v in script.items()}
        self.calls: list[str] = []

    def _next(self, point: Point) -> Measured:
        self.calls.append(point.params.name)
        item = self.script[point.params.name].pop(0)
        if isinstance(item, Exception):
            raise item
        return Measured({"qps": (1000.0, "1/s"), "steal_server_pct": (item, "%"), "steal_client_pct": (0.1, "%")},
                        series=[(0.0, "s", "qps", 1000.0)])

    def measure(self, server, point, state):
        return self._next(point)

    def measure_together(self, servers, points, states):
        first = self.script[points[0].params.name][0]
        if isinstance(first, Exception):  # the window fails as one
            for p in points:
                self.script[p.params.name].pop(0)
            self.calls.append("window")
            raise first
        return [self._next(p) for p in points]


def points(*names, together=""):
    return [Point(ServerConfig("postgres:16@offline", "1", settings={"work_mem": f"{i + 1}MB"}), P(n), group="g",
                  together=together) for i, n in enumerate(names)]


def all_runs(store: Store) -> pd.DataFrame:
    return store.runs("t", status=None).sort_values("started_at").reset_index(drop=True)


def test_a_retryable_failure_is_kept_and_the_point_measured_again(store):
    exp = Scripted({"A": [RetryableError("performance_schema timed 199 of 200 statements"), 0.2], "B": [0.3]})
    ids = Sweep(exp, points("A", "B"), repeats=1, store=store).run(progress=False)
    runs = all_runs(store)
    assert exp.calls == ["A", "A", "B"]  # measured again at once, in its place in the walk
    assert list(runs["status"]) == ["failed", "ok", "ok"] and len(ids) == 2
    assert runs.loc[0, "error"] == "performance_schema timed 199 of 200 statements"
    again = json.loads(runs.loc[1, "measured_again"])
    assert again == [{"run_id": runs.loc[0, "run_id"], "status": "failed",
                      "why": "performance_schema timed 199 of 200 statements"}]
    assert json.loads(runs.loc[2, "measured_again"]) == []


def test_a_failure_that_persists_fails_the_sweep_in_one_line(store):
    exp = Scripted({"A": [RetryableError("probe did not stop")] * (RETRIES + 1)})
    with pytest.raises(DbexpError, match=r"1 run\(s\) of t failed; first: postgres:16@offline name=A repeat 0: "
                                         r"3 tries, none ok .*; last: probe did not stop"):
        Sweep(exp, points("A"), repeats=1, store=store).run(progress=False)
    assert list(all_runs(store)["status"]) == ["failed"] * (RETRIES + 1)


def test_an_error_the_lab_may_not_retry_fails_at_once(store):
    exp = Scripted({"A": [DbexpError("bad setting"), 0.1]})
    with pytest.raises(DbexpError, match="name=A repeat 0: bad setting"):
        Sweep(exp, points("A"), repeats=1, store=store).run(progress=False)
    assert exp.calls == ["A"] and list(all_runs(store)["status"]) == ["failed"]


def test_a_noisy_run_is_kept_with_its_measurements_and_measured_again(store):
    exp = Scripted({"A": [7.5, 0.4]})
    ids = Sweep(exp, points("A"), repeats=1, store=store).run(progress=False)
    runs = all_runs(store)
    assert list(runs["status"]) == ["noisy", "ok"] and ids == [runs.loc[1, "run_id"]]
    assert "lost 7.5% of their time to steal (the limit is 5%)" in runs.loc[0, "error"]
    kept = store.table("measurements", [runs.loc[0, "run_id"]]).set_index("name")["value"]
    assert kept["qps"] == 1000.0 and kept["steal_server_pct"] == 7.5  # kept, never read as a result
    assert list(store.runs("t")["run_id"]) == ids  # readers see the ok run only
    assert json.loads(runs.loc[1, "measured_again"])[0]["steal_server_pct"] == 7.5
    assert store.done_keys("t") == {(points("A")[0].key("t"), 0)}


def test_a_noisy_try_waits_for_the_steal_to_pass_before_the_next(store, no_servers):
    """A steal episode lasts minutes: before a noisy run is measured again, the sweep waits for its server CPUs to
    be quiet (wait_for_quiet), the wait recorded in the try; not after the last try, nor without a steal limit."""
    exp = Scripted({"A": [7.5, 0.4], "B": [7.5, 8.0, 9.0], "C": [7.5]})
    with pytest.raises(DbexpError, match="name=B repeat 0: no quiet run in 3 tries"):
        Sweep(exp, points("A", "B"), repeats=1, store=store).run(progress=False)
    assert no_servers == [([1], STEAL_LIMIT_PCT, set())] * 3  # A once; B after its first and second tries only
    ok = all_runs(store).query("status == 'ok'")
    (try_,) = json.loads(ok["measured_again"].iloc[0])
    assert (try_["status"], try_["steal_server_pct"], try_["waited_s"], try_["steal_after_pct"]) == ("noisy", 7.5, 12.0, 1.5)
    no_servers.clear()
    Sweep(exp, points("C"), repeats=1, store=store, steal_limit_pct=None).run(progress=False)
    assert no_servers == []


def test_waiting_for_quiet_probes_until_the_steal_is_under_the_limit(monkeypatch):
    from dbexp.metrics import noise

    seen = iter([12.0, 7.0, 3.0, 1.0])
    probes: list = []
    monkeypatch.setattr(noise, "loaded_steal", lambda cpus, load_cpus, seconds: probes.append((cpus, load_cpus)) or
                        next(seen))
    waited, last = noise.wait_for_quiet([1], 5.0, load_cpus={0}, most_s=60.0, probe_s=0.0)
    assert last == 3.0 and probes == [([1], {0})] * 3 and waited >= 0
    seen = iter([12.0] * 100)
    assert noise.wait_for_quiet([1], 5.0, most_s=0.0, probe_s=0.0)[1] == 12.0  # gives up after most_s: one probe


def test_the_probe_keeps_every_cpu_it_names_busy_and_reads_the_server_cpus_steal():
    """Steal is time a CPU wanted: the probe's busy loops keep the server and client CPUs busy for its seconds."""
    from dbexp.metrics import cpustat, noise

    if not {0, 1} <= set(cpustat.online_cpus()):
        pytest.skip("the probe's test loads CPUs 0 and 1")
    before = cpustat.read()
    steal = noise.loaded_steal([0], [1], seconds=0.5)
    after = cpustat.read()
    assert 0.0 <= steal <= 100.0
    for cpu in (0, 1):
        w = cpustat.window(before, after, [cpu])
        assert w["busy_s"] + w["steal_s"] > 0.3, (cpu, w)  # each CPU busy for most of the half second


def test_a_run_that_counts_events_is_not_judged_by_steal(store):
    class Counting(Scripted):
        def timed(self, point):  # its numbers are counts, not rates: steal cannot make them wrong
            return point.params.name != "A"

    exp = Counting({"A": [7.5], "B": [7.5, 0.2]})
    Sweep(exp, points("A", "B"), repeats=1, store=store).run(progress=False)
    runs = all_runs(store)
    assert list(runs["status"]) == ["ok", "noisy", "ok"] and exp.calls == ["A", "B", "B"]
    kept = store.table("measurements", [runs.loc[0, "run_id"]]).set_index("name")["value"]
    assert kept["steal_server_pct"] == 7.5  # stored all the same


def test_a_point_never_quiet_says_so_and_names_the_steal(store):
    exp = Scripted({"A": [7.5, 8.0, 9.25]})
    with pytest.raises(DbexpError, match=r"name=A repeat 0: no quiet run in 3 tries: the server's CPUs lost "
                                         r"7\.5%, 8\.0% and 9\.2% of their time to steal \(the limit is 5%\)"):
        Sweep(exp, points("A"), repeats=1, store=store).run(progress=False)
    assert list(all_runs(store)["status"]) == ["noisy"] * 3


def test_a_window_measured_together_is_measured_again_whole(store):
    exp = Scripted({"A": [RetryableError("probe did not stop"), 6.0, 0.2], "B": [None, 6.0, 0.2]})
    ids = Sweep(exp, points("A", "B", together="w"), repeats=1, store=store).run(progress=False)
    runs = all_runs(store)
    assert exp.calls == ["window", "A", "B", "A", "B"]
    assert sorted(runs["status"]) == ["failed", "failed", "noisy", "noisy", "ok", "ok"] and len(ids) == 2
    for text in runs.loc[runs["status"] == "ok", "measured_again"]:
        assert [t["status"] for t in json.loads(text)] == ["failed", "noisy"]


def test_the_rule_s_threshold_is_more_than_the_limit():
    assert STEAL_LIMIT_PCT == 5.0
    assert noisy({"steal_server_pct": (5.0, "%")}) is None
    assert noisy({"steal_server_pct": (5.01, "%")}).startswith("the server's CPUs lost 5.0%")
    assert noisy({"steal_server_pct": (None, "%")}) is None and noisy({"qps": (1.0, "1/s")}) is None
    assert noisy({"steal_server_pct": (float("nan"), "%")}) is None
    assert noisy({"steal_client_pct": (50.0, "%"), "steal_server_pct": (0.0, "%")}) is None  # the server's CPUs


def test_never_ok_says_the_last_cause_when_not_all_tries_were_noisy():
    tries = [{"status": "noisy", "why": "x", "steal_server_pct": 6.0}, {"status": "failed", "why": "probe"}]
    assert never_ok(tries).endswith("last: probe")


def test_the_export_keeps_the_tries_apart_and_the_notes_count_them(store, tmp_path):
    exp = Scripted({"A": [7.5, 0.4], "B": [RetryableError("performance_schema timed 199 of 200 statements "
                                                         "(its history holds 201 of 10000)"), 0.3],
                    "C": [9.0, 0.1]})
    ids = Sweep(exp, points("A", "B", "C"), repeats=1, store=store).run(progress=False)
    export(store, "t", ids, root=tmp_path)
    tables = load("t", root=tmp_path)
    assert sorted(tables["runs"]["run_id"]) == sorted(ids)  # analyses read ok runs only
    assert set(tables["measurements"]["run_id"]) == set(ids)
    again = load_measured_again("t", root=tmp_path)
    assert sorted(again["status"]) == ["failed", "noisy", "noisy"]
    assert sorted(again["steal_server_pct"].dropna()) == [7.5, 9.0]
    res = published("t", root=tmp_path)
    assert len(res.wide) == 3
    note = run_notes(res)
    assert ("3 runs were measured again under the lab's noise and retry rule (at most 2 more tries per point; "
            "the earlier tries are kept, never read as results): 2 lost more than 5% of the server's CPU time to "
            "steal (7.5 to 9.0%); 1 failed: performance_schema timed 199 of 200 statements.") in note
    assert run_notes(read_results(store, "t", ids)) == note  # this run and the published data alike


def test_the_notes_say_when_the_rule_held_and_when_runs_predate_it(store, tmp_path):
    ids = Sweep(Scripted({"A": [0.2]}), points("A"), repeats=1, store=store).run(progress=False)
    assert "The noise and retry rule held with no run measured again" in run_notes(read_results(store, "t", ids))
    export(store, "t", ids, root=tmp_path)
    old = tmp_path / "data" / "t"
    pd.read_parquet(old / "runs.parquet").drop(columns=["measured_again"]).to_parquet(old / "runs.parquet")
    (old / "measured_again.parquet").unlink()  # published before the rule
    note = run_notes(published("t", root=tmp_path))
    assert "These runs were measured before the lab's noise rule" in note and "none of them lost more" in note
    assert load_measured_again("t", root=tmp_path).empty


def test_the_machine_check_gives_doctor_rows_and_a_verdict():
    quiet = {0: {"steal_pct": 0.2, "loop_ms": 1.0, "loop_spread_pct": 3.0, "sleep_overshoot_us": 70.0}}
    rows = noise_rows(quiet, 3.0)
    assert all(len(r) == 3 and isinstance(r[2], bool) for r in rows)
    assert rows[-1][0] == "fit to measure" and rows[-1][2] and rows[-1][1].startswith("yes")
    busy = {0: dict(quiet[0], steal_pct=7.0), 1: dict(quiet[0], loop_spread_pct=40.0)}
    verdict = noise_rows(busy, 3.0)[-1]
    assert not verdict[2]
    assert verdict[1] == "no: CPU 0 lost 7.0% to steal; CPU 1's busy loop varied by 40% (other work on it?)"


def test_the_machine_check_measures_each_cpu():
    from dbexp.metrics.noise import measure_noise

    got = measure_noise(0.2, cpus=[min(__import__("os").sched_getaffinity(0))])
    (m,) = got.values()
    assert set(m) == {"steal_pct", "loop_ms", "loop_spread_pct", "sleep_overshoot_us"}
    assert m["loop_ms"] > 0 and m["sleep_overshoot_us"] > -1000 and 0 <= m["steal_pct"] <= 100


def test_without_a_steal_limit_a_noisy_run_is_kept_ok_and_the_notes_say_so(store):
    """The smoke scale's sweeps (steal_limit_pct=None): a run that lost 18% to steal is ok at once,
    stores the limit as missing, and the run notes say the rule was off and how many were over it."""
    exp = Scripted({"A": [18.0], "B": [0.3]})
    ids = Sweep(exp, points("A", "B"), repeats=1, store=store, steal_limit_pct=None).run(progress=False)
    runs = all_runs(store)
    assert exp.calls == ["A", "B"] and list(runs["status"]) == ["ok", "ok"] and len(ids) == 2
    res = read_results(store, "t", ids)
    assert res.wide["steal_limit_pct"].isna().all()
    assert "smoke scale" in run_notes(res) and "1 of 2 lost more than" in run_notes(res)


def test_a_sweeps_own_steal_limit_is_the_rule_and_is_stored(store):
    exp = Scripted({"A": [3.0, 1.0]})
    ids = Sweep(exp, points("A"), repeats=1, store=store, steal_limit_pct=2.0).run(progress=False)
    assert exp.calls == ["A", "A"] and len(ids) == 1
    assert read_results(store, "t", ids).wide["steal_limit_pct"].tolist() == [2.0]
    assert noisy({"steal_server_pct": (3.0, "%")}, None) is None
    assert "the limit is 2%" in noisy({"steal_server_pct": (3.0, "%")}, 2.0)


class Checked(Scripted):
    """Scripted, with a declared starting state: the next item of ``states`` is whether it held."""

    def __init__(self, script, states):
        super().__init__(script)
        self.states = list(states)

    def precondition(self, server, point, state):
        held = self.states.pop(0)
        return {"rows loaded": (held, 100 if held else 37)}


def test_a_failed_precondition_is_a_failed_try_and_the_run_stores_its_checks(store):
    exp = Checked({"A": [0.2]}, [False, True])
    ids = Sweep(exp, points("A"), repeats=1, store=store).run(progress=False)
    runs = all_runs(store)
    assert list(runs["status"]) == ["failed", "ok"] and exp.calls == ["A"]  # nothing measured on a bad state
    assert runs.loc[0, "error"] == "precondition failed before the run: rows loaded (saw 37)"
    ok = read_results(store, "t", ids).wide.iloc[0]
    assert bool(ok["precondition_ok"]) and json.loads(ok["precondition"]) == {
        "rows loaded": {"ok": True, "seen": 100}}
    assert ok["active_servers"] == 1 and isinstance(ok["server_instance"], str)


def test_a_run_that_saw_its_own_state_fail_is_measured_again(store):
    class Observing(Scripted):
        def _next(self, point):
            m = super()._next(point)
            m.measurements["precondition_ok"] = (float(len(self.calls) > 1), "bool")
            return m

    ids = Sweep(Observing({"A": [0.2, 0.2]}), points("A"), repeats=1, store=store).run(progress=False)
    runs = all_runs(store)
    assert list(runs["status"]) == ["failed", "ok"]
    assert "during the run" in runs.loc[0, "error"]
    ok = read_results(store, "t", ids).wide.iloc[0]
    assert bool(ok["precondition_ok"]) and Experiment.observed_check in json.loads(ok["precondition"])


def test_a_window_records_how_many_servers_carried_load(store):
    ids = Sweep(Scripted({"A": [0.2], "B": [0.2]}), points("A", "B", together="w"), repeats=1,
                store=store).run(progress=False)
    assert read_results(store, "t", ids).wide["active_servers"].tolist() == [2, 2]


def test_repeats_spread_over_instances_each_started_on_its_own(store, monkeypatch):
    """instances=2: repeats 0 and 2 on one start of each configuration, 1 and 3 on another, one instance
    after the other (A and B differ in a setting: two configurations, so four starts)."""
    starts = []

    @contextlib.contextmanager
    def running(config, *args, **kwargs):
        starts.append(config.spec)
        yield SimpleNamespace(config=config, started_at=float(len(starts)))

    from dbexp.servers import lifecycle
    monkeypatch.setattr(lifecycle, "running", running)
    waits: list = []  # the sweep's waits for a steal episode to pass: recorded, none spent
    monkeypatch.setattr(sweep_module, "wait_for_quiet", lambda cpus, limit, load_cpus: waits.append((cpus, limit, load_cpus)) or (12.0, 1.5))
    exp = Scripted({"A": [0.1] * 4, "B": [0.1] * 4})
    ids = Sweep(exp, points("A", "B"), repeats=4, store=store, instances=2).run(progress=False)
    w = read_results(store, "t", ids).wide.sort_values("started_at")
    assert len(starts) == 4 and w["repeat"].tolist() == [0, 0, 2, 2, 1, 1, 3, 3]
    assert w["instance"].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert w.groupby("instance")["server_instance"].nunique().tolist() == [2, 2]
    assert w["server_instance"].nunique() == 4
    with pytest.raises(DbexpError, match="bad instances 3: expected 1 to the repeats"):
        Sweep(exp, points("A"), repeats=2, store=store, instances=3).run(progress=False)


def test_a_saturating_run_whose_server_idled_is_an_episode_and_measured_again(store):
    class Saturating(Scripted):
        busy = [80.0, 97.0]

        def saturates(self, point):
            return True

        def _next(self, point):
            m = super()._next(point)
            m.measurements["server_busy_pct"] = (self.busy.pop(0), "%")
            return m

    ids = Sweep(Saturating({"A": [0.1, 0.1]}), points("A"), repeats=1, store=store).run(progress=False)
    runs = all_runs(store)
    assert list(runs["status"]) == ["noisy", "ok"] and len(ids) == 1
    assert runs.loc[0, "error"].startswith("an episode of the machine: the server's CPUs were busy 80.0%")
    # the smoke scale judges neither steal nor episodes
    Saturating.busy = [80.0]
    assert len(Sweep(Saturating({"A": [0.1]}), points("A"), repeats=1, store=store, force=True,
                     steal_limit_pct=None).run(progress=False)) == 1


def test_each_try_makes_its_state_then_checks_it_then_measures(store):
    """Experiment.reset makes the declared state before every try, precondition checks it, then the run."""
    class Resetting(Scripted):
        log: list = []

        def reset(self, server, point, state):
            self.log.append("reset")

        def precondition(self, server, point, state):
            self.log.append("check")
            return {"made": (len(self.log) > 2, len(self.log))}

        def _next(self, point):
            self.log.append("measure")
            return super()._next(point)

    exp = Resetting({"A": [0.2]})
    ids = Sweep(exp, points("A"), repeats=1, store=store).run(progress=False)
    assert len(ids) == 1 and exp.log == ["reset", "check", "reset", "check", "measure"]
