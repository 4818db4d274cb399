"""Registered agents: accounts and api tokens, seat assignments.

What is stored lives in ``twistarena.storage.agents`` (keys under
``{agents}``); this module adds what the server decides: waking a local Queue
stream when its assignment arrives. An agent's ratings are its arenas' (one
per arena and version, ``arenas``); matchmaking pairs by them and rates nothing.
"""

from __future__ import annotations

import asyncio
import secrets

from twistarena.storage import AgentRecord, Store
from twistarena.v1 import matchmaking_pb2 as kpb

from .. import auth, logs

log = logs.get("twistarena.matchmaking")


class Agents:
    """Agent accounts and inboxes."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.stored = store.agents
        #: Local Queue streams waiting for their agent's inbox, woken on delivery.
        self.waiters: dict[str, asyncio.Event] = {}

    async def register(self, name: str) -> tuple[str, str]:
        """A new agent: (agent id, api token)."""
        agent_id = "ag_" + secrets.token_hex(6)
        token = auth.new_token(auth.AGENT_TOKEN_PREFIX)
        await self.stored.create(agent_id, name, auth.token_hash(token))
        return agent_id, token

    async def by_token(self, token: str) -> str | None:
        """The agent an api token belongs to."""
        if not token:
            return None
        return await self.stored.by_token_hash(auth.token_hash(token))

    async def get(self, agent_id: str) -> AgentRecord | None:
        """The agent's account, None if there is no such agent."""
        return await self.stored.get(agent_id)

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
