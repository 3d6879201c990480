"""The same binary as a bare, pinned host process (the container-vs-bare control)."""

import pytest

from conftest import MYSQL, POSTGRES
from dbexp.metrics.procfs import cpus_allowed, descendants

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("spec,prefix", [(POSTGRES, "16."), (MYSQL, "8.0.")])
def test_bare_server_is_the_same_build_pinned(spec, prefix):
    from dbexp.servers import ServerConfig, bare
    with bare.running(ServerConfig(spec, cpuset="1")) as srv:
        assert srv.kind == "bare" and srv.version.startswith(prefix)
        assert cpus_allowed(srv.main_pid()) == "1"
        pid = srv.main_pid()
    assert pid not in descendants(1)  # stopped with the block
