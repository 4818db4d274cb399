"""The over-the-wire half of the differential leak test.

tests/engine/test_leak_differential.py shows that no byte the engine gives a
seat or a spectator depends on a card hidden from it. Here real matches run
on a real server with every seat a raw-stub agent and a spectator watching;
each message received is compared with what the engine gives that recipient
(its events in its view, the observation and legal actions of each decision,
the public view). They are equal, so the wire carries nothing the engine
would not give, and the differential property holds for the wire too.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from grpc import aio
from twistarena import engine, wire
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc

from tests.support.agents import Agent, create, options, play_to_end, random_chooser, run, tokens

#: (game, players, game options, seeds): a few matches of each game.
RUNS = [
    ("tricky_twist", 4, {}, (1, 2)),
    ("twisted", 2, {"expert": True}, (3, 4, 5)),
    ("twhist", 3, {}, (6, 7)),
]
SEAT_BITS = 8


@pytest.mark.parametrize(("game_id", "players", "game_options", "seeds"), RUNS)
def test_every_recipient_gets_exactly_its_engine_view(server: Any, game_id: str, players: int,
                                                      game_options: dict[str, Any],
                                                      seeds: tuple[int, ...]) -> None:
    async def one(ch: aio.Channel, seed: int) -> None:
        created = await create(ch, options(game_id, players, seed=seed, decision_ms=30_000,
                                           game_options=game_options))
        mid = created.match.match_id
        # A spectator with a message per event and view, and a batched one.
        watches = [pgrpc.WatchStub(ch).Watch(ppb.WatchRequest(match_id=mid, batched=b))
                   for b in (False, True)]
        got: dict[int, list[ppb.ServerMessage]] = {s: [] for s in range(players)}
        agents = {s: Agent(ch, mid, t) for s, t in tokens(created).items()}
        for agent in agents.values():
            await agent.join()
        await asyncio.gather(*(play_to_end(agent, random_chooser(seed * 10 + s),
                                           on_message=got[s].append)
                               for s, agent in agents.items()))
        seen = [[m async for m in watch] for watch in watches]
        replay = await mgrpc.MatchesStub(ch).GetReplay(mpb.GetReplayRequest(match_id=mid))
        assert replay.match.seed == seed
        actions = [(a.seat, a.action_id) for a in replay.actions]
        _check(game_id, players, seed, game_options, actions, got, seen)

    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            for seed in seeds:
                await one(ch, seed)

    run(main(), 240)


def _check(game_id: str, players: int, seed: int, game_options: dict[str, Any],
           actions: list[tuple[int, int]], got: dict[int, list[ppb.ServerMessage]],
           seen: list[list[ppb.WatchMessage]]) -> None:
    info = engine.game(game_id)
    states = [engine.make(game_id, players, seed, game_options)]
    for seat, action in actions:
        state = states[-1].clone()
        state.apply(seat, action)
        states.append(state)
    final = states[-1]
    for seat, messages in got.items():
        events = [m.event for m in messages if m.WhichOneof("msg") == "event"]
        assert events == [wire.event(i, ev.view(seat), info)
                          for i, ev in enumerate(final.events)], f"seat {seat}'s events"
        decisions = [m.decision for m in messages if m.WhichOneof("msg") == "decision"]
        assert decisions
        for decision in decisions:
            opened_at = (decision.decision_id - seat - 1) // SEAT_BITS
            state = states[opened_at]
            assert decision.observation == wire.observation(game_id, state.observation(seat))
            assert list(decision.legal_actions) == [
                ppb.LegalAction(id=a.id, label=a.label, payload=wire.struct(a.payload))
                for a in state.legal_actions(seat)]
    public = [wire.public_view(game_id, s.public_view()) for s in states]
    for spectator in seen:
        spectator_events = [e for m in spectator for e in _events(m)]
        assert spectator_events == [wire.event(i, ev.view(None), info)
                                    for i, ev in enumerate(final.events)]
        views = [v for m in spectator for v in _views(m)]
        assert views and all(view in public for view in views)
        assert views[-1] == public[-1]


def _events(message: ppb.WatchMessage) -> list[mpb.Event]:
    kind = message.WhichOneof("msg")
    return [message.event] if kind == "event" else list(
        message.batch.events) if kind == "batch" else []


def _views(message: ppb.WatchMessage) -> list[Any]:
    kind = message.WhichOneof("msg")
    if kind == "batch" and message.batch.HasField("view"):
        return [message.batch.view]
    return [message.view] if kind == "view" else []
