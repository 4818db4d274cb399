"""Connections that never speak HTTP/2 are closed: a handful of idle sockets
cannot hold the server's file descriptors."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from tests.security.hostile import limited_server
from tests.support.agents import run


async def _closed_by_server(sock: socket.socket, timeout: float) -> float:
    """Seconds until the server closes ``sock`` (which sends nothing)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        while await asyncio.wait_for(loop.sock_recv(sock, 4096), timeout):
            pass
    except ConnectionResetError:
        pass
    return loop.time() - started


def test_connections_without_the_http2_preface_are_closed(valkey: Any) -> None:
    with limited_server(valkey, handshake_timeout_s=1.0) as srv:
        async def main() -> None:
            socks = []
            for _ in range(20):
                sock = socket.create_connection(("127.0.0.1", srv.port))
                sock.setblocking(False)
                socks.append(sock)
            # Half of them start the preface and stop.
            for sock in socks[::2]:
                sock.send(b"PRI * HTTP/2.0\r\n")
            try:
                waited = await asyncio.gather(*(_closed_by_server(s, 10) for s in socks))
            finally:
                for sock in socks:
                    sock.close()
            assert max(waited) < 5, waited
        run(main())
