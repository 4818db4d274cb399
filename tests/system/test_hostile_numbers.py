"""No number a client sends is taken for a store loss.

A loss is detected only from what the node itself acknowledged. Here, while a
match plays on a node that voids a match on any store loss, a seat resumes
with a ``resume_from_seq`` far past the log and anyone, without a token, calls
``Watch`` with huge ``from_seq`` values and ``Join``s with made-up tokens: the
match must finish COMPLETED, no seat may get ``Rewound``, the loss metrics
must stay at 0 and the node must log no ``store_loss``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc

from tests.clients.helpers import replay_problems, run
from tests.support import agents as raw
from tests.system.faults import metric, records, serve, start_matches

#: Past the end of any log; the last is the largest uint64.
HUGE = (1_000_000, 2**63, 2**64 - 1)


async def _hostile_watch(channel: grpc.aio.Channel, match_id: str, from_seq: int) -> list[str]:
    """A Watch from far past the log, by anyone: the kinds of the messages it gets
    while the match waits for seat 0 (the view, and nothing else)."""
    call = pgrpc.WatchStub(channel).Watch(ppb.WatchRequest(match_id=match_id,
                                                           from_seq=from_seq))
    kinds: list[str] = []
    try:
        for _ in range(2):
            try:
                msg = await asyncio.wait_for(call.read(), 0.5)
            except TimeoutError:
                break  # nothing more while seat 0 holds the match
            if msg is grpc.aio.EOF:
                break
            kinds.append(msg.WhichOneof("msg"))
    finally:
        call.cancel()
    return kinds


async def _resuming_seat(channel: grpc.aio.Channel, match_id: str, token: str,
                         played: asyncio.Event, resume: asyncio.Event) -> list[str]:
    """Seat 0 played by hand: a few answers (then ``played``), then, on
    ``resume``, a resume from far past the log, then play to the end. The kinds
    of every message it got."""
    choose = raw.random_chooser(5)
    seat = raw.Agent(channel, match_id, token)
    await seat.join()
    for _ in range(3):
        msg = await seat.expect("decision", timeout=20)
        await seat.answer(msg.decision.decision_id, choose(msg.decision))
        await seat.expect("accepted", timeout=20)
    played.set()
    await resume.wait()
    seat.cancel()
    again = raw.Agent(channel, match_id, token)
    await again.join(resume_from_seq=HUGE[0])
    result = await raw.play_to_end(again, choose, timeout=60)
    assert result.reason, result
    return [m.WhichOneof("msg") for m in seat.received + again.received]


async def _scenario() -> dict[str, Any]:
    node = serve("--on-store-loss", "void")
    tasks: list[asyncio.Task[Any]] = []
    try:
        client, created, agents, tasks = await start_matches(node.target, 1, seed=410,
                                                            game=("twhist", 3), delay=0.01)
        match = created[0]
        mid = match.match.match_id
        seat0 = next(t.token for t in match.seat_tokens if t.seat == 0)
        # Seat 0 is played by hand below, not by its SDK agent.
        by_hand = next(i for i, a in enumerate(agents) if a.token == seat0)
        tasks[by_hand].cancel()
        others = [a for a in agents if a.token != seat0]
        playing = [t for i, t in enumerate(tasks) if i != by_hand]
        channel = grpc.aio.insecure_channel(node.target)
        played, resume = asyncio.Event(), asyncio.Event()
        seat_task = asyncio.ensure_future(_resuming_seat(channel, mid, seat0, played, resume))
        await asyncio.wait_for(played.wait(), 30)
        watched = [await _hostile_watch(channel, mid, seq) for seq in HUGE]
        refused = []
        for seq in HUGE:
            intruder = raw.Agent(channel, mid, "st_made_up")
            try:
                await intruder.join(resume_from_seq=seq)
            except AssertionError:
                refused.append((await intruder.status())[2])
        resume.set()
        seat_kinds = await seat_task
        results = await asyncio.wait_for(asyncio.gather(*playing), 60)
        replay = await client.get_replay(mid)
        await channel.close()
        return {"watched": watched, "refused": refused, "seat_kinds": seat_kinds,
                "results": results, "others": others, "replay": replay,
                "losses": metric(node, "twistarena_store_losses_total"),
                "lost": metric(node, "twistarena_lost_actions_total"),
                "logged": [r for r in records(node) if r.get("event") == "store_loss"]}
    finally:
        for task in tasks:
            task.cancel()
        node.cleanup()


def test_no_client_number_changes_a_match_or_the_loss_metrics() -> None:
    out = run(_scenario(), timeout=120)
    for kinds in out["watched"]:
        assert kinds and set(kinds) <= {"view", "event"}, kinds
    assert out["refused"] == ["BAD_TOKEN"] * len(HUGE)
    assert "rewound" not in out["seat_kinds"]
    assert all(not a.rewinds for a in out["others"])
    assert all(r.reason == "COMPLETED" for r in out["results"]), out["results"]
    assert out["replay"].match.result.reason == 1  # END_REASON_COMPLETED
    assert replay_problems(out["replay"]) == []
    assert out["losses"] == 0 and out["lost"] == 0
    assert out["logged"] == []
