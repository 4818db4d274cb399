"""Arenas over real gRPC and a real Valkey: specs, the rating of results (once,
per version, voided ones not at all) and the open read calls of the ladder."""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any

import grpc
import pytest
from twistarena.clients.sdk import MatchClient
from twistarena.clients.sdk.arenas import ArenaLadderClient
from twistarena.league import PlackettLuce
from twistarena.league.ladder import NEW_VERSION_SIGMA_SHARE
from twistarena.server.loops import stop_loops
from twistarena.v1 import arenas_pb2 as apb
from twistarena.v1 import arenas_pb2_grpc as agrpc
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.v1 import matchmaking_pb2_grpc as kgrpc

from tests.support.hosting import finished_match as match_over
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until

MODEL = PlackettLuce()


def test_arena_rates_results_per_version_and_shows_them_to_anyone(
        server: InProcessServer) -> None:
    """Real matches noted live for the arena (as its scheduler notes the ones it
    creates) are rated from their stored results once they end: once each, a
    cancelled one not at all."""
    async def note_live(match_id: str, players: list[str]) -> None:
        await live_in_arena(server, "twhist-3", match_id, players)

    async def all_rated() -> bool:
        return await rated_all(server, "twhist-3")

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.target) as channel:
            arenas = agrpc.ArenasStub(channel)
            mm = kgrpc.MatchmakingStub(channel)
            arena = await arenas.CreateArena(apb.CreateArenaRequest(
                game_id="twhist", num_players=3, house_bots=["random"]))
            assert arena.arena_id == "twhist-3" and arena.max_concurrent_per_agent == 2
            with pytest.raises(grpc.aio.AioRpcError) as again:
                await arenas.CreateArena(apb.CreateArenaRequest(game_id="twhist", num_players=3))
            assert again.value.code() == grpc.StatusCode.ALREADY_EXISTS
            with pytest.raises(grpc.aio.AioRpcError) as bad:
                await arenas.CreateArena(apb.CreateArenaRequest(game_id="twhist", num_players=9))
            assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT

            ids = [(await mm.RegisterAgent(kpb.RegisterAgentRequest(name=f"arena-bot-{n}")))
                   .agent_id for n in ("strong", "weak")]
            strong, weak = ids
            # Six matches where the strong agent's seat came first and the weak one's last.
            rated = []
            for seed in range(1, 7):
                match_id, places = await finished_match(server, "twhist", 3, seed)
                await note_live(match_id, seated_by_place(
                    places, [f"{strong}@1", "house:random@0", f"{weak}@1"]))
                rated.append(match_id)
            await wait_until(all_rated, "the arena rated its ended matches")
            # Rated once; a cancelled match moves nothing.
            client = MatchClient(server.target)
            void = (await client.create_match("twhist", 3, seed=1)).match.match_id
            await client.cancel_match(void)
            await note_live(rated[0], [f"{strong}@1", f"{weak}@1", "house:random@0"])
            await note_live(void, [f"{weak}@1", f"{strong}@1", "house:random@0"])
            await wait_until(all_rated, "the arena went through the repeated and void matches")
            board = await arenas.GetLeaderboard(apb.GetLeaderboardRequest(arena_id="twhist-3"))
            assert [r.agent_id for r in board.rows] == [strong, "house:random", weak]
            top = board.rows[0]
            assert (top.rank, top.version, top.games, top.wins, top.name) == \
                (1, 1, 6, 6, "arena-bot-strong")
            assert top.conservative == pytest.approx(top.mu - 3 * top.sigma)
            assert board.rows[1].house and not top.house
            assert len(board.history) == 3 and len(board.history[0].points) == 6
            first = await arenas.GetLeaderboard(apb.GetLeaderboardRequest(
                arena_id="twhist-3", page_size=1))
            assert len(first.rows) == 1 and first.next_page_token == "1"
            second = await arenas.GetLeaderboard(apb.GetLeaderboardRequest(
                arena_id="twhist-3", page_size=2, page_token=first.next_page_token))
            assert [r.rank for r in second.rows] == [2, 3] and not second.next_page_token

            # A new version of the weak agent starts from its mu with sigma raised.
            old = board.rows[2]
            newest, places = await finished_match(server, "twisted", 2, 4)
            assert places == [1, 2]
            await note_live(newest, [f"{weak}@2", f"{strong}@1"])
            await wait_until(all_rated, "the arena rated the new version's match")
            board = await arenas.GetLeaderboard(apb.GetLeaderboardRequest(arena_id="twhist-3"))
            versions = {r.agent_id: r.version for r in board.rows}
            assert versions[weak] == 2 and len(board.rows) == 3  # the old version left it
            start = MODEL.rate([_r(old.mu, max(old.sigma, MODEL.sigma * NEW_VERSION_SIGMA_SHARE)),
                                _r(top.mu, top.sigma)], [1, 2])[0]
            new = next(r for r in board.rows if r.agent_id == weak)
            assert (new.mu, new.sigma) == pytest.approx((start.mu, start.sigma))

            info = await mm.GetAgent(kpb.GetAgentRequest(agent_id=weak))
            by_version = {(r.arena_id, r.version): r for r in info.arena_ratings}
            assert set(by_version) == {("twhist-3", 1), ("twhist-3", 2)}
            assert len(by_version[("twhist-3", 1)].history) == 6
            assert info.recent_match_ids[0] == newest and void not in info.recent_match_ids

            listed = await arenas.ListAgents(apb.ListAgentsRequest(name_contains="ARENA-BOT",
                                                                   arena_id="twhist-3"))
            assert {a.agent_id for a in listed.agents} == {strong, weak}
            paused = await arenas.SetArenaPaused(apb.SetArenaPausedRequest(
                arena_id="twhist-3", paused=True))
            assert paused.status == apb.ARENA_STATUS_PAUSED and paused.matches_played == 7
            shown = {a.arena_id: a for a in
                     (await arenas.ListArenas(apb.ListArenasRequest())).arenas}
            assert shown["twhist-3"].status == apb.ARENA_STATUS_PAUSED
            with pytest.raises(grpc.aio.AioRpcError) as unknown:
                await arenas.GetLeaderboard(apb.GetLeaderboardRequest(arena_id="nope-2"))
            assert unknown.value.code() == grpc.StatusCode.NOT_FOUND

            # ListMatches by agent and arena lists the rated matches, newest first.
            matches = mgrpc.MatchesStub(channel)
            mine = await matches.ListMatches(mpb.ListMatchesRequest(agent_id=weak))
            assert mine.matches[0].match_id == newest
            assert {m.match_id for m in mine.matches} == {newest, *rated}
            assert all(m.seed for m in mine.matches)  # over: as public as any finished match
            in_arena = await matches.ListMatches(mpb.ListMatchesRequest(
                arena_id="twhist-3", agent_id=strong, page_size=1))
            assert [m.match_id for m in in_arena.matches] == [newest]
            assert in_arena.next_page_token == "1"

    asyncio.run(asyncio.wait_for(scenario(), 60))


async def finished_match(server: InProcessServer, game_id: str = "twhist", players: int = 3,
                         seed: int = 3) -> tuple[str, list[int]]:
    """A real match of house bots, played to its end: its id and places."""
    created = await MatchClient(server.target).create_match(
        game_id, players, seed=seed, house_bots=["random"] * players)
    match_id = created.match.match_id
    match = await match_over(server.target, match_id, "the house bots finished their match",
                             timeout=30)
    return match_id, list(match.result.places)


async def live_in_arena(server: InProcessServer, arena_id: str, match_id: str,
                        players: list[str]) -> None:
    """Note a match live in the arena, as its scheduler notes the ones it creates:
    the arena rates it once it has ended."""
    store = server.app.store
    assert store is not None
    await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
        store.arenas.add_live(arena_id, match_id, players), server.loop))


async def rated_all(server: InProcessServer, arena_id: str) -> bool:
    """The arena has gone through every match noted live in it (rated or not)."""
    store = server.app.store
    assert store is not None
    return not await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
        store.arenas.live(arena_id), server.loop))


def seated_by_place(places: list[int], best_first: list[str]) -> list[str]:
    """The players of a table in seat order, seated so that the first of
    ``best_first`` has the seat that placed best, and so on (places all differ)."""
    assert sorted(places) == list(range(1, len(places) + 1))
    return [best_first[place - 1] for place in places]


def _r(mu: float, sigma: float) -> object:
    from twistarena.league import Rating

    return Rating(mu, sigma)


def test_a_dead_node_s_arena_is_taken_over_and_what_ended_meanwhile_is_rated(
        server: InProcessServer, valkey: object) -> None:
    """Two nodes share the store; the one scheduling the arena dies without a word
    (its scheduler stops, its lease is not released): the other claims the lease
    once it expires and rates the match that ended meanwhile, from the store."""
    from twistarena.server.config import Limits, ServerConfig

    other = InProcessServer(ServerConfig(port=0, redis_url=valkey.url,  # type: ignore[attr-defined]
                                         limits=Limits(creates_per_minute=0, live_per_client=0,
                                                       max_waiting_matches=0,
                                                       joins_per_minute_per_peer=0))).start()
    nodes = [server, other]

    def scheduling(node: InProcessServer) -> bool:
        return "twhist-4" in node.app.leaguehosting.scheduler.running

    async def die(node: InProcessServer) -> None:
        """Its scheduler's tasks end, their leases kept. Cancelled as the node stops
        its loops (again until they end): a single cancel can be lost (loops.py)."""
        scheduler = node.app.leaguehosting.scheduler
        tasks = [scheduler.schedulers._supervisor, *scheduler.running.values()]
        assert all(task is not None for task in tasks)
        await stop_loops(tasks, "test", within_s=10)
        assert all(task.done() for task in tasks)

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.target) as channel:
            arenas = agrpc.ArenasStub(channel)
            mm = kgrpc.MatchmakingStub(channel)
            await arenas.CreateArena(apb.CreateArenaRequest(game_id="twhist", num_players=4))
            holder = await wait_until(
                lambda: next((n for n in nodes if scheduling(n)), None),
                "a node schedules the new arena", timeout=10)
            survivor = other if holder is server else server
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(die(holder),
                                                                       holder.loop))
            # A match of the arena ends while nobody schedules it.
            a, b = [(await mm.RegisterAgent(kpb.RegisterAgentRequest(name=n))).agent_id
                    for n in ("left-a", "left-b")]
            played, _places = await finished_match(server)
            await live_in_arena(survivor, "twhist-4", played,
                                [f"{a}@1", f"{b}@1", "house:random@0"])

            async def rated() -> apb.Leaderboard | None:
                board = await arenas.GetLeaderboard(
                    apb.GetLeaderboardRequest(arena_id="twhist-4"))
                return board if len(board.rows) == 3 else None

            board = await wait_until(rated, "the surviving node rated the match", timeout=15)
            assert scheduling(survivor) and not scheduling(holder)
            assert all(r.games == 1 and r.last_match_id == played for r in board.rows)
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
                holder.app.leaguehosting.scheduler.start(), holder.loop))

    try:
        asyncio.run(asyncio.wait_for(scenario(), 60))
    finally:
        other.stop()


def test_a_network_agent_holding_a_queue_plays_the_arena_against_house_rungs(
        server: InProcessServer) -> None:
    """An enrolled agent without a hosted version is seated while it holds a Queue
    for the arena's game (tournament_only: the matchmaker leaves it alone); house
    rungs fill the table; it is rated as version 0."""
    from twistarena.clients.sdk import queue_and_play, register_agent

    def first_legal(observation: object, legal_actions: list[Any]) -> int:
        return int(legal_actions[0].id)

    async def scenario() -> None:
        ladder = ArenaLadderClient(server.target)
        await ladder.create("twisted", 3, house=["random", "heuristic"])
        agent_id, token = await register_agent(server.target, "networked")
        await ArenaLadderClient(server.target, admin_token=token).enroll("twisted-3", agent_id)
        for _ in range(2):
            await queue_and_play(first_legal, server.target, token, "twisted", 3,
                                 tournament_only=True)

        async def rated() -> Any:
            board = await ladder.leaderboard("twisted-3")
            mine = [r for r in board.rows if r.agent_id == agent_id]
            return board if mine and mine[0].games == 2 else None

        board = await wait_until(rated, "both matches rated", timeout=10)
        rows = {r.agent_id: r for r in board.rows}
        assert rows[agent_id].version == 0 and not rows[agent_id].house
        assert rows["house:random"].house and rows["house:heuristic"].house
        assert rows["house:random"].games == rows["house:heuristic"].games == 2

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_the_version_the_arena_seats_is_the_version_it_rates(server: InProcessServer) -> None:
    """An activation between the planner's read of the active versions (cached a
    while) and the match's creation: the runners get the version the planner
    chose, the one the match is rated under, not the newer one."""
    from collections import Counter

    from twistarena.clients.sdk import register_agent
    from twistarena.storage import VersionRecord, version_id
    from twistarena.storage.runners import parse_seat_key
    from twistarena.v1 import runners_pb2 as rpb

    from tests.support.hosting import pack

    scheduler = server.app.leaguehosting.scheduler
    store = server.app.store
    assert store is not None

    async def put_version(agent_id: str, entry: str) -> str:
        archive = pack({"bot.py": entry})
        digest = hashlib.sha256(archive).hexdigest()
        record = VersionRecord(agent_id, version_id(digest, entry, ""), digest, entry, "", "",
                               len(archive), len(entry), 1, int(time.time() * 1000))
        stored, _new = await store.versions.put(record, archive)
        assert await store.versions.activate(agent_id, stored.version_id)
        return stored.version_id

    async def setup() -> list[str]:
        ladder = ArenaLadderClient(server.target)
        await ladder.create("twisted", 4, house=["random", "heuristic"])
        await ladder.set_paused("twisted-4", True)  # tables formed by this test only
        return [(await register_agent(server.target, name))[0]
                for name in ("activating", "steady")]

    agents = asyncio.run(setup())
    first = [server.call(put_version(a, "python3 bot.py")) for a in agents]
    for agent_id in agents:
        asyncio.run(ArenaLadderClient(server.target).enroll("twisted-4", agent_id))
    arena = server.call(store.arenas.get("twisted-4"))
    assert arena is not None
    table = sorted(f"{a}@1" for a in agents)
    assert server.call(scheduler.planner.enrolled_players("twisted-4")) == table
    second = server.call(put_version(agents[0], "python3 bot.py --v2"))
    [planned] = server.call(scheduler.planner.plan(arena, Counter(), 1))
    # The planner's versions, read before the activation.
    assert sorted(k for k in planned if not k.startswith("house:")) == table
    server.call(scheduler.create(arena, planned))
    live = server.call(store.arenas.live("twisted-4"))
    seats = []  # this match's seats (the session's server may hold others' waiting)
    for _ in range(50):
        taken = server.call(store.runners.take("test-runner", 60_000))
        assert taken is not None, "the match's hosted seats were not all handed out"
        if parse_seat_key(taken.key)[0] in live:
            seats.append(taken)
        if len(seats) == len(agents):
            break
    played = {}
    for taken in seats:
        seat = rpb.SeatAssignment.FromString(taken.assignment)
        match_id, number = parse_seat_key(taken.key)
        assert live[match_id][number] == \
            f"{seat.agent_id}@1"
        played[seat.agent_id] = seat.version_id
    assert played == dict(zip(agents, first, strict=True)) and second not in played.values()


def test_an_anchored_house_rung_is_not_moved_by_results(server: InProcessServer) -> None:
    """A house rung with a calibrated rating keeps it, match after match; the
    agents it meets move as against any player of that rating."""
    from twistarena.league.anchors import anchor

    store = server.app.store
    assert store is not None
    arena = apb.Arena(arena_id="twisted-anchored", game_id="twisted", num_players=2,
                      house_bots=["heuristic"], status=apb.ARENA_STATUS_PAUSED,
                      matches_per_minute=1, max_concurrent_per_agent=1,
                      anchors=[apb.HouseAnchor(bot="heuristic", mu=30.0, sigma=1.0)])
    assert server.call(store.arenas.create(arena))
    table = ["ag_anchor_test@1", "house:heuristic@0"]

    async def rate_five() -> None:
        for seed in range(1, 6):
            match_id, places = await finished_match(server, "twisted", 2, seed)
            await live_in_arena(server, "twisted-anchored", match_id,
                                seated_by_place(places, table))
        await wait_until(lambda: rated_all(server, "twisted-anchored"),
                         "the arena rated its ended matches")

    asyncio.run(asyncio.wait_for(rate_five(), 60))
    agent, house = server.call(store.arenas.rows("twisted-anchored", table))
    assert house is not None and (house.mu, house.sigma, house.games) == (30.0, 1.0, 5)
    assert agent is not None and agent.mu > MODEL.mu and agent.games == 5
    # An arena opened on the server copies the calibrated anchors of its rungs.
    opened = asyncio.run(ArenaLadderClient(server.target).get("twisted-3"))
    assert [(a.bot, a.mu, a.sigma) for a in opened.anchors] == [
        (bot, rating.mu, rating.sigma) for bot in opened.house_bots
        if (rating := anchor("twisted", 3, bot)) is not None]


def test_a_forfeited_match_is_rated_with_the_forfeiter_last(server: InProcessServer) -> None:
    """A forfeit is the agent's loss, rated like any finished match: a seat that
    misses its decision forfeits, and the arena rates the match it ends."""
    from tests.support.agents import Agent, create, options, tokens

    store = server.app.store
    assert store is not None
    arena = apb.Arena(arena_id="twisted-forfeits", game_id="twisted", num_players=2,
                      house_bots=["random"], status=apb.ARENA_STATUS_PAUSED,
                      matches_per_minute=1, max_concurrent_per_agent=1)
    assert server.call(store.arenas.create(arena))
    table = ["ag_forfeit_test@1", "house:random@0"]

    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.target) as channel:
            created = await create(channel, options(
                "twisted", 2, seed=1, decision_ms=100, fallback=mpb.FALLBACK_FORFEIT,
                forfeit_after=1, house=("", "random")))
            match_id = created.match.match_id
            idle = Agent(channel, match_id, tokens(created)[0])
            await idle.join()
            over = await idle.expect("match_over")
            assert over.match_over.result.reason == mpb.END_REASON_FORFEIT
            await live_in_arena(server, "twisted-forfeits", match_id, table)
            await wait_until(lambda: rated_all(server, "twisted-forfeits"),
                             "the arena went through the forfeited match")
            board = await agrpc.ArenasStub(channel).GetLeaderboard(
                apb.GetLeaderboardRequest(arena_id="twisted-forfeits"))
            rows = {r.agent_id: r for r in board.rows}
            assert (rows["ag_forfeit_test"].games, rows["ag_forfeit_test"].wins) == (1, 0)
            assert (rows["house:random"].games, rows["house:random"].wins) == (1, 1)
            assert [r.agent_id for r in board.rows] == ["house:random", "ag_forfeit_test"]

    asyncio.run(asyncio.wait_for(scenario(), 30))
