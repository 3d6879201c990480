"""The same binary as a bare, pinned host process (the container-vs-bare control)."""

import pytest

from conftest import MYSQL, POSTGRES, assert_catalog_version
from dbexp.metrics.procfs import cpus_allowed, descendants

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("spec", [POSTGRES, MYSQL])
def test_bare_server_is_the_same_build_pinned(spec):
    from dbexp.servers import ServerConfig, bare
    with bare.running(ServerConfig(spec, cpuset="1")) as srv:
        assert srv.kind == "bare"
        assert_catalog_version(srv.version, srv.build)  # the offline build's own binary: 16.14, 8.0.15
        assert cpus_allowed(srv.main_pid()) == "1"
        pid = srv.main_pid()
    assert pid not in descendants(1)  # stopped with the block
