"""The buffer_eviction chapter's analysis on fixed inputs: phases, recovery, verdict rules, design."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dbexp.errors import DbexpError
from dbexp.experiments import buffer_eviction as be
from dbexp.experiments.chapter import Cpus

RUN = {"before_s": 3, "scan_s": 5, "after_s": 4}


def test_phases_leave_out_the_first_second_and_the_scans_first():
    got = [be.phase_of(t, RUN) for t in range(1, 13)]
    assert got == [None, "before", "before", None, "scan", "scan", "scan", "scan", "after", "after", "after", "after"]


def _run(qps, resident=None):
    df = pd.DataFrame({"t": range(1, len(qps) + 1), "qps": qps, **RUN})
    if resident is not None:
        df["hot_resident"] = resident
    return df


def test_recovery_is_the_first_second_after_the_scan_back_at_the_level():
    g = _run([100, 100, 100, 50, 50, 50, 50, 50, 60, 94, 96, 100])
    assert be.recovery_s(g, "qps", 95.0) == 3.0  # t = 11 is 3 s after the scan ended at 8
    assert be.recovery_s(_run([100] * 8 + [99, 99, 99, 99]), "qps", 95.0) == 1.0
    assert math.isnan(be.recovery_s(_run([100] * 8 + [50] * 4), "qps", 95.0))


def test_kept_and_ring_verdicts_follow_their_thresholds():
    assert be._kept(0.97) == "agrees" and be._kept(0.5) == "disagrees" and be._kept(0.9).startswith("not resolved")
    assert be._ring(0.05, 0.99) == "agrees"
    assert be._ring(0.8, 0.99) == "disagrees"
    assert be._ring(0.05, 0.5) == "disagrees"  # the hot set was lost
    assert be._ring(0.2, 0.99).startswith("not resolved")


def test_design_gives_each_flavor_its_own_variants_and_the_extra_ones_only_where_asked():
    sc = be.CHAPTER.scale("default")
    points = be.CHAPTER.design(sc, Cpus("1", "0"))[0].points
    by_spec = {}
    for p in points:
        by_spec.setdefault(p.server.spec, []).append(p.params.variant)
    assert by_spec["mysql:8.0@offline"] == [v.name for v in be.VARIANTS if "mysql" in v.flavors]
    assert "UPDATE scan" in by_spec["postgres:16@offline"] and "UPDATE scan" not in by_spec["postgres:12@offline"]
    pg = [p for p in points if p.server.spec.startswith("postgres")]
    assert all(p.server.memory == f"{sc.pg_memory_mb}m" for p in pg)
    assert all(p.server.settings["shared_buffers"] == f"{sc.pool_mb}MB" for p in pg)
    my = [p for p in points if p.server.spec.startswith("mysql")]
    assert all(p.server.settings["innodb_flush_method"] == "O_DIRECT" for p in my)
    assert len({p.key("buffer_eviction") for p in points}) == len(points)


def test_unknown_variant_is_refused_in_one_line():
    with pytest.raises(DbexpError, match="unknown variant 'sideways'; valid are"):
        be.CHAPTER.adjust(be.CHAPTER.scale("smoke", variants=["sideways"]), "smoke", Cpus(), {})
