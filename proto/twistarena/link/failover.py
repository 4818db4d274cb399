"""The one retry and failover policy of every client of the node.

What is retried (``is_retryable``), how long to wait (``Backoff``: exponential,
jittered, capped, bounded in time and optionally in attempts), the server's
retry hint (a refusing server is skipped for as long as its
``twistarena-retry-after-ms`` says, while the others are tried) and the owner
hint (a NOT_OWNER or STORE_UNAVAILABLE refusal naming ``twistarena-owner`` is
followed at once, but never twice in a row without progress, so two nodes
naming each other cannot bounce a caller). ``Failover`` holds that state for
one caller; ``call_with_failover`` (unary calls) and ``follow_stream``
(server streams resumed after a failure) are the loops built on it, and the
agent's Play stream and the runner's Connect stream use ``Failover`` directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import grpc
import grpc.aio

from .channels import (
    bearer,
    call_error,
    error_reason,
    make_channel,
    parse_servers,
    read_root_cert,
    redirect_target,
    retry_after_s,
    stub,
)

T = TypeVar("T")

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
#: What a call that creates something is retried on: only a server that was not
#: reached; after any other failure the first server may have created it already.
CREATE_RETRY_ON = frozenset({grpc.StatusCode.UNAVAILABLE})
#: Every status but success: for a caller that retries all but what it names.
EVERY_FAILURE = frozenset(set(grpc.StatusCode) - {grpc.StatusCode.OK})

#: Reasons (``twistarena-reason`` trailer) that no retry can fix.
FATAL_REASONS = frozenset({"TAKEN_OVER", "BAD_TOKEN", "UNKNOWN_MATCH", "MALFORMED_MESSAGE",
                           "INVALID_OPTIONS", "PERMISSION_DENIED_ADMIN"})


def is_retryable(error: grpc.aio.AioRpcError,
                 retry_on: frozenset[grpc.StatusCode] = RETRYABLE) -> bool:
    """Whether another try (maybe elsewhere) can succeed: never for a fatal reason;
    always for NOT_OWNER (the match is elsewhere); else when its code is in ``retry_on``."""
    reason = error_reason(error)
    if reason in FATAL_REASONS:
        return False
    return reason == "NOT_OWNER" or error.code() in retry_on


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with jitter, so that a restarted server is not stampeded,
    and the bounds of a caller's retries: how long without progress, and how many
    refusals in a row, before it gives up."""

    #: The first retry's delay (its cap: half of it is fixed, half drawn).
    initial: float = 0.05
    #: No delay is longer than this, however many attempts failed.
    maximum: float = 2.0
    #: Each failed attempt multiplies the delay by this, up to ``maximum``.
    multiplier: float = 2.0
    #: Give up after this long without progress (a successful call, a message).
    give_up_after: float = 120.0
    #: Give up after this many refusals in a row as well, redirects included (0: time
    #: alone bounds them).
    max_attempts: int = 0

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Delay before retry ``attempt`` (0-based): half fixed, half random."""
        cap = min(self.maximum, self.initial * self.multiplier ** attempt)
        draw = (rng or random).random()
        return cap / 2 + draw * cap / 2


#: The policy of a caller that never gives up (a runner): up to 10 s apart.
FOREVER = Backoff(initial=0.2, maximum=10.0, give_up_after=math.inf)


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


class Failover:
    """One caller's way through its servers under one ``Backoff``.

    A loop asks ``next_address()``, calls it, says ``progressed()`` when the call
    got somewhere, and on a retryable refusal says ``refused(error)``, then
    checks ``exhausted`` and awaits ``pause()`` (nothing when a redirect is to be
    followed; else the wait a hint asks for, or the backoff's delay)."""

    def __init__(self, servers: Sequence[str], policy: Backoff | None = None,
                 rng: random.Random | None = None) -> None:
        self.policy = policy or Backoff()
        self.turns = ServerList(servers)
        self.rng = rng
        #: Backoff delays taken since the last progress (the next delay's exponent).
        self.attempt = 0
        #: Refusals since the last progress, redirects included.
        self.failures = 0
        self.last_ok = time.monotonic()
        #: The address of the current attempt.
        self.address = ""
        #: Where the last refusal said to go ('' when nowhere in particular).
        self.redirect = ""
        self._followed = False
        self._hinted = False

    def next_address(self) -> str:
        """The address to call now: the owner a refusal named, else the list's turn."""
        self.address = self.redirect or self.turns.current
        self._followed, self.redirect, self._hinted = bool(self.redirect), "", False
        return self.address

    def progressed(self) -> None:
        """The call got somewhere (a message, a seat): the backoff starts over, and
        a refusal naming an owner may be followed again."""
        self.attempt, self.failures, self.last_ok = 0, 0, time.monotonic()
        self._followed = False

    def refused(self, error: grpc.aio.AioRpcError) -> None:
        """Note a retryable refusal of the current address: its retry hint keeps the
        address aside that long; the owner it names is called next, at once
        (unless this attempt was itself such a redirect, with no progress since)."""
        self.failures += 1
        self._hinted = self.turns.refused(self.address, error)
        target = redirect_target(error)
        if target and target != self.address and not self._followed:
            self.redirect = target

    @property
    def exhausted(self) -> bool:
        """The policy's bounds are spent: too long, or too many attempts, without progress."""
        if time.monotonic() - self.last_ok > self.policy.give_up_after:
            return True
        return 0 < self.policy.max_attempts <= self.failures

    def delay(self) -> float:
        """Seconds to wait before the next attempt (0 before following a redirect): the
        next free server's hint, or the backoff's delay. Moves to that server."""
        if self.redirect:
            return 0.0
        wait = self.turns.advance()
        delay = 0.0 if self._hinted else self.policy.delay(self.attempt, self.rng)
        self.attempt += 1
        return max(wait, delay)

    async def pause(self) -> None:
        """Wait before the next attempt (``delay``)."""
        await asyncio.sleep(self.delay())


async def call_with_failover(servers: Sequence[str], root_cert: bytes | None,
                             fn: Callable[[grpc.aio.Channel], Awaitable[T]],
                             backoff: Backoff | None = None, tls: bool = False,
                             retry_on: frozenset[grpc.StatusCode] = RETRYABLE,
                             channels: Callable[[str], grpc.aio.Channel] | None = None) -> T:
    """Run one unary call, trying again (elsewhere, after the policy's wait) on
    retryable errors; raise ``CallError`` once it is not or the policy gives up.

    Calls that must not run twice (CreateMatch) pass ``retry_on={UNAVAILABLE}``.
    ``channels``: the caller's own channel per address (kept open, not closed
    here); by default a channel is opened for the attempt and closed after it."""
    failover = Failover(servers, backoff or Backoff(give_up_after=15.0))
    while True:
        address = failover.next_address()
        channel = channels(address) if channels is not None else make_channel(
            address, root_cert, tls)
        try:
            return await fn(channel)
        except grpc.aio.AioRpcError as error:
            if not is_retryable(error, retry_on):
                raise call_error(address, error) from None
            failover.refused(error)
            if failover.exhausted:
                raise call_error(address, error) from None
        finally:
            if channels is None:
                await channel.close()
        await failover.pause()


async def follow_stream(servers: Sequence[str], root_cert: bytes | None, tls: bool,
                        open_stream: Callable[[grpc.aio.Channel], AsyncIterator[T]],
                        what: str, backoff: Backoff,
                        also_retry: Callable[[grpc.aio.AioRpcError], bool] | None = None,
                        ) -> AsyncGenerator[tuple[str, T], None]:
    """(address, message) of a server stream, opened again after a failure until the
    caller stops reading or the stream ends: ``open_stream`` is called per attempt
    (so it resumes where the caller got to). A refusal nothing can fix, or one
    after the policy gave up, raises ``CallError`` (``what`` names the call).
    ``also_retry``: refusals the caller retries besides the retryable ones.
    Use under ``contextlib.aclosing`` so that the channel closes when the caller stops."""
    failover = Failover(servers, backoff)
    while True:
        address = failover.next_address()
        channel = make_channel(address, root_cert, tls)
        try:
            async for message in open_stream(channel):
                failover.progressed()
                yield address, message
            return
        except grpc.aio.AioRpcError as error:
            retry = is_retryable(error) or (also_retry is not None and also_retry(error))
            if retry:
                failover.refused(error)
            if not retry or failover.exhausted:
                raise call_error(f"{what} at {address}", error) from None
        finally:
            await channel.close()
        await failover.pause()


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

    async def _create(self, method: str, request: Any) -> Any:
        """A call that creates something (a match, a tournament, an arena): retried on
        ``CREATE_RETRY_ON`` only, so that one call never creates two."""
        return await self._unary(method, request, CREATE_RETRY_ON)

    def _follow(self, open_stream: Callable[[grpc.aio.Channel], AsyncIterator[T]], what: str,
                backoff: Backoff | None = None,
                ) -> contextlib.aclosing[AsyncGenerator[tuple[str, T], None]]:
        """``follow_stream`` over this client's servers, closed when the caller stops."""
        return contextlib.aclosing(follow_stream(
            self.servers, self.root_cert, self.tls, open_stream, what,
            backoff or self.backoff))
