"""Validation of what a user asks for, before anything runs."""

import pytest

from dbexp.errors import DbexpError
from dbexp.servers import ServerConfig, parse_settings
from dbexp.workloads import Workload


@pytest.mark.parametrize("cpuset,needle", [("x", "bad server cpuset 'x'"), ("64", "CPU 64 does not exist")])
def test_bad_cpuset(cpuset, needle):
    with pytest.raises(DbexpError, match=needle):
        ServerConfig("mysql:8.0", cpuset=cpuset)


def test_bad_setting_syntax():
    with pytest.raises(DbexpError, match="expected KEY=VALUE"):
        parse_settings(["max_connections"])
    assert parse_settings(["a=1", "b = x=y"]) == {"a": "1", "b": "x=y"}


def test_bad_workload_values():
    with pytest.raises(DbexpError, match="unknown sysbench script 'oltp_nope'.*oltp_point_select"):
        Workload("oltp_nope")
    with pytest.raises(DbexpError, match="bad workload threads 0"):
        Workload(threads=0)
    with pytest.raises(DbexpError, match="bad client cpuset"):
        Workload(cpuset="0-")
