"""Arenas: their specs, the rating of every result, and the read calls of the
ladder (leaderboards, agents), open to anyone.

What a result does to ratings is ``twistarena.league.ladder``'s: one rating
per arena and version, a new version's head start, voided matches rate
nothing. This module applies it through ``twistarena.storage.arenas`` (each
match once, atomically) and answers the Arenas service of arenas.proto.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import grpc
from grpc import aio
from twistarena import engine
from twistarena.league import PlackettLuce, Rating, next_version_rating, rate_table
from twistarena.league.anchors import anchor
from twistarena.storage import Store
from twistarena.storage.arenas import (
    RatingRow,
    house_bot,
    house_player,
    player_key,
    split_player,
)
from twistarena.v1 import arenas_pb2 as apb
from twistarena.v1 import arenas_pb2_grpc as agrpc
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.wire import pages

from .. import auth, logs
from ..config import ServerConfig
from ..rpc import api_agent, fail, is_admin, known_agent, page_token, require_admin, shown
from .agents import Agents
from .leased import driver

log = logs.get("twistarena.arenas")

DEFAULT_PAGE = 50
MAX_PAGE = 500
#: Rows of a leaderboard page whose rating history comes along.
HISTORY_ROWS = 10
#: Recent matches GetAgent lists per agent.
RECENT_MATCHES = 20
#: Agents ListAgents reads to fill one filtered page (bounded work per call).
SCAN_LIMIT = 5_000
DEFAULT_MATCHES_PER_MINUTE = 60
DEFAULT_MAX_CONCURRENT = 2


def arena_id_of(game_id: str, num_players: int) -> str:
    """An arena's id: its game and player count (one arena each)."""
    return f"{game_id}-{num_players}"


async def arena_match_ids(store: Store, arena_id: str, agent_id: str, offset: int,
                          count: int) -> list[str]:
    """Rated arena matches, newest first: of one arena, of one agent (in every
    arena) or both (ListMatches' arena_id and agent_id filters, GetAgent)."""
    if not agent_id and not arena_id:
        return []
    arenas = [arena_id] if arena_id else [a.arena_id for a in await store.arenas.all()]
    found: list[tuple[str, int]] = []
    for one in arenas:
        found.extend(await store.arenas.match_page(one, agent_id, 0, offset + count))
    found.sort(key=lambda item: item[1], reverse=True)
    return [mid for mid, _ in found[offset:offset + count]]


def spec_problem(request: apb.CreateArenaRequest) -> str:
    """What is wrong with an arena's spec ('' when nothing)."""
    from twistarena.bots import STRATEGIES

    if request.game_id not in engine.GAME_IDS:
        return f"unknown game {shown(request.game_id)}; one of {sorted(engine.GAME_IDS)}"
    info = engine.game(request.game_id)
    low, high = info.min_players, info.max_players
    if not low <= request.num_players <= high:
        return f"{request.game_id} is for {low}-{high} players, not {request.num_players}"
    unknown = [b for b in request.house_bots if b not in STRATEGIES]
    if unknown:
        return f"unknown house bots {unknown}; one of {sorted(STRATEGIES)}"
    return ""


def anchors_of(arena: apb.Arena) -> dict[str, Rating]:
    """The arena's anchored house rungs: player key -> fixed rating."""
    return {house_player(a.bot): Rating(a.mu, a.sigma) for a in arena.anchors}


def set_anchors(arena: apb.Arena) -> None:
    """Copy the calibrated rating of each of the arena's house rungs (kept with
    the arena from then on; a rung not calibrated for its table has none)."""
    del arena.anchors[:]
    for bot in arena.house_bots:
        rating = anchor(arena.game_id, arena.num_players, bot)
        if rating is not None:
            arena.anchors.append(apb.HouseAnchor(bot=bot, mu=rating.mu, sigma=rating.sigma))


def no_table_reason(arena: apb.Arena) -> str:
    """Why the arena forms no table now ('' when it can): closed, paused, or too
    few players to fill one (its enrolled agents and house rungs)."""
    if arena.status == apb.ARENA_STATUS_CLOSED:
        return f"arena {arena.arena_id} is closed: it forms no table"
    if arena.status == apb.ARENA_STATUS_PAUSED:
        return f"arena {arena.arena_id} is paused: no table forms until it resumes"
    if arena.enrolled + len(arena.house_bots) < arena.num_players:
        return (f"no table can form: a table has {arena.num_players} seats and the arena has "
                f"{arena.enrolled} enrolled agent{'' if arena.enrolled == 1 else 's'} and "
                f"{len(arena.house_bots)} house rung{'' if len(arena.house_bots) == 1 else 's'}"
                "; enroll more agents or add house rungs (arena update --house)")
    return ""


class Ladder:
    """Applies match results to an arena's ratings (the model of ``twistarena.league``)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.model = PlackettLuce()

    async def record(self, arena_id: str, match_id: str, players: Sequence[str],
                     places: Sequence[int], finished: bool) -> bool:
        """Rate one match of the arena once (``players``: ``AGENT@VERSION`` per
        seat, ``house:BOT@0`` for a house rung); False if it moves nothing (voided,
        or rated before)."""
        if not finished:  # voided or cancelled: nobody's play decided it
            log.info("arena_result_not_rated", arena=arena_id, match=match_id)
            return False
        model = self.model
        ended = int(time.time() * 1000)
        arena = await self.store.arenas.get(arena_id)
        anchored = anchors_of(arena) if arena is not None else {}

        def update(rows: dict[str, RatingRow | None],
                   previous: dict[str, RatingRow | None]) -> dict[str, RatingRow]:
            before: list[Rating] = []
            for key in players:
                row, old = rows[key], previous.get(key)
                if key in anchored:
                    before.append(anchored[key])
                elif row is not None:
                    before.append(Rating(row.mu, row.sigma))
                else:
                    before.append(next_version_rating(
                        None if old is None else Rating(old.mu, old.sigma), model))
            after = rate_table(model, before, places, [key in anchored for key in players])
            out: dict[str, RatingRow] = {}
            for key, rating, place in zip(players, after, places, strict=True):
                row = rows[key] or RatingRow(0.0, 0.0)
                out[key] = RatingRow(rating.mu, rating.sigma, row.games + 1,
                                     row.wins + (place == 1), match_id, ended)
            return out

        return await self.store.arenas.rate(arena_id, match_id, ended, list(players),
                                            list(places), update)


def row_message(rank: int, key: str, row: RatingRow, names: dict[str, str]) -> apb.LeaderboardRow:
    """One leaderboard row."""
    agent_id, version = split_player(key)
    out = apb.LeaderboardRow(
        rank=rank, agent_id=agent_id, name=names.get(agent_id, agent_id), version=version,
        conservative=row.mu - 3.0 * row.sigma, mu=row.mu, sigma=row.sigma, games=row.games,
        wins=row.wins, win_share=row.wins / row.games if row.games else 0.0,
        last_match_id=row.last_match_id, house=bool(house_bot(agent_id)))
    if row.last_ms:
        out.last_match_at.FromMilliseconds(row.last_ms)
    return out


class Arenas(agrpc.ArenasServicer):
    """The Arenas service: specs (admin), leaderboards and agents (anyone)."""

    def __init__(self, store: Store, config: ServerConfig, agents: Agents) -> None:
        self.store = store
        self.config = config
        self.agents = agents

    async def _arena(self, arena_id: str, context: aio.ServicerContext[Any, Any]) -> apb.Arena:
        arena = await self.store.arenas.get(arena_id)
        if arena is None:
            await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_ARENA",
                       f"no arena {shown(arena_id)}; ListArenas shows them")
        await self._count(arena)
        return arena

    async def _count(self, arena: apb.Arena) -> None:
        counts = await self.store.arenas.counts(arena.arena_id)
        arena.matches_played, arena.players, arena.enrolled = counts
        [lease] = await self.store.arenas.leases.read([arena.arena_id])
        arena.driver = driver(lease)

    async def _page(self, page_size: int, token: str,
                    context: aio.ServicerContext[Any, Any]) -> tuple[int, int]:
        """(offset, count) of a page request (INVALID_ARGUMENT for a bad token)."""
        offset = await page_token(context, pages.parse_offset(token))
        return offset, min(page_size or DEFAULT_PAGE, MAX_PAGE)

    async def CreateArena(self, request: apb.CreateArenaRequest,
                          context: aio.ServicerContext[Any, Any]) -> apb.Arena:
        """Admin only: open an arena for a game and player count."""
        await require_admin(context, self.config)
        problem = spec_problem(request)
        if problem:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS", problem)
        arena = await self.open(request)
        if arena is None:
            await fail(context, grpc.StatusCode.ALREADY_EXISTS, "ARENA_EXISTS",
                       f"arena {arena_id_of(request.game_id, request.num_players)} exists; "
                       "change it with UpdateArena, pause, resume or close it")
        return arena

    async def open_configured(self, specs: Sequence[str], house: Sequence[str] = ()) -> None:
        """Open the arenas ``serve --arena GAME:PLAYERS[:HOUSE,...]`` names, unless
        open, with the rungs the spec names or else the ``house`` rungs (``serve
        --house``): they fill its tables when too few agents are free, so one
        author's bot plays from its enrolment on."""
        for spec in specs:
            game_id, _, rest = spec.partition(":")
            players, _, own_house = rest.partition(":")
            rungs = [h for h in own_house.split(",") if h] or list(house)
            request = apb.CreateArenaRequest(game_id=game_id, house_bots=rungs,
                                             num_players=int(players) if players.isdigit() else 0)
            problem = spec_problem(request)
            if problem:
                raise ValueError(f"--arena {spec}: {problem}")
            await self.open(request)

    async def open(self, request: apb.CreateArenaRequest) -> apb.Arena | None:
        """Store a new arena from a checked spec; None if it is open already."""
        arena = apb.Arena(
            arena_id=arena_id_of(request.game_id, request.num_players),
            game_id=request.game_id, num_players=request.num_players,
            house_bots=list(dict.fromkeys(request.house_bots)),
            matches_per_minute=request.matches_per_minute or DEFAULT_MATCHES_PER_MINUTE,
            max_concurrent_per_agent=(request.max_concurrent_per_agent
                                      or DEFAULT_MAX_CONCURRENT),
            status=apb.ARENA_STATUS_RUNNING)
        set_anchors(arena)
        arena.created_at.GetCurrentTime()
        if not await self.store.arenas.create(arena):
            return None
        log.info("arena_created", arena=arena.arena_id, house=list(arena.house_bots))
        return arena

    async def ListArenas(self, request: apb.ListArenasRequest,
                         context: aio.ServicerContext[Any, Any]) -> apb.ListArenasResponse:
        """Every arena with its counts."""
        arenas = await self.store.arenas.all()
        for arena in arenas:
            await self._count(arena)
        return apb.ListArenasResponse(arenas=arenas)

    async def GetArena(self, request: apb.GetArenaRequest,
                       context: aio.ServicerContext[Any, Any]) -> apb.Arena:
        """One arena."""
        return await self._arena(request.arena_id, context)

    async def SetArenaPaused(self, request: apb.SetArenaPausedRequest,
                             context: aio.ServicerContext[Any, Any]) -> apb.Arena:
        """Admin only: pause or resume forming tables (not of a closed arena)."""
        await require_admin(context, self.config)
        arena = await self._open_arena(request.arena_id, context)
        arena.status = apb.ARENA_STATUS_PAUSED if request.paused else apb.ARENA_STATUS_RUNNING
        await self.store.arenas.put(arena)
        log.info("arena_paused" if request.paused else "arena_resumed", arena=arena.arena_id)
        return arena

    async def _open_arena(self, arena_id: str,
                          context: aio.ServicerContext[Any, Any]) -> apb.Arena:
        """The arena, refused (FAILED_PRECONDITION) when it is closed."""
        arena = await self._arena(arena_id, context)
        if arena.status == apb.ARENA_STATUS_CLOSED:
            await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "ARENA_CLOSED",
                       f"arena {arena.arena_id} is closed; its leaderboard stays readable")
        return arena

    async def UpdateArena(self, request: apb.UpdateArenaRequest,
                          context: aio.ServicerContext[Any, Any]) -> apb.Arena:
        """Admin only: new house rungs, matches per minute or per-agent concurrency."""
        await require_admin(context, self.config)
        arena = await self._open_arena(request.arena_id, context)
        if request.set_house_bots:
            problem = spec_problem(apb.CreateArenaRequest(
                game_id=arena.game_id, num_players=arena.num_players,
                house_bots=request.house_bots))
            if problem:
                await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS",
                           problem)
            del arena.house_bots[:]
            arena.house_bots.extend(dict.fromkeys(request.house_bots))
            set_anchors(arena)
        if request.matches_per_minute:
            arena.matches_per_minute = request.matches_per_minute
        if request.max_concurrent_per_agent:
            arena.max_concurrent_per_agent = request.max_concurrent_per_agent
        await self.store.arenas.put(arena)
        log.info("arena_updated", arena=arena.arena_id, house=list(arena.house_bots),
                 per_minute=arena.matches_per_minute,
                 concurrent=arena.max_concurrent_per_agent)
        return arena

    async def CloseArena(self, request: apb.CloseArenaRequest,
                         context: aio.ServicerContext[Any, Any]) -> apb.Arena:
        """Admin only: no new tables ever; running matches finish and are rated."""
        await require_admin(context, self.config)
        arena = await self._arena(request.arena_id, context)
        arena.status = apb.ARENA_STATUS_CLOSED
        await self.store.arenas.put(arena)
        log.info("arena_closed", arena=arena.arena_id)
        return arena

    async def EnrollAgent(self, request: apb.EnrollAgentRequest,
                          context: aio.ServicerContext[Any, Any]) -> apb.EnrollAgentResponse:
        """The agent itself (its api token; no agent id: its own) or the admin
        enrolls or withdraws it; the answer warns when no table can form."""
        agent_id = request.agent_id
        if auth.bearer(context.invocation_metadata()) and not is_admin(context, self.config):
            caller = await api_agent(context, self.agents.by_token, "EnrollAgent")
            agent_id = agent_id or caller
            if caller != agent_id:
                await fail(context, grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_AGENT",
                           "an api token enrolls its own agent only")
        else:
            await require_admin(context, self.config)
        arena = await self._arena(request.arena_id, context)
        await known_agent(context, self.agents, agent_id)
        await self.store.arenas.enroll(arena.arena_id, agent_id, not request.withdraw)
        await self._count(arena)
        log.info("arena_withdrawn" if request.withdraw else "arena_enrolled",
                 arena=arena.arena_id, agent=agent_id)
        return apb.EnrollAgentResponse(arena=arena, enrolled=not request.withdraw,
                                       agents=arena.enrolled, agent_id=agent_id,
                                       warning=no_table_reason(arena))

    async def GetLeaderboard(self, request: apb.GetLeaderboardRequest,
                             context: aio.ServicerContext[Any, Any]) -> apb.Leaderboard:
        """One page of the board, best first, with the history of its first rows."""
        arena = await self._arena(request.arena_id, context)
        offset, count = await self._page(request.page_size, request.page_token, context)
        rows, size = await self.store.arenas.board(arena.arena_id, offset, count)
        agents = [split_player(k)[0] for k, _ in rows]
        names = await self.store.agents.names([a for a in agents if not house_bot(a)])
        out = apb.Leaderboard(arena=arena, rows=[
            row_message(offset + i + 1, key, row, names) for i, (key, row) in enumerate(rows)])
        if offset + count < size:
            out.next_page_token = pages.offset_token(offset + count)
        top = [key for key, _ in rows[:HISTORY_ROWS]]
        histories = await self.store.arenas.history(arena.arena_id, top)
        ids = sorted({mid for points in histories for _mu, _sigma, mid in points})
        times = dict(zip(ids, await self.store.arenas.match_times(arena.arena_id, ids),
                         strict=True))
        for key, points in zip(top, histories, strict=True):
            agent_id, version = split_player(key)
            out.history.append(kpb.RatingHistory(agent_id=agent_id, version=version, points=[
                kpb.RatingPoint(mu=mu, sigma=sigma, match_id=mid, ended_ms=times.get(mid, 0))
                for mu, sigma, mid in points]))
        return out

    async def ListAgents(self, request: apb.ListAgentsRequest,
                         context: aio.ServicerContext[Any, Any]) -> apb.ListAgentsResponse:
        """Registered agents, newest first, filtered by name and arena; each filtered
        page reads at most SCAN_LIMIT agents (the token says where to go on)."""
        offset, count = await self._page(request.page_size, request.page_token, context)
        wanted = request.name_contains.lower()
        found: list[kpb.AgentInfo] = []
        position = offset
        while len(found) < count and position - offset < SCAN_LIMIT:
            ids = await self.store.agents.page(position, min(MAX_PAGE, SCAN_LIMIT))
            if not ids:
                position = -1
                break
            names = await self.store.agents.names(ids)
            inside = (await self.store.arenas.in_arena(request.arena_id, ids)
                      if request.arena_id else [True] * len(ids))
            for agent_id, ok in zip(ids, inside, strict=True):
                position += 1
                if ok and wanted in names[agent_id].lower():
                    found.append(kpb.AgentInfo(agent_id=agent_id, name=names[agent_id]))
                    if len(found) == count:
                        break
        for info in found:
            info.arena_ratings.extend(await self.arena_ratings(info.agent_id, history=False))
            set_rating(info, info.arena_ratings)
        out = apb.ListAgentsResponse(agents=found)
        if position >= 0 and await self.store.agents.page(position, 1):
            out.next_page_token = pages.offset_token(position)
        return out

    async def arena_ratings(self, agent_id: str, history: bool = True) -> list[kpb.ArenaRating]:
        """Every rating of the agent's versions in every arena (GetAgent, ListAgents)."""
        return await agent_arena_ratings(self.store, agent_id, history)

    async def failures(self, agent_id: str) -> tuple[int, int]:
        """(crashes and illegal answers, timeouts) of the agent's hosted versions."""
        ids = await self.store.versions.ids(agent_id)
        stats = (await self.store.versions.stats(agent_id, ids)).values() if ids else []
        return (sum(s.crashes + s.illegal_outputs for s in stats),
                sum(s.timeouts for s in stats))

    async def enrolled_arenas(self, agent_id: str) -> list[str]:
        """The arenas the agent is enrolled in (its author's console shows them)."""
        ids = [arena.arena_id for arena in await self.store.arenas.all()]
        return await self.store.arenas.enrolled_in(ids, agent_id)

    async def recent_matches(self, agent_id: str) -> list[kpb.RecentMatch]:
        """The agent's latest arena matches, newest first: arena, its version, the
        others at the table (name and version), its place and score, when."""
        found: list[tuple[str, str, int]] = []
        for arena in await self.store.arenas.all():
            found.extend((arena.arena_id, mid, ms) for mid, ms in
                         await self.store.arenas.match_page(arena.arena_id, agent_id, 0,
                                                            RECENT_MATCHES))
        found.sort(key=lambda item: item[2], reverse=True)
        found = found[:RECENT_MATCHES]
        records = await self.store.matches.load_many([mid for _, mid, _ in found])
        out: list[kpb.RecentMatch] = []
        for (arena_id, mid, ms), record in zip(found, records, strict=True):
            [table] = await self.store.arenas.tables(arena_id, [mid])
            players, places = table or ([], [])
            others = [split_player(k) for k in players if split_player(k)[0] != agent_id]
            names = await self.store.agents.names(
                [a for a, _ in others if not house_bot(a)])
            recent = kpb.RecentMatch(match_id=mid, arena_id=arena_id, opponents=[
                a if house_bot(a) else
                (f"{names.get(a, a)} v{v}" if v else names.get(a, a)) for a, v in others])
            recent.ended_at.FromMilliseconds(ms)
            seat = next((s for s, k in enumerate(players) if split_player(k)[0] == agent_id),
                        -1)
            if seat >= 0:
                recent.version = split_player(players[seat])[1]
                recent.place = places[seat] if seat < len(places) else 0
                if record is not None and record.result is not None \
                        and seat < len(record.result.scores):
                    recent.score = record.result.scores[seat]
            out.append(recent)
        return out


async def agent_arena_ratings(store: Store, agent_id: str,
                              history: bool = True) -> list[kpb.ArenaRating]:
    """Every rating of the agent's versions in every arena; ``current`` marks the
    version each arena's leaderboard shows (the one it played last there)."""
    out: list[kpb.ArenaRating] = []
    for arena in await store.arenas.all():
        keys = await store.arenas.player_keys(arena.arena_id, agent_id)
        if not keys:
            continue
        rows = await store.arenas.rows(arena.arena_id, keys)
        [current] = await store.arenas.current_versions(arena.arena_id, [agent_id])
        points = (await store.arenas.history(arena.arena_id, keys) if history
                  else [[] for _ in keys])
        for key, row, pts in zip(keys, rows, points, strict=True):
            if row is None:
                continue
            version = split_player(key)[1]
            out.append(kpb.ArenaRating(
                arena_id=arena.arena_id, version=version, mu=row.mu, sigma=row.sigma,
                games=row.games, wins=row.wins, current=version == current,
                history=[kpb.RatingPoint(mu=m, sigma=s, match_id=mid) for m, s, mid in pts]))
    return out


def best_rating(ratings: Sequence[kpb.ArenaRating]) -> kpb.ArenaRating | None:
    """The agent's rating shown alone: the best conservative ``mu - 3 sigma`` among
    the versions its arenas' leaderboards show (None: rated nowhere)."""
    shown_rows = [r for r in ratings if r.current]
    return max(shown_rows, key=lambda r: (r.mu - 3.0 * r.sigma, r.arena_id), default=None)


def set_rating(info: kpb.AgentInfo, ratings: Sequence[kpb.ArenaRating]) -> None:
    """Fill ``info``'s own rating fields from its arena ratings (``best_rating``);
    an agent rated nowhere shows the model's starting rating and 0 matches."""
    best = best_rating(ratings)
    if best is None:
        start = PlackettLuce().rating()
        info.mu, info.sigma, info.matches = start.mu, start.sigma, 0
        info.rating_arena_id, info.rating_version = "", 0
        return
    info.mu, info.sigma, info.matches = best.mu, best.sigma, best.games
    info.rating_arena_id, info.rating_version = best.arena_id, best.version


async def matchmaking_rating(store: Store, agent_id: str, game_id: str,
                             num_players: int) -> Rating:
    """The rating matchmaking pairs the agent by: its rating in the arena of the
    game and player count (the version it played last there), else a newcomer's."""
    arena_id = arena_id_of(game_id, num_players)
    [version] = await store.arenas.current_versions(arena_id, [agent_id])
    if version is not None:
        [row] = await store.arenas.rows(arena_id, [player_key(agent_id, version)])
        if row is not None:
            return Rating(row.mu, row.sigma)
    return PlackettLuce().rating()
