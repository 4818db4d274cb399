"""serve --spectator-delay-ms: nothing reaches a live spectator sooner than the delay.

Lower bounds only (a loaded machine can only add time): a spectator that asks
at time J gets its first message no sooner than J + delay, and the event of an
answer sent at time T no sooner than T + delay. Seat streams are not delayed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from grpc import aio
from twistarena.server.config import ServerConfig
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc

from tests.support.agents import Agent, create, options, run, tokens
from tests.support.server import InProcessServer

DELAY_S = 0.8


@pytest.fixture(scope="module")
def delayed(valkey: Any) -> Iterator[InProcessServer]:
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url,
                                       spectator_delay_s=DELAY_S)).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_spectators_see_a_live_match_no_sooner_than_the_delay(delayed: InProcessServer) -> None:
    async def main() -> None:
        async with aio.insecure_channel(delayed.target) as ch:
            created = await create(ch, options("twisted", 2, house=("", "random"),
                                               decision_ms=30_000))
            mid = created.match.match_id
            agent = Agent(ch, mid, tokens(created)[0])
            await agent.join()
            decision = (await agent.expect("decision")).decision
            asked = time.monotonic()
            watch = pgrpc.WatchStub(ch).Watch(ppb.WatchRequest(match_id=mid))
            first = await asyncio.wait_for(watch.read(), DELAY_S + 10)
            assert time.monotonic() - asked >= DELAY_S
            assert first.WhichOneof("msg") in ("event", "view")
            # Drain the backlog: everything up to the current view.
            backlog = [first]
            while backlog[-1].WhichOneof("msg") != "view":
                backlog.append(await asyncio.wait_for(watch.read(), DELAY_S + 10))
            seen = max(m.event.seq for m in backlog if m.WhichOneof("msg") == "event")
            sent = time.monotonic()
            await agent.answer(decision.decision_id, decision.legal_actions[0].id)
            await agent.expect("accepted")  # the seat itself is told at once
            while True:
                msg = await asyncio.wait_for(watch.read(), DELAY_S + 10)
                if msg.WhichOneof("msg") == "event" and msg.event.seq > seen:
                    break
            assert time.monotonic() - sent >= DELAY_S
            watch.cancel()
            agent.cancel()
            await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))

    run(main())
