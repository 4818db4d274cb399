"""Matchmaking queues in the store: one set of keys per (game, players).

Keys (tag ``{mmq:<game>:<n>}``, see ``keys.queue``): ``order``, ``alive``,
``fill``, ``rating``, ``bot``. Enqueue and pop are one script each
(``lua/queue_enqueue.lua``, ``lua/queue_pop.lua``), so two nodes can never
place the same agent twice.
"""

from __future__ import annotations

import time
from typing import Any

from . import keys
from .connection import Connections, StorePart
from .errors import driver_errors
from .replies import text
from .scripts import Scripts


class QueueStore(StorePart):
    """The matchmaking queues."""

    def __init__(self, conn: Connections, scripts: Scripts) -> None:
        super().__init__(conn)
        self.scripts = scripts

    async def enqueue(self, agent_id: str, game_id: str, players: int, fill_after_ms: int,
                      bot: str, mu: float, alive_ms: int) -> bool:
        """Queue an agent (True), or refresh it if already queued (False)."""
        with driver_errors():
            res = await self.scripts.run(self.conn.redis, self.scripts.queue_enqueue,
                                         keys.queue(game_id, players),
                                         [agent_id, fill_after_ms, repr(mu), bot, alive_ms])
        return bool(res)

    async def vouch(self, agent_id: str, game_id: str, players: int, alive_ms: int) -> None:
        """The agent's stream is still there: keep it queued ``alive_ms`` longer."""
        alive = keys.queue(game_id, players)[1]
        now_ms = int(time.time() * 1000)
        with driver_errors():
            await self.conn.redis.zadd(alive, {agent_id: now_ms + alive_ms}, xx=True)

    async def leave(self, agent_id: str, game_id: str, players: int) -> None:
        """Take the agent out of every structure of the queue."""
        queue = keys.queue(game_id, players)
        with driver_errors():
            pipe = self.conn.redis.pipeline(transaction=False)
            for key in queue[:3]:
                pipe.zrem(key, agent_id)
            for key in queue[3:]:
                pipe.hdel(key, agent_id)
            await pipe.execute()

    async def waiting(self, game_id: str, players: int) -> int:
        """How many agents wait in the queue."""
        with driver_errors():
            return int(await self.conn.redis.zcard(keys.queue(game_id, players)[0]))

    async def pop(self, game_id: str, players: int, by_rating: bool) -> list[tuple[str, str]]:
        """Take one match's worth of agents: [(agent, house bot strategy)], or []."""
        with driver_errors():
            raw: Any = await self.scripts.run(self.conn.redis, self.scripts.queue_pop,
                                              keys.queue(game_id, players),
                                              [players, "rating" if by_rating else "fifo"])
        items = [text(x) for x in raw or ()]
        return list(zip(items[0::2], items[1::2], strict=True))
