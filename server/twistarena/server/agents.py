"""Registered agents: accounts and api tokens, seat assignments, ratings.

What is stored lives in ``twistarena.storage.agents`` (keys under
``{agents}``); this module adds what the server decides: a new agent's
starting rating, waking a local Queue stream when its assignment arrives, and
the Plackett-Luce update of the agents of a finished match.
"""

from __future__ import annotations

import asyncio
import secrets

from twistarena import wire
from twistarena.league import PlackettLuce, Rating
from twistarena.storage import AgentRecord, MuSigma, Store
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import matchmaking_pb2 as kpb

from . import auth, logs

log = logs.get("twistarena.matchmaking")


class Agents:
    """Agent accounts, inboxes and ratings."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.stored = store.agents
        #: The rating model: its starting rating is every new agent's.
        self.model = PlackettLuce()
        #: Local Queue streams waiting for their agent's inbox, woken on delivery.
        self.waiters: dict[str, asyncio.Event] = {}

    async def register(self, name: str) -> tuple[str, str]:
        """A new agent with the model's starting rating: (agent id, api token)."""
        start = self.model.rating()
        agent_id = "ag_" + secrets.token_hex(6)
        token = auth.new_token(auth.AGENT_TOKEN_PREFIX)
        await self.stored.create(agent_id, name, (start.mu, start.sigma),
                                 auth.token_hash(token))
        return agent_id, token

    async def by_token(self, token: str) -> str | None:
        """The agent an api token belongs to."""
        if not token:
            return None
        return await self.stored.by_token_hash(auth.token_hash(token))

    async def get(self, agent_id: str) -> AgentRecord | None:
        """The agent's account, None if there is no such agent."""
        return await self.stored.get(agent_id)

    def rating(self, record: AgentRecord | None) -> Rating:
        """An agent's rating; the model's starting one for an agent with none stored
        (or no account: a house bot, an unknown id)."""
        if record is None or record.rating is None:
            return self.model.rating()
        return Rating(*record.rating)

    async def exists(self, agent_ids: list[str]) -> list[bool]:
        """Which of ``agent_ids`` are registered (a tournament checks its entrants)."""
        return await self.stored.exists(agent_ids)

    async def assign(self, agent_id: str, assigned: kpb.MatchAssigned) -> None:
        """Hand a seat to the agent (its Queue stream delivers it)."""
        await self.stored.push_assignment(agent_id, assigned.SerializeToString())
        waiter = self.waiters.get(agent_id)
        if waiter is not None:
            waiter.set()

    async def take_assignment(self, agent_id: str) -> kpb.MatchAssigned | None:
        """The next seat handed to the agent, if one waits in its inbox (delivered once)."""
        raw = await self.stored.pop_assignment(agent_id)
        return kpb.MatchAssigned.FromString(raw) if raw else None

    async def track(self, match_id: str, seat_agents: dict[int, str]) -> None:
        """Rate the agents of this match once it is over."""
        await self.stored.track(match_id, seat_agents)

    async def rate_finished(self) -> int:
        """Apply the rating updates of tracked matches that ended; returns how many."""
        ids = await self.stored.tracked()
        if not ids:
            return 0
        records = await self.store.matches.load_many(ids)
        done = 0
        for mid, record in zip(ids, records, strict=True):
            if record is not None and record.status not in wire.MATCH_OVER:
                continue
            # Whoever takes the match out of the queue applies its update (once).
            seats = await self.stored.take_tracked(mid)
            if seats is None:
                continue
            if record is None or record.status != mpb.MATCH_STATUS_FINISHED:
                continue
            assert record.result is not None
            await self.apply_result(seats, list(record.result.places))
            done += 1
        return done

    async def apply_result(self, seats: dict[int, str], places: list[int]) -> None:
        """One match's Plackett-Luce update of the agents in it (house bots: fixed)."""
        model = self.model
        agents = sorted({a for a in seats.values() if not a.startswith("house:")})
        if not agents:
            return

        def update(stored: dict[str, MuSigma | None]) -> dict[str, MuSigma]:
            current = {a: model.rating() if r is None else Rating(*r)
                       for a, r in stored.items()}
            order = sorted(seats)
            before = [current.get(seats[s]) or model.rating() for s in order]
            after = model.rate(before, [places[s] for s in order])
            news: dict[str, list[Rating]] = {}
            for s, new in zip(order, after, strict=True):
                if seats[s] in current:
                    news.setdefault(seats[s], []).append(new)
            return {a: (sum(r.mu for r in items) / len(items),
                        sum(r.sigma for r in items) / len(items))
                    for a, items in news.items()}

        if not await self.stored.update_ratings(agents, update):
            log.warning("rating_update_gave_up", agents=agents)
