"""What a hostile client needs: every RPC of the contract as a raw method that
sends bytes (no SDK, no serializer of ours), a server with chosen limits, and
the canary match whose pace shows whether an attack hurts other players."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import grpc
from google.protobuf.descriptor import MethodDescriptor
from grpc import aio
from twistarena.server.config import Limits, ServerConfig
from twistarena.v1 import (
    arenas_pb2,
    hosting_pb2,
    match_pb2,
    match_pb2_grpc,
    matchmaking_pb2,
    play_pb2,
    tournaments_pb2,
)

from tests.support.agents import Agent, create, options, play_to_end, random_chooser, tokens
from tests.support.server import InProcessServer

FILES = (match_pb2, play_pb2, matchmaking_pb2, tournaments_pb2, hosting_pb2, arenas_pb2)


@dataclass(frozen=True)
class Rpc:
    """One method of the contract, called with raw bytes."""

    path: str
    descriptor: MethodDescriptor

    @property
    def input_type(self) -> Any:
        from google.protobuf import message_factory

        return message_factory.GetMessageClass(self.descriptor.input_type)

    def call(self, ch: aio.Channel, body: bytes, metadata: Any = None,
             timeout: float = 10.0) -> Any:
        """Start the call; unary answers are awaited, streams are returned."""
        d = self.descriptor
        kw: dict[str, Any] = {"request_serializer": None, "response_deserializer": None}
        if d.client_streaming and d.server_streaming:
            call = ch.stream_stream(self.path, **kw)(iter([body]), metadata=metadata,
                                                      timeout=timeout)
        elif d.server_streaming:
            call = ch.unary_stream(self.path, **kw)(body, metadata=metadata, timeout=timeout)
        elif d.client_streaming:
            call = ch.stream_unary(self.path, **kw)(iter([body]), metadata=metadata,
                                                     timeout=timeout)
        else:
            call = ch.unary_unary(self.path, **kw)(body, metadata=metadata, timeout=timeout)
        return call


def every_rpc() -> list[Rpc]:
    out = []
    for module in FILES:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                out.append(Rpc(f"/{service.full_name}/{method.name}", method))
    return out


async def outcome(call: Any, first_only: bool = True) -> grpc.StatusCode:
    """How a call ends for its client: OK after its first message (a stream
    that answers is alive), else the status it failed with."""
    try:
        if hasattr(call, "__aiter__"):
            async for _msg in call:
                if first_only:
                    call.cancel()
                    return grpc.StatusCode.OK
            return grpc.StatusCode.OK
        await call
        return grpc.StatusCode.OK
    except aio.AioRpcError as err:
        return err.code()
    except asyncio.CancelledError:
        return grpc.StatusCode.OK


#: The Valkey database of the servers these tests start (the shared server uses 0).
DB = 7


@contextmanager
def limited_server(valkey: Any, admin_token: str | None = None,
                   **limits: Any) -> Iterator[InProcessServer]:
    """A server of its own with these limits, over an empty database (so that it
    adopts no match a previous one left waiting)."""
    import redis

    url = f"{valkey.url.rsplit('/', 1)[0]}/{DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    config = ServerConfig(port=0, redis_url=url, admin_token=admin_token,
                          limits=replace(Limits(), **limits))
    srv = InProcessServer(config).start()
    try:
        yield srv
    finally:
        srv.stop()


#: Rounds of the canary's Twisted matches (2 by default): long matches, so that
#: the canary's own creations stay well within a default server's creation limit
#: (120 a minute per address, bursts of 40) on however fast a machine; a canary
#: refused by that limit would measure the limit, not the attack.
CANARY_ROUNDS = 8


async def canary_rate(target: str, seconds: float, game: str = "twisted",
                      players: int = 2) -> float:
    """Decisions a second of one match played by two random agents, back to
    back for ``seconds`` (the figure an attack must not halve)."""
    game_options = {"rounds": CANARY_ROUNDS} if game == "twisted" else None
    decisions = 0
    started = time.monotonic()
    seed = 1
    async with aio.insecure_channel(target) as ch:
        while time.monotonic() - started < seconds:
            created = await create(ch, options(game, players, seed=seed,
                                               game_options=game_options))
            seed += 1
            mid = created.match.match_id
            agents = [Agent(ch, mid, tok) for _seat, tok in sorted(tokens(created).items())]
            for agent in agents:
                await agent.join()
            await asyncio.gather(*(play_to_end(agent, random_chooser(seat))
                                   for seat, agent in enumerate(agents)))
            got = await match_pb2_grpc.MatchesStub(ch).GetMatch(
                match_pb2.GetMatchRequest(match_id=mid))
            decisions += got.actions
    return decisions / (time.monotonic() - started)
