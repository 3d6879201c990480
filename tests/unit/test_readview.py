"""The readview chapter's design and its analysis of the published data/ (no server)."""

from __future__ import annotations

from pathlib import Path

from dbexp.experiments import readview

REPO = Path(__file__).resolve().parents[2]


def test_readview_design_blocks_by_h_and_probes_where_a_symbol_is_exported():
    from dbexp.experiments.chapter import Cpus

    sc = readview.CHAPTER.scale("default")
    points = [p for part in readview.CHAPTER.design(sc, Cpus("1", "0")) for p in part.points]
    assert readview.CHAPTER.order == "shuffled"
    assert {p.block for p in points} == {f"H={h}" for h in sc.holders}
    maria = [p for p in points if p.server.spec.startswith("mariadb")]
    # MariaDB exports no view function: its probe runs are the server-side loop, on a server per H
    assert maria and any(p.params.probe for p in maria)
    assert {p.group for p in maria} == {f"readview mariadb:10.11@offline H={h}" for h in sc.holders}
    assert len({p.group for p in points if p.server.spec.startswith("mysql:8.0")}) == 1
    pg = [p for p in points if p.server.spec.startswith("postgres")]
    assert {p.params.mode for p in pg} == {"none", "prepared", "idle"}
    assert pg[0].server.settings["max_prepared_transactions"] == str(max(sc.holders) + 10)
    latch = [p for p in points if p.params.trx_stmts]
    assert latch and all(p.server.spec.startswith(("mysql", "mariadb")) for p in latch)
    assert len({p.key("readview") for p in points}) == len(points)


def test_published_readview_slopes_have_numbers():
    rv = readview.CHAPTER.run("default", run=False, root=REPO)
    for sl in (readview.view_slopes(rv), readview.cpu_slopes(rv)):
        assert len(sl) >= 2 and sl["slope"].notna().all()
        assert (sl["low"] <= sl["slope"]).all() and (sl["slope"] <= sl["high"]).all()
