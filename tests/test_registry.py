"""The official path, offline: a local registry serves an image under an official name, and the lab
resolves, pulls and starts it through the official path with DBEXP_REGISTRY_MIRROR naming the registry.

The registry is Debian's ``docker-registry`` (distribution 2.8), run here as a plain process on a free
loopback port with its storage in a temp folder (its packaged service is neither needed nor started);
the engine talks plain HTTP to it because loopback is among its default insecure registries.

The compromise: no official image can be had on this machine, so what the registry serves as
``library/postgres:13`` is the lab's offline build ``dbexp/postgres:13.23`` pushed under that name.
The lab starts official and offline images the same way: the offline recipes' entrypoints keep the
official images' contract (``postgres -c port=N -c listen_addresses=...`` and
``POSTGRES_HOST_AUTH_METHOD``), and the flavor builds the command from the catalog's official build
``postgres:13``, so resolving, probing, pulling, tagging, provenance and the start are the official
path's own; only the real official image's entrypoint script is not exercised. ``postgres:13`` is
used because no other test or chapter asks for it without ``@offline``: while its official name
exists here (only during this test) nothing beside it picks it up by mistake.

No trace is left: the official name and every ``127.0.0.1:PORT/...`` name are removed afterwards,
also after a failure, and so are the probe caches of dbexp/images/pull.py.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import docker.errors
import pytest
import requests

from dbexp import catalog, images, process
from dbexp.catalog import parse_spec
from dbexp.engine import is_local
from dbexp.errors import DbexpError
from dbexp.images import pull
from dbexp.servers import ServerConfig, running
from dbexp.servers.lifecycle import free_port
from dbexp.waits import poll

OFFICIAL = "postgres:13"  # a catalog official build
OFFLINE = "postgres:13.23@offline"  # the image pushed under the official name
MISSING = "postgres:12"  # a catalog official build the registry does not hold
READY_TIMEOUT_S = 30
CONFIG = """\
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: {storage}
  delete:
    enabled: true
http:
  addr: {addr}
"""


@dataclass
class Registry:
    addr: str  # 127.0.0.1:PORT
    log: Path

    def ref(self, official: str) -> str:
        return pull.mirror_ref(official, self.addr)


@pytest.fixture()
def registry(tmp_path):
    """docker-registry serving from a temp folder on a free loopback port; killed on any exit."""
    binary = shutil.which("docker-registry")
    if binary is None:
        pytest.fail("docker-registry is not installed: run `make host` (scripts/setup-host.sh), which "
                    "installs Debian's docker-registry package")
    addr = f"127.0.0.1:{free_port()}"
    config = tmp_path / "registry.yml"
    config.write_text(CONFIG.format(storage=tmp_path / "storage", addr=addr))
    log = tmp_path / "registry.log"
    with open(log, "wb") as out:
        proc = process.Child([binary, "serve", str(config)], stdout=out, stderr=subprocess.STDOUT)
    def answers() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"docker-registry exited with {proc.returncode}: {log.read_text()[-500:]}")
        with contextlib.suppress(requests.exceptions.RequestException):
            return requests.get(f"http://{addr}/v2/", timeout=2).status_code == 200
        return False

    try:
        if not poll(answers, READY_TIMEOUT_S, interval_s=0.2):
            pytest.fail(f"docker-registry did not answer on {addr} within {READY_TIMEOUT_S} s: "
                        f"{log.read_text()[-500:]}")
        yield Registry(addr, log)
    finally:
        proc.kill()
        proc.wait()


def _names(engine, ref: str) -> list[str]:
    try:
        attrs = engine.images.get(ref).attrs
    except docker.errors.ImageNotFound:
        return []
    return (attrs.get("RepoTags") or []) + (attrs.get("RepoDigests") or [])


def _drop_foreign_names(engine, ref: str) -> None:
    """Remove the names this test gives the image ``ref``: the official one and the registry's."""
    for name in _names(engine, ref):
        if name == OFFICIAL or name.startswith("127.0.0.1:"):
            with contextlib.suppress(docker.errors.ImageNotFound):  # a digest name goes with its tag
                engine.images.remove(name, noprune=True)


@pytest.fixture()
def no_trace(engine, monkeypatch):
    """The offline image; before and after the test only its own name, no probe remembered."""
    if not is_local():
        pytest.skip("the registry listens on this host's loopback, which a remote engine (DOCKER_HOST) "
                    "does not reach")
    offline = images.ensure(images.resolve(parse_spec(OFFLINE)))
    present = pull.local_attrs(OFFICIAL)
    if present is not None and present["Id"] != offline.id:
        pytest.skip(f"an image {OFFICIAL} (a real official one?) is present; this test would shadow it")
    _drop_foreign_names(engine, offline.ref)  # an interrupted run's leftovers
    pull.forget_probes()
    try:
        yield offline
    finally:
        monkeypatch.delenv(pull.MIRROR_ENV, raising=False)
        pull.forget_probes()
        _drop_foreign_names(engine, offline.ref)
        assert pull.local_attrs(OFFICIAL) is None
        assert _names(engine, offline.ref) == [offline.ref]


def _push(engine, source: str, target: str) -> str:
    """Push the local image ``source`` as ``target``; returns the digest the registry gave it."""
    engine.images.get(source).tag(target)
    digest = ""
    for chunk in engine.api.push(target, stream=True, decode=True):
        if "error" in chunk:
            raise AssertionError(f"pushing {target} failed: {chunk['error']}")
        digest = chunk.get("aux", {}).get("Digest", digest)
    assert digest.startswith("sha256:"), f"pushing {target} gave no digest"
    return digest


@pytest.mark.docker
def test_official_image_from_a_local_registry_runs_through_the_official_path(engine, registry, no_trace,
                                                                              monkeypatch):
    offline = no_trace
    served = registry.ref(OFFICIAL)
    assert served == f"{registry.addr}/library/postgres:13"
    digest = _push(engine, offline.ref, served)
    _drop_foreign_names(engine, offline.ref)  # the registry alone has it under those names now
    assert pull.local_attrs(OFFICIAL) is None and pull.local_attrs(served) is None

    monkeypatch.setenv(pull.MIRROR_ENV, registry.addr)
    # auto prefers the official build, which the mirror now makes pullable
    assert images.resolve(parse_spec(OFFICIAL)).spec == "postgres:13@official"
    row = {r["image"]: r for r in images.list_rows()}[OFFICIAL]
    assert (row["status"], row["detail"]) == ("pullable", f"from mirror {registry.addr} ({pull.MIRROR_ENV})")

    if pull.local_attrs(MISSING) is None:
        # the registry answers "manifest unknown" for a tag it lacks: the offline build serves it
        assert images.resolve(parse_spec(MISSING)).source == "offline"
        with pytest.raises(DbexpError) as err:
            images.ensure(next(b for b in catalog.OFFICIAL if b.image == MISSING))
        assert f"could not be pulled from mirror {registry.addr} ({pull.MIRROR_ENV}) (not in the registry" \
            in str(err.value)

    seen = len(registry.log.read_text())
    with running(ServerConfig(f"{OFFICIAL}@official", cpuset="1", memory="1g")) as server:
        assert server.build.spec == "postgres:13@official"
        assert (server.image.ref, server.image.source, server.image.id) == (OFFICIAL, "official", offline.id)
        # provenance: the digest the mirror serves it under (only a pull from the registry gives it back)
        assert server.image.digest == f"{registry.addr}/library/postgres@{digest}"
        assert server.query("SELECT VERSION()")[0][0].startswith("PostgreSQL 13.23")
        assert server.version == "13.23"
        assert server.query("SELECT count(*) FROM generate_series(1, 1000)")[0][0] == 1000
    # the start pulled it: the registry's access log shows the manifest asked for (by tag or digest)
    asked = re.compile(rf'"(HEAD|GET) /v2/library/postgres/manifests/(13|{digest}) HTTP/[0-9.]+" 200 ')
    assert asked.search(registry.log.read_text()[seen:]), "the start asked the registry for no manifest"


@pytest.mark.docker
def test_unreachable_mirror_falls_back_offline_and_says_so(engine, no_trace, monkeypatch):
    nothing = f"127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setenv(pull.MIRROR_ENV, nothing)
    assert pull.probe(OFFICIAL) == (False, pull.NO_REGISTRY)
    assert pull.registry_down_reason()
    assert images.resolve(parse_spec(OFFICIAL)).spec == "postgres:13.23@offline"
    if pull.local_attrs("mysql:8.4") is not None:
        return
    with pytest.raises(DbexpError) as err:
        images.resolve(parse_spec("mysql:8.4"))
    assert f"official image mysql:8.4 could not be pulled from mirror {nothing} ({pull.MIRROR_ENV})" \
        in str(err.value)
