"""Health, reflection and the match lifecycle: create, get, list, cancel, replay."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from grpc import aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from twistarena import engine
from twistarena.server.config import ServerConfig
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc

from tests.support.agents import REASON_KEY, Agent, create, options, run, tokens
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until

SERVICES = {"twistarena.v1.Matches", "twistarena.v1.Play", "twistarena.v1.Watch",
            "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"}
ADMIN = "admin-secret-for-tests"


@pytest.fixture(scope="module")
def strict_server(valkey: Any) -> Iterator[InProcessServer]:
    """Admin token, a short join timeout and one stream per token."""
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url, admin_token=ADMIN,
                                       stream_join_timeout_s=0.5, max_streams_per_token=1)).start()
    try:
        yield srv
    finally:
        srv.stop()


def _reason(err: grpc.aio.AioRpcError) -> str:
    for key, value in err.trailing_metadata() or ():
        if key == REASON_KEY:
            return str(value)
    return ""



async def _no_longer_waiting(stub: mgrpc.MatchesStub, match_id: str) -> mpb.Match:
    async def probe() -> mpb.Match | None:
        match = await stub.GetMatch(mpb.GetMatchRequest(match_id=match_id))
        return None if match.status == mpb.MATCH_STATUS_WAITING else match

    return await wait_until(probe, f"match {match_id} stops waiting for its seats")

def test_health_and_reflection_list_every_service(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            health = health_pb2_grpc.HealthStub(ch)
            for name in ("", "twistarena.v1.Matches", "twistarena.v1.Play",
                         "twistarena.v1.Watch"):
                resp = await health.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
                assert resp.status == health_pb2.HealthCheckResponse.SERVING
            refl = reflection_pb2_grpc.ServerReflectionStub(ch)
            call = refl.ServerReflectionInfo()
            await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
            resp = await asyncio.wait_for(call.read(), 5)
            names = {s.name for s in resp.list_services_response.service}
            assert names >= SERVICES
            # The descriptors are served too (what `grpcurl describe` needs).
            await call.write(reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="twistarena.v1.Play"))
            resp = await asyncio.wait_for(call.read(), 5)
            assert resp.file_descriptor_response.file_descriptor_proto
            await call.done_writing()

    run(main())


def test_create_get_list_cancel_replay(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            stub = mgrpc.MatchesStub(ch)
            created = await create(ch, options("twisted", 3, seed=42,
                                               game_options={"rounds": 1}))
            match = created.match
            assert match.status == mpb.MATCH_STATUS_WAITING
            # The seed rebuilds every hand: nobody sees it before the end.
            assert match.seed == 0 and not match.options.HasField("seed")
            assert match.options.time_control.decision_ms == 5000
            assert match.options.time_control.fallback == mpb.FALLBACK_RANDOM
            assert match.options.time_control.reconnect_grace_ms == 30000
            assert sorted(tokens(created)) == [0, 1, 2]
            assert len({t.token for t in created.seat_tokens}) == 3
            got = await stub.GetMatch(mpb.GetMatchRequest(match_id=match.match_id))
            assert got.match_id == match.match_id and got.actions == 0
            assert [s.connected for s in got.seats] == [False] * 3

            # A second match of another game; list newest first, filter, paginate.
            # Creation times are in milliseconds, and two matches created within
            # one are listed in either order: the second is created in a later
            # millisecond, however fast the machine (the server reads this clock).
            first_ms = got.created_at.ToMilliseconds()
            await wait_until(lambda: time.time() * 1000 >= first_ms + 1,
                             "a millisecond after the first creation", interval=0.001)
            other = await create(ch, options("twhist", 3, seed=7))
            listed = await stub.ListMatches(mpb.ListMatchesRequest(page_size=500))
            ids = [m.match_id for m in listed.matches]
            assert ids.index(other.match.match_id) < ids.index(match.match_id)
            only = await stub.ListMatches(mpb.ListMatchesRequest(game_id="twhist", page_size=500))
            assert all(m.options.game_id == "twhist" for m in only.matches)
            assert other.match.match_id in {m.match_id for m in only.matches}
            page1 = await stub.ListMatches(mpb.ListMatchesRequest(page_size=1))
            assert len(page1.matches) == 1 and page1.next_page_token
            page2 = await stub.ListMatches(mpb.ListMatchesRequest(
                page_size=1, page_token=page1.next_page_token))
            assert len(page2.matches) == 1
            assert page2.matches[0].match_id != page1.matches[0].match_id

            # Cancel: result CANCELLED; a second cancel is refused.
            cancelled = await stub.CancelMatch(mpb.CancelMatchRequest(
                match_id=match.match_id, reason="test over"))
            assert cancelled.status == mpb.MATCH_STATUS_CANCELLED
            assert cancelled.result.reason == mpb.END_REASON_CANCELLED
            assert cancelled.result.detail == "test over"
            assert cancelled.seed == 42 and cancelled.options.seed == 42
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.CancelMatch(mpb.CancelMatchRequest(match_id=match.match_id))
            assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert _reason(err.value) == "MATCH_OVER"
            only = await stub.ListMatches(mpb.ListMatchesRequest(
                statuses=[mpb.MATCH_STATUS_CANCELLED], page_size=500))
            assert match.match_id in {m.match_id for m in only.matches}
            assert all(m.status == mpb.MATCH_STATUS_CANCELLED for m in only.matches)

            # Joining a cancelled match: FAILED_PRECONDITION.
            agent = Agent(ch, match.match_id, tokens(created)[0]).open()
            await agent.send(ppb.AgentMessage(join=ppb.Join(
                match_id=match.match_id, seat_token=tokens(created)[0])))
            assert await agent.recv() is None
            code, _details, reason = await agent.status()
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER")

            # Replay of the cancelled match reproduces its state.
            replay = await stub.GetReplay(mpb.GetReplayRequest(match_id=match.match_id))
            assert replay.match.status == mpb.MATCH_STATUS_CANCELLED
            state = engine.make("twisted", 3, 42, {"rounds": 1})
            assert len(replay.events) == len(state.events)
            await stub.CancelMatch(mpb.CancelMatchRequest(match_id=other.match.match_id))

    run(main())


def test_house_bots_play_a_match_and_it_replays_exactly(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            stub = mgrpc.MatchesStub(ch)
            created = await create(ch, options("tricky_twist", 3, seed=5,
                                               house=("random", "heuristic", "random")))
            assert not created.seat_tokens
            mid = created.match.match_id
            # Watch from the start: a spectator sees it to the end.
            call = pgrpc.WatchStub(ch).Watch(ppb.WatchRequest(match_id=mid))
            kinds = []
            for _ in range(100_000):
                msg = await asyncio.wait_for(call.read(), 30)
                if msg is aio.EOF:
                    break
                kinds.append(msg.WhichOneof("msg"))
            assert kinds[-1] == "match_over"
            got = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid))
            assert got.status == mpb.MATCH_STATUS_FINISHED
            assert got.result.reason == mpb.END_REASON_COMPLETED
            replay = await stub.GetReplay(mpb.GetReplayRequest(match_id=mid))
            state = engine.replay("tricky_twist", 3, 5, {},
                                  [(a.seat, a.action_id) for a in replay.actions])
            assert state.is_terminal()
            assert list(got.result.scores) == state.scores()
            assert list(got.result.places) == state.places()
            assert list(got.result.winners) == state.winners()
            # Watching a finished match replays it and ends.
            call = pgrpc.WatchStub(ch).Watch(ppb.WatchRequest(match_id=mid, from_seq=3))
            msgs = []
            for _ in range(100_000):
                msg = await asyncio.wait_for(call.read(), 30)
                if msg is aio.EOF:
                    break
                msgs.append(msg)
            assert msgs[0].event.seq == 3
            assert msgs[-1].match_over.result == got.result

    run(main())


@pytest.mark.parametrize(("opts", "needle"), [
    (mpb.MatchOptions(game_id="chess", num_players=2), "unknown game"),
    (mpb.MatchOptions(game_id="twisted", num_players=7), "2-4 players"),
    (mpb.MatchOptions(game_id="twhist", num_players=2), "3-5 players"),
    (options("twisted", 2, game_options={"no_such_option": 1}), "no_such_option"),
    (options("twisted", 2, game_options={"rounds": "many"}), "rounds"),
    (options("twisted", 2, house=("random",)), "seats"),
    (options("twisted", 2, house=("random", "grandmaster")), "grandmaster"),
    (options("twisted", 2, join_ms=8 * 24 * 3600 * 1000), "join_timeout_ms"),
])
def test_bad_options_are_invalid_argument(server: Any, opts: mpb.MatchOptions,
                                          needle: str) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await create(ch, opts)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert needle in (err.value.details() or "")
            assert _reason(err.value) == "INVALID_OPTIONS"

    run(main())


def test_unknown_match_is_not_found(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            stub = mgrpc.MatchesStub(ch)
            for call in (stub.GetMatch(mpb.GetMatchRequest(match_id="nope")),
                         stub.GetReplay(mpb.GetReplayRequest(match_id="nope")),
                         stub.CancelMatch(mpb.CancelMatchRequest(match_id="nope"))):
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await call
                assert err.value.code() == grpc.StatusCode.NOT_FOUND
                assert _reason(err.value) == "UNKNOWN_MATCH"

    run(main())


def test_admin_token_required_when_configured(strict_server: InProcessServer) -> None:
    async def main() -> None:
        async with aio.insecure_channel(strict_server.target) as ch:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await create(ch, options("twisted", 2))
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert _reason(err.value) == "PERMISSION_DENIED_ADMIN"
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await create(ch, options("twisted", 2),
                             metadata=[("authorization", "Bearer wrong")])
            assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
            ok = await create(ch, options("twisted", 2),
                              metadata=[("authorization", f"Bearer {ADMIN}")])
            stub = mgrpc.MatchesStub(ch)
            # Reads are open; cancel is an admin call too.
            await stub.GetMatch(mpb.GetMatchRequest(match_id=ok.match.match_id))
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.CancelMatch(mpb.CancelMatchRequest(match_id=ok.match.match_id))
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
            await stub.CancelMatch(mpb.CancelMatchRequest(match_id=ok.match.match_id),
                                   metadata=(("authorization", f"Bearer {ADMIN}"),))

    run(main())


def test_join_timeout_and_stream_cap(strict_server: InProcessServer) -> None:
    async def main() -> None:
        async with aio.insecure_channel(strict_server.target) as ch:
            # A stream that never joins is ended.
            silent = Agent(ch, "x", "y").open()
            assert await silent.recv(timeout=5) is None
            code, _details, reason = await silent.status()
            assert (code, reason) == (grpc.StatusCode.DEADLINE_EXCEEDED, "JOIN_TIMEOUT")
            created = await create(ch, options("twisted", 2),
                                   metadata=[("authorization", f"Bearer {ADMIN}")])
            mid, tok = created.match.match_id, tokens(created)
            first = Agent(ch, mid, tok[0])
            await first.join()
            second = Agent(ch, mid, tok[0])
            second.open()
            await second.send(ppb.AgentMessage(join=ppb.Join(match_id=mid, seat_token=tok[0])))
            assert await second.recv() is None
            code, _details, reason = await second.status()
            assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS")
            first.cancel()

    run(main())


def test_message_too_large_is_refused(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            call = pgrpc.PlayStub(ch).Play()
            await call.write(ppb.AgentMessage(join=ppb.Join(match_id="m" * (2 << 20))))
            code = await asyncio.wait_for(call.code(), 10)
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            # The server is fine afterwards.
            await create(ch, options("twisted", 2))

    run(main())


@pytest.fixture(scope="module")
def impatient_server(valkey: Any) -> Iterator[InProcessServer]:
    """Matches are abandoned when not every seat joined within a second."""
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url,
                                       waiting_timeout_s=1.0)).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_a_match_whose_seats_do_not_all_join_is_abandoned(
        impatient_server: InProcessServer) -> None:
    async def main() -> None:
        async with aio.insecure_channel(impatient_server.target) as ch:
            stub = mgrpc.MatchesStub(ch)
            waiting = await create(ch, options("twisted", 2, seed=4))
            started = await create(ch, options("twisted", 2, seed=5))
            never = await create(ch, options("twhist", 3, seed=6))
            present = Agent(ch, waiting.match.match_id, tokens(waiting)[0])
            await present.join()
            players = [Agent(ch, started.match.match_id, tok)
                       for tok in tokens(started).values()]
            for player in players:
                await player.join(no_events=True)
            # The seat that joined is told, then its stream ends.
            over = await present.expect("match_over", timeout=10)
            assert over.match_over.result.reason == mpb.END_REASON_ABANDONED
            # As a forfeit of the missing seat.
            assert list(over.match_over.result.places) == [1, 2]
            assert list(over.match_over.result.winners) == [0]
            assert "seat(s) 1 did not join" in over.match_over.result.detail
            assert await present.recv(timeout=5) is None
            for match_id in (waiting.match.match_id, never.match.match_id):
                match = await _no_longer_waiting(stub, match_id)
                assert match.status == mpb.MATCH_STATUS_CANCELLED
                assert match.result.reason == mpb.END_REASON_ABANDONED
            # Every seat of the other match joined in time: it runs on. (Its
            # waiting timer, set before ``never``'s, would have fired by now.)
            match = await stub.GetMatch(mpb.GetMatchRequest(match_id=started.match.match_id))
            assert match.status == mpb.MATCH_STATUS_RUNNING
            assert not match.HasField("result")
            # An abandoned match refuses a late seat with a clear status.
            late = Agent(ch, waiting.match.match_id, tokens(waiting)[1])
            late.open()
            await late.send(ppb.AgentMessage(join=ppb.Join(
                match_id=waiting.match.match_id, seat_token=tokens(waiting)[1])))
            assert await late.recv() is None
            code, _details, reason = await late.status()
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER")
            for player in players:
                player.cancel()

    run(main())


def test_a_match_may_set_its_own_join_timeout(server: Any) -> None:
    """TimeControl.join_timeout_ms overrides the server's hour for this match only."""
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            stub = mgrpc.MatchesStub(ch)
            quick = await create(ch, options("twisted", 2, join_ms=400))
            patient = await create(ch, options("twisted", 2))
            assert quick.match.options.time_control.join_timeout_ms == 400
            match = await _no_longer_waiting(stub, quick.match.match_id)
            assert match.status == mpb.MATCH_STATUS_CANCELLED
            assert match.result.reason == mpb.END_REASON_ABANDONED
            assert "within 0.4 s" in match.result.detail
            other = await stub.GetMatch(mpb.GetMatchRequest(match_id=patient.match.match_id))
            assert other.status == mpb.MATCH_STATUS_WAITING

    run(main())
