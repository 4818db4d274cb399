"""Matchmaking from the agent's side: register once, queue, play what you are given.

A complete queued bot::

    from twistarena.clients.sdk import run_queue_and_play

    result = run_queue_and_play(act, server="127.0.0.1:50051", api_token=TOKEN,
                                game="twisted", players=2)

``register_agent`` gives the id and api token (once; keep the token secret),
``practice`` a match against house bots at once, ``queue`` the next seat the
server assigns (from the matchmaking queue or from a tournament), and
``play_arena`` plays rated arena matches over the network in one call::

    play_arena(act, "127.0.0.1:50051", TOKEN, "twisted-2", matches=10,
               on_match=lambda m: print(m.result.places, m.rating.mu))
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from twistarena.v1 import arenas_pb2, matchmaking_pb2, matchmaking_pb2_grpc

from .agent import Agent
from .connection import (
    AgentError,
    Backoff,
    bearer,
    error_reason,
    follow_stream,
    parse_servers,
    read_root_cert,
    stub,
    unary,
)
from .convert import MatchResult

StatusCallback = Callable[[matchmaking_pb2.QueueStatus], Any]


class TournamentEnded(AgentError):
    """A tournament_only queue on a tournament id: the tournament is over and has no
    match left for this agent."""

    def __init__(self, over: matchmaking_pb2.TournamentOver) -> None:
        detail = f" ({over.detail})" if over.detail else ""
        super().__init__(f"tournament {over.tournament_id} is {over.status.lower()}{detail}")
        self.tournament_id = over.tournament_id
        self.status = over.status


async def _unary(server: str | Sequence[str], method: str, request: Any, token: str | None,
                 root_cert: bytes | str | Path | None = None, tls: bool = False,
                 retry_on: frozenset[grpc.StatusCode] = frozenset({grpc.StatusCode.UNAVAILABLE}),
                 ) -> Any:
    return await unary(matchmaking_pb2_grpc.MatchmakingStub, method, request,
                       parse_servers(server), read_root_cert(root_cert), metadata=bearer(token),
                       tls=tls, retry_on=retry_on)


async def register_agent(server: str | Sequence[str], name: str, *,
                         admin_token: str | None = None, **tls: Any) -> tuple[str, str]:
    """Register an agent; returns (agent id, api token)."""
    response: matchmaking_pb2.RegisterAgentResponse = await _unary(
        server, "RegisterAgent", matchmaking_pb2.RegisterAgentRequest(name=name), admin_token,
        **tls)
    return response.agent_id, response.api_token


async def get_agent(server: str | Sequence[str], agent_id: str,
                    **tls: Any) -> matchmaking_pb2.AgentInfo:
    """An agent's name and rating."""
    info: matchmaking_pb2.AgentInfo = await _unary(
        server, "GetAgent", matchmaking_pb2.GetAgentRequest(agent_id=agent_id), None, **tls)
    return info


async def practice(server: str | Sequence[str], game: str, players: int = 0, *,
                   strength: str = "heuristic", seed: int | None = None,
                   api_token: str | None = None, decision_ms: int = 0,
                   hosted: bool = False, **tls: Any) -> matchmaking_pb2.PracticeResponse:
    """A match against house bots of ``strength``, created at once; play the returned seat
    (``hosted``: a runner plays it with the api token's agent's active version)."""
    request = matchmaking_pb2.PracticeRequest(game_id=game, num_players=players,
                                              strength=strength, hosted=hosted)
    request.time_control.decision_ms = decision_ms
    if seed is not None:
        request.seed = seed
    response: matchmaking_pb2.PracticeResponse = await _unary(server, "Practice", request,
                                                              api_token, **tls)
    return response


async def queue(server: str | Sequence[str], api_token: str, game: str, players: int, *,
                house_fill_after: float | None = None, house_bot: str = "",
                tournament_only: bool = False, tournament_id: str = "",
                on_status: StatusCallback | None = None,
                root_cert: bytes | str | Path | None = None, tls: bool = False,
                backoff: Backoff | None = None,
                hosted: bool = False) -> matchmaking_pb2.MatchAssigned:
    """Wait in the queue until the server assigns a seat (the stream is re-opened on
    the next server after a failure). ``house_fill_after``: seconds before house bots
    fill the empty seats (None: the server's default). ``tournament_id`` (with
    ``tournament_only``): raise ``TournamentEnded`` once that tournament is over.
    ``hosted``: the runners play the seat with the agent's active version (the
    assignment then has no seat token). ``ALREADY_QUEUED`` is an error on the first
    call, and retried on the calls after a broken one (until ``backoff`` gives up)."""
    servers = parse_servers(server)
    cert = read_root_cert(root_cert)
    policy = backoff or Backoff(give_up_after=60.0)
    request = matchmaking_pb2.QueueRequest(game_id=game, num_players=players,
                                           house_bot=house_bot,
                                           tournament_only=tournament_only,
                                           tournament_id=tournament_id, hosted=hosted)
    if house_fill_after is not None:
        request.house_fill_after_ms = max(0, int(house_fill_after * 1000))
    #: Queue calls made: from the second on, a call broke, and the server may hold
    #: the agent's place for it until it notices.
    calls = 0

    def open_queue(channel: grpc.aio.Channel) -> AsyncIterator[matchmaking_pb2.QueueUpdate]:
        nonlocal calls
        calls += 1
        updates: AsyncIterator[matchmaking_pb2.QueueUpdate] = stub(
            matchmaking_pb2_grpc.MatchmakingStub, channel).Queue(
            request, metadata=bearer(api_token))
        return updates

    def held(error: grpc.aio.AioRpcError) -> bool:
        """Refused as already queued after a broken call: most likely that call's
        place, held until the server notices the break. Anything else, at once."""
        return calls > 1 and error_reason(error) == "ALREADY_QUEUED"

    stream = follow_stream(servers, cert, tls, open_queue, "queue", policy, also_retry=held)
    address = ",".join(servers)
    async with contextlib.aclosing(stream) as updates:
        async for address, update in updates:
            if update.WhichOneof("update") == "tournament_over":
                raise TournamentEnded(update.tournament_over)
            if update.WhichOneof("update") == "assigned":
                assigned: matchmaking_pb2.MatchAssigned = update.assigned
                if not assigned.server_address:
                    assigned.server_address = address
                return assigned
            if on_status is not None:
                on_status(update.status)
    raise AgentError(f"{address}: the queue stream ended without a match",
                     grpc.StatusCode.UNKNOWN)


async def queue_and_play(act: Any, server: str | Sequence[str], api_token: str, game: str,
                         players: int, *, house_fill_after: float | None = None,
                         house_bot: str = "", tournament_only: bool = False,
                         tournament_id: str = "", on_status: StatusCallback | None = None,
                         **agent_options: Any) -> MatchResult:
    """Queue for one match, then play the assigned seat to the end with ``act``
    (``TournamentEnded`` when the tournament of ``tournament_id`` is over); the
    outcome the store keeps (``Agent.stored_result``), else the one heard."""
    tls = {k: agent_options[k] for k in ("root_cert", "tls") if k in agent_options}
    assigned = await queue(server, api_token, game, players, house_fill_after=house_fill_after,
                           house_bot=house_bot, tournament_only=tournament_only,
                           tournament_id=tournament_id, on_status=on_status, **tls)
    servers = [assigned.server_address, *(s for s in parse_servers(server)
                                          if s != assigned.server_address)]
    agent = Agent(act, server=servers, match_id=assigned.match_id,
                  token=assigned.seat_token, **agent_options)
    heard = await agent.run()
    return await agent.stored_result() or heard


def run_queue_and_play(act: Any, server: str | Sequence[str], api_token: str, game: str,
                       players: int, **options: Any) -> MatchResult:
    """``queue_and_play`` for code without an event loop."""
    return asyncio.run(queue_and_play(act, server, api_token, game, players, **options))


@dataclass(frozen=True, slots=True)
class ArenaMatch:
    """One arena match played by ``play_arena``: the seat, how it ended, and the
    agent's rating in the arena once the match was rated (None: not rated within
    the wait, e.g. a voided match)."""

    assigned: matchmaking_pb2.MatchAssigned
    result: MatchResult
    rating: matchmaking_pb2.ArenaRating | None


async def join_arena(server: str | Sequence[str], api_token: str, arena_id: str,
                     **tls: Any) -> tuple[str, arenas_pb2.Arena, str]:
    """Enroll the api token's agent in the arena (again is harmless): (its agent
    id, the arena, why no table can form now or ''). An agent with an active
    hosted version is refused: the arena seats that version on the runners."""
    from .arenas import ArenaLadderClient
    from .versions import VersionClient

    done = await ArenaLadderClient(server, admin_token=api_token, **tls).enroll(arena_id, "")
    try:
        details = await VersionClient(parse_servers(server)[0], **tls).details(done.agent_id)
    except AgentError:  # a server without hosting: no hosted version either
        details = None
    if details is not None and details.active_version_id:
        raise AgentError(
            f"agent {done.agent_id} has an active hosted version: arena {arena_id} seats "
            "it on the runners (docs/hosting.md); playing over the network needs none",
            grpc.StatusCode.FAILED_PRECONDITION, "HOSTED_AGENT")
    return done.agent_id, done.arena, done.warning


async def rating_after(server: str | Sequence[str], agent_id: str, arena_id: str,
                       match_id: str, wait: float = 30.0,
                       **tls: Any) -> matchmaking_pb2.ArenaRating | None:
    """The agent's rating in the arena (its leaderboard row) once ``match_id`` is
    rated; None if it is not rated within ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        info = await get_agent(server, agent_id, **tls)
        if any(m.match_id == match_id for m in info.recent_matches):
            return next((r for r in info.arena_ratings
                         if r.arena_id == arena_id and r.current), None)
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(0.5)


async def play_arena(act: Any, server: str | Sequence[str], api_token: str, arena_id: str, *,
                     matches: int = 1, on_match: Callable[[ArenaMatch], Any] | None = None,
                     **agent_options: Any) -> list[ArenaMatch]:
    """Join an arena over the network in one call: enroll the token's agent, hold
    the arena's queue, play each seat it is given with ``act`` and read the rating
    after it; ``matches`` of them (0: until cancelled), each passed to ``on_match``."""
    tls = {k: agent_options[k] for k in ("root_cert", "tls") if k in agent_options}
    agent_id, arena, _warning = await join_arena(server, api_token, arena_id, **tls)
    played: list[ArenaMatch] = []
    while not matches or len(played) < matches:
        assigned = await queue(server, api_token, arena.game_id, arena.num_players,
                               tournament_only=True, **tls)
        servers = [assigned.server_address, *(s for s in parse_servers(server)
                                              if s != assigned.server_address)]
        agent = Agent(act, server=servers, match_id=assigned.match_id,
                      token=assigned.seat_token, **agent_options)
        heard = await agent.run()
        result = await agent.stored_result() or heard
        one = ArenaMatch(assigned, result, await rating_after(
            server, agent_id, arena_id, assigned.match_id, **tls))
        played.append(one)
        if on_match is not None:
            on_match(one)
    return played
