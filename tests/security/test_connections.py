"""Connections that never speak HTTP/2 are closed: a handful of idle sockets
cannot hold the server's file descriptors."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from tests.security.hostile import limited_server
from tests.support.agents import create, options, run


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


def test_connections_per_client_address_are_capped(valkey: Any) -> None:
    import grpc
    from grpc import aio
    from twistarena.v1 import match_pb2 as mpb
    from twistarena.v1 import match_pb2_grpc as mgrpc

    with limited_server(valkey, connections_per_peer=3, creates_per_minute=4) as srv:
        async def main() -> None:
            loop = asyncio.get_running_loop()
            held = []
            for _ in range(3):
                sock = socket.socket()
                sock.setblocking(False)
                await loop.sock_connect(sock, ("127.0.0.1", srv.port))
                held.append(sock)
            extra = socket.socket()
            extra.setblocking(False)
            await loop.sock_connect(extra, ("127.0.0.1", srv.port))
            try:
                # The fourth connection of this address is closed at once.
                assert await _closed_by_server(extra, 5) < 2
            finally:
                extra.close()
            for sock in held:
                sock.close()
            # Through the relay, calls work and the quotas still see the client's address.
            async with aio.insecure_channel(srv.target) as ch:
                stub = mgrpc.MatchesStub(ch)
                try:
                    # The server notices the closed sockets a moment later: until then a
                    # new connection is still over the cap, so wait until one is let in.
                    await stub.GetMatch(mpb.GetMatchRequest(match_id="nope"),
                                        wait_for_ready=True, timeout=20)
                except aio.AioRpcError as err:
                    assert err.code() is grpc.StatusCode.NOT_FOUND
                codes = []
                for _ in range(4):
                    try:
                        await create(ch, options("twisted", 2))
                        codes.append(grpc.StatusCode.OK)
                    except aio.AioRpcError as err:
                        codes.append(err.code())
                        assert "per client address" in err.details()
                assert grpc.StatusCode.RESOURCE_EXHAUSTED in codes
        run(main())
