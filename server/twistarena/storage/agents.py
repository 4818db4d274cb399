"""Registered agents in the store: accounts, api tokens and inboxes (their
ratings are their arenas', ``arenas``).

Keys (tag ``{agents}``, see ``keys``): ``{agents}:agent:<id>``,
``{agents}:tokens``, ``{agents}:inbox:<id>`` and ``{agents}:queued``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from . import keys
from .connection import Connections, StorePart
from .errors import driver_errors
from .replies import text


@dataclass(slots=True)
class AgentRecord:
    """An agent account as stored."""

    agent_id: str
    name: str


@dataclass(frozen=True, slots=True)
class QueueHold:
    """A Queue stream's hold on an agent: its queue and when the stream last vouched
    for it. Stored as ``<game>:<players>:<ms>`` (``encode``/``decode``: the one
    place that reads or writes that text)."""

    game_id: str
    players: int
    #: When the holding stream last vouched for the agent (ms since the epoch).
    since_ms: float

    def encode(self) -> str:
        """The stored text, whole milliseconds."""
        return f"{self.game_id}:{self.players}:{self.since_ms:.0f}"

    @classmethod
    def decode(cls, raw: str) -> QueueHold | None:
        """The hold a stored text says; None for text that is none (a hold older
        code wrote with a fractional ms is one)."""
        game_id, _, rest = raw.rpartition(":")
        game_id, _, players = game_id.rpartition(":")
        try:
            hold = cls(game_id, int(players), float(rest))
        except ValueError:
            return None
        return hold if game_id and math.isfinite(hold.since_ms) else None

    def alive(self, now_ms: float, alive_ms: int) -> bool:
        """Whether the holding stream vouched within ``alive_ms`` of ``now_ms``."""
        return self.since_ms + alive_ms > now_ms

    def __str__(self) -> str:
        return self.encode()


def _hold(raw: Any) -> QueueHold | None:
    return QueueHold.decode(text(raw)) if raw else None


def _agent_from_hash(agent_id: str, raw: dict[bytes, bytes]) -> AgentRecord:
    return AgentRecord(agent_id, text(raw.get(b"name", b"")))


class AgentStore(StorePart):
    """Agent accounts, api tokens and assignment inboxes."""

    def __init__(self, conn: Connections) -> None:
        super().__init__(conn)

    async def create(self, agent_id: str, name: str, token_hash: str) -> None:
        """Store a new agent and its api token's hash, together."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=True)
            pipe.hset(keys.agent(agent_id), mapping={
                "name": name, "created_ms": int(time.time() * 1000)})
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
        return await self._hash_record(keys.agent(agent_id),
                                       lambda raw: _agent_from_hash(agent_id, raw))

    async def exists(self, agent_ids: Iterable[str]) -> list[bool]:
        """Which of ``agent_ids`` have an account, in order."""
        replies = await self._read_together(*(("EXISTS", keys.agent(a)) for a in agent_ids))
        return [bool(x) for x in replies]

    async def names(self, agent_ids: Sequence[str]) -> dict[str, str]:
        """Each agent's name (its id when it has none)."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for agent_id in agent_ids:
                pipe.hget(keys.agent(agent_id), "name")
            rows = await pipe.execute()
        return {a: text(name) if name else a for a, name in zip(agent_ids, rows, strict=True)}

    # -- the Queue stream's hold on an agent -----------------------------------------

    async def queued_in(self, agent_id: str) -> QueueHold | None:
        """The Queue stream's hold on the agent, if any."""
        with driver_errors():
            raw: Any = await self._redis.hget(keys.AGENT_QUEUED, agent_id)
        return _hold(raw)

    async def queued_many(self, agent_ids: Sequence[str]) -> list[QueueHold | None]:
        """``queued_in`` of several agents in one call, in order."""
        if not agent_ids:
            return []
        with driver_errors():
            raw: Any = await self._redis.hmget(keys.AGENT_QUEUED, list(agent_ids))
        return [_hold(r) for r in raw]

    async def hold_queued(self, agent_id: str, hold: QueueHold) -> None:
        """Mark the agent as held by a Queue stream (or renew the hold)."""
        with driver_errors():
            await self._redis.hset(keys.AGENT_QUEUED, agent_id, hold.encode())

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
