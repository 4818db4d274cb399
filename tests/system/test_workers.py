"""``twistarena serve --workers 2``: two nodes behind one port, on one embedded Valkey.

Matches created through the shared address are placed on either worker; a
Play stream that reaches the other one is redirected to the owner's own port,
and agents that connect to the shared address play every match to its end.
"""

from __future__ import annotations

import asyncio
import time

import grpc
from twistarena.clients.cli import build_parser
from twistarena.clients.cli.workers import passed_flags, worker_count
from twistarena.clients.sdk import ArenaClient
from twistarena.clients.sdk.hosting import seat_agents
from twistarena.v1 import match_pb2, play_pb2, play_pb2_grpc

from tests.clients.helpers import run
from tests.support.process import ServeProcess

OWNER_KEY = "twistarena-owner"
RETRY_AFTER_KEY = "twistarena-retry-after-ms"


async def _refusal(channel: grpc.aio.Channel, match_id: str, token: str) -> str:
    """The owner a Join on ``channel`` is redirected to ('' when it is seated there).

    While the match is still being placed (workers learning of each other) the
    refusal names no owner but a time to retry after: the Join is retried then."""
    deadline = time.monotonic() + 30
    while True:
        call = play_pb2_grpc.PlayStub(channel).Play()
        try:
            await call.write(play_pb2.AgentMessage(join=play_pb2.Join(
                match_id=match_id, seat_token=token, no_events=True)))
            reply = await asyncio.wait_for(call.read(), 10)
            assert reply is not grpc.aio.EOF and reply.WhichOneof("msg") == "joined"
            return ""
        except grpc.aio.AioRpcError as error:
            trailers = dict(error.trailing_metadata() or ())
            assert error.code() == grpc.StatusCode.UNAVAILABLE, error.details()
            if OWNER_KEY in trailers:
                return str(trailers[OWNER_KEY])
            assert time.monotonic() < deadline, error.details()
            await asyncio.sleep(int(trailers[RETRY_AFTER_KEY]) / 1000)
        finally:
            call.cancel()


def test_two_workers_share_one_address_and_redirect_to_the_owner() -> None:
    server = ServeProcess(["--port", "0", "--workers", "2", "--no-web"]).start(60)
    try:
        async def scenario() -> None:
            client = ArenaClient(server.target)
            deadline = time.monotonic() + 60
            seen: dict[str, match_pb2.CreateMatchResponse] = {}
            async with grpc.aio.insecure_channel(server.target) as channel:
                # One connection lands on one worker; matches are placed on both.
                while len(seen) < 2:
                    assert time.monotonic() < deadline, f"placed on one worker only: {seen}"
                    created = await client.create_match("twisted", 2, decision_ms=60_000)
                    owner = await _refusal(channel, created.match.match_id,
                                           created.seat_tokens[0].token)
                    seen.setdefault(owner, created)
            redirect = next(owner for owner in seen if owner)
            assert redirect != server.target
            # The named worker runs the match: a Join there is seated.
            match = seen[redirect]
            async with grpc.aio.insecure_channel(redirect) as direct:
                assert await _refusal(direct, match.match.match_id,
                                      match.seat_tokens[1].token) == ""
            # Agents given the shared address play both matches to the end.
            for created in seen.values():
                agents = seat_agents(server.target, created, ["random"], seed=1,
                                     no_events=True)
                results = await asyncio.wait_for(
                    asyncio.gather(*(a.run() for a in agents)), 60)
                assert all(r is not None for r in results)
                record = await client.get_match(created.match.match_id)
                assert record.status == match_pb2.MATCH_STATUS_FINISHED

        run(scenario(), 150)
        assert server.terminate() == 0
    finally:
        server.cleanup()


def test_workers_get_every_flag_given_but_those_the_supervisor_sets() -> None:
    parser = build_parser()
    args = parser.parse_args(["serve", "--workers", "3", "--port", "7000", "--lease-ms", "500",
                              "--insecure", "--host", "0.0.0.0", "--no-web"])
    assert passed_flags(args.serve_parser, args) == ["--host", "0.0.0.0", "--lease-ms", "500",
                                                     "--insecure"]
    assert worker_count("auto") >= 1
