"""How a sweep orders its runs (ABBA) and when a run counts as clean, without a server."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dbexp.errors import DbexpError
from dbexp.experiments.measure import Measured
from dbexp.experiments.sweep import Experiment, Point, Sweep, batches
from dbexp.servers.config import ServerConfig


@dataclass(frozen=True)
class P:
    name: str


def points(*names):
    return [Point(ServerConfig("postgres:16@offline", "1"), P(n), group="g") for n in names]


def order(sweep: Sweep) -> list[str]:
    return [f"{p.params.name}{r}" for p, r in sweep.pending()]


def test_abba_walks_forward_then_backward():
    sweep = Sweep(Experiment("t"), points("A", "B"), repeats=4, force=True)
    assert order(sweep) == ["A0", "B0", "B1", "A1", "A2", "B2", "B3", "A3"]


def test_abba_with_more_points_is_a_serpentine():
    sweep = Sweep(Experiment("t"), points("x", "y", "z"), repeats=2, force=True)
    assert order(sweep) == ["x0", "y0", "z0", "z1", "y1", "x1"]


def test_a_point_with_fewer_repeats_runs_only_in_the_first_ones_and_keeps_its_key():
    a, b = points("A", "B")
    fewer = Point(ServerConfig("postgres:16@offline", "1"), P("B"), group="g", repeats=2)
    sweep = Sweep(Experiment("t"), [a, fewer], repeats=4, force=True, instances=2)
    assert order(sweep) == ["A0", "B0", "A1", "B1", "A2", "A3"]  # instance 0 runs A0 B0 A2, instance 1 A1 B1 A3
    assert fewer.key("t") == b.key("t")  # how many repeats a point gets is not what it measures


def test_other_orders():
    assert order(Sweep(Experiment("t"), points("A", "B"), 2, force=True, order="alternate")) == [
        "A0", "B0", "A1", "B1"]
    assert order(Sweep(Experiment("t"), points("A", "B"), 2, force=True, order="grouped")) == [
        "A0", "A1", "B0", "B1"]


def test_shuffled_keeps_blocks_together_and_walks_each_repeat_its_own_way():
    pts = [Point(ServerConfig("postgres:16@offline", "1"), P(f"{h}{v}"), group="g", block=str(h))
           for h in (0, 1, 2, 3, 4) for v in "ab"]
    sweep = Sweep(Experiment("t"), pts, repeats=4, force=True, order="shuffled")
    walks = [[name for name in order(sweep) if name.endswith(str(r))] for r in range(4)]
    for r, walk in enumerate(walks):
        blocks = [name[0] for name in walk]
        assert blocks[::2] == blocks[1::2]  # a block's two points are neighbours
        assert sorted(blocks[::2]) == list("01234")
        inside = [name[1] for name in walk[:2]]
        assert inside == (["a", "b"] if r % 2 == 0 else ["b", "a"])
    assert len({tuple(n[0] for n in w) for w in walks}) > 1  # not one order for every repeat
    assert order(sweep) == order(Sweep(Experiment("t"), pts, repeats=4, force=True, order="shuffled"))


def test_bad_order_is_one_line():
    with pytest.raises(DbexpError, match="bad sweep order 'zigzag': valid are abba, alternate, grouped, shuffled"):
        Sweep(Experiment("t"), points("A"), 1, force=True, order="zigzag").run(progress=False)


def measured(**values) -> Measured:
    return Measured({k: (v, "count") for k, v in values.items()})


def test_errors_and_reconnects_make_a_run_unclean():
    e = Experiment("t")
    assert e.unclean(measured(errors=0.0, reconnects=0.0, qps=10.0)) is None
    assert e.unclean(measured(errors=3.0, reconnects=0.0)) == "sysbench reported 3 errors"
    assert e.unclean(measured(errors=2.0, reconnects=1.0)) == "sysbench reported 2 errors and 1 reconnects"
    assert e.unclean(measured(qps=10.0)) is None  # no sysbench in the run: nothing to count


def test_a_tolerant_experiment_keeps_what_it_tolerates():
    class Tolerant(Experiment):
        tolerates = ("errors",)

    assert Tolerant("t").unclean(measured(errors=5.0, reconnects=0.0)) is None
    assert Tolerant("t").unclean(measured(errors=5.0, reconnects=2.0)) == "sysbench reported 2 reconnects"


def test_a_resumed_repeat_is_measured_again_whole(tmp_path):
    """Pairs stay neighbours in time: a repeat of a group with a missing run is measured again in full."""
    from dbexp.results.store import Store

    store = Store(tmp_path / "r.duckdb")
    try:
        sweep = Sweep(Experiment("t"), points("A", "B"), repeats=3, store=store)
        for p, r in sweep.pending():
            if (p.params.name, r) != ("B", 1):  # every run but B of repeat 1 is recorded ok
                run_id = store.begin_run("t", p.key("t"), p.describe(), r)
                store.db.execute("UPDATE runs SET status = 'ok' WHERE run_id = ?", [run_id])
        assert order(sweep) == ["B1", "A1"]  # A of repeat 1 again too, in the repeat's own order
    finally:
        store.close()


def test_an_instance_whose_runs_come_from_two_sweeps_is_measured_again_whole(tmp_path):
    """An instance holds one server start: if its runs come from more than one sweep (an earlier
    publication's run of the same point, a resumed sweep's), all its repeats are measured again; an
    instance measured whole in one sweep is kept."""
    from dbexp.results.store import Store

    store = Store(tmp_path / "r.duckdb")
    try:
        sweep = Sweep(Experiment("t"), points("A", "B"), repeats=4, store=store, instances=2)
        for p, r in sweep.pending():  # repeat 2's B (instance 0) from an older sweep, everything else from this one
            run_id = store.begin_run("t", p.key("t"), p.describe(), r, "old" if (p.params.name, r) == ("B", 2) else "new")
            store.db.execute("UPDATE runs SET status = 'ok' WHERE run_id = ?", [run_id])
        assert order(sweep) == ["A0", "B0", "B2", "A2"]  # instance 0 again, in its own order; instance 1 kept
    finally:
        store.close()


def test_points_with_one_together_label_form_one_window_per_repeat_in_the_walks_order():
    servers = [ServerConfig("postgres:16@offline", "1", settings={"work_mem": f"{i}MB"}) for i in (1, 2, 3)]
    pts = [Point(s, P(n), group="g", together="w") for s, n in zip(servers, "abc")]
    pts.append(Point(servers[0], P("d"), group="g"))
    walk = [(p, r) for r in range(2) for p in (pts if r % 2 == 0 else pts[::-1])]  # the ABBA walk
    got = [[f"{p.params.name}{r}" for p, r in b] for b in batches(walk)]
    assert got == [["a0", "b0", "c0"], ["d0"], ["d1"], ["c1", "b1", "a1"]]
    assert "together" in pts[0].describe() and "together" not in pts[3].describe()


def test_a_window_that_would_put_two_workloads_on_one_server_is_refused_in_one_line():
    s = ServerConfig("postgres:16@offline", "1")
    pts = [Point(s, P(n), group="g", together="w") for n in "ab"]
    with pytest.raises(DbexpError, match="need a server each"):
        batches([(p, 0) for p in pts])
