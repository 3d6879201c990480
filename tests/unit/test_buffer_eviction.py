"""The buffer_eviction chapter's analysis on fixed inputs: phases, recovery, verdict rules, design,
its engine parts (which serves which server, their SQL) and its findings' template."""

from __future__ import annotations

import math
import threading
import time

import pandas as pd
import pytest

from dbexp.chapters import buffer_eviction as be
from dbexp.chapters.buffer_eviction import claims, findings, innodb, mariadb, postgres
from dbexp.chapters.buffer_eviction.pool import BufferPart
from dbexp.chapters.buffer_eviction.scanner import Scanner
from dbexp.errors import DbexpError
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
    assert claims._kept(0.97) == "agrees" and claims._kept(0.5) == "disagrees" and claims._kept(0.9).startswith("not resolved")
    assert claims._ring(0.05, 0.99) == "agrees"
    assert claims._ring(0.8, 0.99) == "disagrees"
    assert claims._ring(0.05, 0.5) == "disagrees"  # the hot set was lost
    assert claims._ring(0.2, 0.99).startswith("not resolved")


def test_design_gives_each_flavor_its_own_variants_and_the_extra_ones_only_where_asked():
    sc = be.CHAPTER.scale("default")
    points = be.CHAPTER.design(sc, Cpus("1", "0"))[0].points
    by_spec = {}
    for p in points:
        by_spec.setdefault(p.server.spec, []).append(p.params.variant)
    assert by_spec["mysql:8.0@offline"] == [v.name for v in innodb.BufferPool.variants]
    assert by_spec["mariadb:10.11@offline"] == [v.name for v in innodb.BufferPool.variants]
    assert "UPDATE scan" in by_spec["postgres:16@offline"] and "UPDATE scan" not in by_spec["postgres:12@offline"]
    pg = [p for p in points if p.server.spec.startswith("postgres")]
    assert all(p.server.memory == f"{sc.pg_memory_mb}m" for p in pg)
    assert all(p.server.settings["shared_buffers"] == f"{sc.pool_mb}MB" for p in pg)
    my = [p for p in points if p.server.spec.startswith("mysql")]
    assert all(p.server.settings["innodb_flush_method"] == "O_DIRECT" for p in my)
    assert all(p.server.settings["innodb_buffer_pool_instances"] == "1" for p in my)
    maria = [p for p in points if p.server.spec.startswith("mariadb")]
    assert maria and all("innodb_buffer_pool_instances" not in p.server.settings for p in maria)
    assert all(p.server.memory != f"{sc.pg_memory_mb}m" for p in my + maria)  # O_DIRECT: no page cache to limit
    assert len({p.key("buffer_eviction") for p in points}) == len(points)


def test_unknown_variant_is_refused_in_one_line():
    with pytest.raises(DbexpError, match="unknown variant 'sideways'; valid are"):
        be.CHAPTER.adjust(be.CHAPTER.scale("smoke", variants=["sideways"]), "smoke", Cpus(), {})


def test_each_server_gets_its_engines_part():
    from dbexp.servers.registry import flavor_of_spec

    parts = {spec: type(be.PARTS.of(flavor_of_spec(spec))) for spec in ("mysql:8.0", "mariadb:10.11", "postgres:17")}
    assert parts == {"mysql:8.0": innodb.BufferPool, "mariadb:10.11": mariadb.MariaDBBufferPool,
                     "postgres:17": postgres.SharedBuffers}
    assert be.PARTS.skipped_note() == ""  # every flavor is measured
    assert be.VARIANT_NAMES == tuple(v.name for p in (innodb.BufferPool, postgres.SharedBuffers) for v in p.variants)
    assert postgres.SharedBuffers.reads_in_streams("postgres 17.10")
    assert not postgres.SharedBuffers.reads_in_streams("16.14")


def test_full_reads_and_cancels_are_each_engines_own():
    from dbexp.servers.registry import flavor_of_spec

    my = be.PARTS.of(flavor_of_spec("mysql:8.0"))
    pg = be.PARTS.of(flavor_of_spec("postgres:17"))
    assert my.full_read_sql("big", "seq") == ["SELECT SUM(LENGTH(pad)) FROM big"]
    assert pg.full_read_sql("big", "index")[-1] == "SELECT sum(length(pad)) FROM big WHERE id > 0"
    assert pg.full_read_sql("big", "update") == ["SET max_parallel_workers_per_gather = 0", "UPDATE big SET c = c"]
    with pytest.raises(ValueError, match="bad scan kind 'index' for MySQL: valid is seq"):
        my.full_read_sql("big", "index")
    with pytest.raises(ValueError, match="bad scan kind 'sideways' for PostgreSQL: valid are seq, index, update"):
        pg.full_read_sql("big", "sideways")
    assert my.cancel_sql(12) == "KILL QUERY 12" and pg.cancel_sql(12) == "SELECT pg_cancel_backend(12)"
    with pytest.raises(NotImplementedError):
        my.prewarm(None, "hot")


def test_findings_render_every_branch_from_the_template():
    sm = pd.DataFrame([
        {"series_name": "mysql 8.0.15", "variant": "defaults (scan depth 100)", "hot_resident_scan": 1.0,
         "hot_reads_s_scan": 0.0, "made_young_s_scan": 12.0, "free_pages_scan": 3.0, "ratio": 0.5, "recovery_s": 2.0},
        {"series_name": "mysql 8.0.15", "variant": "scan depth at its default", "hot_resident_scan": 0.1,
         "hot_reads_s_scan": 5.0, "made_young_s_scan": 1.0, "free_pages_scan": 1250.0, "ratio": 0.4,
         "recovery_s": float("nan")},
    ])
    res = type("R", (), {"wide": pd.DataFrame({"pool_mb": [32]})})()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(findings, "summary", lambda _: sm)
        text = findings.findings(res)
    lines = text.split("\n")
    assert lines[0] == ("- **InnoDB at its defaults** (mysql 8.0.15; page-cleaner depth scaled to the pool): the least "
                        "share of the hot table left in the pool during the scan was 100%, with 0 hot-table reads from "
                        "disk per second and 12 pages made young per second.")
    assert lines[1].startswith("- **innodb_lru_scan_depth at the server's default** (MySQL 1,024, MariaDB 1,536 free "
                               "pages per instance, in a pool of 2,048 pages): during the scan the page cleaner kept "
                               "1,250 (mysql 8.0.15) pages free (median), against 3 at a depth of 100, and the hot "
                               "table kept 10% (mysql 8.0.15) at least.")
    assert lines[2] == ("- **Recovery**: 1 server-variant(s) did not get back to 95% of before within the seconds "
                        "measured; the others within 2 s.")
    assert len(lines) == 3
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(findings, "summary", lambda _: pd.DataFrame())
        assert findings.findings(res) == "No runs in these results."


def test_scanner_passes_and_its_cancel_without_a_server():
    class Cancelled(Exception):
        pass

    class FakePart(BufferPart):
        """A pass takes 50 ms, or until a cancel lands; the session is 7."""
        scan_kinds = ("seq",)

        def __init__(self):
            super().__init__(flavor=None)
            self.cancel = threading.Event()
            self.sent = []

        def full_read_sql(self, table, kind):
            return ["SET x", f"SCAN {table}"]

        def session_id(self, conn):
            return 7

        def cancel_sql(self, session):
            return f"CANCEL {session}"

        def is_cancel(self, exc):
            return isinstance(exc, Cancelled)

        def query(self, conn, sql, params=None):
            conn.append(sql)
            if sql.startswith("CANCEL"):
                self.sent.append(sql)
                self.cancel.set()
            elif sql.startswith("SCAN") and self.cancel.wait(0.05):
                self.cancel.clear()
                raise Cancelled()
            return []

    class FakeServer:
        def connect(self, database):
            return type("Conn", (list,), {"close": lambda self: None})()

    part = FakePart()
    with Scanner(FakeServer(), part, "big", "seq", "db") as scan:
        assert scan.connection == ["SET x"]  # the session set up before the first pass
        scan.start()
        time.sleep(0.3)
        assert scan.stop() < 1.0
    assert part.sent and part.sent[0] == "CANCEL 7"
    assert sum(ok for *_, ok in scan.passes) >= 2 and all(ok for *_, ok in scan.passes[:-1])
