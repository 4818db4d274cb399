"""This node's part in forming matches from the queues (unrated: ratings are
arenas', ``arenas``; the queue pairs by them).

Forming a match is one Lua script in the store (``queue_pop``) that removes
the agents it returns from the queue, so two nodes can never place the same
agent twice; a node whose Queue streams wait on a queue pops it every tick.
The node that popped creates the match and pushes each agent's MatchAssigned
into its inbox, which the agent's stream (on whatever node) delivers. An
agent whose stream vanished (its node died) stops being vouched for and is
dropped by the next pop.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable

from prometheus_client import Counter
from twistarena.storage import StoreError
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import matchmaking_pb2 as kpb

from .. import logs, metrics
from ..cluster import Cluster
from ..config import ServerConfig
from ..loops import stop_loops
from ..match.creation import new_match
from .agents import Agents

log = logs.get("twistarena.matchmaking")

MATCHMADE = Counter("twistarena_matchmade_total", "Matches formed from the queue")

#: A Queue stream re-vouches for its agent every second; after this long without
#: it (its node died) the agent leaves the queue.
ALIVE_MS = 5000
#: A matchmade match is abandoned if a seated agent has not joined within this
#: (its agents were connected and waiting when it formed).
MATCHMADE_JOIN_MS = 60_000
TICK_S = 0.1


class Matchmaker:
    """Pops the queues this node's streams wait on."""

    def __init__(self, cluster: Cluster, agents: Agents, config: ServerConfig,
                 address: Callable[[], str]) -> None:
        self.cluster = cluster
        self.queues = cluster.store.queues
        self.agents = agents
        self.config = config
        self.address = address
        #: (game, players) -> Queue streams of this node waiting on that queue.
        self.active: dict[tuple[str, int], int] = {}
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Start forming matches in the background."""
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._form_loop(), name="matchmaker.form")]

    async def close(self) -> None:
        """Stop the background loops."""
        tasks, self._tasks = self._tasks, []
        await stop_loops(tasks, "matchmaker")

    # -- queue entries -----------------------------------------------------------

    async def enqueue(self, agent_id: str, game_id: str, players: int, fill_after_ms: int,
                      bot: str, mu: float) -> bool:
        """Queue the agent (False: it already was)."""
        return await self.queues.enqueue(agent_id, game_id, players, fill_after_ms, bot, mu,
                                         ALIVE_MS)

    async def vouch(self, agent_id: str, game_id: str, players: int) -> None:
        """The agent's stream is still there."""
        await self.queues.vouch(agent_id, game_id, players, ALIVE_MS)

    async def leave(self, agent_id: str, game_id: str, players: int) -> None:
        """Take the agent out of the queue (its Queue stream ended while it waited)."""
        await self.queues.leave(agent_id, game_id, players)

    async def waiting(self, game_id: str, players: int) -> int:
        """How many agents wait in the queue of ``game_id`` for ``players``."""
        return await self.queues.waiting(game_id, players)

    def attach(self, game_id: str, players: int) -> None:
        """A local stream waits on this queue: pop it every tick."""
        key = (game_id, players)
        self.active[key] = self.active.get(key, 0) + 1
        self._wake.set()

    def detach(self, game_id: str, players: int) -> None:
        """A local stream stopped waiting on this queue: pop it no more once none is left."""
        key = (game_id, players)
        self.active[key] -= 1
        if self.active[key] <= 0:
            del self.active[key]

    # -- forming matches -----------------------------------------------------------

    async def _form_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), TICK_S)
            self._wake.clear()
            for game_id, players in list(self.active):
                try:
                    while await self.form_one(game_id, players):
                        pass
                except StoreError as exc:
                    log.warning("matchmaking_failed", game=game_id, players=players,
                                error=repr(exc))
                except Exception as exc:  # keep forming other queues' matches
                    metrics.ERRORS.labels("matchmaking").inc()
                    log.error("matchmaking_failed", game=game_id, players=players,
                              error=repr(exc))

    async def form_one(self, game_id: str, players: int) -> bool:
        """Pop one match's worth of agents and seat them; False when none is due."""
        picked = await self.queues.pop(game_id, players, self.config.match_by_rating)
        if not picked:
            return False
        house = picked[0][1] or "heuristic"
        names = await self.agents.stored.names([a for a, _ in picked])
        seats: list[str] = [a for a, _ in picked] + [""] * (players - len(picked))
        random.shuffle(seats)
        opts = mpb.MatchOptions(game_id=game_id, num_players=players)
        opts.time_control.join_timeout_ms = MATCHMADE_JOIN_MS
        for agent_id in seats:
            if agent_id:
                opts.seats.append(mpb.SeatSpec(name=names[agent_id]))
            else:
                opts.seats.append(mpb.SeatSpec(name=f"house {house}", house_bot=house))
        match, tokens = await new_match(self.cluster, opts)
        mid = match.match_id
        seat_of = {a: s for s, a in enumerate(seats) if a}
        address = await self.cluster.serving_address(mid, self.address())
        for agent_id, seat in seat_of.items():
            await self.agents.assign(agent_id, kpb.MatchAssigned(
                match_id=mid, seat=seat, seat_token=tokens[seat],
                server_address=address, game_id=game_id, num_players=players))
        MATCHMADE.inc()
        log.info("match_formed", match_id=mid, game=game_id, players=players,
                 agents=len(seat_of), house=players - len(seat_of))
        return True
