"""DBEXP_REGISTRY_MIRROR: which values are valid, and where an official ref lives on a mirror
(dbexp/images/pull.py; nothing here talks to an engine or a registry)."""

from __future__ import annotations

import pytest

from dbexp.errors import DbexpError
from dbexp.images import pull

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("ref, expected", [
    ("mysql:8.4", "M/library/mysql:8.4"),
    ("postgres:17", "M/library/postgres:17"),
    ("mysql", "M/library/mysql"),
    ("bitnami/mysql:8.4", "M/bitnami/mysql:8.4"),
    ("docker.io/library/mysql:8.4", "M/library/mysql:8.4"),
    ("docker.io/mysql:8.4", "M/library/mysql:8.4"),
    ("index.docker.io/bitnami/mysql:8.4", "M/bitnami/mysql:8.4"),
    ("mysql@sha256:" + "a" * 64, "M/library/mysql@sha256:" + "a" * 64),
    # another registry than Docker Hub: a mirror of Docker Hub does not serve it
    ("ghcr.io/owner/mysql:8.4", "ghcr.io/owner/mysql:8.4"),
    ("localhost/mysql:8.4", "localhost/mysql:8.4"),
    ("127.0.0.1:5000/library/mysql:8.4", "127.0.0.1:5000/library/mysql:8.4"),
])
def test_mirror_ref(ref, expected):
    assert pull.mirror_ref(ref, "M") == expected


@pytest.mark.parametrize("value, mirror", [
    ("127.0.0.1:5000", "127.0.0.1:5000"),
    ("localhost:5000", "localhost:5000"),
    ("localhost", "localhost"),
    ("mirror.example.com", "mirror.example.com"),
    ("mirror.example.com/dockerhub", "mirror.example.com/dockerhub"),
    ("mirror.example.com/dockerhub/", "mirror.example.com/dockerhub"),
    ("registry:5000", "registry:5000"),
    ("[::1]:5000", "[::1]:5000"),
    ("", None),
])
def test_valid_mirror_values(monkeypatch, value, mirror):
    monkeypatch.setenv(pull.MIRROR_ENV, value)
    assert pull.mirror() == mirror


def test_no_mirror_means_docker_hub(monkeypatch):
    monkeypatch.delenv(pull.MIRROR_ENV, raising=False)
    assert pull.mirror() is None
    assert pull.source_ref("mysql:8.4") == "mysql:8.4"
    assert pull.origin() == ""


def test_a_mirror_changes_where_official_refs_come_from(monkeypatch):
    monkeypatch.setenv(pull.MIRROR_ENV, "mirror.example.com/dockerhub")
    assert pull.source_ref("mysql:8.4") == "mirror.example.com/dockerhub/library/mysql:8.4"
    assert pull.origin() == f" from mirror mirror.example.com/dockerhub ({pull.MIRROR_ENV})"


@pytest.mark.parametrize("value", [
    "http://127.0.0.1:5000",  # a scheme
    "https://mirror.example.com",
    "127.0.0.1:5000 ",  # spaces
    "mirror example.com",
    "registry",  # Docker would read it as a Docker Hub user, not a host
    "mirror.example.com/DockerHub",  # repository paths are lower case
    "mirror.example.com//x",
    "127.0.0.1:99999",
    "127.0.0.1:",
    "/library",
])
def test_bad_mirror_value_is_one_line_naming_it(monkeypatch, value):
    monkeypatch.setenv(pull.MIRROR_ENV, value)
    with pytest.raises(DbexpError) as err:
        pull.source_ref("mysql:8.4")
    text = str(err.value)
    assert "\n" not in text
    assert f"bad {pull.MIRROR_ENV} {value!r}" in text
    assert "HOST[:PORT][/PATH]" in text and "127.0.0.1:5000" in text
