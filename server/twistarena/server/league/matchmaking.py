"""The Matchmaking service: registering agents, the Queue stream, practice matches.

The queue itself and forming matches from it are in ``matchmaker``; agent
accounts, inboxes and ratings in ``agents``; what is stored, and how, in
``twistarena.storage`` (``agents``, ``queues``).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from typing import Any

import grpc
from grpc import aio
from prometheus_client import Counter
from twistarena import engine, wire
from twistarena.bots import LADDER, STRATEGIES
from twistarena.storage import QueueHold, StoreError
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.v1 import matchmaking_pb2_grpc as kgrpc
from twistarena.v1 import tournaments_pb2 as tpb

from .. import auth, logs
from ..cluster import Cluster
from ..config import ServerConfig, is_loopback
from ..hostedagents.runnerhub import RunnerHub
from ..limits import Quotas, RateLimiter
from ..match.creation import new_match
from ..match.disclosure import redact
from ..rpc import api_agent, fail, is_admin, known_agent, peer_host, require_admin, shown
from .agents import Agents
from .arenas import Arenas, matchmaking_rating, set_rating
from .matchmaker import ALIVE_MS, TICK_S, Matchmaker

log = logs.get("twistarena.matchmaking")

PRACTICE = Counter("twistarena_practice_matches_total", "Practice matches created")
STATUS_EVERY_S = 1.0
STRENGTHS = LADDER  # practice strengths: the rungs of the house ladder


class Matchmaking(kgrpc.MatchmakingServicer):
    """The Matchmaking service: agent accounts, Queue streams and Practice."""

    def __init__(self, cluster: Cluster, config: ServerConfig, agents: Agents,
                 matchmaker: Matchmaker, quotas: Quotas, runners: RunnerHub) -> None:
        self.cluster = cluster
        self.runners = runners
        self.hub = cluster.hub
        self.config = config
        self.quotas = quotas
        self.agents = agents
        self.matchmaker = matchmaker
        self.limiter = RateLimiter(config.practice_per_minute)
        #: The arenas whose ratings and matches GetAgent adds (set by ``LeagueAndHosting``).
        self.arenas: Arenas | None = None

    async def RegisterAgent(self, request: kpb.RegisterAgentRequest,
                            context: aio.ServicerContext[Any, Any]) -> kpb.RegisterAgentResponse:
        """A new agent account and its api token (shown this once): admin only, but
        for anyone on a server whose host opened registration (still within the
        per-address registration and creation quotas)."""
        if not self.config.open_registration:
            await require_admin(context, self.config)
        name = request.name.strip()
        if not 1 <= len(name) <= 100:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                       "an agent name has 1-100 characters")
        await self.quotas.admit_register(context)
        await self.quotas.admit_creation(context, makes_match=False)
        agent_id, token = await self.agents.register(name)
        log.info("agent_registered", agent_id=agent_id, name=name)
        return kpb.RegisterAgentResponse(agent_id=agent_id, api_token=token)

    async def GetAgent(self, request: kpb.GetAgentRequest,
                       context: aio.ServicerContext[Any, Any]) -> kpb.AgentInfo:
        """An agent's name and rating (``arenas.set_rating``: its best arena rating),
        with its arena ratings (every version, with history) and recent arena matches."""
        record = await known_agent(context, self.agents, request.agent_id)
        info = kpb.AgentInfo(agent_id=record.agent_id, name=record.name)
        if self.arenas is not None:
            info.arena_ratings.extend(await self.arenas.arena_ratings(record.agent_id))
            recent = await self.arenas.recent_matches(record.agent_id)
            info.recent_matches.extend(recent)
            info.recent_match_ids.extend(m.match_id for m in recent)
            info.errors, info.timeouts = await self.arenas.failures(record.agent_id)
            info.enrolled_arenas.extend(await self.arenas.enrolled_arenas(record.agent_id))
        set_rating(info, info.arena_ratings)
        return info

    async def Queue(self, request: kpb.QueueRequest,
                    context: aio.ServicerContext[Any, Any]) -> None:
        """Hold the agent's place in a queue until a match seats it (or its tournament ends)."""
        agent_id = await api_agent(context, self.agents.by_token, "Queue")
        game_id, players = request.game_id, request.num_players
        problem = _check_game(game_id, players)
        if problem:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS", problem)
        bot = request.house_bot or "heuristic"
        if bot not in STRATEGIES:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS",
                       f"unknown house bot {shown(bot)}; known: {', '.join(STRATEGIES)}")
        if self.hub.draining:
            await fail(context, grpc.StatusCode.UNAVAILABLE, "DRAINING",
                       "server draining; queue on another server")
        if request.hosted:
            await self._check_hosted(agent_id, context)
        if request.HasField("house_fill_after_ms"):
            fill_ms = int(request.house_fill_after_ms)
        elif self.config.house_fill_after_s is not None:
            fill_ms = int(self.config.house_fill_after_s * 1000)
        else:
            fill_ms = -1
        held = await self.agents.stored.queued_in(agent_id)
        if held and held.alive(time.time() * 1000, ALIVE_MS):
            await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_QUEUED",
                       f"agent {agent_id} already waits in a queue ({held})")
        await self.agents.stored.hold_queued(agent_id,
                                             QueueHold(game_id, players, time.time() * 1000))
        waiter = asyncio.Event()
        self.agents.waiters[agent_id] = waiter
        queued = released = False
        started = time.monotonic()

        async def free_then_tell(update: kpb.QueueUpdate) -> None:
            """The call's last word, once the agent is free to queue again: a client
            that hears it may queue at once (for its next tournament game, say),
            and closes this call as it hears, which cancels this handler."""
            nonlocal released
            await self._release(agent_id, game_id, players, queued)
            released = True
            await context.write(update)

        try:
            assigned = await self.agents.take_assignment(agent_id)
            if assigned is None and not request.tournament_only:
                mu = (await matchmaking_rating(self.cluster.store, agent_id, game_id,
                                               players)).mu
                queued = await self.matchmaker.enqueue(agent_id, game_id, players, fill_ms,
                                                       bot, mu)
                self.matchmaker.attach(game_id, players)
            last_status = 0.0
            while assigned is None:
                now = time.monotonic()
                if now - last_status >= STATUS_EVERY_S:
                    last_status = now
                    over = await self._tournament_over(request, context)
                    if over is not None:
                        assigned = await self.agents.take_assignment(agent_id)
                        if assigned is None:
                            await free_then_tell(kpb.QueueUpdate(tournament_over=over))
                            return
                        break
                    await self.agents.stored.hold_queued(
                        agent_id, QueueHold(game_id, players, time.time() * 1000))
                    if queued:
                        await self.matchmaker.vouch(agent_id, game_id, players)
                    waiting = await self.matchmaker.waiting(game_id, players)
                    waited = now - started
                    detail = (f"waiting for a tournament match ({waited:.0f} s)"
                              if request.tournament_only else
                              _status_line(waiting, players, waited, fill_ms))
                    await context.write(kpb.QueueUpdate(status=kpb.QueueStatus(
                        waiting=waiting, waited_ms=int(waited * 1000), detail=detail)))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.wait(), TICK_S * 2)
                waiter.clear()
                assigned = await self.agents.take_assignment(agent_id)
            queued = False
            if request.hosted:
                assigned = await self._to_runners(agent_id, assigned)
            await free_then_tell(kpb.QueueUpdate(assigned=assigned))
        finally:
            if self.agents.waiters.get(agent_id) is waiter:
                del self.agents.waiters[agent_id]
            if not released:
                # Shielded: a client gone (the call cancelled) still frees its agent.
                await asyncio.shield(self._release(agent_id, game_id, players, queued))
            if not request.tournament_only and (game_id, players) in self.matchmaker.active:
                self.matchmaker.detach(game_id, players)

    async def _release(self, agent_id: str, game_id: str, players: int, queued: bool) -> None:
        """The agent's Queue call is over: it may queue again; out of the queue if in it."""
        with contextlib.suppress(StoreError):
            await self.agents.stored.release_queued(agent_id)
            if queued:
                await self.matchmaker.leave(agent_id, game_id, players)

    async def _check_hosted(self, agent_id: str,
                            context: aio.ServicerContext[Any, Any]) -> None:
        """A hosted seat needs an active version to run."""
        problem = await self.runners.unplayable([agent_id])
        if problem:
            await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "NO_ACTIVE_VERSION",
                       problem)

    async def _to_runners(self, agent_id: str,
                          assigned: kpb.MatchAssigned) -> kpb.MatchAssigned:
        """Hand a seat the queue gave a hosted agent to the runners; what its stream
        is told then (no seat token: the runners play it)."""
        record = await self.cluster.store.matches.load(assigned.match_id)
        options = record.options if record is not None else mpb.MatchOptions(
            game_id=assigned.game_id, num_players=assigned.num_players)
        await self.runners.seat_hosted(
            options, assigned.match_id, assigned.seat, assigned.seat_token,
            assigned.server_address, agent_id,
            "tournament" if assigned.tournament_id else "matchmaking",
            tournament_id=assigned.tournament_id)
        told = kpb.MatchAssigned()
        told.CopyFrom(assigned)
        told.ClearField("seat_token")
        return told

    async def _tournament_over(self, request: kpb.QueueRequest,
                               context: aio.ServicerContext[Any, Any],
                               ) -> kpb.TournamentOver | None:
        """For a tournament_only wait on ``request.tournament_id``: how it ended, or
        None while it runs (NOT_FOUND if there is no such tournament)."""
        tid = request.tournament_id
        if not request.tournament_only or not tid:
            return None
        state = await self.cluster.store.tournaments.status(tid)
        if state is None:
            arena = await self.cluster.store.arenas.get(tid)
            hint = f"; {tid} is an arena: queue --arena {tid}" if arena is not None else ""
            await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_TOURNAMENT",
                       f"no tournament {shown(tid)}{hint}")
        status, detail = state
        if status not in wire.TOURNAMENT_OVER:
            return None
        name = tpb.TournamentStatus.Name(status).removeprefix("TOURNAMENT_")
        return kpb.TournamentOver(tournament_id=tid, status=name, detail=detail)

    async def Practice(self, request: kpb.PracticeRequest,
                       context: aio.ServicerContext[Any, Any]) -> kpb.PracticeResponse:
        """A match at once against house bots, unrated, within the practice limit."""
        token = auth.bearer(context.invocation_metadata())
        host = peer_host(context)
        who = host
        admin = is_admin(context, self.config)
        agent_id: str | None = None
        if token:
            agent_id = await self.agents.by_token(token)
            if agent_id is None and not admin:
                await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                           "the token is neither an api token nor the admin token")
            who = agent_id or "admin"
        elif not is_loopback(host):
            await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                       "practice from another machine needs an api token: metadata "
                       "'authorization: Bearer <token>'")
        if who != "admin" and not self.limiter.allow(who):
            await fail(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED",
                       f"at most {self.config.practice_per_minute} practice matches a minute; "
                       "wait a little")
        if self.hub.draining:
            await fail(context, grpc.StatusCode.UNAVAILABLE, "DRAINING",
                       "server draining; practice on another server")
        game_id = request.game_id
        players = request.num_players
        if game_id in engine.GAME_IDS and not players:
            players = engine.game(game_id).min_players
        problem = _check_game(game_id, players)
        strength = request.strength or "heuristic"
        if not problem and strength not in STRENGTHS:
            problem = f"unknown strength {shown(strength)}; known: {', '.join(STRENGTHS)}"
        if problem:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS", problem)
        if request.HasField("seed") and self.config.admin_token and not admin:
            await fail(context, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED_ADMIN",
                       "seed needs the admin token: whoever picks the seed knows every hand")
        if request.hosted:
            if agent_id is None:
                await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                           "a hosted practice match needs the agent's api token")
            await self._check_hosted(agent_id, context)
        seed = request.seed if request.HasField("seed") else secrets.randbits(63)
        seat = seed % players
        opts = mpb.MatchOptions(game_id=game_id, num_players=players, seed=seed,
                                time_control=request.time_control)
        for s in range(players):
            opts.seats.append(mpb.SeatSpec(name="you") if s == seat else
                              mpb.SeatSpec(name=f"house {strength}", house_bot=strength))
        creator = await self.quotas.admit_creation(context, makes_match=True)
        template = await self.runners.hosted_template(agent_id) \
            if request.hosted and agent_id is not None else None
        match, tokens = await new_match(self.cluster, opts,
                                        hosted={seat: template} if template else {})
        self.quotas.created(creator, f"match:{match.match_id}")
        PRACTICE.inc()
        log.info("practice_created", match_id=match.match_id, game=game_id, players=players,
                 strength=strength, peer=host)
        if not admin:
            redact(match)
        address = await self.cluster.serving_address(match.match_id,
                                                     self.matchmaker.address())
        if request.hosted:
            assert agent_id is not None
            await self.runners.seat_hosted(match.options, match.match_id, seat, tokens[seat],
                                           address, agent_id, "practice", template=template)
            return kpb.PracticeResponse(match=match, seat=seat, server_address=address)
        return kpb.PracticeResponse(match=match, seat=seat, seat_token=tokens[seat],
                                    server_address=address)


def _check_game(game_id: str, players: int) -> str:
    if game_id not in engine.GAME_IDS:
        return f"unknown game {shown(game_id)}; games: {', '.join(engine.GAME_IDS)}"
    info = engine.game(game_id)
    if not info.min_players <= players <= info.max_players:
        return f"{game_id} is for {info.min_players}-{info.max_players} players, got {players}"
    return ""


def _status_line(waiting: int, players: int, waited: float, fill_ms: int) -> str:
    line = f"{min(waiting, players)} of {players} players"
    if fill_ms >= 0:
        left = max(0.0, fill_ms / 1000 - waited)
        line += f"; house bots in {left:.0f} s" if left else "; house bots now"
    return line
