"""No option makes a match endless, and every match has a server-wide length cap.

Issue item 5: Twisted ``rounds: 1e9`` made a match that never ends and took a
core. Options out of range are refused at creation; a match reaching the
server's cap on decisions or on wall time ends with END_REASON_LENGTH_LIMIT.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from grpc import aio
from twistarena.server.config import ServerConfig
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc

from tests.support.agents import Agent, create, options, run, tokens
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until

DECISIONS = 30
SECONDS = 1.5


@pytest.fixture(scope="module")
def capped(valkey: Any) -> Iterator[InProcessServer]:
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url,
                                       max_match_decisions=DECISIONS,
                                       max_match_s=SECONDS)).start()
    try:
        yield srv
    finally:
        srv.stop()


async def _until_over(stub: mgrpc.MatchesStub, mid: str, timeout: float) -> mpb.Match:
    async def over() -> mpb.Match | None:
        match = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid))
        return match if match.status in (mpb.MATCH_STATUS_FINISHED,
                                         mpb.MATCH_STATUS_CANCELLED) else None

    return await wait_until(over, f"match {mid} is over", timeout=timeout, interval=0.02)


def test_an_endless_option_is_refused(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await create(ch, options("twisted", 2, house=("random", "random"),
                                         game_options={"rounds": 10**9}))
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "'rounds' must be within 1..20" in (err.value.details() or "")

    run(main())


def test_a_match_ends_at_the_decision_cap(capped: InProcessServer) -> None:
    async def main() -> None:
        async with aio.insecure_channel(capped.target) as ch:
            created = await create(ch, options("twisted", 2, house=("random", "random"),
                                               game_options={"rounds": 20}))
            stub = mgrpc.MatchesStub(ch)
            match = await _until_over(stub, created.match.match_id, 20)
            assert match.status == mpb.MATCH_STATUS_FINISHED
            assert match.result.reason == mpb.END_REASON_LENGTH_LIMIT
            assert match.actions == DECISIONS
            assert f"{DECISIONS} decisions" in match.result.detail
            scores = list(match.result.scores)
            best = max(scores)
            assert [s for s in range(2) if scores[s] == best] == list(match.result.winners)

    run(main())


def test_a_match_ends_at_the_wall_time_cap(capped: InProcessServer) -> None:
    async def main() -> None:
        async with aio.insecure_channel(capped.target) as ch:
            created = await create(ch, options("twisted", 2, house=("", "random"),
                                               decision_ms=60_000))
            agent = Agent(ch, created.match.match_id, tokens(created)[0])
            await agent.join()
            over = (await agent.expect("match_over", timeout=SECONDS + 10)).match_over
            assert over.result.reason == mpb.END_REASON_LENGTH_LIMIT
            assert f"{SECONDS:g} s" in over.result.detail
            match = await mgrpc.MatchesStub(ch).GetMatch(
                mpb.GetMatchRequest(match_id=created.match.match_id))
            assert match.result.reason == mpb.END_REASON_LENGTH_LIMIT

    run(main())
