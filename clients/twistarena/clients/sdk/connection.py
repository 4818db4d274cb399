"""Channels, server lists, retry policy and the errors an agent may raise.

Kept apart from the agent so that the command line's admin calls (create,
list, watch, replay) fail over between servers the same way agents do.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import grpc
import grpc.aio
from twistarena import wire

T = TypeVar("T")

#: Channel options: fast reconnects, keepalive so that a dead peer is noticed.
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.keepalive_time_ms", 20000),
    ("grpc.keepalive_timeout_ms", 10000),
    # Unanswered pings close the connection after this, not after the keepalive
    # timeout (gRPC core's default is 60 s).
    ("grpc.http2.ping_timeout_ms", 10000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 1),
)

#: Errors worth another try, possibly on another server.
RETRYABLE = frozenset({
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
})

#: Reasons (``twistarena-reason`` trailer) that no retry can fix.
FATAL_REASONS = frozenset({"TAKEN_OVER", "BAD_TOKEN", "UNKNOWN_MATCH", "MALFORMED_MESSAGE",
                           "INVALID_OPTIONS", "PERMISSION_DENIED_ADMIN"})

#: Trailing metadata of a NOT_OWNER or STORE_UNAVAILABLE refusal: HOST:PORT of the
#: node that owns the match (or will).
OWNER_KEY = wire.OWNER_KEY
#: Trailing metadata of a refusal: do not call this server again before this many ms.
RETRY_AFTER_KEY = wire.RETRY_AFTER_KEY


class AgentError(Exception):
    """A failure retrying cannot fix: bad token, unknown match, seat taken over..."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None,
                 reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


def stub(stub_class: Any, channel: grpc.aio.Channel) -> Any:
    """A generated service stub (generated code is untyped; keep the Any in one place)."""
    return stub_class(channel)


def parse_servers(servers: str | Sequence[str]) -> list[str]:
    """``"a:1,b:2"`` or ``["a:1", "b:2"]`` -> ``["a:1", "b:2"]`` (at least one)."""
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    out = [s.strip() for s in items if s and s.strip()]
    if not out:
        raise ValueError("no server address given (HOST:PORT[,HOST:PORT...])")
    return out


def read_root_cert(root_cert: bytes | str | Path | None) -> bytes | None:
    """Accept PEM bytes or a path to a PEM file."""
    if root_cert is None or isinstance(root_cert, bytes):
        return root_cert
    return Path(root_cert).read_bytes()


def make_channel(address: str, root_cert: bytes | None = None, tls: bool = False,
                 extra_options: Sequence[tuple[str, int | str]] = ()) -> grpc.aio.Channel:
    """An insecure channel, or a TLS one when a root cert is given or ``tls`` is set."""
    options = [*CHANNEL_OPTIONS, *extra_options]
    if root_cert is not None or tls:
        creds = grpc.ssl_channel_credentials(root_certificates=root_cert)
        return grpc.aio.secure_channel(address, creds, options=options)
    return grpc.aio.insecure_channel(address, options=options)


def metadata_value(metadata: object, key: str) -> str:
    """One value of a (possibly missing) gRPC metadata sequence, '' if absent."""
    if not metadata:
        return ""
    try:
        for item in metadata:  # type: ignore[attr-defined]
            k, v = item[0], item[1]
            if k == key:
                return v.decode() if isinstance(v, bytes) else str(v)
    except (TypeError, IndexError):
        return ""
    return ""


def error_reason(error: grpc.aio.AioRpcError) -> str:
    """The machine-readable ``twistarena-reason`` trailer of a failed call."""
    return metadata_value(error.trailing_metadata(), wire.REASON_KEY)


def redirect_target(error: grpc.aio.AioRpcError) -> str:
    """Where a refusal (NOT_OWNER, or STORE_UNAVAILABLE from a node cut from its
    store) says the match lives ('' if it does not say)."""
    if error_reason(error) not in ("NOT_OWNER", "STORE_UNAVAILABLE"):
        return ""
    return metadata_value(error.trailing_metadata(), OWNER_KEY)


def retry_after_s(error: grpc.aio.AioRpcError) -> float:
    """How long the refusing server asked not to be called again (0: no hint)."""
    try:
        return max(0.0, int(metadata_value(error.trailing_metadata(), RETRY_AFTER_KEY)
                            or 0) / 1000)
    except ValueError:
        return 0.0


class ServerList:
    """The servers to try in turn, skipping an address while the hint of its last
    refusal (``twistarena-retry-after-ms``) runs: another server is tried first,
    and the one that turned the caller away only once its wait is over."""

    def __init__(self, servers: Sequence[str]) -> None:
        self.servers = list(servers)
        self.index = 0
        #: address -> monotonic time before which it is not called again
        self.not_before: dict[str, float] = {}

    @property
    def current(self) -> str:
        """The address to call now."""
        return self.servers[self.index % len(self.servers)]

    def refused(self, address: str, error: grpc.aio.AioRpcError) -> bool:
        """Note ``address``'s refusal; True when it came with a retry hint."""
        wait = retry_after_s(error)
        if wait:
            self.not_before[address] = time.monotonic() + wait
        return wait > 0

    def advance(self) -> float:
        """Move to the next server whose wait is over; returns how long to wait
        before calling it (0 when one is free now, else until the earliest)."""
        now = time.monotonic()
        count = len(self.servers)
        for step in range(1, count + 1):
            address = self.servers[(self.index + step) % count]
            if self.not_before.get(address, 0.0) <= now:
                self.index += step
                return 0.0
        soonest = min(range(1, count + 1), key=lambda step: self.not_before.get(
            self.servers[(self.index + step) % count], 0.0))
        self.index += soonest
        return max(0.0, self.not_before.get(self.current, 0.0) - now)


def describe(error: grpc.aio.AioRpcError) -> str:
    reason = error_reason(error)
    extra = f" [{reason}]" if reason else ""
    return f"{error.code().name}{extra}: {error.details() or ''}"


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with jitter, so that a restarted server is not stampeded."""

    initial: float = 0.05
    maximum: float = 2.0
    multiplier: float = 2.0
    #: Give up after this long without a successful connection.
    give_up_after: float = 120.0

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Delay before retry ``attempt`` (0-based): half fixed, half random."""
        cap = min(self.maximum, self.initial * self.multiplier ** attempt)
        draw = (rng or random).random()
        return cap / 2 + draw * cap / 2


def is_retryable(error: grpc.aio.AioRpcError) -> bool:
    if error_reason(error) in FATAL_REASONS:
        return False
    return error.code() in RETRYABLE


async def call_with_failover(servers: Sequence[str], root_cert: bytes | None,
                             fn: Callable[[grpc.aio.Channel], Awaitable[T]],
                             backoff: Backoff | None = None, tls: bool = False,
                             retry_on: frozenset[grpc.StatusCode] = RETRYABLE) -> T:
    """Run one unary call, trying the next server (with backoff) on retryable errors.

    Calls that must not run twice (CreateMatch) pass ``retry_on={UNAVAILABLE}``.
    """
    policy = backoff or Backoff(give_up_after=15.0)
    start = time.monotonic()
    attempt = 0
    redirect = ""
    turns = ServerList(servers)
    while True:
        address = redirect or turns.current
        followed, redirect = bool(redirect), ""
        async with make_channel(address, root_cert, tls) as channel:
            try:
                return await fn(channel)
            except grpc.aio.AioRpcError as error:
                retry = is_retryable(error) and error.code() in retry_on
                if not retry or time.monotonic() - start > policy.give_up_after:
                    raise AgentError(f"{address}: {describe(error)}", error.code(),
                                     error_reason(error)) from None
                hinted = turns.refused(address, error)
                # A refusal naming the owner: go there at once (once in a row).
                target = redirect_target(error)
                if target and target != address and not followed:
                    redirect = target
                    continue
        wait = turns.advance()
        await asyncio.sleep(max(wait, 0.0 if hinted else policy.delay(attempt)))
        attempt += 1


def bearer(token: str | None) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying ``token`` as a bearer token (nothing without one)."""
    return ((wire.AUTHORIZATION_KEY, f"Bearer {token}"),) if token else ()


async def unary(stub_class: Any, method: str, request: Any, servers: Sequence[str],
                root_cert: bytes | None, *, metadata: tuple[tuple[str, str], ...] = (),
                tls: bool = False, backoff: Backoff | None = None,
                retry_on: frozenset[grpc.StatusCode] = RETRYABLE) -> Any:
    """One unary call of ``stub_class.method`` with failover (``call_with_failover``)."""
    async def call(channel: grpc.aio.Channel) -> Any:
        client = stub(stub_class, channel)
        return await getattr(client, method)(request, metadata=metadata, timeout=30)

    return await call_with_failover(servers, root_cert, call, backoff, tls, retry_on)


class ServiceClient:
    """Unary calls to one service over a list of servers, failing over like agents do."""

    #: The generated stub class of the service.
    STUB: ClassVar[Any]
    #: Status codes retried on the next server when a call does not say otherwise.
    RETRY_ON: ClassVar[frozenset[grpc.StatusCode]] = RETRYABLE

    def __init__(self, server: str | Sequence[str], *, root_cert: bytes | str | Path | None = None,
                 tls: bool = False, admin_token: str | None = None,
                 backoff: Backoff | None = None) -> None:
        self.servers = parse_servers(server)
        self.root_cert = read_root_cert(root_cert)
        self.tls = tls
        self.backoff = backoff or Backoff(give_up_after=15.0)
        self._metadata = bearer(admin_token)

    async def _unary(self, method: str, request: Any,
                     retry_on: frozenset[grpc.StatusCode] | None = None) -> Any:
        return await unary(self.STUB, method, request, self.servers, self.root_cert,
                           metadata=self._metadata, tls=self.tls, backoff=self.backoff,
                           retry_on=retry_on or self.RETRY_ON)
