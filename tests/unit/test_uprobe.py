"""bpftrace's JSON output parsed into calls, time and a histogram (no bpftrace needed)."""

from __future__ import annotations

from dbexp.metrics import uprobe

LINES = [
    '{"type": "attached_probes", "data": {"probes": 3}}',
    '{"type": "map", "data": {"@calls": 1000}}',
    '{"type": "map", "data": {"@ns": 1500000}}',
    '{"type": "map", "data": {"@out_calls": 25}}',
    '{"type": "map", "data": {"@out_ns": 90000000}}',
    '{"type": "hist", "data": {"@hist": [{"min": 512, "max": 1023, "count": 300}, '
    '{"min": 1024, "max": 2047, "count": 600}, {"min": 2048, "max": 4095, "count": 100}]}}',
    'not json at all',
]


def test_parse_gives_calls_mean_and_quantiles():
    t = uprobe.parse(LINES)
    assert t.calls == 1000 and t.total_ns == 1_500_000 and t.mean_ns == 1500.0
    assert sum(n for *_, n in t.hist) == 1000
    assert t.switched_calls == 25 and t.switched_ns == 90_000_000 and t.switched_share == 25 / 1025
    assert 1024 <= t.quantile_ns(0.5) <= 2047
    assert 2048 <= t.quantile_ns(0.95) <= 4095


def test_no_calls_is_zero_not_a_guess():
    t = uprobe.parse(['{"type": "attached_probes", "data": {"probes": 3}}'])
    assert t.calls == 0 and t.mean_ns is None and t.quantile_ns(0.5) is None


def test_the_script_pairs_entry_and_return_on_one_symbol():
    text = uprobe.script("/proc/42/root/opt/mysql/bin/mysqld", "_ZN4MVCC9view_openERP8ReadViewP5trx_t")
    assert text.count("/proc/42/root/opt/mysql/bin/mysqld:_ZN4MVCC9view_openERP8ReadViewP5trx_t") == 2
    assert "sched_switch" in text  # calls switched out mid-way are timed apart
    assert "uretprobe:" in text and 'printf("ready\\n")' in text


def test_attached_probes_reads_the_count_bpftrace_reports():
    assert uprobe.attached_probes(LINES) == 3
    assert uprobe.attached_probes(["garbage"]) is None
