"""Error hygiene: what a client is told when its request is wrong or the
server fails. An undecodable request is INVALID_ARGUMENT, no status names an
internal class or address, echoed input is a short prefix."""

from __future__ import annotations

import re
from typing import Any

import grpc
from grpc import aio
from twistarena.v1 import match_pb2 as mpb

from tests.security.hostile import every_rpc, outcome
from tests.support.agents import run

#: What an internal detail looks like in a message: a class, a traceback, an address.
INTERNAL = re.compile(r"<class |Traceback|Error\b|Exception|redis://|\d+\.\d+\.\d+\.\d+:\d+")
GARBAGE = (b"\xff\xff\xff\xff", b"\x0a\xff\x01", b"\x08" + b"\xff" * 11)


def test_undecodable_requests_are_invalid_argument_on_every_rpc(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            for rpc in every_rpc():
                for body in GARBAGE:
                    call = rpc.call(ch, body)
                    code = await outcome(call)
                    details = await call.details() if hasattr(call, "details") else ""
                    assert code is grpc.StatusCode.INVALID_ARGUMENT, (rpc.path, body, code)
                    assert not INTERNAL.search(details or ""), (rpc.path, details)
    run(main())


def test_echoed_input_is_a_short_prefix(server: Any) -> None:
    async def main() -> None:
        huge = "m" * 500_000
        async with aio.insecure_channel(server.target) as ch:
            for rpc in every_rpc():
                fields = rpc.input_type.DESCRIPTOR.fields_by_name
                name = next((f for f in ("match_id", "tournament_id", "agent_id", "game_id")
                             if f in fields), None)
                if name is None:
                    continue
                body = rpc.input_type(**{name: huge}).SerializeToString()
                call = rpc.call(ch, body)
                code = await outcome(call)
                # The real error, not RESOURCE_EXHAUSTED from oversized metadata.
                assert code is not grpc.StatusCode.RESOURCE_EXHAUSTED, rpc.path
                assert code is not grpc.StatusCode.UNKNOWN, rpc.path
                details = await call.details()
                assert len(details) <= 400, (rpc.path, len(details))
            got = mpb.GetMatchRequest(match_id=huge)
            call = ch.unary_unary("/twistarena.v1.Matches/GetMatch")(got.SerializeToString())
            try:
                await call
            except aio.AioRpcError as err:
                assert err.code() is grpc.StatusCode.NOT_FOUND
                assert "mmmm" in err.details() and len(err.details()) < 200
            else:
                raise AssertionError("a match id of 500 KB was found")
    run(main())
