"""Kept Play streams (``Join.keep_open``): after MatchOver the call stays open for
the next Join, of any match and any seat; answers to the match that is over are
ignored; anything else ends the call as on a new stream, and a stream no Join
comes to ends with OK after the join timeout."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from typing import Any

import grpc
import grpc.aio
import pytest
from twistarena import wire
from twistarena.clients.sdk import KeptStreams, MatchClient
from twistarena.clients.sdk.connection import make_channel
from twistarena.clients.sdk.kept import join_on
from twistarena.clients.sdk.localbots import run_agents, seat_agents
from twistarena.server.config import ServerConfig
from twistarena.v1 import match_pb2, play_pb2

from tests.clients.helpers import replay_problems, run
from tests.support.agents import REASON_KEY
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until

JOIN_TIMEOUT_S = 1.0


@pytest.fixture(scope="module")
def quick_server(valkey: Any) -> Iterator[InProcessServer]:
    """A server that waits only ``JOIN_TIMEOUT_S`` for a Join (a kept call that
    idles longer is let go)."""
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url,
                                       stream_join_timeout_s=JOIN_TIMEOUT_S)).start()
    try:
        yield srv
    finally:
        srv.stop()


def _open(channel: grpc.aio.Channel) -> Any:
    return channel.stream_stream("/twistarena.v1.Play/Play",
                                 request_serializer=wire.passthrough_serializer,
                                 response_deserializer=play_pb2.ServerMessage.FromString)()


async def _join(call: Any, match_id: str, token: str, keep_open: bool = True) -> None:
    await call.write(play_pb2.AgentMessage(join=play_pb2.Join(
        match_id=match_id, seat_token=token, batched=True, keep_open=keep_open)))


async def _play_to_the_end(call: Any, rng: random.Random) -> tuple[int, play_pb2.MatchOver]:
    """Answer random legal actions until MatchOver: (the seat joined, MatchOver)."""
    seat = -1
    while True:
        msg = await call.read()
        assert msg is not grpc.aio.EOF, f"ended before MatchOver: {await call.code()}"
        kind = msg.WhichOneof("msg")
        if kind == "joined":
            seat = msg.joined.seat
        elif kind == "decision":
            action = rng.choice(msg.decision.legal_actions).id
            await call.write(wire.answer_message(msg.decision.decision_id, action))
        elif kind == "match_over":
            return seat, msg.match_over


async def _one_match_on_new_calls(channel: grpc.aio.Channel,
                                  created: match_pb2.CreateMatchResponse, seed: int,
                                  keep_open: bool = True) -> list[Any]:
    """A call per seat, ``created`` played on them to MatchOver; the calls."""
    calls = [_open(channel) for _ in range(4)]
    for call, token in zip(calls, created.seat_tokens, strict=True):
        await _join(call, created.match.match_id, token.token, keep_open)
    await asyncio.gather(*(_play_to_the_end(c, random.Random(seed)) for c in calls))
    return calls


async def _create(client: MatchClient, seed: int) -> match_pb2.CreateMatchResponse:
    created: match_pb2.CreateMatchResponse = await client.create_match(
        "twhist", 4, seed=seed, decision_ms=60_000)
    return created


class _Watched(KeptStreams):
    """Kept streams that note what they hand out and are given."""

    def __init__(self) -> None:
        super().__init__()
        self.taken: list[Any] = []
        self.left: list[Any] = []

    def take(self, channel: grpc.aio.Channel) -> Any:
        call = super().take(channel)
        self.taken.append(call)
        return call

    def keep(self, channel: grpc.aio.Channel, call: Any) -> None:
        self.left.append(call)
        super().keep(channel, call)


class _LooksOpen:
    """A call that says it has not ended, whatever the server did."""

    def __init__(self, call: Any) -> None:
        self._call = call

    def done(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


def _between_matches(srv: InProcessServer) -> int:
    """How many kept calls the server holds for their next Join."""
    streams = srv.app.streams
    assert streams is not None
    return len(streams.between_matches)


async def _waiting_for_a_join(srv: InProcessServer, calls: int) -> None:
    await wait_until(lambda: _between_matches(srv) == calls,
                     f"the server holds {calls} kept calls for their next Join")


def _reason(error: grpc.aio.AioRpcError) -> str:
    return next((str(v) for k, v in error.trailing_metadata() or () if k == REASON_KEY), "")


def test_four_kept_streams_play_two_matches_seats_swapped(server: Any) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
        rng = random.Random(5)
        async with make_channel(server.target) as channel:
            calls = [_open(channel) for _ in range(4)]
            for round_no, seed in enumerate((21, 22)):
                created = await _create(client, seed)
                tokens = sorted(created.seat_tokens, key=lambda t: t.seat)
                # Round 2 seats each call at the next seat: a kept stream is tied
                # to no seat and no match.
                order = [tokens[(i + round_no) % 4] for i in range(4)]
                for call, token in zip(calls, order, strict=True):
                    await _join(call, created.match.match_id, token.token)
                ended = await asyncio.gather(*(_play_to_the_end(c, rng) for c in calls))
                assert [seat for seat, _ in ended] == [t.seat for t in order]
                stored = await client.get_match(created.match.match_id)
                assert stored.status == match_pb2.MATCH_STATUS_FINISHED
                for _, over in ended:
                    assert list(over.result.scores) == list(stored.result.scores)
                replay = await client.get_replay(created.match.match_id)
                assert replay_problems(replay) == []
                # The call is still open, waiting for the next Join.
                assert not any(c.done() for c in calls)
            for call in calls:
                await call.done_writing()
                assert await call.read() is grpc.aio.EOF
                assert await call.code() == grpc.StatusCode.OK

    run(scenario())


def test_an_unkept_stream_still_ends_at_match_over(server: Any) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await _create(client, 23)
        async with make_channel(server.target) as channel:
            calls = await _one_match_on_new_calls(channel, created, 1, keep_open=False)
            for call in calls:
                assert await call.read() is grpc.aio.EOF
                assert await call.code() == grpc.StatusCode.OK

    run(scenario())


def test_after_a_kept_match_answers_are_ignored_and_a_non_join_ends_the_call(
        server: Any) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await _create(client, 24)
        async with make_channel(server.target) as channel:
            calls = await _one_match_on_new_calls(channel, created, 2)
            # An answer for the match that is over: nothing comes back, the call stays.
            await calls[0].write(wire.answer_message(1, 0))
            # Neither Join nor Answer: refused as on a new stream.
            await calls[0].write(play_pb2.AgentMessage())
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await calls[0].read()
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert _reason(refused.value) == "MALFORMED_MESSAGE"
            assert "must be Join" in (refused.value.details() or "")
            # A Join with a token of no seat of the match: refused as on a new stream.
            again = await _create(client, 25)
            await _join(calls[1], again.match.match_id, "not-a-token")
            with pytest.raises(grpc.aio.AioRpcError) as bad:
                await calls[1].read()
            assert bad.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert _reason(bad.value) == "BAD_TOKEN"
            # The others still take the next match's Join.
            token = again.seat_tokens[0]
            await _join(calls[2], again.match.match_id, token.token)
            joined = await calls[2].read()
            assert joined.WhichOneof("msg") == "joined" and joined.joined.seat == token.seat
            for call in calls:
                call.cancel()

    run(scenario())


def test_a_kept_stream_no_join_comes_to_ends_with_ok(quick_server: InProcessServer) -> None:
    async def scenario() -> None:
        client = MatchClient(quick_server.target)
        created = await _create(client, 26)
        async with make_channel(quick_server.target) as channel:
            calls = await _one_match_on_new_calls(channel, created, 3)
            # The server holds the four calls for their next Join (a call it
            # ended at MatchOver would never be among them), then lets them go.
            await _waiting_for_a_join(quick_server, 4)
            ends = await asyncio.gather(*(c.read() for c in calls))
            assert all(end is grpc.aio.EOF for end in ends)
            assert [await c.code() for c in calls] == [grpc.StatusCode.OK] * 4
            assert _between_matches(quick_server) == 0

    run(scenario())


def test_sdk_agents_reuse_kept_calls_and_open_new_ones_when_the_server_let_them_go(
        quick_server: InProcessServer) -> None:
    async def scenario() -> None:
        client = MatchClient(quick_server.target)
        kept = _Watched()
        taken, left = kept.taken, kept.left
        async with make_channel(quick_server.target) as channel:
            for seed in (31, 32):
                created = await _create(client, seed)
                agents = seat_agents(quick_server.target, created, ["random"], seed=seed,
                                     channel=channel, kept_streams=kept)
                result = await run_agents(agents)
                assert result == await agents[0].stored_result()
                assert len(kept) == 4
            # The second match was played on the calls the first one left.
            assert taken[:4] == [None] * 4
            assert set(map(id, taken[4:8])) == set(map(id, left[:4]))
            assert set(map(id, left[4:8])) == set(map(id, left[:4]))
            # Past the server's join timeout it lets them go. An agent may take
            # one before its client has heard (a call that looks open): it finds
            # out on writing its Join or on reading the end, and opens a call of
            # its own.
            await asyncio.gather(*(c.read() for c in left[4:8]))
            stale = KeptStreams()
            for call in left[4:8]:
                stale.keep(channel, _LooksOpen(call))
            assert len(stale) == 4
            created = await _create(client, 33)
            agents = seat_agents(quick_server.target, created, ["random"], seed=33,
                                 channel=channel, kept_streams=stale)
            result = await run_agents(agents)
            assert result == await agents[0].stored_result()
            assert all(a.reconnects == 0 and a.stream_failures == [] for a in agents)
            assert len(stale) == 4
            fresh = [stale.take(channel) for _ in range(4)]
            assert not any(isinstance(c, _LooksOpen) for c in fresh)
            for call in fresh:
                call.cancel()
            kept.close()

    run(scenario())


def test_a_kept_stream_waiting_for_a_join_ends_with_ok_when_the_server_stops(
        valkey: Any) -> None:
    # The join timeout is far longer than the drain's grace: a stream still
    # waiting when gRPC's own stop came would end CANCELLED.
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url,
                                       stream_join_timeout_s=600.0,
                                       drain_grace_s=2.0)).start()

    async def scenario() -> None:
        client = MatchClient(srv.target)
        created = await _create(client, 27)
        async with make_channel(srv.target) as channel:
            calls = await _one_match_on_new_calls(channel, created, 4)
            await _waiting_for_a_join(srv, 4)
            await asyncio.to_thread(srv.stop)
            ends = await asyncio.gather(*(c.read() for c in calls))
            assert all(end is grpc.aio.EOF for end in ends)
            assert [await c.code() for c in calls] == [grpc.StatusCode.OK] * 4

    try:
        run(scenario())
    finally:
        srv.stop()


def test_a_raw_join_on_a_kept_call_the_server_let_go_goes_on_a_new_call(
        quick_server: InProcessServer) -> None:
    async def scenario() -> None:
        client = MatchClient(quick_server.target)
        first = await _create(client, 28)
        async with make_channel(quick_server.target) as channel:
            calls = await _one_match_on_new_calls(channel, first, 5)
            await asyncio.gather(*(c.read() for c in calls))  # let go: EOF, OK
            kept = KeptStreams()
            for call in calls:
                kept.keep(channel, _LooksOpen(call))
            created = await _create(client, 29)
            opened: list[Any] = []

            def open_call() -> Any:
                opened.append(_open(channel))
                return opened[-1]

            token = created.seat_tokens[0]
            call, reply = await join_on(kept, channel, open_call, play_pb2.AgentMessage(
                join=play_pb2.Join(match_id=created.match.match_id, seat_token=token.token,
                                   keep_open=True)))
            # Every stale call was tried and dropped; the Join went on a new call.
            assert len(kept) == 0 and opened == [call]
            assert reply.WhichOneof("msg") == "joined" and reply.joined.seat == token.seat
            call.cancel()

    run(scenario())
