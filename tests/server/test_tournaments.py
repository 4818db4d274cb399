"""Tournaments run by the server, over real gRPC on a real Valkey.

A round robin and a Swiss with duplicate deals give complete, consistent
standings; a tournament whose node is killed (kill -9 of ``twistarena
serve``) and restarted on the same store ends with exactly the standings of
an uninterrupted run with the same seed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import Any

import grpc
import pytest
import redis.asyncio
from twistarena.clients.sdk import (
    AgentError,
    MatchClient,
    TournamentClient,
    queue,
    register_agent,
)
from twistarena.clients.sdk.connection import bearer, make_channel, stub
from twistarena.clients.sdk.tournaments import results_of
from twistarena.league import compute_standings
from twistarena.storage import keys
from twistarena.v1 import match_pb2, matchmaking_pb2, matchmaking_pb2_grpc
from twistarena.v1 import tournaments_pb2 as tpb

from tests.clients.helpers import run
from tests.support.process import ServeProcess
from tests.support.waiting import wait_until


async def _until_over(client: TournamentClient, tid: str, timeout: float = 120) -> Any:
    last = None
    async with asyncio.timeout(timeout):
        async for record in client.watch(tid):
            last = record
    assert last is not None
    return last


def _check_consistent(record: Any, games: int, per_entrant: int) -> None:
    assert record.status == tpb.TOURNAMENT_FINISHED
    assert record.games_done == record.games_planned == games
    assert len(record.games) == games and all(g.places for g in record.games)
    rows = {s.entrant: s for s in record.standings}
    assert set(rows) == set(record.spec.entrants)
    assert all(s.games == per_entrant for s in rows.values())
    assert sum(s.wins for s in rows.values()) == pytest.approx(games)
    assert all(s.win_ci_low <= s.win_share <= s.win_ci_high for s in rows.values())
    # The standings are those the tournament package computes from the results.
    again = compute_standings(results_of(record))
    assert [(s.entrant, s.games, round(s.mu, 9)) for s in again] == [
        (s.entrant, s.games, round(s.mu, 9)) for s in record.standings]


def test_round_robin_of_house_bots(server: Any) -> None:
    async def scenario() -> None:
        client = TournamentClient(server.target)
        created = await client.create("twisted", ["heuristic", "random", "random#2"],
                                      players=2, games_per_pairing=1, seed=11, parallel=6)
        assert created.games_planned == 6  # 3 pairs x 2 seatings
        record = await _until_over(client, created.tournament_id)
        _check_consistent(record, 6, 4)
        listed = await client.list()
        assert created.tournament_id in [t.tournament_id for t in listed]

    run(scenario(), 120)


def test_swiss_with_duplicate_deals(server: Any) -> None:
    async def scenario() -> None:
        client = TournamentClient(server.target)
        entrants = ["heuristic", "random", "heuristic#2", "random#2"]
        created = await client.create("twisted", entrants, players=2, format="swiss",
                                      rounds=2, duplicate=True, seed=3, parallel=4)
        assert created.games_planned == 8  # 2 rounds x 2 tables x 2 seatings
        record = await _until_over(client, created.tournament_id)
        _check_consistent(record, 8, 4)
        # Duplicate deals: both seatings of a table play the same seed.
        seeds: dict[tuple[int, int, int], set[int]] = {}
        for g in record.games:
            seeds.setdefault((g.round, g.table, g.deal), set()).add(g.seed)
        assert len(seeds) == 4 and all(len(s) == 1 for s in seeds.values())
        # Round 2 pairs entrants that have not met yet.
        first = {frozenset(g.seats) for g in record.games if g.round == 0}
        second = {frozenset(g.seats) for g in record.games if g.round == 1}
        assert not first & second

    run(scenario(), 120)


def test_bad_specs_are_refused(server: Any) -> None:
    async def scenario() -> None:
        client = TournamentClient(server.target)
        for entrants, game in ((["heuristic", "heuristic"], "twisted"),
                               (["heuristic", "ag_nobody"], "twisted"),
                               (["heuristic"], "twisted"),
                               (["heuristic", "random"], "chess")):
            with pytest.raises(AgentError) as err:
                await client.create(game, entrants, players=2)
            assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT

    run(scenario(), 30)


def test_registered_agent_gets_its_matches_through_its_queue(server: Any,
                                                           valkey: Any) -> None:
    async def scenario() -> None:
        from twistarena.bots import make_bot
        from twistarena.clients.sdk import play

        agent_id, token = await register_agent(server.target, "entrant")
        client = TournamentClient(server.target)
        created = await client.create("twisted", [agent_id, "random"], players=2, seed=8)
        played = 0
        while played < created.games_planned:
            assigned = await asyncio.wait_for(
                queue(server.target, token, "twisted", 2, tournament_only=True), 30)
            assert assigned.tournament_id == created.tournament_id
            await play(make_bot("random", "twisted", played), server=assigned.server_address,
                       match_id=assigned.match_id, token=assigned.seat_token, no_events=True)
            played += 1
        record = await _until_over(client, created.tournament_id)
        _check_consistent(record, 2, 2)
        # Queued on it once it is over: told so, and free to queue again by then.
        store = redis.asyncio.from_url(valkey.url)
        channel = make_channel(server.target)
        try:
            for _ in range(10):
                call = stub(matchmaking_pb2_grpc.MatchmakingStub, channel).Queue(
                    matchmaking_pb2.QueueRequest(game_id="twisted", num_players=2,
                                                 tournament_only=True,
                                                 tournament_id=created.tournament_id),
                    metadata=bearer(token))
                update = await call.read()
                assert update.WhichOneof("update") == "tournament_over"
                assert await store.hget(keys.AGENT_QUEUED, agent_id) is None
                assert await call.code() == grpc.StatusCode.OK
        finally:
            await channel.close()
            await store.aclose()

    run(scenario(), 120)


def _spec() -> dict[str, Any]:
    return {"game": "tricky_twist", "entrants": ["heuristic", "random", "heuristic#2",
                                                 "random#2"],
            "players": 3, "seed": 77, "parallel": 2}


def _figures(record: Any) -> Any:
    games = [(g.round, g.table, g.deal, g.seed, tuple(g.seats), tuple(g.scores),
              tuple(g.places)) for g in record.games]
    rows = [(s.entrant, s.games, s.wins, s.mean_score, s.mu, s.sigma)
            for s in record.standings]
    return games, rows


def test_tournament_resumes_after_kill_9_with_the_same_standings(valkey: Any,
                                                                 server: Any) -> None:
    async def killed_run() -> Any:
        first = ServeProcess(["--host", "127.0.0.1", "--port", "0", "--redis-url", valkey.url,
                              "--log-format", "json"]).start()
        second: ServeProcess | None = None
        try:
            client = TournamentClient(first.target)
            created = await client.create(**_spec())
            assert created.games_planned == 12  # 4 tables x 3 rotations
            tid = created.tournament_id
            arena = MatchClient(first.target)

            async def under_way() -> Any:
                """The record once 3 games are done and some are in flight (created,
                part-played): between two rounds there are none, so the next must start."""
                record = await client.get(tid)
                if record.games_done < 3:
                    return None
                for game in record.games:
                    if not game.places:
                        with contextlib.suppress(AgentError):
                            match = await arena.get_match(game.match_id)
                            if match.status == match_pb2.MATCH_STATUS_RUNNING:
                                return record
                return None

            record = await wait_until(under_way, "games in flight after the third",
                                      timeout=60)
            first.kill()
            assert record.games_done < 12, "finished before the kill; make it longer"
            second = ServeProcess(["--host", "127.0.0.1", "--port", "0", "--redis-url",
                                   valkey.url, "--log-format", "json"]).start()
            client = TournamentClient(second.target)
            return await _until_over(client, tid, 150)
        finally:
            first.cleanup()
            if second is not None:
                second.cleanup()

    async def uninterrupted() -> Any:
        client = TournamentClient(server.target)
        created = await client.create(**_spec())
        return await _until_over(client, created.tournament_id, 150)

    resumed = run(killed_run(), 200)
    reference = run(uninterrupted(), 200)
    _check_consistent(resumed, 12, 9)
    got, want = _figures(resumed), _figures(reference)
    differing = [(a, b) for a, b in zip(got[0], want[0], strict=True) if a != b]
    assert differing == [], f"games that differ after the resume: {differing}"
    assert got == want
    assert Counter(g.seed for g in resumed.games) == Counter(g.seed for g in reference.games)
