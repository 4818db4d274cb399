"""Registered agents in the store: accounts, api tokens, inboxes and ratings.

Keys (tag ``{agents}``, see ``keys``): ``{agents}:agent:<id>``,
``{agents}:tokens``, ``{agents}:inbox:<id>``, ``{agents}:queued``,
``{agents}:rate`` and ``{agents}:seats:<match>``. A rating update reads and
writes several agents under WATCH/MULTI, so they share one tag.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from redis.exceptions import WatchError

from . import keys
from .connection import Connections, StorePart
from .errors import driver_errors
from .replies import text

#: (mu, sigma)
MuSigma = tuple[float, float]
#: Current ratings of the agents of a match (None: no rating stored) -> new ones.
RatingUpdate = Callable[[dict[str, MuSigma | None]], dict[str, MuSigma]]

#: Optimistic rating updates give up after this many conflicting writers.
RATING_ATTEMPTS = 20


@dataclass(slots=True)
class AgentRecord:
    """An agent account as stored."""

    agent_id: str
    name: str
    #: None when no rating is stored: the rating model, not the store, knows
    #: where a new agent starts (``twistarena.league``).
    rating: MuSigma | None
    matches: int


def _agent_from_hash(agent_id: str, raw: dict[bytes, bytes]) -> AgentRecord:
    mu, sigma = raw.get(b"mu"), raw.get(b"sigma")
    rating = None if mu is None or sigma is None else (float(mu), float(sigma))
    return AgentRecord(agent_id, text(raw.get(b"name", b"")), rating,
                       int(raw.get(b"matches", b"0")))


class AgentStore(StorePart):
    """Agent accounts, api tokens, assignment inboxes and ratings."""

    def __init__(self, conn: Connections) -> None:
        super().__init__(conn)

    async def create(self, agent_id: str, name: str, rating: MuSigma, token_hash: str) -> None:
        """Store a new agent and its api token's hash, together."""
        mu, sigma = rating
        with driver_errors():
            pipe = self._redis.pipeline(transaction=True)
            pipe.hset(keys.agent(agent_id), mapping={
                "name": name, "mu": repr(mu), "sigma": repr(sigma), "matches": 0,
                "created_ms": int(time.time() * 1000)})
            pipe.hset(keys.AGENT_TOKENS, token_hash, agent_id)
            pipe.zadd(keys.AGENT_INDEX, {agent_id: int(time.time() * 1000)})
            await pipe.execute()

    async def page(self, offset: int, count: int) -> list[str]:
        """Agent ids, newest first (``count`` from ``offset``)."""
        with driver_errors():
            raw: Any = await self._redis.zrevrange(keys.AGENT_INDEX, offset,
                                                   offset + count - 1)
        return [text(a) for a in raw]

    async def by_token_hash(self, token_hash: str) -> str | None:
        """The agent an api token (by its hash) belongs to."""
        with driver_errors():
            raw: Any = await self._redis.hget(keys.AGENT_TOKENS, token_hash)
        return text(raw) if raw else None

    async def get(self, agent_id: str) -> AgentRecord | None:
        """The agent's account, None if there is none."""
        with driver_errors():
            raw: Any = await self._redis.hgetall(keys.agent(agent_id))
        if not raw:
            return None
        return _agent_from_hash(agent_id, raw)

    async def exists(self, agent_ids: Iterable[str]) -> list[bool]:
        """Which of ``agent_ids`` have an account, in order."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for agent_id in agent_ids:
                pipe.exists(keys.agent(agent_id))
            return [bool(x) for x in await pipe.execute()]

    async def names(self, agent_ids: Sequence[str]) -> dict[str, str]:
        """Each agent's name (its id when it has none)."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for agent_id in agent_ids:
                pipe.hget(keys.agent(agent_id), "name")
            rows = await pipe.execute()
        return {a: text(name) if name else a for a, name in zip(agent_ids, rows, strict=True)}

    # -- the Queue stream's hold on an agent -----------------------------------------

    async def queued_in(self, agent_id: str) -> str | None:
        """``<game>:<players>:<ms>`` of the Queue stream holding the agent, if any."""
        with driver_errors():
            raw: Any = await self._redis.hget(keys.AGENT_QUEUED, agent_id)
        return text(raw) if raw else None

    async def queued_many(self, agent_ids: Sequence[str]) -> list[str | None]:
        """``queued_in`` of several agents in one call, in order."""
        if not agent_ids:
            return []
        with driver_errors():
            raw: Any = await self._redis.hmget(keys.AGENT_QUEUED, list(agent_ids))
        return [text(r) if r else None for r in raw]

    async def hold_queued(self, agent_id: str, claim: str) -> None:
        """Mark the agent as held by a Queue stream (``claim``: see ``queued_in``)."""
        with driver_errors():
            await self._redis.hset(keys.AGENT_QUEUED, agent_id, claim)

    async def release_queued(self, agent_id: str) -> None:
        """The agent's Queue stream ended: it may queue again."""
        with driver_errors():
            await self._redis.hdel(keys.AGENT_QUEUED, agent_id)

    # -- assignments: the agent's inbox -------------------------------------------

    async def push_assignment(self, agent_id: str, assigned: bytes) -> None:
        """Put a MatchAssigned (serialized) in the agent's inbox."""
        with driver_errors():
            await self._redis.rpush(keys.agent_inbox(agent_id), assigned)

    async def pop_assignment(self, agent_id: str) -> bytes | None:
        """Take the oldest seat handed to the agent, if any (each is delivered once)."""
        with driver_errors():
            raw: Any = await self._redis.lpop(keys.agent_inbox(agent_id))
        return bytes(raw) if raw else None

    # -- ratings ------------------------------------------------------------------

    async def track(self, match_id: str, seat_agents: dict[int, str]) -> None:
        """Remember who sits where, to rate them once the match is over."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            pipe.hset(keys.match_seats(match_id), mapping={
                str(s): a for s, a in seat_agents.items()})
            pipe.zadd(keys.RATING_QUEUE, {match_id: int(time.time() * 1000)})
            await pipe.execute()

    async def tracked(self, count: int = 200) -> list[str]:
        """The oldest tracked matches (up to ``count``)."""
        with driver_errors():
            raw: Any = await self._redis.zrange(keys.RATING_QUEUE, 0, count - 1)
        return [text(m) for m in raw]

    async def take_tracked(self, match_id: str) -> dict[int, str] | None:
        """Take a tracked match out of the rating queue: its seats, or None when
        another node took it first (each match is rated once)."""
        with driver_errors():
            if not await self._redis.zrem(keys.RATING_QUEUE, match_id):
                return None
            seats_raw: Any = await self._redis.hgetall(keys.match_seats(match_id))
            await self._redis.delete(keys.match_seats(match_id))
        return {int(k): text(v) for k, v in seats_raw.items()}

    async def update_ratings(self, agent_ids: Sequence[str], update: RatingUpdate) -> bool:
        """Read the agents' ratings, write what ``update`` makes of them and count a
        match for each, atomically (WATCH/MULTI, retried on a concurrent write);
        False if it gave up."""
        agents = list(agent_ids)
        agent_keys = [keys.agent(a) for a in agents]
        for _attempt in range(RATING_ATTEMPTS):
            with driver_errors():
                async with self._redis.pipeline(transaction=True) as pipe:
                    try:
                        await pipe.watch(*agent_keys)
                        current: dict[str, MuSigma | None] = {}
                        for agent_id, key in zip(agents, agent_keys, strict=True):
                            row: Any = await pipe.hmget(key, "mu", "sigma")
                            current[agent_id] = None if row[0] is None else (
                                float(row[0]), float(row[1]))
                        news = update(current)
                        pipe.multi()
                        for agent_id, (mu, sigma) in news.items():
                            pipe.hset(keys.agent(agent_id), mapping={
                                "mu": repr(mu), "sigma": repr(sigma)})
                            pipe.hincrby(keys.agent(agent_id), "matches", 1)
                        await pipe.execute()
                        return True
                    except WatchError:
                        pass
            await asyncio.sleep(0.01 * random.random())
        return False
