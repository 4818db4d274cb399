"""Creation quotas and Join rate limits: one client cannot fill the server with
waiting matches or churn a seat with takeovers; every refusal names its limit."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import grpc
import pytest
from grpc import aio
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.v1 import matchmaking_pb2_grpc as kgrpc
from twistarena.wire import RETRY_AFTER_KEY

from tests.security.hostile import limited_server
from tests.support.agents import Agent, create, options, run, tokens
from tests.support.server import InProcessServer

WAITING = options("twhist", 5)


async def _create_until_refused(ch: aio.Channel, attempts: int,
                                metadata: tuple[tuple[str, str], ...] = ()
                                ) -> tuple[list[str], aio.AioRpcError | None]:
    made: list[str] = []
    for _ in range(attempts):
        try:
            made.append((await create(ch, WAITING, metadata)).match.match_id)
        except aio.AioRpcError as err:
            return made, err
    return made, None


def test_default_limits_stop_a_flood_of_waiting_matches(valkey: Any) -> None:
    with limited_server(valkey) as srv:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                made, refused = await _create_until_refused(ch, 150)
                assert refused is not None, "150 waiting matches created in a burst"
                assert refused.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "creates_per_minute" in refused.details()
                assert 10 <= len(made) <= 60
        run(main())


def test_tokens_do_not_multiply_an_address_quota(valkey: Any) -> None:
    with limited_server(valkey, creates_per_minute=30) as srv:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                made = 0
                for i in range(40):
                    md = (("authorization", f"Bearer at_fresh{i}"),)
                    try:
                        await create(ch, WAITING, md)
                        made += 1
                    except aio.AioRpcError as err:
                        assert err.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                        assert "per client address" in err.details()
                        break
                assert made <= 12
        run(main())


def test_live_matches_per_client_and_waiting_matches_per_server(valkey: Any) -> None:
    with limited_server(valkey, creates_per_minute=0, live_per_client=4,
                        max_waiting_matches=6) as srv:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                made, refused = await _create_until_refused(ch, 10)
                assert len(made) == 4 and refused is not None
                assert refused.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "live_per_client" in refused.details()
                # A match that ends frees its place.
                await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(
                    match_id=made[0], reason="test"))
                more, refused = await _create_until_refused(ch, 3)
                assert len(more) == 1 and refused is not None
                # Another client (a token) gets its own share, up to the server's cap.
                md = (("authorization", "Bearer at_other"),)
                theirs, refused = await _create_until_refused(ch, 10, md)
                assert refused is not None and "live_per_client" in refused.details()
            assert len(theirs) == 0  # same address: the address share is used up
        run(main())
    with limited_server(valkey, creates_per_minute=0, live_per_client=0,
                        max_waiting_matches=6) as srv:
        async def server_cap() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                made, refused = await _create_until_refused(ch, 10)
                assert len(made) == 6 and refused is not None
                assert refused.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "max_waiting_matches" in refused.details()
        run(server_cap())


def test_practice_and_agents_share_the_creation_quota(valkey: Any) -> None:
    with limited_server(valkey, creates_per_minute=6) as srv:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                stub = kgrpc.MatchmakingStub(ch)
                await stub.Practice(kpb.PracticeRequest(game_id="twisted"))
                await stub.RegisterAgent(kpb.RegisterAgentRequest(name="a"))
                try:
                    await stub.RegisterAgent(kpb.RegisterAgentRequest(name="b"))
                except aio.AioRpcError as err:
                    assert err.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                    assert "creates_per_minute" in err.details()
                else:
                    raise AssertionError("a third creation call within the burst of 2")
        run(main())


def test_seat_takeovers_are_rate_limited_per_token(valkey: Any) -> None:
    with limited_server(valkey) as srv:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                created = await create(ch, options("twisted", 2))
                mid, token = created.match.match_id, tokens(created)[0]
                accepted = 0
                refused: tuple[Any, ...] = ()
                for _ in range(40):
                    agent = Agent(ch, mid, token)
                    try:
                        await agent.join()
                        accepted += 1
                    except AssertionError:
                        refused = await agent.status()
                        break
                assert refused, "40 takeovers of one seat accepted in a burst"
                code, details, reason = refused
                assert code is grpc.StatusCode.RESOURCE_EXHAUSTED and reason == "RATE_LIMITED"
                assert "joins_per_minute_per_token" in details
                assert accepted <= 12
        run(main())


def test_joins_are_rate_limited_per_address(valkey: Any) -> None:
    with limited_server(valkey, joins_per_minute_per_peer=30,
                        creates_per_minute=0) as srv:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                accepted = 0
                for _ in range(20):
                    created = await create(ch, options("twisted", 2))
                    agent = Agent(ch, created.match.match_id, tokens(created)[0])
                    try:
                        await agent.join()
                        accepted += 1
                    except AssertionError:
                        code, details, _reason = await agent.status()
                        assert code is grpc.StatusCode.RESOURCE_EXHAUSTED
                        assert "joins_per_minute_per_peer" in details
                        break
                assert accepted <= 11
        run(main())


def test_a_returning_seat_is_not_a_new_join_and_a_refusal_says_when(valkey: Any) -> None:
    """A seat that joined before comes back (its stream broke, its match changed
    owner): its address's Join budget is not spent, only its token's; a refusal
    carries the wait until the budget holds a Join again."""
    with limited_server(valkey, joins_per_minute_per_peer=6, joins_per_minute_per_token=0,
                        creates_per_minute=0) as srv:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                created = await create(ch, options("twisted", 2))
                mid = created.match.match_id
                seats = tokens(created)
                for token in seats.values():  # the budget's burst: two Joins
                    first = Agent(ch, mid, token)
                    await first.join()
                    first.cancel()
                for _ in range(4):
                    for token in seats.values():
                        again = Agent(ch, mid, token)
                        await again.join(resume_from_seq=1)
                        again.cancel()
                other = await create(ch, options("twisted", 2))
                newcomer = Agent(ch, other.match.match_id, tokens(other)[0])
                with pytest.raises(AssertionError):
                    await newcomer.join()
                code, details, reason = await newcomer.status()
                assert code is grpc.StatusCode.RESOURCE_EXHAUSTED and reason == "RATE_LIMITED"
                assert "joins_per_minute_per_peer" in details
                trailing = dict(await newcomer.call.trailing_metadata())
                assert 0 < int(trailing[RETRY_AFTER_KEY]) <= 10_000
        run(main())


def test_a_join_turned_away_to_the_owner_spends_no_budget(valkey: Any) -> None:
    """Two nodes on one store: Joins refused with NOT_OWNER (a failover's
    redirects) do not spend the address's budget on the node that refused them."""
    with limited_server(valkey, joins_per_minute_per_peer=6,
                        creates_per_minute=0) as owner:
        config = replace(owner.config, port=0)
        other = InProcessServer(config).start()
        try:
            async def main() -> None:
                async with aio.insecure_channel(owner.target) as ch, \
                        aio.insecure_channel(other.target) as elsewhere:
                    created = await create(ch, options("twisted", 2))
                    mid, token = created.match.match_id, tokens(created)[0]
                    for _ in range(5):
                        agent = Agent(elsewhere, mid, token)
                        with pytest.raises(AssertionError):
                            await agent.join()
                        _code, _details, reason = await agent.status()
                        assert reason == "NOT_OWNER", reason
            run(main())
        finally:
            other.stop()
