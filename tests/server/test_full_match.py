"""Full matches of every game over real gRPC with raw stubs, against real Valkey.

Every message each seat's stream (odd seats batched, even seats not) and the
spectator stream receives is scanned for cards that the recipient could not
know at that time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from grpc import aio
from twistarena import engine
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc

from tests.server.hidden import Timeline, to_dict
from tests.support.agents import Agent, create, options, play_to_end, random_chooser, run, tokens

CASES = [("tricky_twist", 4), ("tricky_twist", 3), ("twisted", 2), ("twisted", 4),
         ("twhist", 5), ("twhist", 3)]


async def _watch(channel: aio.Channel, match_id: str) -> list[ppb.WatchMessage]:
    out: list[ppb.WatchMessage] = []
    call = pgrpc.WatchStub(channel).Watch(ppb.WatchRequest(match_id=match_id))
    for _ in range(200_000):
        msg = await asyncio.wait_for(call.read(), 60)
        if msg is aio.EOF:
            break
        out.append(msg)
    return out


async def _full_match(target: str, game_id: str, n: int, seed: int) -> dict[str, Any]:
    async with aio.insecure_channel(target) as ch:
        resp = await create(ch, options(game_id, n, seed=seed))
        mid = resp.match.match_id
        assert resp.match.status == mpb.MATCH_STATUS_WAITING
        watcher = asyncio.ensure_future(_watch(ch, mid))
        agents = [Agent(ch, mid, tok) for _seat, tok in sorted(tokens(resp).items())]

        async def seat_task(i: int, agent: Agent) -> mpb.MatchResult:
            joined = await agent.join(batched=i % 2 == 1)  # both kinds of stream
            assert joined.seat == i and joined.game_id == game_id and joined.num_players == n
            return await play_to_end(agent, random_chooser(seed * 10 + i), timeout=90)

        results = await asyncio.gather(*(seat_task(i, a) for i, a in enumerate(agents)))
        spectator = await asyncio.wait_for(watcher, 30)
        replay = await mgrpc.MatchesStub(ch).GetReplay(mpb.GetReplayRequest(match_id=mid))
        for agent in agents:
            code, _details, _reason = await agent.status()
            assert code.name == "OK"
    return {"results": results, "agents": agents, "spectator": spectator, "replay": replay}


def _unbatched(received: list[ppb.ServerMessage]) -> Iterator[tuple[ppb.ServerMessage, str]]:
    """A seat's messages with what a batched stream carried (``Join.batched``) as
    messages of their own: each event is checked at its own seq, the request
    without them."""
    for msg in received:
        kind = msg.WhichOneof("msg")
        carrier = msg.decision if kind == "decision" else msg.batch if kind == "batch" else None
        if carrier is not None:
            for event in carrier.events:
                yield ppb.ServerMessage(event=event), "event"
            if kind == "decision":
                alone = ppb.ServerMessage()
                alone.decision.CopyFrom(msg.decision)
                alone.decision.ClearField("events")
                alone.decision.ClearField("accepted")
                yield alone, kind
            continue
        yield msg, kind


@pytest.mark.parametrize(("game_id", "n"), CASES)
def test_full_match_and_no_hidden_card_on_the_wire(server: Any, game_id: str, n: int) -> None:
    seed = 1000 + n
    out = run(_full_match(server.target, game_id, n, seed), timeout=180)
    replay: mpb.Replay = out["replay"]
    results: list[mpb.MatchResult] = out["results"]
    assert replay.match.status == mpb.MATCH_STATUS_FINISHED
    assert all(r == results[0] for r in results)
    assert replay.match.result == results[0]
    assert results[0].reason == mpb.END_REASON_COMPLETED

    actions = [(a.seat, a.action_id) for a in replay.actions]
    assert not any(a.timeout for a in replay.actions)
    timeline = Timeline(game_id, n, seed, {}, actions)
    final = timeline.final
    assert final.is_terminal()
    assert list(results[0].scores) == final.scores()
    assert list(results[0].places) == final.places()
    assert len(replay.events) == len(final.events)

    checked = 0
    for seat, agent in enumerate(out["agents"]):
        seqs = []
        decisions = 0
        for msg, kind in _unbatched(agent.received):
            if kind == "event":
                step = timeline.event_step[msg.event.seq]
                data = to_dict(msg.event.data)
                seqs.append(msg.event.seq)
                assert data == final.events[msg.event.seq].view(seat) or _same_numbers(
                    data, final.events[msg.event.seq].view(seat))
                leaked = timeline.event_leaks(seat, msg.event.seq, data)
            elif kind == "decision":
                decisions += 1
                req = msg.decision
                assert req.seat == seat
                step = (req.decision_id - 1) // 8
                assert (req.decision_id - 1) % 8 == seat
                data = to_dict(req)
                leaked = timeline.leaks(seat, step, data)
            else:
                continue
            assert not leaked, f"seat {seat} got hidden cards {leaked} in {kind} at {step}: {data}"
            checked += 1
        assert seqs == list(range(len(final.events))), "every event once, in order"
        assert decisions == sum(1 for s, _a in actions if s == seat)

    step = 0
    spectator_events = []
    for msg in out["spectator"]:
        kind = msg.WhichOneof("msg")
        if kind == "event":
            step = timeline.event_step[msg.event.seq]
            spectator_events.append(msg.event.seq)
            data = to_dict(msg.event.data)
            leaked = timeline.event_leaks(None, msg.event.seq, data)
        elif kind == "view":
            data = to_dict(msg.view)
            leaked = timeline.leaks(None, step, data)
        else:
            continue
        assert not leaked, f"spectator was sent hidden cards {leaked} in {kind} at {step}"
        checked += 1
    assert spectator_events == list(range(len(final.events)))
    assert out["spectator"][-1].WhichOneof("msg") == "match_over"
    assert checked > len(actions)
    # The replay events are the public view of the engine's events.
    info = engine.game(game_id)
    for ev, engine_ev in zip(replay.events, final.events, strict=True):
        assert ev.text == (info.narrate(engine_ev.view(None)) or "")


def _same_numbers(a: Any, b: Any) -> bool:
    """Struct carries numbers as doubles: compare with that in mind."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_numbers(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_numbers(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return bool(a == b)
