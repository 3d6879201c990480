"""dbexp/catalog/versions.py: the one parser of version strings, on the strings the servers report."""

from __future__ import annotations

import pytest

from dbexp.catalog.versions import major, version_key


@pytest.mark.parametrize("text, key", [
    ("8.0.15", (8, 0, 15)),
    ("5.7.22-log", (5, 7, 22)),
    ("10.11.19-MariaDB-0+deb12u1", (10, 11, 19)),
    ("10.11.19-MariaDB-0+deb12u1-log", (10, 11, 19)),
    ("16.14", (16, 14)),
    ("18", (18,)),
    ("mysql 8.0.15", (8, 0, 15)),  # a series name
    ("PostgreSQL 17.10 on x86_64-pc-linux-gnu, compiled by gcc 7.5.0, 64-bit", (17, 10)),  # a banner
    ("latest", ()),
    ("", ()),
])
def test_version_key(text, key):
    assert version_key(text) == key


def test_versions_sort_by_number_not_by_text():
    names = ["postgres 12.22", "postgres 9.6.24", "postgres 18.4", "postgres 14.23"]
    assert sorted(names, key=version_key) == ["postgres 9.6.24", "postgres 12.22", "postgres 14.23", "postgres 18.4"]
    assert sorted(["8.0.22", "5.7.22-log", "8.0.15"], key=version_key) == ["5.7.22-log", "8.0.15", "8.0.22"]
    assert version_key("8.4.0") >= (8, 4) > version_key("8.0.15") >= (8, 0)


def test_major():
    assert major("16.14") == 16
    assert major("mysql 5.7.22") == 5
    assert major("10.11.19-MariaDB-0+deb12u1") == 10
    with pytest.raises(ValueError, match="no version number"):
        major("latest")


def test_agrees_with_packaging_where_packaging_parses():
    # packaging.version parses plain versions but rejects the servers' suffixes, hence the regex
    version = pytest.importorskip("packaging.version")
    for text in ("16.14", "8.0.15", "9.6.24", "18"):
        assert version_key(text) == version.Version(text).release
    for text in ("5.7.22-log", "10.11.19-MariaDB-0+deb12u1"):
        with pytest.raises(version.InvalidVersion):
            version.Version(text)


def test_chart_order_keeps_the_numbers_after_the_version():
    # gtid's ratio chart: version first, then its thread counts (1t before 2t), then the label
    from dbexp.book.charts import server_order
    labels = ["mysql 8.0.15, insert, 2t", "mysql 5.7.22, write-only, 1t", "mysql 8.0.15, insert, 1t",
              "mysql 5.7.22, insert, 2t", "mysql 5.7.22, insert, 1t"]
    assert server_order(labels) == ["mysql 5.7.22, insert, 1t", "mysql 5.7.22, write-only, 1t",
                                    "mysql 5.7.22, insert, 2t", "mysql 8.0.15, insert, 1t",
                                    "mysql 8.0.15, insert, 2t"]
