"""Where a server's port comes from (dbexp.servers.lifecycle.free_port)."""

from __future__ import annotations


def test_a_servers_port_is_drawn_below_the_kernels_ephemeral_range():
    """A port the kernel hands out is one it also gives outgoing connections (a client's local port took a
    PostgreSQL's port before it bound it, in a make test of 2026-12-07): free_port draws below that range."""
    import socket

    from dbexp.servers import lifecycle

    low = lifecycle._ephemeral_low()
    ports = {lifecycle.free_port() for _ in range(20)}
    assert all(lifecycle.PORTS_FROM <= p < low for p in ports) and len(ports) > 1
    for p in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))  # free when handed out
