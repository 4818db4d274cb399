"""The yardstick for the service benchmark: bare grpc.aio bidi ping-pong.

Same shape as real play, minus the game service: ``matches`` groups of
``players`` streams; in each group one stream at a time is sent a "decision"
of the real DecisionRequest size, answers with a message of the real Answer
size, gets an "accepted" of the real AnswerAccepted size, and the next stream
of the group is asked. What the real server achieves relative to this is the
cost of the game service itself (engine, Redis, bookkeeping).

With ``--game G`` the server does, per decision, exactly the engine work of
the real service and nothing else: it applies a random legal action to a
real engine state and sends the next seat a real DecisionRequest (its
observation and legal actions encoded as the service encodes them). When the
seat that answered is the one asked next (a fifth to a quarter of decisions:
a trick's winner leads), its acceptance rides along in that request, as the
service delivers it to a batched seat, instead of two messages written one
after the other on one stream. No Redis, no runner bookkeeping, no
validation: the most any server built on this engine and grpc.aio can do,
between the bare yardstick and the service.

Run as a process: ``python -m twistarena.tools.pingpong --players 4
--decision-bytes N --accepted-bytes K [--game G]`` prints ``listening on HOST:PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import struct
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import grpc.aio
from twistarena import engine, wire

METHOD = "/twistarena.bench.PingPong/Play"
DECISION, ACCEPTED, ANSWER, JOIN = b"D", b"A", b"R", b"J"


def _identity(data: bytes) -> bytes:
    return data


def tune_gc(young: int = 50_000) -> None:
    """Collect cyclic garbage rarely, as ``twistarena serve`` does: both sides of
    either benchmark run with the same collector settings."""
    gc.collect()
    gc.freeze()
    _gen0, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(young, gen1, gen2)


class EngineGroup:
    """One group's real game: who is asked next and the request bytes to send.

    Every answer is replaced by a random legal action (the client's bytes mean
    nothing); a finished game starts again with the next seed."""

    def __init__(self, game_id: str, players: int, seed: int) -> None:
        self.game_id = game_id
        self.players = players
        self.seed = seed
        self.rng = random.Random(seed)
        self.match_id = wire.match_id_field(f"pingpong-{seed}")
        self.decisions = 0
        #: The id of the request last sent (its answer is acknowledged with it).
        self.decision_id = 0
        self._new_game()

    def _new_game(self) -> None:
        self.seed += 1
        self.state = engine.make(self.game_id, self.players, self.seed, {})
        self.observations = wire.ObservationEncoder(self.game_id)
        self.vocabulary = wire.match_vocabulary(self.game_id, self.players,
                                                self.state.options)

    def request(self, accepted: bytes = b"") -> tuple[int, bytes]:
        """The seat to ask next and its DecisionRequest as ServerMessage bytes, with
        ``accepted`` (a serialized AnswerAccepted, empty: none) riding along."""
        state = self.state
        seat = state.to_act()[0]
        self.decisions += 1
        self.decision_id = self.decisions * 8 + seat + 1
        body = wire.decision_body(
            self.match_id, self.decision_id, seat,
            self.observations.encode_seat(state, seat),
            self.vocabulary.encoded(state.vocabulary_version(), state.legal_action_ids(seat),
                                    state.describe, seat), 0)
        return seat, wire.request_message(body, 5000, accepted)

    def answered(self, seat: int) -> int:
        """Apply a random legal action for ``seat``; its id."""
        state = self.state
        action = self.rng.choice(state.legal_action_ids(seat))
        state.apply(seat, action)
        if state.is_terminal():
            self._new_game()
        return action

    def next_after(self, seat: int) -> tuple[int, bytes, bytes]:
        """``seat`` answered: the seat to ask next, its request and the acceptance
        sent to ``seat`` apart (empty when ``seat`` is asked next: the acceptance
        rides along in its request, as the service delivers it to a batched seat,
        not as two messages written one after the other on one stream)."""
        decision_id = self.decision_id
        action = self.answered(seat)
        if self.state.to_act()[0] == seat:
            return (*self.request(wire.accepted(decision_id, action)), b"")
        return (*self.request(), wire.accepted_message(decision_id, action))


class PingPongServer:
    """Asks the streams of each group in turn, one outstanding request per group."""

    def __init__(self, players: int, decision_bytes: int, accepted_bytes: int,
                 game_id: str = "") -> None:
        self.players = players
        self.decision = DECISION + b"x" * max(0, decision_bytes - 1)
        self.accepted = ACCEPTED + b"x" * max(0, accepted_bytes - 1)
        self.groups: dict[int, dict[int, asyncio.Queue[bytes]]] = {}
        self.game_id = game_id
        self.games: dict[int, EngineGroup] = {}

    async def play(self, requests: AsyncIterator[bytes],
                   context: grpc.aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
        first = await requests.__anext__()
        group, seat = struct.unpack("!II", first[1:9])
        outbox: asyncio.Queue[bytes] = asyncio.Queue()
        members = self.groups.setdefault(group, {})
        members[seat] = outbox
        game = None
        if self.game_id:
            game = self.games.get(group)
            if game is None:
                game = self.games[group] = EngineGroup(self.game_id, self.players, group * 1000)
        if len(members) == self.players:
            if game is None:
                members[0].put_nowait(self.decision)
            else:
                opener, opening = game.request()
                members[opener].put_nowait(opening)

        async def read() -> None:
            async for _answer in requests:
                if game is None:
                    outbox.put_nowait(self.accepted)
                    nxt = members.get((seat + 1) % self.players)
                    if nxt is not None:
                        nxt.put_nowait(self.decision)
                    continue
                who, request, acceptance = game.next_after(seat)
                if acceptance:
                    outbox.put_nowait(acceptance)
                target = members.get(who)
                if target is not None:
                    target.put_nowait(request)

        reader = asyncio.get_running_loop().create_task(read())
        try:
            while True:
                yield await outbox.get()
        finally:
            reader.cancel()
            members.pop(seat, None)
            if not members:
                self.groups.pop(group, None)


async def serve(players: int, decision_bytes: int, accepted_bytes: int, port: int,
                game_id: str = "") -> None:
    impl = PingPongServer(players, decision_bytes, accepted_bytes, game_id)
    handler = grpc.method_handlers_generic_handler("twistarena.bench.PingPong", {
        "Play": grpc.stream_stream_rpc_method_handler(
            impl.play, request_deserializer=_identity, response_serializer=_identity),
    })
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((handler,))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print(f"listening on 127.0.0.1:{bound}", flush=True)
    await server.wait_for_termination()


class PingPongClient:
    """One stream of a group: answers every decision with an answer-sized message."""

    def __init__(self, channel: grpc.aio.Channel, group: int, seat: int, answer_bytes: int,
                 on_decision: Callable[[int, float], None],
                 on_answer: Callable[[int, float], None],
                 decision_prefix: bytes = DECISION) -> None:
        self.call: Any = channel.stream_stream(
            METHOD, request_serializer=_identity, response_deserializer=_identity)()
        self.group = group
        self.seat = seat
        self.answer = ANSWER + b"x" * max(0, answer_bytes - 1)
        self.on_decision = on_decision
        self.on_answer = on_answer
        #: First byte of a decision message (a real ServerMessage's with ``--game``).
        self.decision_prefix = decision_prefix

    async def run(self, stop: asyncio.Event) -> None:
        call = self.call
        await call.write(JOIN + struct.pack("!II", self.group, self.seat))
        try:
            while not stop.is_set():
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    return
                if msg[:1] == self.decision_prefix:
                    self.on_decision(self.group, time.perf_counter())
                    self.on_answer(self.group, time.perf_counter())
                    await call.write(self.answer)
        finally:
            call.cancel()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--decision-bytes", type=int, default=1000)
    parser.add_argument("--accepted-bytes", type=int, default=8)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--game", default="", help="send real requests of this game")
    args = parser.parse_args(argv)
    tune_gc()
    coro = serve(args.players, args.decision_bytes, args.accepted_bytes, args.port, args.game)
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
    else:
        uvloop.run(coro)
    return 0


if __name__ == "__main__":
    sys.exit(main())
