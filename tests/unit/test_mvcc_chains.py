"""The mvcc_chains chapter's design and its analysis of the published data/ (no server)."""

from __future__ import annotations

from pathlib import Path

from dbexp.experiments import mvcc_chains

REPO = Path(__file__).resolve().parents[2]


def test_mvcc_design_gives_typed_points():
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


def test_published_mvcc_tables_have_numbers():
    mv = mvcc_chains.CHAPTER.run("default", run=False, root=REPO)
    t = mvcc_chains.at_largest_v(mv)
    assert t["old_server_us"].notna().all() and (t["versions"] == t["versions"].max()).all()
    assert t["held_snapshot"].notna().all() and t["held_control"].notna().all()
    pv = mvcc_chains.per_version(mv)
    assert pv["ns_per_version"].notna().all() and (pv["repeats"] >= 5).all()
