"""Arenas: open, pause and enroll (admin or the agent itself), leaderboards and
agents (anyone)."""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from twistarena.v1 import arenas_pb2, arenas_pb2_grpc

from .connection import ServiceClient


class ArenaLadderClient(ServiceClient):
    """Arena calls against one or more servers (failing over like agents do).
    ``admin_token`` is the admin's, or an agent's api token for EnrollAgent."""

    STUB = arenas_pb2_grpc.ArenasStub
    RETRY_ON = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNKNOWN})

    async def create(self, game: str, players: int, house: Sequence[str] = (),
                     matches_per_minute: int = 0,
                     max_concurrent_per_agent: int = 0) -> arenas_pb2.Arena:
        created: arenas_pb2.Arena = await self._unary(
            "CreateArena", arenas_pb2.CreateArenaRequest(
                game_id=game, num_players=players, house_bots=list(house),
                matches_per_minute=matches_per_minute,
                max_concurrent_per_agent=max_concurrent_per_agent),
            frozenset({grpc.StatusCode.UNAVAILABLE}))
        return created

    async def list(self) -> list[arenas_pb2.Arena]:
        page: arenas_pb2.ListArenasResponse = await self._unary(
            "ListArenas", arenas_pb2.ListArenasRequest())
        return list(page.arenas)

    async def get(self, arena_id: str) -> arenas_pb2.Arena:
        found: arenas_pb2.Arena = await self._unary(
            "GetArena", arenas_pb2.GetArenaRequest(arena_id=arena_id))
        return found

    async def set_paused(self, arena_id: str, paused: bool) -> arenas_pb2.Arena:
        done: arenas_pb2.Arena = await self._unary(
            "SetArenaPaused", arenas_pb2.SetArenaPausedRequest(arena_id=arena_id, paused=paused))
        return done

    async def enroll(self, arena_id: str, agent_id: str,
                     withdraw: bool = False) -> arenas_pb2.EnrollAgentResponse:
        done: arenas_pb2.EnrollAgentResponse = await self._unary(
            "EnrollAgent", arenas_pb2.EnrollAgentRequest(arena_id=arena_id, agent_id=agent_id,
                                                         withdraw=withdraw))
        return done

    async def leaderboard(self, arena_id: str, page_size: int = 50,
                          page_token: str = "") -> arenas_pb2.Leaderboard:
        board: arenas_pb2.Leaderboard = await self._unary(
            "GetLeaderboard", arenas_pb2.GetLeaderboardRequest(
                arena_id=arena_id, page_size=page_size, page_token=page_token))
        return board

    async def agents(self, page_size: int = 50, page_token: str = "", name_contains: str = "",
                     arena_id: str = "") -> arenas_pb2.ListAgentsResponse:
        page: arenas_pb2.ListAgentsResponse = await self._unary(
            "ListAgents", arenas_pb2.ListAgentsRequest(
                page_size=page_size, page_token=page_token, name_contains=name_contains,
                arena_id=arena_id))
        return page
