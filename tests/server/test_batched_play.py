"""Batched Play streams (``Join.batched``): a seat's events and the acceptance of
its answer ride on its next message, within ``SEAT_WAIT_S`` when it is not
asked; the same events and acceptances as an unbatched stream, in fewer
messages, across a reconnect too."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc.aio
import pytest
from twistarena import wire
from twistarena.clients.sdk import Agent, MatchClient
from twistarena.clients.sdk.connection import make_channel
from twistarena.clients.sdk.localbots import strategy_agent
from twistarena.server import metrics
from twistarena.server.match import events
from twistarena.server.match.events import SEAT_WAIT_S
from twistarena.v1 import match_pb2, play_pb2

from tests.clients.helpers import Acknowledgements, run
from tests.support.waiting import wait_until


async def _play(target: str, batched: bool, drop_seat: int | None = None) -> tuple[
        list[Agent], list[int], int]:
    """A seeded 4-seat Twhist match of seeded random agents; (agents, messages each
    received, messages the server sent meanwhile). ``drop_seat`` drops its stream
    once, at its 20th message, and resumes. Each acceptance is told to the
    agents' tracer exactly once, a resumed seat's too."""
    client = MatchClient(target)
    created = await client.create_match("twhist", 4, seed=11, decision_ms=60_000)
    received = [0, 0, 0, 0]
    agents: list[Agent] = []

    def counter(seat: int) -> Any:
        def count(_msg: play_pb2.ServerMessage) -> None:
            received[seat] += 1
            if seat == drop_seat and received[seat] == 20:
                agents[seat].disconnect()
        return count

    sent_before = metrics.PLAY_SENT.value
    acks = Acknowledgements()
    for token in sorted(created.seat_tokens, key=lambda t: t.seat):
        agents.append(strategy_agent("random", 3 * 101 + token.seat, server=target,
                                     match_id=created.match.match_id, token=token.token,
                                     batched=batched, on_message=counter(token.seat),
                                     tracer=acks))
    await asyncio.gather(*(a.run() for a in agents))
    assert acks.count(created.match.match_id) == sum(len(a.accepted) for a in agents)
    return agents, received, metrics.PLAY_SENT.value - sent_before


def _seen(agent: Agent) -> list[tuple[int, str, Any]]:
    return [(e.seq, e.kind, e.data) for e in agent.events]


def test_batched_seats_see_the_same_match_in_about_one_message_per_decision(
        server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A seat not asked within SEAT_WAIT_S gets a SeatBatch: how many depends on
    # how fast the machine plays. Far beyond the match's length, the bound never
    # fires, and what is counted is what batching guarantees at any speed.
    monkeypatch.setattr(events, "SEAT_WAIT_S", 600.0)

    async def scenario() -> None:
        plain, plain_received, _ = await _play(server.target, batched=False)
        batched, batched_received, server_sent = await _play(server.target, batched=True,
                                                             drop_seat=2)
        decisions = sum(len(a.accepted) for a in plain)
        assert decisions >= 60
        for old, new in zip(plain, batched, strict=True):
            # Exactly the same events (the dropped seat's too, resumed by seq) and
            # acceptances, and the same result.
            assert _seen(new) == _seen(old) and len(_seen(new)) > 100
            assert new.accepted == old.accepted
            assert new.result == old.result
        assert batched[2].reconnects == 1
        # Today's stream: an event per seat per event, a request and an acceptance
        # per decision. Batched: the requests carry nearly everything.
        assert sum(plain_received) > 3 * decisions
        # Batched: per seat a Joined, its requests, a SeatBatch before the MatchOver;
        # the dropped seat a Joined again, its request again and its backlog.
        assert sum(batched_received) <= decisions + 4 * 4 + 3, batched_received
        # The server counts what it writes (a message in flight at the drop is lost).
        assert sum(batched_received) <= server_sent <= sum(batched_received) + 3

    run(scenario())


async def _raw_seat(channel: Any, match_id: str, token: str, budget: list[int],
                    log: list[tuple[float, str, Any]]) -> None:
    """A batched raw stream that answers the first legal action while ``budget``
    lasts, logging (time, what, message) of what it writes and reads."""
    call: Any = channel.stream_stream("/twistarena.v1.Play/Play",
                                      request_serializer=wire.passthrough_serializer,
                                      response_deserializer=play_pb2.ServerMessage.FromString)()
    await call.write(play_pb2.AgentMessage(join=play_pb2.Join(
        match_id=match_id, seat_token=token, batched=True)))
    try:
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                return
            log.append((time.perf_counter(), msg.WhichOneof("msg"), msg))
            if msg.WhichOneof("msg") == "decision" and budget[0] > 0:
                budget[0] -= 1
                request = msg.decision
                log.append((time.perf_counter(), "answer", request.decision_id))
                await call.write(wire.answer_message(request.decision_id,
                                                     request.legal_actions[0].id))
    finally:
        call.cancel()


@pytest.mark.clock
def test_a_seat_not_asked_gets_its_events_and_acceptance_within_the_bound(
        server: Any) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await client.create_match("twisted", 2, seed=4, decision_ms=60_000)
        channel = make_channel(server.target)
        budget = [5]
        logs: list[list[tuple[float, str, Any]]] = [[], []]
        tasks = [asyncio.ensure_future(_raw_seat(channel, created.match.match_id, t.token,
                                                 budget, logs[t.seat]))
                 for t in created.seat_tokens]
        try:
            def settled() -> list[int] | None:
                """(holder, waiter) once the budget is spent and the waiter got a batch."""
                if budget[0]:
                    return None
                for holder, waiter in ((0, 1), (1, 0)):
                    asked = logs[holder] and logs[holder][-1][1] == "decision"
                    if asked and any(kind == "batch" for _, kind, _ in logs[waiter]):
                        return [holder, waiter]
                return None

            holder, waiter = await wait_until(
                settled, "a seat got a SeatBatch while the other held", timeout=10)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await channel.close()

        def events(log: list[tuple[float, str, Any]]) -> list[int]:
            seqs = []
            for _, kind, msg in log:
                if kind == "decision":
                    seqs += [e.seq for e in msg.decision.events]
                elif kind == "batch":
                    seqs += [e.seq for e in msg.batch.events]
            return seqs

        # The holder's request carried every event; the waiter got them all too.
        assert events(logs[holder]) == list(range(len(events(logs[holder]))))
        assert events(logs[waiter]) == events(logs[holder])
        answered = [m for _, kind, m in logs[waiter] if kind == "answer"]
        told = [m.decision.accepted.decision_id for _, kind, m in logs[waiter]
                if kind == "decision" and m.decision.HasField("accepted")]
        told += [m.batch.accepted.decision_id for _, kind, m in logs[waiter]
                 if kind == "batch" and m.batch.HasField("accepted")]
        assert told == answered
        # The batch waited for the seat's next message, but not longer than the bound.
        at = next(i for i, (_, kind, _) in enumerate(logs[waiter]) if kind == "batch")
        batch_at = logs[waiter][at][0]
        previous = max(t for t, kind, _ in logs[waiter][:at] if kind != "answer")
        last_answer = max(t for log in logs for t, kind, _ in log if kind == "answer")
        assert batch_at - previous >= SEAT_WAIT_S - 0.05
        assert batch_at - last_answer <= SEAT_WAIT_S + 1.0

    run(scenario())


def test_batched_fields_decode_as_the_contract_says() -> None:
    event = match_pb2.Event(seq=3, kind="play", text="x").SerializeToString()
    accepted = wire.accepted(41, 7)
    batch = play_pb2.ServerMessage.FromString(wire.seat_batch_message(accepted, [event, event]))
    assert batch.batch.accepted == play_pb2.AnswerAccepted(decision_id=41, action_id=7)
    assert [e.seq for e in batch.batch.events] == [3, 3]
    body = wire.decision_body(wire.match_id_field("m"), 73, 1, b"", [], 0)
    request = play_pb2.ServerMessage.FromString(
        wire.decision_message(body, 5, wire.batched_fields(accepted, [event]))).decision
    assert (request.decision_id, request.time_left_ms) == (73, 5)
    assert request.accepted.decision_id == 41 and request.events[0].kind == "play"
    narrow = wire.narrow_decision(wire.decision_message(body, 5, wire.batched_fields(b"", [])))
    assert not narrow.HasField("accepted")
