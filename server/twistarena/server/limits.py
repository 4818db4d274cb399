"""How much one client may take of a server: creation and Join quotas.

A client is known by its address (without the port) and, when it sends one,
by the token in its call metadata; a quota holds for each of them, so neither
many tokens from one machine nor one token from many machines gets past it.
The holder of the admin token (on a server that has one) is the host and is
exempt. Every refusal is ``RESOURCE_EXHAUSTED`` with the limit named and the
flag that sets it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc import aio

from . import auth
from .config import Limits, ServerConfig
from .rpc import fail, peer_host

#: Buckets kept before idle ones are forgotten (bounds the limiter's memory).
MAX_BUCKETS = 10_000


class RateLimiter:
    """A token bucket per key: ``per_minute`` calls, bursts of up to a third of
    that (0: no limit)."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self.rate = max(1, per_minute) / 60.0
        self.burst = max(1.0, per_minute / 3)
        self.buckets: dict[str, tuple[float, float]] = {}

    def allow(self, key: str) -> bool:
        """Take a token from ``key``'s bucket; False when it is empty (the call is refused)."""
        if self.per_minute <= 0:
            return True
        now = time.monotonic()
        tokens, last = self.buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if len(self.buckets) >= MAX_BUCKETS and key not in self.buckets:
            self._forget_full(now)
        if tokens < 1.0:
            self.buckets[key] = (tokens, now)
            return False
        self.buckets[key] = (tokens - 1.0, now)
        return True

    def wait_ms(self, key: str) -> int:
        """How long until ``key``'s bucket holds a token again (the retry hint of
        a refusal)."""
        tokens, last = self.buckets.get(key, (self.burst, time.monotonic()))
        tokens = min(self.burst, tokens + (time.monotonic() - last) * self.rate)
        return max(1, int((1.0 - tokens) / self.rate * 1000) + 1) if tokens < 1.0 else 0

    def _forget_full(self, now: float) -> None:
        """Drop the buckets that have refilled (they carry no history)."""
        full = [k for k, (tokens, last) in self.buckets.items()
                if tokens + (now - last) * self.rate >= self.burst]
        for key in full:
            del self.buckets[key]
        if len(self.buckets) >= MAX_BUCKETS:
            self.buckets.clear()


def client_keys(context: aio.ServicerContext[Any, Any]) -> list[str]:
    """The identities a quota is counted against: the address, and the token if any."""
    keys = [f"peer:{peer_host(context)}"]
    token = auth.bearer(context.invocation_metadata())
    if token:
        keys.append(f"token:{auth.token_hash(token)}")
    return keys


def is_host(context: aio.ServicerContext[Any, Any], config: ServerConfig) -> bool:
    """The caller holds the admin token of a server that has one."""
    expected = config.admin_token
    token = auth.bearer(context.invocation_metadata())
    return bool(expected and token and auth.same_secret(token, expected))


class HourlyCount:
    """At most ``per_hour`` events per key in any hour (0: no limit): the times of
    each key's last events, forgotten after the hour (and keys past ``MAX_BUCKETS``)."""

    def __init__(self, per_hour: int) -> None:
        self.per_hour = per_hour
        self.times: dict[str, list[float]] = {}

    def allow(self, key: str) -> bool:
        """Count one event of ``key``; False (not counted) when it had its hour's worth."""
        if self.per_hour <= 0:
            return True
        now = time.monotonic()
        recent = [t for t in self.times.get(key, ()) if now - t < 3600.0]
        if len(recent) >= self.per_hour:
            self.times[key] = recent
            return False
        if key not in self.times and len(self.times) >= MAX_BUCKETS:
            self.times = {k: v for k, v in self.times.items() if now - v[-1] < 3600.0}
        self.times[key] = [*recent, now]
        return True


#: Given object ids, which of them are still live (waiting or running).
LiveCheck = Callable[[list[str]], Awaitable[list[bool]]]


@dataclass(slots=True)
class LiveObjects:
    """The live objects (matches, tournaments) each client created, as ids; the
    ones that ended are pruned when a client reaches its limit."""

    limit: int
    is_live: LiveCheck
    owned: dict[str, set[str]] = field(default_factory=dict)

    async def count(self, key: str) -> int:
        """How many live objects ``key`` owns; the ended ones are pruned once it
        reaches the limit."""
        ids = self.owned.get(key)
        if not ids:
            return 0
        if len(ids) >= self.limit:
            listed = list(ids)
            alive = await self.is_live(listed)
            ids.difference_update(i for i, live in zip(listed, alive, strict=True) if not live)
            if not ids:
                del self.owned[key]
                return 0
        return len(ids)

    def add(self, keys: Iterable[str], object_id: str) -> None:
        """Count ``object_id`` as live for each of ``keys``."""
        for key in keys:
            self.owned.setdefault(key, set()).add(object_id)


class Quotas:
    """Creation and Join quotas of one server."""

    def __init__(self, config: ServerConfig, is_live: LiveCheck,
                 waiting_matches: Callable[[], int]) -> None:
        self.config = config
        self.limits: Limits = config.limits
        self.creates = RateLimiter(self.limits.creates_per_minute)
        self.live = LiveObjects(self.limits.live_per_client, is_live)
        self.waiting_matches = waiting_matches
        self.token_joins = RateLimiter(self.limits.joins_per_minute_per_token)
        self.peer_joins = RateLimiter(self.limits.joins_per_minute_per_peer)
        self.registers = HourlyCount(self.limits.registers_per_hour)

    async def admit_register(self, context: aio.ServicerContext[Any, Any]) -> None:
        """Refuse a new agent beyond the address's hourly count (the host is exempt):
        agents, and what each may store, are bounded per machine."""
        if is_host(context, self.config):
            return
        if not self.registers.allow(peer_host(context)):
            await fail(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED",
                       f"limit registers_per_hour: at most {self.limits.registers_per_hour} "
                       "agents registered an hour per client address "
                       "(serve --registers-per-hour); wait")

    async def admit_creation(self, context: aio.ServicerContext[Any, Any],
                             makes_match: bool) -> list[str]:
        """Refuse a creation call over quota; else the keys to ``created`` it under."""
        limits = self.limits
        if makes_match and limits.max_waiting_matches and \
                self.waiting_matches() >= limits.max_waiting_matches:
            await fail(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_WAITING",
                       f"limit max_waiting_matches: this server already has "
                       f"{limits.max_waiting_matches} matches waiting for players "
                       "(serve --max-waiting-matches); retry later")
        if is_host(context, self.config):
            return []
        keys = client_keys(context)
        for key in keys:
            if not self.creates.allow(key):
                await fail(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED",
                           f"limit creates_per_minute: at most {limits.creates_per_minute} "
                           f"creation calls a minute per {_who(key)} "
                           "(serve --creates-per-minute); wait a little")
        if limits.live_per_client:
            for key in keys:
                if await self.live.count(key) >= limits.live_per_client:
                    await fail(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_LIVE",
                               f"limit live_per_client: {limits.live_per_client} matches and "
                               f"tournaments of this {_who(key)} are waiting or running "
                               "(serve --live-per-client); wait for some to end")
        return keys

    def created(self, keys: list[str], object_id: str) -> None:
        """Count a newly created match or tournament against its creator's live limit."""
        if self.limits.live_per_client:
            self.live.add(keys, object_id)

    async def admit_join(self, context: aio.ServicerContext[Any, Any], digest: str,
                         returning: bool = False) -> None:
        """Refuse a Join (seat takeovers included) beyond the token's or the address's
        rate, with a retry hint (when the bucket holds a token again).
        ``returning``: the seat had joined before (a resume, on its old owner or on
        the node that took the match over): not a new Join for the address's
        budget, only for its token's (which bounds a seat's churn). ``digest``: the
        token's ``auth.token_hash`` ('' without a token)."""
        limits = self.limits
        peer = peer_host(context)
        if not returning and not self.peer_joins.allow(peer):
            await fail(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED",
                       f"limit joins_per_minute_per_peer: at most "
                       f"{limits.joins_per_minute_per_peer} Joins a minute per client address "
                       "(serve --peer-joins-per-minute); wait a little",
                       self.peer_joins.wait_ms(peer))
        if digest and not self.token_joins.allow(digest):
            await fail(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED",
                       f"limit joins_per_minute_per_token: at most "
                       f"{limits.joins_per_minute_per_token} Joins a minute per seat token "
                       "(serve --joins-per-minute); wait a little",
                       self.token_joins.wait_ms(digest))


def _who(key: str) -> str:
    return "client address" if key.startswith("peer:") else "token"
