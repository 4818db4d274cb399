"""Every client path of the node follows one retry and failover policy
(``twistarena.link``): a refusal naming the owner (NOT_OWNER with
``twistarena-owner``) is followed at once, before any other server of the list,
and a server that gave a retry hint (``twistarena-retry-after-ms``) is not
called again while it runs, however often the others fail meanwhile. Each path
is driven against real gRPC servers on loopback that refuse as scripted."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from twistarena.clients.sdk import Backoff, MatchClient, TournamentClient, play, queue
from twistarena.clients.web import MatchFeed
from twistarena.link import CallError, call_with_failover, make_channel, stub
from twistarena.runner import Runner, RunnerOptions
from twistarena.v1 import (
    match_pb2,
    match_pb2_grpc,
    matchmaking_pb2,
    play_pb2,
    runners_pb2,
    tournaments_pb2,
)

from ..support.refusals import Refusal, ScriptedNode, scripted_nodes
from ..support.waiting import wait_until

#: Short enough that a path that never reaches the serving node fails fast.
QUICK = Backoff(give_up_after=5.0)
PLAIN = Refusal()  # UNAVAILABLE, no trailers: a node going down


async def _serve_match(request: Any, context: grpc.aio.ServicerContext) -> Any:
    return match_pb2.Match(match_id=request.match_id)


async def _serve_watch(request: Any, context: grpc.aio.ServicerContext) -> None:
    await context.write(play_pb2.WatchMessage(match_over=play_pb2.MatchOver()))


async def _serve_tournament(request: Any, context: grpc.aio.ServicerContext) -> None:
    await context.write(tournaments_pb2.Tournament(
        tournament_id=request.tournament_id, status=tournaments_pb2.TOURNAMENT_FINISHED))


async def _serve_queue(request: Any, context: grpc.aio.ServicerContext) -> None:
    await context.write(matchmaking_pb2.QueueUpdate(
        assigned=matchmaking_pb2.MatchAssigned(match_id="m1", seat_token="s")))


async def _serve_play(requests: Any, context: grpc.aio.ServicerContext) -> None:
    message = await context.read()
    await context.write(play_pb2.ServerMessage(joined=play_pb2.Joined(
        match_id=message.join.match_id, seat=0, game_id="twisted", num_players=2)))
    await context.write(play_pb2.ServerMessage(match_over=play_pb2.MatchOver()))


async def _serve_connect(requests: Any, context: grpc.aio.ServicerContext) -> None:
    await context.read()  # the hello
    await context.write(runners_pb2.RunnerCommand(welcome=runners_pb2.RunnerWelcome(
        runner_id="r1", session_key="k", heartbeat_ms=1000)))
    await asyncio.Event().wait()  # the session lasts until the runner goes


async def _unary(servers: list[str], nodes: list[ScriptedNode], _tmp: Path) -> None:
    await MatchClient(servers, backoff=QUICK).get_match("m1")


async def _agent(servers: list[str], nodes: list[ScriptedNode], _tmp: Path) -> None:
    await play(lambda _observation, legal: legal[0].id, server=servers, match_id="m1",
               token="t", backoff=QUICK)


async def _watch(servers: list[str], nodes: list[ScriptedNode], _tmp: Path) -> None:
    messages = [m async for m in MatchClient(servers, backoff=QUICK).watch("m1")]
    assert messages[-1].WhichOneof("msg") == "match_over"


async def _tournament_watch(servers: list[str], nodes: list[ScriptedNode], _tmp: Path) -> None:
    records = [r async for r in TournamentClient(servers).watch("t1", give_up_after=5.0)]
    assert records[-1].status == tournaments_pb2.TOURNAMENT_FINISHED


async def _queue(servers: list[str], nodes: list[ScriptedNode], _tmp: Path) -> None:
    assigned = await queue(servers, "token", "twisted", 2, backoff=QUICK)
    assert assigned.match_id == "m1"


async def _web_feed(servers: list[str], nodes: list[ScriptedNode], _tmp: Path) -> None:
    feed = MatchFeed("m1", servers)
    viewer = feed.subscribe()
    async for _frame in feed.frames(viewer):
        pass
    assert (feed.error, feed.result is not None) == ("", True)


async def _runner(servers: list[str], nodes: list[ScriptedNode], tmp: Path) -> None:
    runner = Runner(RunnerOptions(servers=servers, runner_token="t", cache_dir=tmp,
                                  sandbox="none"))
    task = asyncio.get_running_loop().create_task(runner.run())
    try:
        await wait_until(lambda: runner.runner_id or task.done(), "the runner connected")
        assert runner.runner_id == "r1"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@dataclass(frozen=True)
class ClientPath:
    """A client path: the contract method it calls, how a node serves it, how the
    client is driven until it is served."""

    module: Any
    service: str
    method: str
    serve: Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]
    drive: Callable[[list[str], list[ScriptedNode], Path], Awaitable[None]]

    def node(self, refusals: list[Refusal] | None = None) -> ScriptedNode:
        return ScriptedNode(self.module, self.service, self.method, self.serve, refusals)


PATHS = {
    "sdk unary call": ClientPath(match_pb2, "Matches", "GetMatch", _serve_match, _unary),
    "sdk agent": ClientPath(play_pb2, "Play", "Play", _serve_play, _agent),
    "sdk watch": ClientPath(play_pb2, "Watch", "Watch", _serve_watch, _watch),
    "sdk tournament watch": ClientPath(tournaments_pb2, "Tournaments", "WatchTournament",
                                       _serve_tournament, _tournament_watch),
    "sdk queue": ClientPath(matchmaking_pb2, "Matchmaking", "Queue", _serve_queue, _queue),
    "web feed": ClientPath(play_pb2, "Watch", "Watch", _serve_watch, _web_feed),
    "runner": ClientPath(runners_pb2, "Runners", "Connect", _serve_connect, _runner),
}


@pytest.mark.parametrize("name", sorted(PATHS))
def test_an_owner_redirect_is_followed_at_once(name: str, tmp_path: Path) -> None:
    path = PATHS[name]
    refuser, owner, other = path.node(), path.node(), path.node([PLAIN] * 1000)

    async def scenario() -> None:
        async with scripted_nodes(refuser, owner, other) as (first, owner_address, third):
            refuser.refusals.append(Refusal(reason="NOT_OWNER", owner=owner_address))
            await asyncio.wait_for(path.drive([first, third], [refuser, owner, other],
                                              tmp_path), 20)

    asyncio.run(scenario())
    assert (refuser.calls, owner.served, other.calls) == (1, 1, 0)


@pytest.mark.parametrize("name", sorted(PATHS))
def test_a_retry_hint_keeps_the_server_aside_while_others_are_tried(
        name: str, tmp_path: Path) -> None:
    path = PATHS[name]
    hinted = path.node([Refusal(reason="STORE_UNAVAILABLE", retry_after_ms=60_000)])
    flaky = path.node([PLAIN, PLAIN])

    async def scenario() -> None:
        async with scripted_nodes(hinted, flaky) as servers:
            await asyncio.wait_for(path.drive(servers, [hinted, flaky], tmp_path), 20)

    asyncio.run(scenario())
    # Without the hint the list goes round: hinted, flaky, hinted, flaky, ...
    assert (hinted.calls, flaky.calls, flaky.served) == (1, 3, 1)


def test_a_policy_bounded_in_attempts_gives_up_after_them() -> None:
    node = PATHS["sdk unary call"].node([PLAIN] * 100)

    async def scenario() -> None:
        async with scripted_nodes(node) as servers:
            client = MatchClient(servers, backoff=Backoff(give_up_after=60.0, max_attempts=3))
            with pytest.raises(CallError) as refused:
                await client.get_match("m1")
            assert refused.value.code == grpc.StatusCode.UNAVAILABLE

    asyncio.run(scenario())
    assert node.calls == 3


def test_a_fatal_reason_is_not_retried() -> None:
    node = PATHS["sdk unary call"].node([Refusal(grpc.StatusCode.UNAVAILABLE, "TAKEN_OVER")])

    async def scenario() -> None:
        async with scripted_nodes(node) as servers:
            with pytest.raises(CallError) as refused:
                await MatchClient(servers, backoff=QUICK).get_match("m1")
            assert refused.value.reason == "TAKEN_OVER"

    asyncio.run(scenario())
    assert node.calls == 1


def test_a_callers_own_channels_serve_the_attempts_and_stay_open() -> None:
    path = PATHS["sdk unary call"]
    refuser, owner = path.node(), path.node()

    async def scenario() -> None:
        async with scripted_nodes(refuser, owner) as (first, owner_address):
            refuser.refusals.append(Refusal(reason="NOT_OWNER", owner=owner_address))
            opened: dict[str, grpc.aio.Channel] = {}

            def channels(address: str) -> grpc.aio.Channel:
                return opened.setdefault(address, make_channel(address))

            def get_match(channel: grpc.aio.Channel) -> Awaitable[match_pb2.Match]:
                call: Awaitable[match_pb2.Match] = stub(match_pb2_grpc.MatchesStub, channel
                                                        ).GetMatch(match_pb2.GetMatchRequest(
                                                            match_id="m1"))
                return call

            match = await call_with_failover([first], None, get_match, channels=channels)
            assert match.match_id == "m1"
            assert list(opened) == [first, owner_address]
            assert (await get_match(opened[owner_address])).match_id == "m1"  # still open
            for channel in opened.values():
                await channel.close()

    asyncio.run(scenario())
    assert (refuser.calls, owner.served) == (1, 2)
