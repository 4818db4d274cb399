"""A lean pipelined RESP connection for the hot path (log appends).

Every decision of every match is one EVALSHA; redis-py spends more time
packing and parsing those than the server spends running them. This
connection writes each tick's batch as one buffer and matches replies to
requests in order (Redis answers in order on a connection), so several
batches can be in flight on one socket. Anything unusual (TLS, unix sockets)
uses redis-py instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlparse


class RespError(Exception):
    """An error reply (``-ERR ...``)."""


class RespConnectionError(ConnectionError):
    """The connection to Redis broke; requests in flight have unknown outcomes."""


def encode_command(args: Sequence[bytes | str | int]) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, bytes):
            data = arg
        elif isinstance(arg, str):
            data = arg.encode()
        else:
            data = b"%d" % arg
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class _Incomplete(Exception):
    pass


def parse_reply(buf: bytes, pos: int) -> tuple[Any, int]:
    """One reply from ``buf`` at ``pos``: (value, next position); raises _Incomplete."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise _Incomplete
    kind = buf[pos:pos + 1]
    line = buf[pos + 1:end]
    nxt = end + 2
    if kind == b":":
        return int(line), nxt
    if kind == b"$":
        size = int(line)
        if size < 0:
            return None, nxt
        if len(buf) < nxt + size + 2:
            raise _Incomplete
        return buf[nxt:nxt + size], nxt + size + 2
    if kind == b"*":
        count = int(line)
        if count < 0:
            return None, nxt
        items = []
        for _ in range(count):
            item, nxt = parse_reply(buf, nxt)
            items.append(item)
        return items, nxt
    if kind == b"+":
        return line.decode(), nxt
    if kind == b"-":
        return RespError(line.decode(errors="replace")), nxt
    if kind == b"_":  # RESP3 null
        return None, nxt
    raise RespConnectionError(f"unexpected reply type {kind!r}")


def fast_path_target(url: str) -> tuple[str, int, int, str | None, str | None] | None:
    """(host, port, db, username, password) for a plain redis:// URL, else None."""
    parsed = urlparse(url)
    if parsed.scheme != "redis" or not parsed.hostname:
        return None
    if parsed.query:
        return None
    db = 0
    path = parsed.path.strip("/")
    if path:
        try:
            db = int(path)
        except ValueError:
            return None
    user = unquote(parsed.username) if parsed.username else None
    password = unquote(parsed.password) if parsed.password else None
    return parsed.hostname, parsed.port or 6379, db, user, password


class RespPipeline:
    """One connection; ``send`` queues commands and returns a future per reply."""

    def __init__(self, host: str, port: int, db: int = 0, username: str | None = None,
                 password: str | None = None) -> None:
        self.host, self.port, self.db = host, port, db
        self.username, self.password = username, password
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: deque[asyncio.Future[Any]] = deque()
        self._read_task: asyncio.Task[None] | None = None
        self._connecting: asyncio.Lock | None = None

    async def _connect(self) -> None:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._writer is not None:
                return
            reader, writer = await asyncio.open_connection(self.host, self.port)
            sock = writer.get_extra_info("socket")
            if sock is not None:
                import socket

                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            self._reader, self._writer = reader, writer
            self._read_task = asyncio.get_running_loop().create_task(self._read_loop(reader))
            setup: list[list[bytes | str | int]] = []
            if self.password is not None:
                setup.append(["AUTH", self.username, self.password] if self.username
                             else ["AUTH", self.password])
            if self.db:
                setup.append(["SELECT", self.db])
            for fut in self.send(setup):
                reply = await fut
                if isinstance(reply, RespError):
                    await self.close()
                    raise reply

    def send(self, commands: Sequence[Sequence[bytes | str | int]]) -> list[asyncio.Future[Any]]:
        """Write commands now (the connection must be open); futures resolve in order."""
        assert self._writer is not None
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in commands]
        self._pending.extend(futures)
        self._writer.write(b"".join(encode_command(c) for c in commands))
        return futures

    async def execute(self, commands: Sequence[Sequence[bytes | str | int]]) -> list[Any]:
        """Send a batch and wait for every reply (errors are returned, not raised)."""
        if self._writer is None:
            await self._connect()
        futures = self.send(commands)
        return list(await asyncio.gather(*futures))

    async def _read_loop(self, reader: asyncio.StreamReader) -> None:
        buf = b""
        error: BaseException = RespConnectionError("connection to Redis closed")
        try:
            while True:
                data = await reader.read(1 << 16)
                if not data:
                    break
                buf += data
                pos = 0
                pending = self._pending
                while pending:
                    try:
                        value, pos2 = parse_reply(buf, pos)
                    except _Incomplete:
                        break
                    pos = pos2
                    fut = pending.popleft()
                    if not fut.done():
                        fut.set_result(value)
                buf = buf[pos:]
        except (OSError, RespConnectionError, ValueError) as exc:
            error = RespConnectionError(f"connection to Redis failed: {exc!r}")
        finally:
            self._fail_all(error)

    def _fail_all(self, error: BaseException) -> None:
        writer = self._writer
        self._reader = self._writer = None
        if writer is not None:
            writer.close()
        while self._pending:
            fut = self._pending.popleft()
            if not fut.done():
                fut.set_exception(error)

    async def close(self) -> None:
        task = self._read_task
        writer = self._writer
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self._fail_all(RespConnectionError("closed"))
