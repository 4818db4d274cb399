"""Arenas: open, pause and enroll (admin or the agent itself), leaderboards and
agents (anyone)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
from twistarena.v1 import arenas_pb2, arenas_pb2_grpc, matchmaking_pb2

from .connection import ServiceClient


class ArenaLadderClient(ServiceClient):
    """Arena calls against one or more servers (failing over like agents do).
    ``admin_token`` is the admin's, or an agent's api token for EnrollAgent."""

    STUB = arenas_pb2_grpc.ArenasStub
    RETRY_ON = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNKNOWN})

    async def create(self, game: str, players: int, house: Sequence[str] = (),
                     matches_per_minute: int = 0,
                     max_concurrent_per_agent: int = 0) -> arenas_pb2.Arena:
        created: arenas_pb2.Arena = await self._create(
            "CreateArena", arenas_pb2.CreateArenaRequest(
                game_id=game, num_players=players, house_bots=list(house),
                matches_per_minute=matches_per_minute,
                max_concurrent_per_agent=max_concurrent_per_agent))
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

    async def update(self, arena_id: str, house: Sequence[str] | None = None,
                     matches_per_minute: int = 0,
                     max_concurrent_per_agent: int = 0) -> arenas_pb2.Arena:
        """Change an arena (admin): ``house`` replaces its rungs (None: kept; empty:
        none), a 0 keeps a number."""
        done: arenas_pb2.Arena = await self._unary("UpdateArena", arenas_pb2.UpdateArenaRequest(
            arena_id=arena_id, set_house_bots=house is not None, house_bots=list(house or ()),
            matches_per_minute=matches_per_minute,
            max_concurrent_per_agent=max_concurrent_per_agent))
        return done

    async def close(self, arena_id: str) -> arenas_pb2.Arena:
        """Close an arena for good (admin); its leaderboard stays readable."""
        done: arenas_pb2.Arena = await self._unary(
            "CloseArena", arenas_pb2.CloseArenaRequest(arena_id=arena_id))
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


def rating_json(info: matchmaking_pb2.AgentInfo) -> dict[str, Any]:
    """An agent's own rating as every surface shows it (the CLI's --json, the web
    gateway): its best mu - 3 sigma among its arenas' leaderboard rows, with the
    arena and version it is of."""
    return {"agent_id": info.agent_id, "name": info.name, "mu": info.mu, "sigma": info.sigma,
            "conservative": info.mu - 3 * info.sigma, "matches": info.matches,
            "rating_arena_id": info.rating_arena_id, "rating_version": info.rating_version}


def arena_rating_json(rating: matchmaking_pb2.ArenaRating,
                      history: bool = False) -> dict[str, Any]:
    """One arena rating of one version (``current``: the leaderboard's row)."""
    out: dict[str, Any] = {
        "arena_id": rating.arena_id, "version": rating.version, "mu": rating.mu,
        "sigma": rating.sigma, "conservative": rating.mu - 3 * rating.sigma,
        "games": rating.games, "wins": rating.wins, "current": rating.current}
    if history:
        out["history"] = [[round(p.mu, 3), round(p.sigma, 3)] for p in rating.history]
    return out


def recent_match_json(match: matchmaking_pb2.RecentMatch) -> dict[str, Any]:
    """One of an agent's recent arena matches (opponents: "NAME vN", "house:BOT")."""
    return {"match_id": match.match_id, "arena_id": match.arena_id, "version": match.version,
            "place": match.place, "score": match.score, "opponents": list(match.opponents),
            "ended_at": match.ended_at.ToJsonString() if match.HasField("ended_at") else ""}
