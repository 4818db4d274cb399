"""A random bot written against the Play protocol directly, without the SDK.

It does what any bot in any language must do and nothing more: join with its
seat token, parse each ServerMessage, answer a DecisionRequest with one of its
legal action ids, and stop at MatchOver. The service benchmark runs it beside
the bare ping-pong client so that the two runs differ only by the server (the
SDK's own cost is measured separately with real ``Agent`` s).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio
from twistarena.v1 import play_pb2, play_pb2_grpc

from ..sdk.connection import stub

Hook = Callable[[Any, float], None]


class ProtocolBotError(RuntimeError):
    """The server refused an answer or ended the stream early (a bug somewhere)."""


class ProtocolBot:
    """One seat played with uniformly random legal actions over a raw Play stream."""

    def __init__(self, channel: grpc.aio.Channel, match_id: str, token: str, seed: int,
                 on_decision: Hook, on_answer: Hook) -> None:
        self.channel = channel
        self.match_id = match_id
        self.token = token
        self.rng = random.Random(seed)
        self.on_decision = on_decision
        self.on_answer = on_answer
        self.accepted = 0
        self.answered = 0

    async def run(self) -> play_pb2.MatchOver:
        call: Any = stub(play_pb2_grpc.PlayStub, self.channel).Play()
        key = self.match_id
        choice = self.rng.choice
        message = play_pb2.AgentMessage
        answer = play_pb2.Answer
        try:
            await call.write(message(join=play_pb2.Join(
                match_id=self.match_id, seat_token=self.token, no_events=True)))
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    raise ProtocolBotError(f"{key}: stream ended before MatchOver "
                                           f"({await call.code()}: {await call.details()})")
                kind = msg.WhichOneof("msg")
                if kind == "decision":
                    req = msg.decision
                    self.on_decision(key, time.perf_counter())
                    action = choice(req.legal_actions).id
                    self.on_answer(key, time.perf_counter())
                    self.answered += 1
                    await call.write(message(answer=answer(decision_id=req.decision_id,
                                                           action_id=action)))
                elif kind == "accepted":
                    self.accepted += 1
                elif kind == "match_over":
                    over: play_pb2.MatchOver = msg.match_over
                    return over
                elif kind == "rejected":
                    raise ProtocolBotError(f"{key}: answer rejected: {msg.rejected.message}")
        finally:
            call.cancel()
