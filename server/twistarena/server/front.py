"""An optional front for the gRPC port that caps connections per client address.

gRPC has no per-address connection cap, so with ``serve
--connections-per-peer N`` the public port is this asyncio relay: it refuses
(closes at once) a connection from an address that already holds N, and
relays the others byte for byte (TLS included, untouched) to the gRPC server
listening on a loopback port. The relay's side of each relayed connection is
remembered, so that the servicers still see the real client address
(``real_peer``).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from . import logs, metrics

log = logs.get("twistarena.front")

#: Loopback port of a relayed connection (the relay's end) -> the client's address.
_REAL_PEERS: dict[int, str] = {}


def real_peer(loopback_port: int) -> str | None:
    """The client address behind a connection the front relays, if it is one."""
    return _REAL_PEERS.get(loopback_port)


class _Side(asyncio.Protocol):
    """One end of a relayed connection; the other end is ``peer``."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.peer: _Side | None = None
        self.pending: list[bytes] = []
        self.on_close: Any = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        peer = self.peer
        if peer is not None and peer.transport is not None:
            peer.transport.write(data)
        else:
            self.pending.append(data)

    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.on_close is not None:
            self.on_close()
            self.on_close = None
        peer = self.peer
        if peer is not None and peer.transport is not None and not peer.transport.is_closing():
            peer.transport.close()

    def eof_received(self) -> bool | None:
        return None


class _Client(_Side):
    """The client's end: admitted (or refused) by the front as it connects."""

    def __init__(self, front: ConnectionFront) -> None:
        super().__init__()
        self.front = front

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        assert self.transport is not None
        self.front.admit(self, self.transport)


class ConnectionFront:
    """The relay in front of the gRPC port (see the module's docstring)."""

    def __init__(self, per_peer: int) -> None:
        self.per_peer = per_peer
        self.open: Counter[str] = Counter()
        self.backend_port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int, backend_port: int,
                    reuse_port: bool = False) -> int:
        """Listen on ``host:port`` in front of the gRPC server's ``backend_port``
        (shared with other processes when ``reuse_port``: the cap then counts per
        process); returns the bound port."""
        self.backend_port = backend_port
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._accept, host, port,
                                                reuse_port=reuse_port or None)
        bound: int = self._server.sockets[0].getsockname()[1]
        return bound

    def _accept(self) -> _Side:
        return _Client(self)

    def admit(self, side: _Side, transport: asyncio.Transport) -> None:
        """A client connected: refuse it over the cap, else relay it."""
        address = str(transport.get_extra_info("peername")[0])
        if self.open[address] >= self.per_peer:
            metrics.ERRORS.labels("connections_per_peer").inc()
            log.info("connection_refused", peer=address, open=self.open[address])
            transport.abort()
            return
        self.open[address] += 1
        side.on_close = lambda: self._closed(address)
        transport.pause_reading()
        task = asyncio.get_running_loop().create_task(self._relay(side, address))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _closed(self, address: str) -> None:
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]

    async def _relay(self, front: _Side, address: str) -> None:
        loop = asyncio.get_running_loop()
        try:
            transport, back = await loop.create_connection(_Side, "127.0.0.1", self.backend_port)
        except OSError:
            if front.transport is not None:
                front.transport.close()
            return
        local = transport.get_extra_info("sockname")[1]
        _REAL_PEERS[local] = address
        back.on_close = lambda: _REAL_PEERS.pop(local, None)
        front.peer, back.peer = back, front
        for chunk in front.pending:
            transport.write(chunk)
        front.pending.clear()
        if front.transport is None or front.transport.is_closing():
            transport.close()
            return
        front.transport.resume_reading()

    async def close(self) -> None:
        """Stop accepting connections."""
        if self._server is not None:
            self._server.close()
