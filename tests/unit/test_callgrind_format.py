"""Reading callgrind's output and the per-operation arithmetic of a count, on real output files: the short and
long passes of one count of MySQL 8.0.15 point selects under valgrind 3.19 (tests/unit/fixtures/callgrind/,
README.md there says how they were made), checked against what valgrind's own reader, callgrind_annotate,
printed for the same files."""

from __future__ import annotations

import gzip
import re
from types import SimpleNamespace

import pytest

from dbexp.errors import DbexpError, RetryableError
from dbexp.metrics import callgrind
from dbexp.metrics.callgrind_format import EVENTS, Profile, complete, fn_label, parse
from unit_support import FIXTURES

pytestmark = pytest.mark.unit

HERE = FIXTURES / "callgrind"
NAME = "mysql-8.0.15_oltp_point_select"
# what the client ran in each pass (sysbench's queries; one point select per event), as the count saw it
SHORT_OPS, LONG_OPS = 10, 50


def _text(name: str) -> str:
    with gzip.open(HERE / name, "rt") as f:
        return f.read()


@pytest.fixture(scope="module")
def short() -> Profile:
    return parse(_text(f"{NAME}.short.out.gz"), "short")


@pytest.fixture(scope="module")
def long() -> Profile:
    return parse(_text(f"{NAME}.long.out.gz"), "long")


def annotated(name: str) -> dict[str, tuple[int, int]]:
    """callgrind_annotate's functions and their instructions (Ir), from its output with --inclusive=no
    and =yes saved beside the file: 'name' -> (exclusive, inclusive)."""
    out: dict[str, list[int]] = {}
    for i, kind in enumerate(("exclusive", "inclusive")):
        for line in _text(f"{name}.annotate-{kind}.txt.gz").splitlines():
            m = re.match(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s.*\s\?\?\?:(.+) \[(.+)\]$", line)
            if m:
                out.setdefault(m.group(2), [0, 0])[i] = int(m.group(1).replace(",", ""))
    return {k: (v[0], v[1]) for k, v in out.items()}


def test_a_real_dump_is_read_whole(long):
    assert long.events == EVENTS  # --cache-sim=yes --branch-sim=yes: every event callgrind counts
    assert long.header["pid"] == "1" and "dump-before" in long.trigger.lower()
    own = [0] * len(EVENTS)
    for cost in long.own.values():
        own = [a + b for a, b in zip(own, cost)]
    assert own == long.totals  # the functions' own costs add up to the file's totals
    assert long.total("Ir") > 0 and long.total("Bcm") <= long.total("Bc")


def test_the_functions_costs_are_callgrind_annotates(long):
    seen = annotated(f"{NAME}.long")
    names: dict[str, list] = {}
    for fn in long.functions():
        names.setdefault(fn[1], []).append(fn)
    unique = {name: fns[0] for name, fns in names.items() if len(fns) == 1 and name in seen}
    assert len(unique) > 200
    # the calls still running at the dump and made before it: the connection threads' calls down to
    # do_command (annotate reads their cost as the caller's own, which would count it twice: the functions'
    # own costs would exceed the totals)
    callers = {caller for caller, _ in long.running}
    callees = {callee for _, callee in long.running}
    assert callers and callers <= long.above(long.find("do_command"))
    compared = 0
    for name, fn in unique.items():
        exclusive, inclusive = seen[name]
        if fn in callers:
            assert long.exclusive(fn)[0] <= exclusive, name
            continue
        assert long.exclusive(fn)[0] == exclusive, name
        if inclusive and fn not in callees:  # annotate lists the inclusive cost above its threshold
            assert long.inclusive(fn)[0] == inclusive, name
        compared += 1
    assert compared > 200


def test_do_command_holds_the_window_and_dispatch_command_is_entered_once_per_statement(short, long):
    entry = long.find("do_command")
    assert len(entry) == 1 and fn_label(entry[0]) == "do_command(THD*) (mysqld)"
    assert long.inclusive(entry[0])[0] == long.total("Ir")  # collection was on inside it only
    dispatch = long.find("dispatch_command")
    # the long pass's statements, the mark that ended it and what its connection did besides
    assert long.calls[dispatch[0]] - short.calls[dispatch[0]] == LONG_OPS - SHORT_OPS


def test_the_long_pass_less_the_short_one_is_per_operation_arithmetic(short, long):
    cap = SimpleNamespace(entry="do_command(*", statement="dispatch_command(*")
    s = callgrind.Window(short, SHORT_OPS, SHORT_OPS, SHORT_OPS, 1.0)
    w = callgrind.Window(long, LONG_OPS, LONG_OPS, LONG_OPS, 2.0)
    m, rows = callgrind.figures(s, w, cap, top=10)
    ops = LONG_OPS - SHORT_OPS
    assert m["ops_counted"][0] == ops
    assert m["instructions_per_op"][0] == (long.total("Ir") - short.total("Ir")) / ops
    d1 = sum(long.total(e) - short.total(e) for e in ("D1mr", "D1mw"))
    assert m["d1_misses_per_op"][0] == d1 / ops
    bad = sum(long.total(e) - short.total(e) for e in ("Bcm", "Bim"))
    assert m["branch_mispredicts_per_op"][0] == bad / ops
    assert m["statements_seen"][0] == m["statements_sent"][0] == ops
    assert m["entry_share"][0] == 1.0 and m["simulated_caches"][0] == 1.0
    assert m["count_ops_per_s"][0] == LONG_OPS / 2.0
    callgrind.check(m)  # a count of the client's statements alone
    totals = {r["name"]: r for r in rows if r["source"] == "callgrind_total"}
    assert set(totals) == set(EVENTS) and totals["Ir"]["delta"] == m["instructions_counted"][0]
    inclusive = [r for r in rows if r["source"] == "callgrind_inclusive"]
    assert inclusive and max(inclusive, key=lambda r: r["delta"])["name"].startswith("do_command")
    for r in rows:
        assert r["delta"] == r["after"] - r["before"]


def test_a_window_that_held_other_statements_fails_the_check(short, long):
    cap = SimpleNamespace(entry="do_command(*", statement="dispatch_command(*")
    m, _ = callgrind.figures(callgrind.Window(short, SHORT_OPS, SHORT_OPS, SHORT_OPS, 1.0),
                             callgrind.Window(long, LONG_OPS, LONG_OPS, LONG_OPS - 1, 2.0), cap)
    with pytest.raises(DbexpError, match=r"entered its statement function 40 times for the 39 statements"):
        callgrind.check(m)
    with pytest.raises(DbexpError, match="nothing to count"):
        callgrind.figures(callgrind.Window(long, LONG_OPS, 1, 1, 1.0), callgrind.Window(short, SHORT_OPS, 1, 1, 1.0), cap)


def test_a_count_whose_window_missed_a_statement_is_counted_again(monkeypatch):
    """A quit handled after the mark (or a statement of another window) makes the check fail: count_passes runs its
    passes again, up to COUNT_TRIES, and says how many it took; the last miss is raised, retryable."""
    results = iter([callgrind.StatementsMissed("entered 199 times for 200"), "counted"])
    passes_run: list[str] = []

    class Passes:
        def __init__(self, server):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def begin(self):
            pass

        def end(self, pid=None):
            return None

    def measured(server, windows, count_s, restart_s, top):
        got = next(results)
        if isinstance(got, Exception):
            raise got
        return callgrind.Count({}, [], "")

    monkeypatch.setattr(callgrind, "instrument", lambda server: 0.0)
    monkeypatch.setattr(callgrind, "Passes", Passes)
    monkeypatch.setattr(callgrind, "_measured", measured)
    run_pass = lambda name, ops, seed: passes_run.append(name) or callgrind.Ran(ops, ops, ops, 0.1)  # noqa: E731
    done = callgrind.count_passes(None, run_pass, 5, warmup=0)
    assert done.measurements["count_tries"] == (2.0, "count") and passes_run == ["short", "long"] * 2
    results = iter([callgrind.StatementsMissed("missed")] * callgrind.COUNT_TRIES)
    with pytest.raises(callgrind.StatementsMissed):
        callgrind.count_passes(None, run_pass, 5, warmup=0)
    assert issubclass(callgrind.StatementsMissed, RetryableError)


def test_a_difference_subtracts_every_function(short, long):
    diff = long.minus(short)
    fn = long.find("dispatch_command")[0]
    assert diff.inclusive(fn) == [a - b for a, b in zip(long.inclusive(fn), short.inclusive(fn))]
    assert diff.totals == [a - b for a, b in zip(long.totals, short.totals)]
    top = diff.top("Ir", 3)
    assert [abs(v) for _, v in top] == sorted((abs(v) for _, v in top), reverse=True)


def test_compressed_names_relative_positions_and_calls_are_read():
    text = """version: 1
positions: line
events: Ir Dr
ob=(1) /bin/x
fn=(1) main
10 5 1
+2 3
cob=(2) /lib/y.so
cfn=(2) helper
calls=2 0
* 100 7
ob=(2)
fn=(2)
0 100 7
ob=(1)
fn=(1)
-1 1
totals: 109 8
"""
    p = parse(text)
    main, helper = ("/bin/x", "main"), ("/lib/y.so", "helper")
    assert p.exclusive(main) == [9, 1] and p.inclusive(main) == [109, 8]
    assert p.calls[helper] == 2 and p.inclusive(helper) == p.exclusive(helper) == [100, 7]
    assert p.totals == [109, 8] and fn_label(helper) == "helper (y.so)"


@pytest.mark.parametrize("text, error", [
    ("fn=(1) main\n0 1\n", "cost data before an 'events:' line"),
    ("events: Ir\nfn=(7)\n0 1\ntotals: 1\n", r"name \(7\) used before it was defined"),
    ("events: Ir\n0 5\ntotals: 5\n", "a cost line before any 'fn='"),
    ("events: Ir\nfn=(1) f\n0 x\ntotals: 1\n", "bad cost line"),
    ("events: Ir\nfn=(1) f\n0 1 2\ntotals: 1\n", "2 costs for 1 events"),
    ("events: Ir\nfn=(1) f\n0 1\n", "cut short"),
])
def test_what_is_not_callgrind_output_is_one_line_naming_the_line(text, error):
    with pytest.raises(DbexpError, match=error):
        parse(text, "x.out")


def test_a_file_is_complete_once_its_totals_line_is_written(tmp_path, long):
    text = _text(f"{NAME}.long.out.gz")
    path = tmp_path / "callgrind.out.1.3"
    path.write_text(text[: len(text) // 2])
    assert not complete(path)
    path.write_text(text)
    assert complete(path) and not complete(tmp_path / "missing")


def test_a_counted_config_carries_the_flavors_counting_settings():
    from dbexp.servers.config import ServerConfig
    from dbexp.servers.registry import FLAVORS

    with pytest.raises(DbexpError, match="bad way to run a server 'memcheck'"):
        ServerConfig("mysql:8.0", under="memcheck")
    assert ServerConfig("mysql:8.0", under="callgrind").key() != ServerConfig("mysql:8.0").key()
    mysql = FLAVORS["mysql"]("8.0.15").capability("callgrind")
    assert mysql.settings({})["innodb_buffer_pool_load_at_startup"] == "OFF"
    assert mysql.settings({"innodb_buffer_pool_size": "1G"})["innodb_buffer_pool_size_max"] == "1G"
    assert FLAVORS["mariadb"]("11.8.9").capability("callgrind").entry == "do_command(*"
    pg = FLAVORS["postgres"]("16.14").capability("callgrind")
    assert pg.per_connection and pg.entry == "PostgresMain" and pg.settings({}) == {"autovacuum": "off"}
    with pytest.raises(DbexpError, match="counts a process per connection"):
        pg.mark(None)


def test_the_script_runs_the_images_binary_under_valgrind_unless_told_to_run_it_natively():
    from dbexp.servers import valgrind

    script = valgrind.SCRIPT
    assert f"[ -e {valgrind.WORK}/native ] && exec" in script
    assert f"exec {valgrind.MOUNT}/valgrind.bin --tool=callgrind" in script
    assert "--initialize*" in script  # mysqld --initialize runs natively, before the first start
    assert set(valgrind.MODES) == {"callgrind", "callgrind-sim"}
    assert "--cache-sim=yes" in valgrind.MODES["callgrind-sim"] and "--D1=32768,8,64" in valgrind.MODES["callgrind-sim"]
