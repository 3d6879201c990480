"""Catalog resolution and its errors (no engine needed)."""

import pytest

from dbexp.catalog import OFFLINE, candidates, lookup, parse_spec
from dbexp.errors import DbexpError


def test_offline_catalog_has_every_promised_version():
    have = {(b.flavor, b.major) for b in OFFLINE}
    assert {("mysql", "5.7"), ("mysql", "8.0"), ("mysql", "9.7"), ("mariadb", "10.11"), ("mariadb", "11.8")} <= have
    assert {("postgres", str(v)) for v in range(12, 19)} <= have


@pytest.mark.parametrize("text,flavor,version,source", [
    ("mysql:8.0", "mysql", "8.0", "auto"),
    ("postgres:16.14@offline", "postgres", "16.14", "offline"),
    ("pg:16", "postgres", "16", "auto"),
    ("mariadb:10.11@official", "mariadb", "10.11", "official"),
])
def test_parse_spec(text, flavor, version, source):
    spec = parse_spec(text)
    assert (spec.flavor, spec.version, spec.source) == (flavor, version, source)


@pytest.mark.parametrize("text,needle", [
    ("oracle:19", "FLAVOR"),
    ("mysql", "FLAVOR:VERSION"),
    ("mysql:8.0@cloud", "valid sources are auto, official or offline"),
])
def test_bad_specs_name_the_value_and_what_is_valid(text, needle):
    with pytest.raises(DbexpError) as err:
        parse_spec(text)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_series_and_exact_versions_resolve_to_offline_builds():
    assert [b.version for b in candidates(parse_spec("postgres:16@offline"))] == ["16.14"]
    assert [b.version for b in candidates(parse_spec("postgres:16.14@offline"))] == ["16.14"]
    assert [b.version for b in candidates(parse_spec("mysql:8.0@offline"))] == ["8.0.15"]
    assert [b.version for b in candidates(parse_spec("mysql:9.7@offline"))] == ["9.7.4"]
    assert [b.version for b in candidates(parse_spec("mariadb:11.8@offline"))] == ["11.8.9"]
    # auto prefers the official image, then falls back to the offline build
    assert [b.source for b in candidates(parse_spec("mysql:8.0"))] == ["official", "offline"]


def test_official_only_versions_say_so():
    with pytest.raises(DbexpError) as err:
        lookup(parse_spec("mysql:8.4@offline"))
    assert "mysql:8.4@official" in str(err.value)
    assert "no package registry reachable here ships MySQL 8.4" in str(err.value)
    with pytest.raises(DbexpError) as err:
        lookup(parse_spec("postgres:11"))
    assert "known postgres versions" in str(err.value)
