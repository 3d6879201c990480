"""Each chapter's analysis on its published data/ (no server): every claim gets a computed verdict,
the chapters' shared protocol validates overrides, and verdict logic gives known answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbexp.errors import DbexpError
from dbexp.experiments import buffer_eviction, calibration, mvcc_chains, readview, verdicts
from dbexp.experiments.chapter import Chapter

REPO = Path(__file__).resolve().parents[2]
CHAPTERS = [calibration.CHAPTER, readview.CHAPTER, mvcc_chains.CHAPTER, buffer_eviction.CHAPTER]
VERDICT_WORDS = ("agrees", "disagrees", "not resolved", "not measured", "not testable")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_every_claim_has_a_verdict_computed_from_published_data(chapter: Chapter):
    if not (REPO / "data" / chapter.name).is_dir():
        pytest.skip(f"no published {chapter.name} results")
    res = chapter.run("default", run=False, root=REPO)
    assert len(res.wide) > 0 and res.source == "published data/"
    table = chapter.claims(res)
    assert list(table.columns) == ["claim", "measured here", "verdict"]
    assert len(table) >= 3
    for _, row in table.iterrows():
        assert any(w in row["verdict"] for w in VERDICT_WORDS), row["verdict"]
        assert 'href="https://' in row["claim"] or row["claim"].startswith("Our extension"), row["claim"]


def test_published_readview_slopes_and_mvcc_tables_have_numbers():
    rv = readview.CHAPTER.run("default", run=False, root=REPO)
    for sl in (readview.view_slopes(rv), readview.cpu_slopes(rv)):
        assert len(sl) >= 2 and sl["slope"].notna().all()
        assert (sl["low"] <= sl["slope"]).all() and (sl["slope"] <= sl["high"]).all()
    mv = mvcc_chains.CHAPTER.run("default", run=False, root=REPO)
    t = mvcc_chains.at_largest_v(mv)
    assert t["old_server_us"].notna().all() and (t["versions"] == t["versions"].max()).all()
    assert t["held_snapshot"].notna().all() and t["held_control"].notna().all()
    pv = mvcc_chains.per_version(mv)
    assert pv["ns_per_version"].notna().all() and (pv["repeats"] >= 5).all()


def test_overrides_as_papermill_passes_them():
    sc = readview.CHAPTER.scale("smoke", servers='["postgres:17"]', holders=[0, 16], repeats="2")
    assert sc.servers == ("postgres:17",) and sc.holders == (0, 16) and sc.repeats == 2
    assert readview.CHAPTER.scale("smoke", servers="mysql:8.0, postgres:16").servers == ("mysql:8.0", "postgres:16")
    with pytest.raises(DbexpError, match="unknown parameter 'holdrs' for chapter readview; valid are"):
        readview.CHAPTER.scale("smoke", holdrs=[1])
    with pytest.raises(DbexpError, match="unknown scale 'huge'"):
        readview.CHAPTER.scale("huge")
    with pytest.raises(DbexpError, match="bad value for repeats"):
        readview.CHAPTER.scale("smoke", repeats="three")


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


def test_design_gives_typed_points():
    from dbexp.experiments.chapter import Cpus

    parts = mvcc_chains.CHAPTER.design(mvcc_chains.CHAPTER.scale("smoke"), Cpus("1", "0"))
    points = [p for part in parts for p in part.points]
    heap = [p for p in points if p.server.spec.startswith("postgres")]
    undo = [p for p in points if p.server.spec.startswith("mysql")]
    assert {p.params.fillfactor for p in heap} == {100, 70} and {p.params.fillfactor for p in undo} == {None}
    assert all(isinstance(p.params.versions, int) for p in points)
    # the comparable baseline, then the chapter's own settings, which win where they overlap
    assert heap[0].server.settings["synchronous_commit"] == "off"
    assert heap[0].server.settings["autovacuum_naptime"] == "1"
    assert heap[0].server.settings["full_page_writes"] == "on"
    assert undo[0].server.settings["skip_log_bin"] == "ON"
    assert len({p.key("mvcc_chains") for p in points}) == len(points)
    # a control without the old snapshot at the largest V of every variant, and the server's statement clock
    controls = [p for p in points if not p.params.snapshot]
    assert {(p.server.spec, p.params.column, p.params.fillfactor) for p in controls} == \
        {(p.server.spec, p.params.column, p.params.fillfactor) for p in points}
    assert all(p.params.versions == 100 and p.params.gc_timeout_s > 0 for p in controls)
    assert undo[0].server.settings["performance-schema-consumer-events-statements-history-long"] == "ON"
    assert mvcc_chains.CHAPTER.order == "shuffled"


@pytest.mark.parametrize("lo,hi,expect,ref,want", [
    (1.1, 1.3, "above", 1.0, "agrees"), (0.7, 0.9, "above", 1.0, "disagrees"),
    (0.9, 1.1, "above", 1.0, "not resolved (the interval spans 1)"),
    (-3.0, -1.0, "below", 0.0, "agrees"), (2.0, 5.0, "above", 0.0, "agrees"),
    (0.97, 1.04, "near", 1.0, "agrees"), (0.80, 0.90, "near", 1.0, "disagrees"),
    (0.90, 1.02, "near", 1.0, "not resolved (the interval reaches beyond 1 +- 5%)"),
    (float("nan"), 1.0, "above", 1.0, "not measured at this scale"),
])
def test_interval_verdicts(lo, hi, expect, ref, want):
    assert verdicts.interval(lo, hi, expect, ref) == want


def test_ratio_verdicts_and_combination():
    assert verdicts.ratio(2.0, "above") == "agrees"
    assert verdicts.ratio(0.5, "above") == "disagrees"
    assert verdicts.ratio(1.2, "below") == "not resolved (within 1.5x)"
    assert verdicts.combine(["agrees", "agrees", "not resolved (x)"]) == "agrees in 2 of 3 / not resolved (x) in 1 of 3"
    assert verdicts.combine(["agrees", "agrees"]) == "agrees"
    assert verdicts.combine([]) == "not measured at this scale"
    with pytest.raises(ValueError):
        verdicts.interval(0, 1, "sideways")
