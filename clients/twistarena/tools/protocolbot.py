"""A random bot written against the Play protocol directly, without the SDK.

It does what any bot in any language must do and nothing more: join with its
seat token, tell each ServerMessage's kind, answer a DecisionRequest with one
of its legal action ids, and stop at MatchOver. It reads only what a random bot
needs (the decision id and the legal action ids, see ``wire.narrow_decision``),
as a lean bot in any language would. It asks for batched delivery
(``Join.batched``) unless told not to: the acceptance of an answer and the
events then come with the seat's next message. Given ``KeptStreams``, it asks
the server to keep its stream after MatchOver (``Join.keep_open``) and leaves
the call there for the next match's bot, as a bot playing match after match
would. The service benchmark runs it beside the
bare ping-pong client so that the two runs differ only by the server (the SDK's
own cost is measured separately with real ``Agent`` s).
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio
from twistarena import wire
from twistarena.clients.sdk.kept import KeptStreams, join_on
from twistarena.v1 import play_pb2

Hook = Callable[[Any, float], None]
#: A channel to the address a NOT_OWNER refusal names (``serve --workers``, clusters).
Connect = Callable[[str], grpc.aio.Channel]
OWNER_KEY = wire.OWNER_KEY
#: ... or, while the match is being taken over, when to try again.
RETRY_AFTER_KEY = wire.RETRY_AFTER_KEY

PLAY_METHOD = "/twistarena.v1.Play/Play"
ACCEPTED, REJECTED, MATCH_OVER = (
    play_pb2.ServerMessage.DESCRIPTOR.fields_by_name[name].number
    for name in ("accepted", "rejected", "match_over"))


def raw_play_call(channel: grpc.aio.Channel) -> Any:
    """A Play call on ``channel`` whose messages are written and read as bytes."""
    return channel.stream_stream(PLAY_METHOD, request_serializer=wire.passthrough_serializer)()


class ProtocolBotError(RuntimeError):
    """The server refused an answer or ended the stream early (a bug somewhere)."""


class ProtocolBot:
    """One seat played with uniformly random legal actions over a raw Play stream."""

    def __init__(self, channel: grpc.aio.Channel, match_id: str, token: str, seed: int,
                 on_decision: Hook, on_answer: Hook, connect: Connect | None = None,
                 events: bool = False, batched: bool = True,
                 kept: KeptStreams | None = None) -> None:
        self.channel = channel
        #: Where the stream is kept for the next match (None: a call per match).
        self.kept = kept
        #: Whether the seat asks for its events too (what most agents run; unread here).
        self.events = events
        #: Whether it asks for batched delivery (Join.batched).
        self.batched = batched
        self.connect = connect
        self.match_id = match_id
        self.token = token
        self.rng = random.Random(seed)
        self.on_decision = on_decision
        self.on_answer = on_answer
        self.accepted = 0
        self.answered = 0

    async def run(self) -> play_pb2.MatchOver:
        """Play to the end, following a redirect to the match's owner, or retrying
        when the server says the match is being placed or taken over (a few times)."""
        for _ in range(5):
            try:
                return await self._play()
            except grpc.aio.AioRpcError as error:
                trailers = dict(error.trailing_metadata() or ())
                owner, retry_ms = trailers.get(OWNER_KEY), trailers.get(RETRY_AFTER_KEY)
                if self.connect is not None and isinstance(owner, str) and owner:
                    self.channel = self.connect(owner)
                elif isinstance(retry_ms, str) and retry_ms.isdigit():
                    await asyncio.sleep(min(int(retry_ms), 5_000) / 1000)
                else:
                    raise
        raise ProtocolBotError(f"{self.match_id}: redirected again and again")

    async def _play(self) -> play_pb2.MatchOver:
        kept = self.kept
        key = self.match_id
        choice = self.rng.choice
        kind_of, narrow, answer = wire.message_kind, wire.narrow_decision, wire.answer_message
        decision, batch = wire.DECISION_KIND, wire.SEAT_BATCH_KIND
        call, data = await join_on(
            kept, self.channel, functools.partial(raw_play_call, self.channel),
            play_pb2.AgentMessage(join=play_pb2.Join(
                match_id=self.match_id, seat_token=self.token, no_events=not self.events,
                batched=self.batched, keep_open=kept is not None)))
        over: play_pb2.MatchOver | None = None
        try:
            while True:
                if data is grpc.aio.EOF:
                    raise ProtocolBotError(f"{key}: stream ended before MatchOver "
                                           f"({await call.code()}: {await call.details()})")
                kind = kind_of(data)
                if kind == decision:
                    req = narrow(data)
                    if req.HasField("accepted"):
                        self.accepted += 1
                    self.on_decision(key, time.perf_counter())
                    action = choice(req.legal_actions).id
                    self.on_answer(key, time.perf_counter())
                    self.answered += 1
                    await call.write(answer(req.decision_id, action))
                elif kind == ACCEPTED:
                    self.accepted += 1
                elif kind == batch:
                    self.accepted += wire.narrow_batch(data).HasField("accepted")
                elif kind == MATCH_OVER:
                    over = play_pb2.ServerMessage.FromString(data).match_over
                    return over
                elif kind == REJECTED:
                    message = play_pb2.ServerMessage.FromString(data).rejected.message
                    raise ProtocolBotError(f"{key}: answer rejected: {message}")
                data = await call.read()
        finally:
            if over is not None and kept is not None:
                kept.keep(self.channel, call)
            elif not call.done():
                call.cancel()
