"""Rates between two marks of a server measured at once with others (dbexp.metrics.marks)."""

from __future__ import annotations

import pytest

from dbexp.metrics.marks import Mark, between


def test_rates_are_over_the_interval_between_the_marks_without_the_marks_own_query():
    got = between(Mark(10.0, 1000, 5.0), Mark(12.0, 3001, 5.5))
    assert got["common_s"][0] == pytest.approx(2.0)
    assert got["qps_common"][0] == pytest.approx(1000.0)  # 2,000 statements in 2 s
    assert got["cpu_per_op_common_us"][0] == pytest.approx(250.0)  # 0.5 s of CPU over 2,000


def test_an_empty_or_backward_interval_gives_no_rate_rather_than_a_wrong_one():
    assert between(Mark(10.0, 1000, 5.0), Mark(10.0, 1001, 5.0))["qps_common"][0] is None
    assert between(Mark(10.0, 1000, 5.0), Mark(9.0, 2000, 5.0))["qps_common"][0] is None
