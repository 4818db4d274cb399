"""Matchmaking over real gRPC on a real Valkey: two nodes share one queue.

24 agents queue at once for 4-seat matches, half on each node: 6 matches, no
agent placed twice, no seat lost; the matches are played to the end and the
agents' ratings move with their places. House bots fill a lone agent's seats
only after the wait; practice matches start at once.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
import redis.asyncio
from prometheus_client import REGISTRY
from twistarena.bots import make_bot
from twistarena.clients.sdk import (
    AgentError,
    MatchClient,
    get_agent,
    play,
    practice,
    queue,
    register_agent,
)
from twistarena.clients.sdk.connection import bearer, make_channel, stub
from twistarena.server.config import ServerConfig
from twistarena.server.embedded import free_port
from twistarena.server.league.matchmaker import MATCHMADE_JOIN_MS
from twistarena.storage import keys
from twistarena.v1 import match_pb2, matchmaking_pb2, matchmaking_pb2_grpc
from twistarena.wire import REASON_KEY

from tests.clients.helpers import run
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until


@pytest.fixture(scope="module")
def second_node(valkey: Any) -> Iterator[InProcessServer]:
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url)).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def fill_node(valkey: Any) -> Iterator[InProcessServer]:
    """A node with --house-fill-after 1.0 and a tight practice limit."""
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url, house_fill_after_s=1.0,
                                       practice_per_minute=3)).start()
    try:
        yield srv
    finally:
        srv.stop()


def _random_act(game_id: str, seed: int) -> Any:
    return make_bot("random", game_id, seed)


def test_concurrent_queue_forms_whole_matches_on_two_nodes(server: Any,
                                                           second_node: Any) -> None:
    async def scenario() -> None:
        nodes = [server.target, second_node.target]
        accounts = await asyncio.gather(*(register_agent(nodes[0], f"bot{i}")
                                          for i in range(24)))
        assigned = await asyncio.wait_for(asyncio.gather(*(
            queue(nodes[i % 2], token, "tricky_twist", 4)
            for i, (_aid, token) in enumerate(accounts))), 30)
        by_match: dict[str, list[tuple[str, int]]] = {}
        for (agent_id, _token), a in zip(accounts, assigned, strict=True):
            assert a.game_id == "tricky_twist" and a.num_players == 4 and a.seat_token
            by_match.setdefault(a.match_id, []).append((agent_id, a.seat))
        assert len(by_match) == 6
        for seats in by_match.values():
            assert sorted(s for _a, s in seats) == [0, 1, 2, 3]
        agents_seen = Counter(a for seats in by_match.values() for a, _s in seats)
        assert len(agents_seen) == 24 and set(agents_seen.values()) == {1}
        client = MatchClient(nodes[0])
        for mid in by_match:
            match = await client.get_match(mid)
            assert all(not seat.house_bot for seat in match.seats)
            # A seated agent that never joins does not hold the others for an hour.
            assert match.options.time_control.join_timeout_ms == MATCHMADE_JOIN_MS
        # Every agent plays its seat to the end.
        results = await asyncio.wait_for(asyncio.gather(*(
            play(_random_act("tricky_twist", i), server=[a.server_address, *nodes],
                 match_id=a.match_id, token=a.seat_token, no_events=True)
            for i, a in enumerate(assigned))), 90)
        assert all(len(r.places) == 4 for r in results)
        # Ratings belong to arenas: a matchmade match rates nobody (the queue pairs
        # by the arena rating of its game and player count).
        infos = await asyncio.gather(*(get_agent(nodes[1], aid) for aid, _t in accounts))
        assert {(i.matches, i.rating_arena_id, i.mu) for i in infos} == {(0, "", 25.0)}

    run(scenario(), 150)


def test_an_agent_already_queued_cannot_queue_twice(server: Any) -> None:
    async def scenario() -> None:
        _aid, token = await register_agent(server.target, "twice")
        queued = asyncio.Event()
        first = asyncio.ensure_future(queue(server.target, token, "twhist", 5,
                                            on_status=lambda _status: queued.set()))
        await asyncio.wait_for(queued.wait(), 20)  # the first Queue call is in the queue
        with pytest.raises(AgentError) as err:
            await queue(server.target, token, "twhist", 5)
        assert err.value.code == grpc.StatusCode.FAILED_PRECONDITION
        first.cancel()
        with pytest.raises(AgentError) as err:
            await queue(server.target, "not-a-token", "twhist", 5)
        assert err.value.code == grpc.StatusCode.UNAUTHENTICATED

    run(scenario(), 30)


def test_a_hold_stored_with_a_fractional_ms_is_read_as_a_hold(server: Any, valkey: Any) -> None:
    """A queue hold is ``<game>:<players>:<ms>``; one stored with a fractional ms (as
    another writer may store it) still holds the agent: a second Queue call is
    refused as already queued, not failed on the text."""
    async def scenario() -> None:
        agent_id, token = await register_agent(server.target, "fractional")
        store = redis.asyncio.from_url(valkey.url)
        channel = make_channel(server.target)
        try:
            await store.hset(keys.AGENT_QUEUED, agent_id, f"twhist:5:{time.time() * 1000:.3f}")
            call = stub(matchmaking_pb2_grpc.MatchmakingStub, channel).Queue(
                matchmaking_pb2.QueueRequest(game_id="twhist", num_players=5),
                metadata=bearer(token))
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call.read()
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert dict(refused.value.trailing_metadata() or ())[REASON_KEY] == "ALREADY_QUEUED"
        finally:
            await channel.close()
            await store.aclose()

    run(scenario(), 30)


def test_an_agent_told_of_its_seat_may_queue_again_at_once(server: Any, valkey: Any) -> None:
    """Its hold on the queue is freed before it hears of its seat: a client closes the
    call as it hears (which cancels the server's handler), and an entrant of a
    tournament queues again for its next game as soon as a short game ends."""
    async def scenario() -> None:
        agent_id, token = await register_agent(server.target, "at-once")
        client = MatchClient(server.target)
        store = redis.asyncio.from_url(valkey.url)
        channel = make_channel(server.target)
        request = matchmaking_pb2.QueueRequest(game_id="twisted", num_players=2,
                                               house_bot="random", house_fill_after_ms=0)
        try:
            for _ in range(10):
                call = stub(matchmaking_pb2_grpc.MatchmakingStub, channel).Queue(
                    request, metadata=bearer(token))
                assigned = None
                async for update in call:
                    if update.WhichOneof("update") == "assigned":
                        # Looked up the moment the agent hears of its seat.
                        assert await store.hget(keys.AGENT_QUEUED, agent_id) is None
                        assigned = update.assigned
                        break
                call.cancel()
                assert assigned is not None
                await client.cancel_match(assigned.match_id)
            # The same through the SDK, which closes its channel as it hears.
            for _ in range(3):
                again = await queue(server.target, token, "twisted", 2, house_bot="random",
                                    house_fill_after=0)
                await client.cancel_match(again.match_id)
        finally:
            await channel.close()
            await store.aclose()

    run(scenario(), 60)


def test_after_a_broken_call_already_queued_is_retried_until_the_place_is_free(
        server: Any) -> None:
    """The SDK's queue reconnects after a broken call; the server may still hold the
    agent's place for that call (until it notices the break) and refuse the new one
    as already queued: refused then, the SDK tries again instead of giving up."""
    async def scenario() -> None:
        _aid, token = await register_agent(server.target, "reconnecting")
        channel = make_channel(server.target)
        holding = stub(matchmaking_pb2_grpc.MatchmakingStub, channel).Queue(
            matchmaking_pb2.QueueRequest(game_id="twhist", num_players=5),
            metadata=bearer(token))
        try:
            first = await holding.read()  # the place is held: the call is in the queue
            assert first.WhichOneof("update") == "status"
            dead = f"127.0.0.1:{free_port()}"  # nothing listens: UNAVAILABLE, then retried
            refused = REGISTRY.get_sample_value("twistarena_errors_total",
                                                {"kind": "already_queued"}) or 0.0
            again = asyncio.ensure_future(queue(
                [dead, server.target], token, "twisted", 2, house_bot="random",
                house_fill_after=0))

            def refused_twice() -> bool:
                return (REGISTRY.get_sample_value("twistarena_errors_total",
                                                  {"kind": "already_queued"}) or 0.0) \
                    >= refused + 2

            # Refused as already queued a second time: it tried again after the first.
            await wait_until(refused_twice, "the node refused the queue call twice",
                             timeout=10)
            assert not again.done()
            holding.cancel()  # the old call's place is freed
            assigned = await asyncio.wait_for(again, 20)
            await MatchClient(server.target).cancel_match(assigned.match_id)
        finally:
            holding.cancel()
            await channel.close()

    run(scenario(), 40)


def test_house_bots_fill_only_after_the_wait(server: Any, fill_node: Any) -> None:
    async def scenario() -> None:
        # Per request: a lone agent waits 1.5 s, then gets house bots.
        _aid, token = await register_agent(server.target, "lonely")
        statuses: list[Any] = []
        t0 = time.monotonic()
        assigned = await asyncio.wait_for(queue(
            server.target, token, "twisted", 3, house_fill_after=1.5, house_bot="random",
            on_status=statuses.append), 20)
        waited = time.monotonic() - t0
        assert waited >= 1.4, waited
        assert statuses and statuses[0].waiting == 1
        match = await MatchClient(server.target).get_match(assigned.match_id)
        houses = [s for s in match.seats if s.house_bot]
        assert len(houses) == 2 and all(s.house_bot == "random" for s in houses)
        assert not match.seats[assigned.seat].house_bot
        result = await play(_random_act("twisted", 1), server=server.target,
                            match_id=assigned.match_id, token=assigned.seat_token,
                            no_events=True)
        assert len(result.places) == 3
        # Server flag (--house-fill-after 1.0): not before a second has passed.
        _aid, token = await register_agent(fill_node.target, "flagged")
        t0 = time.monotonic()
        queued = asyncio.Event()
        task = asyncio.ensure_future(queue(fill_node.target, token, "twhist", 4,
                                           on_status=lambda _status: queued.set()))
        await asyncio.wait_for(queued.wait(), 20)
        assert not task.done()  # queued, not yet filled
        assigned = await asyncio.wait_for(task, 20)
        assert time.monotonic() - t0 >= 0.95
        match = await MatchClient(fill_node.target).get_match(assigned.match_id)
        assert sum(1 for s in match.seats if s.house_bot == "heuristic") == 3

    run(scenario(), 60)


def test_practice_starts_at_once_and_the_agent_finishes_it(server: Any) -> None:
    async def scenario() -> None:
        t0 = time.monotonic()
        created = await practice(server.target, "tricky_twist", 3, strength="heuristic",
                                 seed=41)
        assert time.monotonic() - t0 < 2.0
        assert created.seat == 41 % 3 and created.seat_token
        seats = created.match.seats
        assert [s.house_bot for s in seats].count("heuristic") == 2
        result = await play(_random_act("tricky_twist", 2), server=server.target,
                            match_id=created.match.match_id, token=created.seat_token,
                            no_events=True)
        assert len(result.scores) == 3
        match = await MatchClient(server.target).get_match(created.match.match_id)
        assert match.status == match_pb2.MATCH_STATUS_FINISHED
        with pytest.raises(AgentError) as err:
            await practice(server.target, "nope")
        assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT

    run(scenario(), 60)


def test_practice_against_a_search_rung_of_the_ladder(server: Any) -> None:
    async def scenario() -> None:
        created = await practice(server.target, "twisted", 2, strength="ismcts-fast", seed=8)
        assert [s.house_bot for s in created.match.seats].count("ismcts-fast") == 1
        result = await play(_random_act("twisted", 3), server=server.target,
                            match_id=created.match.match_id, token=created.seat_token,
                            no_events=True)
        assert result.reason == "COMPLETED"
        with pytest.raises(AgentError) as err:
            await practice(server.target, "twisted", 2, strength="grandmaster")
        assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT

    run(scenario(), 90)


def test_practice_is_rate_limited_per_client(fill_node: Any) -> None:
    async def scenario() -> None:
        await practice(fill_node.target, "twisted", 2, strength="random")
        with pytest.raises(AgentError) as err:
            await practice(fill_node.target, "twisted", 2, strength="random")
        assert err.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert err.value.reason == "RATE_LIMITED"

    run(scenario(), 30)


@pytest.mark.parametrize(("mode", "expected"), [
    ("fifo", ["a1-25", "a2-40", "a3-26"]),
    # The longest waiter, then the two closest to its rating (24.5 and 26).
    ("rating", ["a1-25", "a4-24.5", "a3-26"]),
])
def test_the_queue_pops_first_come_or_closest_rating(valkey: Any, mode: str,
                                                      expected: list[str]) -> None:
    """The pop script itself, on a real Valkey: which agents one 3-seat match takes."""
    import redis
    from twistarena.storage import keys as store_keys
    from twistarena.storage.scripts import Scripts

    scripts = Scripts()
    enqueue, pop = scripts.queue_enqueue.source, scripts.queue_pop.source

    client = redis.Redis.from_url(valkey.url)
    game = f"pop-test-{mode}-{time.time_ns()}"  # a queue of its own
    keys = store_keys.queue(game, 3)
    try:
        for agent in ("a1-25", "a2-40", "a3-26", "a4-24.5", "a5-10"):
            mu = float(agent.split("-")[1])
            assert client.eval(enqueue, len(keys), *keys, agent, -1, repr(mu), "", 60_000)
            time.sleep(0.003)  # distinct arrival times (ms)
        raw = client.eval(pop, len(keys), *keys, 3, mode)
        picked = [x.decode() for x in raw[0::2]]
        assert picked == expected
        left = [x.decode() for x in client.zrange(keys[0], 0, -1)]
        assert left == [a for a in ("a1-25", "a2-40", "a3-26", "a4-24.5", "a5-10")
                        if a not in expected]
    finally:
        client.delete(*keys)
        client.close()
