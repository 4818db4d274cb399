"""The gateway: a gRPC client of the arena that answers the pages' questions.

It speaks only the public contract (ListMatches, GetMatch, GetReplay, Watch,
the tournament and agent calls), so it sees what any spectator sees. Calls
many browsers make at once (the lobby, the node list) are shared: one upstream
call serves every browser asking within ``LOBBY_TTL_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from twistarena.clients.sdk import AgentError, MatchClient, TournamentClient, get_agent
from twistarena.clients.sdk.arenas import ArenaLadderClient, rating_json
from twistarena.clients.sdk.versions import VersionClient
from twistarena.link import make_channel, parse_servers, read_root_cert, stub
from twistarena.v1 import match_pb2, tournaments_pb2

from .feeds import FeedHub, MatchFeed
from .views import (
    OVER,
    agent_json,
    arena_json,
    leaderboard_json,
    match_json,
    replay_json,
    tournament_json,
)

JSON = dict[str, Any]

#: A lobby listing is shared by every browser asking within this many seconds.
LOBBY_TTL_S = 1.0
#: Finished replays kept rebuilt (each is every public view of one match).
REPLAY_CACHE = 8
#: Matches the lobby lists.
LOBBY_SIZE = 100
#: How often a live match nobody watches here is located again (it moves when
#: its node dies).
LOCATE_EVERY_S = 5.0


class Gateway:
    """State shared by the pages of one web face: clients, feeds, small caches."""

    def __init__(self, servers: str | list[str], *, root_cert: bytes | str | None = None,
                 tls: bool = False) -> None:
        self.servers = parse_servers(servers)
        self.root_cert = read_root_cert(root_cert)
        self.tls = tls
        self.matches = MatchClient(self.servers, root_cert=self.root_cert, tls=tls)
        self.tournaments = TournamentClient(self.servers, root_cert=self.root_cert, tls=tls)
        self.ladder = ArenaLadderClient(self.servers, root_cert=self.root_cert, tls=tls)
        self.versions = VersionClient(",".join(self.servers), root_cert=self.root_cert, tls=tls)
        #: Which node serves a match, learnt from the Watch streams that reached it.
        self.nodes_of: dict[str, str] = {}
        self.feeds = FeedHub(self.servers, self.root_cert, tls, on_node=self._learn_node)
        self._lobby: tuple[float, list[match_pb2.Match]] = (0.0, [])
        self._lobby_lock = asyncio.Lock()
        #: (time, actions) of each running match at the previous listing: decisions/s.
        self._last_actions: dict[str, tuple[float, int]] = {}
        self.rates: dict[str, float] = {}
        self._replays: OrderedDict[str, JSON] = OrderedDict()
        self._agent_names: dict[str, str] = {}
        self._probes = asyncio.Semaphore(4)
        self._probed: dict[str, float] = {}
        self._locating: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None

    def _learn_node(self, match_id: str, address: str) -> None:
        self.nodes_of[match_id] = address

    async def start(self) -> None:
        self._sweeper = asyncio.create_task(self._sweep())

    async def close(self) -> None:
        for task in list(self._locating):
            task.cancel()
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self.feeds.close()

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(2.0)
            await self.feeds.sweep()

    # -- matches -----------------------------------------------------------
    async def _listing(self) -> list[match_pb2.Match]:
        """The newest matches, fetched at most once per ``LOBBY_TTL_S``."""
        async with self._lobby_lock:
            at, matches = self._lobby
            now = time.monotonic()
            if now - at < LOBBY_TTL_S:
                return matches
            matches = await self.matches.list_matches(limit=LOBBY_SIZE)
            self._lobby = (now, matches)
            self._measure(now, matches)
            self._locate_live(matches)
            return matches

    def _measure(self, now: float, matches: list[match_pb2.Match]) -> None:
        """Decisions/s of each running match from two listings' action counts."""
        seen = {}
        for m in matches:
            if m.status != match_pb2.MATCH_STATUS_RUNNING:
                continue
            before = self._last_actions.get(m.match_id)
            if before is not None and now > before[0]:
                self.rates[m.match_id] = (m.actions - before[1]) / (now - before[0])
            elif m.match_id not in self.rates:
                # First seen: its mean rate since it was created, until two listings tell.
                age = time.time() - m.created_at.seconds - m.created_at.nanos / 1e9
                self.rates[m.match_id] = m.actions / age if age > 1.0 else 0.0
            seen[m.match_id] = (now, m.actions)
        self._last_actions = seen
        self.rates = {k: v for k, v in self.rates.items() if k in seen}

    async def _locate(self, match_id: str) -> None:
        """Learn which node serves a live match: open its Watch (following a
        NOT_OWNER redirect) and close it at the first message."""
        async with self._probes:
            feed = MatchFeed(match_id, self.servers, self.root_cert, self.tls, self._learn_node)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(feed.locate(), 5.0)
            self._probed[match_id] = time.monotonic()

    def _locate_live(self, matches: list[match_pb2.Match]) -> None:
        """Locate the live matches no Watch of this gateway has reached yet, or not
        lately (a match moves when its node dies)."""
        if len(self.servers) < 2:
            return
        now = time.monotonic()
        for m in matches:
            if m.status != match_pb2.MATCH_STATUS_RUNNING or m.match_id in self.feeds.feeds:
                continue
            if now - self._probed.get(m.match_id, -LOCATE_EVERY_S) >= LOCATE_EVERY_S:
                self._probed[m.match_id] = now
                task = asyncio.create_task(self._locate(m.match_id))
                self._locating.add(task)
                task.add_done_callback(self._locating.discard)

    def node_of(self, match_id: str) -> str:
        if match_id in self.nodes_of:
            return self.nodes_of[match_id]
        return self.servers[0] if len(self.servers) == 1 else ""

    async def lobby(self, game: str = "", status: str = "") -> JSON:
        matches = await self._listing()
        live: list[JSON] = []
        recent: list[JSON] = []
        for m in matches:
            item = match_json(m, self.node_of(m.match_id))
            item["decisions_per_s"] = round(self.rates.get(m.match_id, 0.0), 1)
            if game and item["game_id"] != game:
                continue
            if status and item["status"] != status:
                continue
            (recent if m.status in OVER else live).append(item)
        return {"live": live, "recent": recent, "servers": self.servers}

    async def match(self, match_id: str) -> JSON:
        return match_json(await self.matches.get_match(match_id), self.node_of(match_id))

    async def replay(self, match_id: str) -> JSON:
        """Every public view of a finished match (rebuilt once, then cached)."""
        cached = self._replays.get(match_id)
        if cached is not None:
            self._replays.move_to_end(match_id)
            return cached
        match = await self.matches.get_match(match_id)
        if match.status not in OVER:
            raise AgentError(f"match {match_id} has not ended; watch it live instead",
                             grpc.StatusCode.FAILED_PRECONDITION, "MATCH_RUNNING")
        out = replay_json(await self.matches.get_replay(match_id))
        self._replays[match_id] = out
        while len(self._replays) > REPLAY_CACHE:
            self._replays.popitem(last=False)
        return out

    # -- tournaments and agents -------------------------------------------
    async def names(self, entrants: list[str]) -> dict[str, str]:
        """Display names of registered agents (house bots are their own name)."""
        unknown = [e for e in entrants if e not in self._agent_names]
        if unknown:
            self._agent_names.update(await self.tournaments.entrant_names(unknown))
        return {e: self._agent_names.get(e, e) for e in entrants}

    async def tournament(self, tournament_id: str) -> JSON:
        record = await self.tournaments.get(tournament_id)
        return tournament_json(record, await self.names(list(record.spec.entrants)))

    async def tournament_list(self) -> JSON:
        records = await self.tournaments.list(50)
        out = []
        for record in records:
            out.append(tournament_json(record, await self.names(list(record.spec.entrants)),
                                       full=False))
        return {"tournaments": out}

    async def agents(self, name: str = "") -> JSON:
        """Registered agents (the newest page of ``ListAgents``) by their rating (the
        best mu - 3 sigma over their arenas, with the arena), the unrated last."""
        page = await self.ladder.agents(page_size=200, name_contains=name)
        ranked = sorted(page.agents, key=lambda a: (bool(a.rating_arena_id),
                                                    a.mu - 3 * a.sigma), reverse=True)
        out = [{**rating_json(a), "arenas": sorted({r.arena_id for r in a.arena_ratings})}
               for a in ranked]
        return {"agents": out, "more": bool(page.next_page_token)}

    async def agent(self, agent_id: str) -> JSON:
        """One agent's page: ratings per arena and version, matches, versions."""
        info = await get_agent(self.servers, agent_id)
        try:
            details = await self.versions.details(agent_id)
        except AgentError:
            details = None  # a server without hosting, or an agent with no version
        return agent_json(info, details)

    async def arenas(self) -> JSON:
        """Every arena."""
        return {"arenas": [arena_json(a) for a in await self.ladder.list()]}

    async def arena(self, arena_id: str) -> JSON:
        """An arena's leaderboard (its first 100 rows) and rating curves."""
        return leaderboard_json(await self.ladder.leaderboard(arena_id, page_size=100))

    async def _health(self, address: str) -> str:
        channel = make_channel(address, self.root_cert, self.tls)
        try:
            reply = await stub(health_pb2_grpc.HealthStub, channel).Check(
                health_pb2.HealthCheckRequest(), timeout=2.0)
            return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
        except grpc.aio.AioRpcError as error:
            return f"DOWN ({error.code().name})"
        finally:
            await channel.close()

    async def nodes(self) -> JSON:
        """The configured nodes: health, the live matches each serves (as far as this
        gateway's Watch streams found out) and their decisions/s."""
        matches = await self._listing()
        health = await asyncio.gather(*(self._health(a) for a in self.servers))
        out = []
        unplaced = [m.match_id for m in matches if m.status == match_pb2.MATCH_STATUS_RUNNING
                    and not self.node_of(m.match_id)]
        for address, state in zip(self.servers, health, strict=True):
            mine = [m.match_id for m in matches if m.status == match_pb2.MATCH_STATUS_RUNNING
                    and self.node_of(m.match_id) == address]
            out.append({"address": address, "health": state, "matches": mine,
                        "decisions_per_s": round(sum(self.rates.get(i, 0.0) for i in mine), 1)})
        for match_id, address in self.nodes_of.items():
            if address not in self.servers and match_id in self.rates:
                out.append({"address": address, "health": "", "matches": [match_id],
                            "decisions_per_s": round(self.rates[match_id], 1)})
        return {"nodes": out, "unplaced": unplaced, "leases": await self.leases(),
                "viewers": self.feeds.viewer_count(), "feeds": len(self.feeds.feeds)}

    async def leases(self) -> list[JSON]:
        """Which node drives (holds the lease of) each arena and running tournament."""
        out: list[JSON] = [{"kind": "arena", "id": a.arena_id, "driver": a.driver}
                           for a in await self.ladder.list()]
        out += [{"kind": "tournament", "id": t.tournament_id, "driver": t.driver}
                for t in await self.tournaments.list()
                if t.status == tournaments_pb2.TOURNAMENT_RUNNING]
        return out
