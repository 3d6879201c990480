"""The gtid chapter's MySQL part against a real server: GTIDs switched on and off at run time, the GTIDs
assigned counted from gtid_executed (the chapter's witness), the binlog bytes each commit adds with and
without them, the events each commit writes (read back with SHOW BINLOG EVENTS), and the binary's own
defaults."""

from __future__ import annotations

import pytest

from dbexp.chapters.gtid.engines.innodb import MySQLBinlog
from dbexp.experiments.chapter import Chapter
from dbexp.servers.sql import query

pytestmark = pytest.mark.docker

SPEC = "mysql:8.0@offline"
COMMITS = 100


def test_gtids_switch_on_and_off_at_run_time_and_add_bytes_to_each_commit(engine):
    from dbexp.servers import running
    from dbexp.servers.registry import flavor_of_spec
    flavor = flavor_of_spec(SPEC)
    part = MySQLBinlog(flavor)
    with running(Chapter.server_config(SPEC, "1", part.binlog_settings())) as server:
        server.ensure_database("sbtest")
        conn = server.connect("sbtest")
        try:
            query(conn, "CREATE TABLE ticks (id INT PRIMARY KEY, v INT)")
            per_commit, assigned, events = {}, {}, {}
            for on in (False, True):
                part.set_gtid(conn, on)
                assert query(conn, "SELECT @@GLOBAL.gtid_mode")[0][0] == ("ON" if on else "OFF")
                before, gtids, end = part.binlog_bytes(conn), part.gtids_executed(conn), part.binlog_end(conn)
                for i in range(COMMITS):  # autocommit: one transaction each
                    query(conn, "INSERT INTO ticks VALUES (%s, 0)", (COMMITS * on + i,))
                query(conn, "SELECT COUNT(*) FROM ticks")  # a read: no transaction in the binlog, no GTID
                per_commit[on] = (part.binlog_bytes(conn) - before) / COMMITS
                assigned[on] = part.gtids_executed(conn) - gtids
                events[on] = part.binlog_events(conn, end, 10 * COMMITS)
            defaults = part.compiled_defaults(server)
            executed = str(query(conn, "SELECT @@GLOBAL.gtid_executed")[0][0])
            part.set_gtid(conn, False)
            assert query(conn, "SELECT @@GLOBAL.enforce_gtid_consistency")[0][0] == "OFF"
        finally:
            conn.close()
    # the commits made with GTIDs on got one each, numbered from 1, and no other transaction got one: what the
    # chapter's witness counts per run (gtids_executed before and after)
    assert executed.split(":", 1)[1] == f"1-{COMMITS}", executed
    assert assigned == {False: 0, True: COMMITS}
    # with GTIDs off every transaction still gets an anonymous GTID event of the same size
    assert per_commit[True] == pytest.approx(per_commit[False], rel=0.05), per_commit
    assert 50 < per_commit[False] < 2000, per_commit
    # each commit wrote its own events: a GTID event (anonymous with GTIDs off), BEGIN, the table's map, its
    # rows and the commit, as the chapter counts them after each window (chapter.event_figures)
    for on, gtid_event in ((False, "Anonymous_Gtid"), (True, "Gtid")):
        ev = events[on]
        assert ev["transactions"] == COMMITS and ev.get(gtid_event) == COMMITS, ev
        assert ev["Table_map"] == ev["Write_rows"] == ev["Xid"] == COMMITS, ev
    assert "Gtid" not in events[False] and "Anonymous_Gtid" not in events[True]
    # 8.0.15's own defaults: GTIDs off (9.5.0 turned both on)
    assert defaults == {"gtid_mode": False, "enforce_gtid_consistency": False}
