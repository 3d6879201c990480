"""perf record's samples without perf: the script output parsed per process and symbol, a server's
top symbols with the rest kept, and the versions chapter's CPU per statement by function and its
difference between versions, on synthetic counters."""

from __future__ import annotations

import collections

import pandas as pd
import pytest

from dbexp.chapters import versions
from dbexp.experiments.chapter import Results
from dbexp.metrics.profile import OTHER, CpuProfile, Samples, parse_script, top

pytestmark = pytest.mark.unit

SCRIPT = """\
    4242     55d0c1a2b3c4 row_search_mvcc (/opt/mysql/bin/mysqld)
    4242     55d0c1a2b3d0 row_search_mvcc (/opt/mysql/bin/mysqld)
    4243     55d0c1a2c000 MYSQLparse(THD*, bool*) (/opt/mysql/bin/mysqld)
    4242     7f0000001000 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)
      17 ffffffff81000000 finish_task_switch.isra.0 ([kernel.kallsyms])
"""


def test_script_output_is_counted_per_process_and_symbol():
    by_pid = parse_script(SCRIPT)
    assert by_pid[4242] == collections.Counter({"row_search_mvcc (mysqld)": 2, "[unknown] (libc.so.6)": 1})
    assert by_pid[17] == collections.Counter({"finish_task_switch.isra.0 (kernel)": 1})
    samples = Samples(999, by_pid)
    assert samples.of([4242, 4243]) == collections.Counter({"row_search_mvcc (mysqld)": 2, "MYSQLparse(THD*, bool*) (mysqld)": 1,
                                                           "[unknown] (libc.so.6)": 1})
    assert samples.of([1]) == collections.Counter()


def test_top_keeps_every_sample():
    counts = collections.Counter({"a": 5, "b": 3, "c": 1, "d": 1})
    assert top(counts, 2) == {"a": 5, "b": 3, OTHER: 2}
    assert top(counts, 10) == dict(counts)


def test_the_recording_command_samples_the_server_cpus_from_the_client_cpu():
    prof = CpuProfile("1", pin="0")
    try:
        cmd = prof.command_line("perf", "fifo:/c,/a")
    finally:
        prof.close()
    assert cmd[:3] == ["taskset", "-c", "0"]
    assert cmd[3:] == ["perf", "record", "-e", "cpu-clock", "-F", "999", "-C", "1", "-o", prof.path,
                       "--control", "fifo:/c,/a"]


def test_cpu_per_statement_by_function_and_its_difference_between_versions():
    runs, counters = [], []
    for name, syms, queries in (("mysql 8.0.15", {"row_search_mvcc (mysqld)": 400, "MYSQLparse (mysqld)": 100,
                                                  "[unknown] (mysqld)": 100, "schedule (kernel)": 100, OTHER: 300},
                                 10_000),
                                ("mysql 9.7.4", {"row_search_mvcc (mysqld)": 400, "MYSQLparse (mysqld)": 300,
                                                 "[unknown] (mysqld)": 100, "schedule (kernel)": 100, OTHER: 100},
                                 10_000)):
        for repeat in range(2):
            run_id = f"{name}{repeat}"
            runs.append({"run_id": run_id, "series_name": name, "flavor": "mysql", "test": "point-query",
                         "role": "profile", "length": 1, "config": "", "repeat": repeat, "queries": queries,
                         "profile_samples": float(sum(syms.values())), "profile_hz": 1000.0, "server_cpu_s": 1.0,
                         "workload": {"duration_s": 4}})
            counters += [{"run_id": run_id, "source": "perf", "name": s, "delta": float(n)} for s, n in syms.items()]
    res = Results("versions", pd.DataFrame(runs), pd.DataFrame(), pd.DataFrame(counters), pd.DataFrame(), "this run")
    pf = versions.profile(res).set_index(["server", "symbol"])
    # 2 windows x 100 samples at 1000 Hz over 20,000 statements: 10 us per statement
    assert pf.loc[("mysql 8.0.15", "MYSQLparse (mysqld)"), "us_per_statement"] == pytest.approx(10.0)
    assert pf.loc[("mysql 8.0.15", "MYSQLparse (mysqld)"), "profiled_us"] == pytest.approx(100.0)
    assert pf.loc[("mysql 8.0.15", "MYSQLparse (mysqld)"), "measured_us"] == pytest.approx(100.0)
    d = versions.profile_difference(res)
    assert d.iloc[0]["function"] == "MYSQLparse" and d.iloc[0]["difference_us"] == pytest.approx(20.0)
    assert OTHER not in set(d["symbol"]) and d.iloc[0]["total_difference_us"] == pytest.approx(0.0)
    m = versions.profile_modules(res).set_index("server")
    assert m.loc["mysql 8.0.15", "server binary"] == pytest.approx(60.0)
    assert m.loc["mysql 8.0.15", "kernel"] == pytest.approx(10.0)
    assert m.loc["mysql 8.0.15", "unnamed"] == pytest.approx(1 / 6)
    assert versions.main_runs(versions.tidy(res)).empty  # profiled windows are not the main ones
