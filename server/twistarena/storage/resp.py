"""A lean pipelined RESP connection for the hot path (log appends).

Every decision of every match is one EVALSHA; redis-py spends more time
packing and queueing those than the server spends running them. This
connection writes each tick's batch as one buffer and matches replies to
requests in order (Redis answers in order on a connection), so several
batches can be in flight on one socket. Replies are parsed by
``hiredis.Reader``, the C parser redis-py itself uses. Anything unusual (TLS,
unix sockets, a cluster) uses redis-py instead; ``connection`` says which
commands take this path. ``RespBatch`` gives the few writes each match makes
once (its creation, its fenced field writes, its end) the same path, with the
pipeline calls they use.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import unquote, urlparse

import hiredis
from redis.exceptions import ResponseError


class RespError(ResponseError):
    """An error reply (``-ERR ...``): the driver's own kind, so that the storage
    layer's ``translate`` and ``is_noscript`` read it as they read redis-py's."""


#: What ``hiredis.Reader.gets`` returns while a reply is not complete yet.
_INCOMPLETE = object()


class RespConnectionError(ConnectionError):
    """The connection to Redis broke; requests in flight have unknown outcomes."""


#: One word of a command, as the store takes it.
Arg = bytes | str | int | float


def bulk(arg: Arg) -> bytes:
    """One argument of a command as a RESP bulk string (a float as redis-py writes it)."""
    if isinstance(arg, bytes):
        data = arg
    elif isinstance(arg, str):
        data = arg.encode()
    elif isinstance(arg, float):
        data = repr(arg).encode()
    else:
        data = b"%d" % arg
    return b"$%d\r\n%s\r\n" % (len(data), data)


def bulk_int(arg: int) -> bytes:
    """``bulk(arg)`` for an int (a log length, a count: words of every append)."""
    data = b"%d" % arg
    return b"$%d\r\n%s\r\n" % (len(data), data)


def encode_command(args: Sequence[Arg]) -> bytes:
    """A command as a RESP array of bulk strings."""
    return b"*%d\r\n" % len(args) + b"".join(bulk(arg) for arg in args)


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


class _Batch:
    """Replies of one written batch, collected in order."""

    __slots__ = ("count", "future", "replies")

    def __init__(self, count: int, future: asyncio.Future[list[Any]]) -> None:
        self.count = count
        self.future = future
        self.replies: list[Any] = []


class _Protocol(asyncio.Protocol):
    """Replies parsed as they arrive, handed to the owning pipeline's batches in order."""

    def __init__(self, pipeline: RespPipeline) -> None:
        self.pipeline = pipeline
        self.transport: asyncio.Transport | None = None
        # Error replies come back as RespError values, not raised.
        self.reader = hiredis.Reader(replyError=RespError, notEnoughData=_INCOMPLETE)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio.Transport; they behave as one.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        reader.feed(data)
        pending = self.pipeline._pending
        try:
            while pending:
                value = reader.gets()
                if value is _INCOMPLETE:
                    break
                batch = pending[0]
                batch.replies.append(value)
                if len(batch.replies) >= batch.count:
                    pending.popleft()
                    if not batch.future.done():
                        batch.future.set_result(batch.replies)
        except hiredis.ProtocolError as exc:
            self.pipeline._lost(self, RespConnectionError(f"bad reply from Redis: {exc!r}"))

    def connection_lost(self, exc: Exception | None) -> None:
        reason = f": {exc!r}" if exc is not None else ""
        self.pipeline._lost(self, RespConnectionError(f"connection to Redis closed{reason}"))


class RespPipeline:
    """One connection; each batch of commands is one write and one future for its replies."""

    def __init__(self, host: str, port: int, db: int = 0, username: str | None = None,
                 password: str | None = None) -> None:
        self.host, self.port, self.db = host, port, db
        self.username, self.password = username, password
        self._protocol: _Protocol | None = None
        self._transport: asyncio.Transport | None = None
        self._pending: deque[_Batch] = deque()
        self._connecting: asyncio.Lock | None = None
        self._event_loop: asyncio.AbstractEventLoop | None = None

    async def _connect(self) -> None:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._transport is not None:
                return
            loop = self._loop()
            transport, protocol = await loop.create_connection(
                lambda: _Protocol(self), self.host, self.port)
            sock = transport.get_extra_info("socket")
            if sock is not None:
                import socket

                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            self._transport, self._protocol = transport, protocol
            setup: list[list[bytes | str | int]] = []
            if self.password is not None:
                setup.append(["AUTH", self.username, self.password] if self.username
                             else ["AUTH", self.password])
            if self.db:
                setup.append(["SELECT", self.db])
            if setup:
                for reply in await self.send_encoded(
                        b"".join(encode_command(c) for c in setup), len(setup)):
                    if isinstance(reply, RespError):
                        await self.close()
                        raise reply

    def send_encoded(self, payload: bytes, count: int) -> asyncio.Future[list[Any]]:
        """Write ``count`` RESP-encoded commands now (the connection must be open);
        the future gives their replies in order."""
        transport = self._transport
        assert transport is not None
        future: asyncio.Future[list[Any]] = self._loop().create_future()
        self._pending.append(_Batch(count, future))
        transport.write(payload)
        return future

    def _loop(self) -> asyncio.AbstractEventLoop:
        loop = self._event_loop
        if loop is None:
            loop = self._event_loop = asyncio.get_running_loop()
        return loop

    async def execute_encoded(self, payload: bytes, count: int) -> list[Any]:
        """Send ``count`` encoded commands as one write and wait for every reply
        (error replies are returned, not raised)."""
        if not count:
            return []
        if self._transport is None:
            await self._connect()
        return await self.send_encoded(payload, count)

    async def execute(self, commands: Sequence[Sequence[bytes | str | int]]) -> list[Any]:
        """Send a batch and wait for every reply (errors are returned, not raised)."""
        return await self.execute_encoded(b"".join(encode_command(c) for c in commands),
                                          len(commands))

    def _lost(self, protocol: _Protocol, error: BaseException) -> None:
        """The connection broke: every batch in flight fails (its outcome is unknown)."""
        if protocol is not self._protocol:
            return
        transport = self._transport
        self._transport = self._protocol = None
        if transport is not None:
            transport.abort()
        while self._pending:
            batch = self._pending.popleft()
            if not batch.future.done():
                batch.future.set_exception(error)

    async def close(self) -> None:
        """Close the connection; the replies still awaited fail."""
        protocol = self._protocol
        if protocol is not None:
            self._lost(protocol, RespConnectionError("closed"))


#: How long a batch waits for its replies (redis-py's default socket timeout): a
#: store gone silent fails the call as unreachable instead of holding its caller
#: (a runner's lock, a Play call) for ever.
BATCH_TIMEOUT_S = 5.0


class RespBatch:
    """A pipeline of a few commands on the lean connection: the subset of redis-py's
    pipeline calls the per-match writes use, sent as one write on ``execute``, and
    bounded in time as redis-py's calls are.

    Replies are the raw ones (no per-command conversion): integers, bytes, lists,
    and ``RespError`` values for error replies."""

    __slots__ = ("_commands", "_pipeline", "_timeout_s")

    def __init__(self, pipeline: RespPipeline, wait_s: float = 0.0) -> None:
        """``wait_s``: how long the batch's own commands may block in the store
        (a WAIT or WAITAOF), on top of ``BATCH_TIMEOUT_S``."""
        self._pipeline = pipeline
        self._commands: list[bytes] = []
        self._timeout_s = BATCH_TIMEOUT_S + wait_s

    def execute_command(self, *args: Arg) -> RespBatch:
        """Queue one command, its words as given."""
        self._commands.append(encode_command(args))
        return self

    def hset(self, name: str, mapping: Mapping[str, Arg]) -> RespBatch:
        """Queue ``HSET name field value ...``."""
        return self.execute_command("HSET", name, *(x for kv in mapping.items() for x in kv))

    def sadd(self, name: str, *values: Arg) -> RespBatch:
        """Queue ``SADD name value ...``."""
        return self.execute_command("SADD", name, *values)

    def srem(self, name: str, *values: Arg) -> RespBatch:
        """Queue ``SREM name value ...``."""
        return self.execute_command("SREM", name, *values)

    def zadd(self, name: str, mapping: Mapping[str, float], nx: bool = False) -> RespBatch:
        """Queue ``ZADD name [NX] score member ...`` (``mapping``: member -> score)."""
        flags: tuple[Arg, ...] = ("NX",) if nx else ()
        pairs = (x for member, score in mapping.items() for x in (score, member))
        return self.execute_command("ZADD", name, *flags, *pairs)

    def zrem(self, name: str, *values: Arg) -> RespBatch:
        """Queue ``ZREM name member ...``."""
        return self.execute_command("ZREM", name, *values)

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        """Send the commands as one write; every reply in order. ``raise_on_error``:
        raise the first error reply instead (as redis-py does)."""
        commands, self._commands = self._commands, []
        try:
            replies = await asyncio.wait_for(
                self._pipeline.execute_encoded(b"".join(commands), len(commands)),
                self._timeout_s)
        except TimeoutError:
            # The batch's replies, if they come, are still matched in order (and dropped).
            raise TimeoutError(f"no reply from Redis in {self._timeout_s:g} s") from None
        if raise_on_error:
            for reply in replies:
                if isinstance(reply, RespError):
                    raise reply
        return replies
