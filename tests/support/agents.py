"""Raw grpc.aio agents for tests: no SDK, just the generated stubs."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc import aio
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc
from twistarena.wire import REASON_KEY


def run(coro: Any, timeout: float = 120.0) -> Any:
    """Run one test coroutine with an overall time bound."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def options(game_id: str, num_players: int, *, seed: int | None = None,
            decision_ms: int = 0, fallback: int = 0, forfeit_after: int = 0,
            grace_ms: int = 0, house: Sequence[str] = (),
            game_options: dict[str, Any] | None = None,
            join_ms: int = 0) -> mpb.MatchOptions:
    opts = mpb.MatchOptions(game_id=game_id, num_players=num_players)
    if seed is not None:
        opts.seed = seed
    tc = opts.time_control
    tc.decision_ms = decision_ms
    tc.fallback = fallback  # type: ignore[assignment]
    tc.forfeit_after = forfeit_after
    tc.reconnect_grace_ms = grace_ms
    tc.join_timeout_ms = join_ms
    if house:
        opts.seats.extend(mpb.SeatSpec(name=f"seat{i}", house_bot=h) for i, h in enumerate(house))
    if game_options:
        opts.game_options.update(game_options)
    return opts


async def create(channel: aio.Channel, opts: mpb.MatchOptions,
                 metadata: Sequence[tuple[str, str]] = ()) -> mpb.CreateMatchResponse:
    stub = mgrpc.MatchesStub(channel)
    resp: mpb.CreateMatchResponse = await stub.CreateMatch(
        mpb.CreateMatchRequest(options=opts), metadata=tuple(metadata), timeout=10)
    return resp


def tokens(resp: mpb.CreateMatchResponse) -> dict[int, str]:
    return {t.seat: t.token for t in resp.seat_tokens}


@dataclass
class Agent:
    """One Play stream. ``received`` keeps every message, in order."""

    channel: aio.Channel
    match_id: str
    token: str
    metadata: Sequence[tuple[str, str]] = ()
    received: list[ppb.ServerMessage] = field(default_factory=list)
    call: Any = None

    def open(self) -> Agent:
        self.call = pgrpc.PlayStub(self.channel).Play(metadata=tuple(self.metadata))
        return self

    async def join(self, resume_from_seq: int = 0, no_events: bool = False,
                   token: str | None = None, batched: bool = False,
                   handout: int = 0) -> ppb.Joined:
        if self.call is None:
            self.open()
        await self.call.write(ppb.AgentMessage(join=ppb.Join(
            match_id=self.match_id, seat_token=self.token if token is None else token,
            resume_from_seq=resume_from_seq, no_events=no_events, batched=batched,
            handout=handout)))
        msg = await self.expect("joined")
        return msg.joined

    async def send(self, msg: ppb.AgentMessage) -> None:
        if self.call is None:
            self.open()
        await self.call.write(msg)

    async def answer(self, decision_id: int, action_id: int) -> None:
        await self.call.write(ppb.AgentMessage(answer=ppb.Answer(
            decision_id=decision_id, action_id=action_id)))

    async def recv(self, timeout: float = 10.0) -> ppb.ServerMessage | None:
        """The next message, or None when the server ended the stream."""
        try:
            msg = await asyncio.wait_for(self.call.read(), timeout)
        except grpc.aio.AioRpcError:
            return None
        if msg is aio.EOF:
            return None
        self.received.append(msg)
        return msg  # type: ignore[no-any-return]

    async def expect(self, kind: str, timeout: float = 10.0,
                     limit: int = 10_000) -> ppb.ServerMessage:
        """Read until a message of ``kind`` arrives (others are kept in ``received``)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        for _ in range(limit):
            msg = await self.recv(max(0.01, end - loop.time()))
            if msg is None:
                raise AssertionError(f"stream ended while waiting for {kind}: "
                                     f"{await self.status()}")
            if msg.WhichOneof("msg") == kind:
                return msg
        raise AssertionError(f"no {kind} within {limit} messages")

    async def status(self) -> tuple[grpc.StatusCode, str, str]:
        """Final (code, details, twistarena-reason) of the call."""
        code = await self.call.code()
        details = await self.call.details()
        trailing = await self.call.trailing_metadata() or ()
        reason = ""
        for key, value in trailing:
            if key == REASON_KEY:
                reason = value
        return code, details, reason

    async def drain_to_end(self, timeout: float = 10.0, limit: int = 100_000) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        for _ in range(limit):
            if await self.recv(max(0.01, end - loop.time())) is None:
                return
        raise AssertionError("stream did not end")

    def cancel(self) -> None:
        if self.call is not None:
            self.call.cancel()


Chooser = Callable[[ppb.DecisionRequest], int]


def random_chooser(seed: int) -> Chooser:
    rng = random.Random(seed)

    def choose(req: ppb.DecisionRequest) -> int:
        return rng.choice(req.legal_actions).id  # type: ignore[no-any-return]

    return choose


async def play_one(agent: Agent, seat: int, choose: Chooser, state: Any) -> int:
    """Answer ``agent``'s next decision with ``choose``, wait for its acceptance and
    apply it to ``state`` (an in-process engine following the match); the action."""
    decision = (await agent.expect("decision")).decision
    action = choose(decision)
    await agent.answer(decision.decision_id, action)
    await agent.expect("accepted")
    state.apply(seat, action)
    return action


async def play_to_end(agent: Agent, choose: Chooser, timeout: float = 60.0,
                      on_message: Callable[[ppb.ServerMessage], None] | None = None,
                      max_messages: int = 200_000) -> mpb.MatchResult:
    """Answer every decision until MatchOver; returns the result."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    for _ in range(max_messages):
        msg = await agent.recv(max(0.01, end - loop.time()))
        if msg is None:
            raise AssertionError(f"stream ended before MatchOver: {await agent.status()}")
        if on_message is not None:
            on_message(msg)
        kind = msg.WhichOneof("msg")
        if kind == "decision":
            await agent.answer(msg.decision.decision_id, choose(msg.decision))
        elif kind == "match_over":
            return msg.match_over.result
    raise AssertionError("too many messages")
