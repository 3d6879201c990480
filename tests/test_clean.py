"""`dbexp clean` removes whatever the lab left behind, here a container started by testcontainers
(the suite's own way to start an arbitrary labelled container; Ryuk is off, so nothing else reaps it)."""

from __future__ import annotations

import sys

import pytest
from testcontainers.core.container import DockerContainer

from conftest import POSTGRES
from dbexp import process

pytestmark = pytest.mark.docker


def test_clean_removes_leftover_containers_and_their_volumes(engine):
    from dbexp.catalog import parse_spec
    from dbexp.images import ensure, resolve

    image = ensure(resolve(parse_spec(POSTGRES))).ref
    leftover = (DockerContainer(image)
                .with_command("postgres -c listen_addresses=''")
                .with_kwargs(labels={"dbexp": "1", "dbexp.role": "leftover"}, network_mode="none"))
    leftover.start()
    container = leftover.get_wrapped_container()
    volumes = [m["Name"] for m in engine.api.inspect_container(container.id)["Mounts"] if m["Type"] == "volume"]
    assert volumes  # the image declares its data directory as a VOLUME

    present = engine.containers.list(all=True, filters={"label": "dbexp"})
    assert container.id in {c.id for c in present}
    proc = process.run([sys.executable, "-m", "dbexp.cli", "clean"], capture_output=True, text=True,
                       timeout=120)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"removed {len(present)} container(s), ended 0 orphaned load process(es)"
    assert container.id not in {c.id for c in engine.containers.list(all=True)}
    assert not set(volumes) & {v.name for v in engine.volumes.list()}  # anonymous volumes went with it
