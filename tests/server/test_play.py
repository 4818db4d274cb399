"""The Play stream: in-band rejections, protocol errors, takeover, resume, clocks."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from grpc import aio
from prometheus_client import REGISTRY
from twistarena import engine
from twistarena.server.match.timecontrol import fallback_action
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb

from tests.support.agents import (
    Agent,
    create,
    options,
    play_one,
    play_to_end,
    random_chooser,
    run,
    tokens,
)
from tests.support.waiting import wait_until

GAME = "twisted"


async def _started(ch: aio.Channel, seed: int, n: int = 2, **kw: Any) -> tuple[
        str, list[Agent], int]:
    """A running match with every seat joined; returns (id, agents, first seat to act)."""
    created = await create(ch, options(GAME, n, seed=seed, **kw))
    mid = created.match.match_id
    agents = [Agent(ch, mid, tok) for _s, tok in sorted(tokens(created).items())]
    for agent in agents:
        await agent.join()
    first = engine.make(GAME, n, seed).to_act()[0]
    return mid, agents, first


async def _actions(ch: aio.Channel, mid: str) -> int:
    got = await mgrpc.MatchesStub(ch).GetMatch(mpb.GetMatchRequest(match_id=mid))
    return int(got.actions)


def test_illegal_duplicate_stale_and_unknown_answers_are_rejected_in_band(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            mid, agents, first = await _started(ch, seed=11)
            me, other = agents[first], agents[1 - first]
            req = (await me.expect("decision")).decision
            legal = [a.id for a in req.legal_actions]
            assert legal == sorted(legal) and req.time_left_ms > 0
            assert req.observation.WhichOneof("game") == GAME

            # Illegal: in-band, with the engine's reason; nothing changes.
            await me.answer(req.decision_id, 9999)
            rej = (await me.expect("rejected")).rejected
            assert rej.reason == ppb.ILLEGAL_ACTION and rej.may_retry
            assert rej.decision_id == req.decision_id and rej.message
            assert await _actions(ch, mid) == 0

            # Another seat cannot answer this seat's decision.
            await other.answer(req.decision_id, legal[0])
            rej = (await other.expect("rejected")).rejected
            assert rej.reason == ppb.UNKNOWN_DECISION and not rej.may_retry
            assert await _actions(ch, mid) == 0

            # A retry of the same decision is accepted.
            await me.answer(req.decision_id, legal[0])
            acc = (await me.expect("accepted")).accepted
            assert (acc.decision_id, acc.action_id) == (req.decision_id, legal[0])
            assert await _actions(ch, mid) == 1

            # The same answer again: duplicate.
            await me.answer(req.decision_id, legal[0])
            rej = (await me.expect("rejected")).rejected
            assert rej.reason == ppb.DUPLICATE_ANSWER
            # A decision id never sent: unknown.
            await me.answer(req.decision_id + 8 * 1000, legal[0])
            assert (await me.expect("rejected")).rejected.reason == ppb.UNKNOWN_DECISION
            assert await _actions(ch, mid) == 1

            # Play on until `me` has a newer settled decision: the first one is stale.
            state = engine.make(GAME, 2, 11)
            state.apply(first, legal[0])
            choose = random_chooser(3)
            by_seat = {first: me, 1 - first: other}
            me_again = False
            played = 1
            while not me_again:
                seat = state.to_act()[0]
                await play_one(by_seat[seat], seat, choose, state)
                played += 1
                me_again = seat == first
            await me.answer(req.decision_id, legal[0])
            rej = (await me.expect("rejected")).rejected
            assert rej.reason == ppb.STALE_DECISION
            assert await _actions(ch, mid) == played
            # The streams are alive: the match goes on to its end.
            results = await asyncio.gather(
                play_to_end(me, random_chooser(1)), play_to_end(other, random_chooser(2)))
            assert results[0] == results[1]

    run(main())


def test_late_answer_is_rejected_and_the_fallback_recorded(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            mid, agents, first = await _started(ch, seed=12, decision_ms=300)
            me = agents[first]
            req = (await me.expect("decision")).decision
            assert 0 < req.time_left_ms <= 300
            # The deadline passes unanswered: the fallback is recorded.
            await wait_until(lambda: _actions(ch, mid), "the fallback is recorded")
            await me.answer(req.decision_id, req.legal_actions[0].id)
            rej = (await me.expect("rejected")).rejected
            assert rej.reason == ppb.LATE_ANSWER and not rej.may_retry
            got = await mgrpc.MatchesStub(ch).GetMatch(mpb.GetMatchRequest(match_id=mid))
            assert got.seats[first].timeouts >= 1
            # The action log is public once the match is over.
            await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))
            replay = await mgrpc.MatchesStub(ch).GetReplay(mpb.GetReplayRequest(match_id=mid))
            assert replay.actions[0].timeout and replay.actions[0].seat == first
            legal = [a.id for a in req.legal_actions]
            assert replay.actions[0].action_id == fallback_action(12, req.decision_id, legal)

    run(main())


def test_protocol_violations_end_the_stream_with_status_and_reason(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, options(GAME, 2, seed=13))
            mid, tok = created.match.match_id, tokens(created)
            cases: list[tuple[list[ppb.AgentMessage], tuple[Any, ...], grpc.StatusCode, str]] = [
                ([ppb.AgentMessage(answer=ppb.Answer(decision_id=1, action_id=1))], (),
                 grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE"),
                ([ppb.AgentMessage()], (), grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE"),
                ([ppb.AgentMessage(join=ppb.Join(match_id=mid, seat_token="forged"))], (),
                 grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN"),
                ([ppb.AgentMessage(join=ppb.Join(match_id=mid))], (),
                 grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN"),
                ([ppb.AgentMessage(join=ppb.Join(match_id="no-such-match", seat_token=tok[0]))],
                 (), grpc.StatusCode.NOT_FOUND, "UNKNOWN_MATCH"),
                ([ppb.AgentMessage(join=ppb.Join(match_id=""))], (),
                 grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE"),
                # A token of another match does not open this one.
                ([ppb.AgentMessage(join=ppb.Join(match_id=mid, seat_token=tok[1] + "x"))], (),
                 grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN"),
            ]
            for msgs, metadata, code, reason in cases:
                agent = Agent(ch, mid, "", metadata=metadata).open()
                for msg in msgs:
                    await agent.send(msg)
                assert await agent.recv() is None
                got = await agent.status()
                assert (got[0], got[2]) == (code, reason), (msgs, got)
                assert got[1], "a message a person can act on"

            # The token may come as bearer metadata; a second Join is a violation.
            agent = Agent(ch, mid, "", metadata=(("authorization", f"Bearer {tok[1]}"),))
            joined = await agent.join(token="")
            assert joined.seat == 1 and joined.match_id == mid
            await agent.send(ppb.AgentMessage(join=ppb.Join(match_id=mid, seat_token=tok[1])))
            await agent.drain_to_end()
            code, _details, reason = await agent.status()
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE")
            # An empty message after Join too.
            agent = Agent(ch, mid, tok[1])
            await agent.join()
            await agent.send(ppb.AgentMessage())
            await agent.drain_to_end()
            assert (await agent.status())[2] == "MALFORMED_MESSAGE"
            # None of this changed the match.
            assert await _actions(ch, mid) == 0
            got = await mgrpc.MatchesStub(ch).GetMatch(mpb.GetMatchRequest(match_id=mid))
            assert got.status == mpb.MATCH_STATUS_WAITING
            await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))

    run(main())


def test_second_stream_takes_over_and_gets_the_open_decision(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            mid, agents, first = await _started(ch, seed=14)
            old = agents[first]
            req = (await old.expect("decision")).decision
            new = Agent(ch, mid, old.token)
            await new.join(no_events=True)
            again = (await new.expect("decision")).decision
            assert again.decision_id == req.decision_id
            assert [a.id for a in again.legal_actions] == [a.id for a in req.legal_actions]
            await old.drain_to_end()
            code, _details, reason = await old.status()
            assert (code, reason) == (grpc.StatusCode.ABORTED, "TAKEN_OVER")
            await new.answer(again.decision_id, again.legal_actions[0].id)
            assert (await new.expect("accepted")).accepted.decision_id == req.decision_id
            assert not any(m.WhichOneof("msg") == "event" for m in new.received)
            await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))
            assert (await new.expect("match_over")).match_over.result.reason == \
                mpb.END_REASON_CANCELLED

    run(main())


def test_two_runners_never_play_one_seat_the_older_hand_out_is_fenced_off(server: Any) -> None:
    """A runner's seat was handed to a second runner (the first one's holds lapsed):
    the second takes the seat over, and the first, coming back with its older
    hand-out (its stream dropped and its agent reconnects), is refused for good."""
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            mid, agents, first = await _started(ch, seed=15)
            token = agents[first].token
            old_runner = Agent(ch, mid, token)
            await old_runner.join(no_events=True, handout=1)
            req = (await old_runner.expect("decision")).decision
            new_runner = Agent(ch, mid, token)
            await new_runner.join(no_events=True, handout=2)
            again = (await new_runner.expect("decision")).decision
            assert again.decision_id == req.decision_id
            await old_runner.drain_to_end()
            assert (await old_runner.status())[::2] == (grpc.StatusCode.ABORTED, "TAKEN_OVER")
            # The old runner's agent joins again: refused, the seat stays the new one's.
            back = Agent(ch, mid, token)
            await back.send(ppb.AgentMessage(join=ppb.Join(
                match_id=mid, seat_token=token, no_events=True, handout=1)))
            await back.drain_to_end()
            code, details, reason = await back.status()
            assert (code, reason) == (grpc.StatusCode.ABORTED, "TAKEN_OVER")
            assert "handed to another runner" in details
            assert not any(m.WhichOneof("msg") == "joined" for m in back.received)
            await new_runner.answer(again.decision_id, again.legal_actions[0].id)
            assert (await new_runner.expect("accepted")).accepted.decision_id == req.decision_id
            await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))

    run(main())


def test_a_stream_that_finds_the_runner_as_it_stops_gets_a_retryable_status(
        server: Any) -> None:
    """A Join that reached the runner just before it stopped (drain, lost lease)
    must end like the runner's other streams, not wait for messages that never come."""
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            mid, agents, _first = await _started(ch, seed=21)
            runner = server.app.hub.get(mid)
            server.call(runner.lock.acquire())  # the runner is busy
            before = REGISTRY.get_sample_value("twistarena_play_streams") or 0.0
            late = Agent(ch, mid, agents[0].token)
            await late.send(ppb.AgentMessage(join=ppb.Join(match_id=mid,
                                                           seat_token=agents[0].token)))

            async def waiting_on_the_runner() -> bool:
                return (REGISTRY.get_sample_value("twistarena_play_streams") or 0.0) > before

            await wait_until(waiting_on_the_runner, "the late stream reached the runner")

            async def stop_then_release() -> None:
                runner.stop(grpc.StatusCode.UNAVAILABLE, "NOT_OWNER",
                            "this server no longer owns the match; reconnect", redirect=False)
                runner.lock.release()

            server.call(stop_then_release())
            await late.drain_to_end()
            assert (await late.status())[::2] == (grpc.StatusCode.UNAVAILABLE, "NOT_OWNER")
            assert not any(m.WhichOneof("msg") == "joined" for m in late.received)
            await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))

    run(main())


def test_disconnect_and_resume_within_grace(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            mid, agents, first = await _started(ch, seed=15, grace_ms=10_000)
            a, b = agents[first], agents[1 - first]
            by_seat = {first: a, 1 - first: b}
            state = engine.make(GAME, 2, 15)
            choose = random_chooser(5)

            async def step() -> None:
                seat = state.to_act()[0]
                d = (await by_seat[seat].expect("decision")).decision
                action = choose(d)
                await by_seat[seat].answer(d.decision_id, action)
                await by_seat[seat].expect("accepted")
                state.apply(seat, action)

            await step()
            while state.to_act()[0] == first:
                await step()
            d = (await b.expect("decision")).decision
            seen = [m.event.seq for m in a.received if m.WhichOneof("msg") == "event"]
            a.cancel()  # a drops

            async def dropped() -> mpb.Match | None:
                got = await mgrpc.MatchesStub(ch).GetMatch(mpb.GetMatchRequest(match_id=mid))
                return None if got.seats[first].connected else got

            got = await wait_until(dropped, "the server sees the seat's stream end")
            assert not got.seats[first].connected and got.seats[1 - first].connected
            action = choose(d)
            await b.answer(d.decision_id, action)
            await b.expect("accepted")
            state.apply(1 - first, action)
            while state.to_act()[0] != first:
                await step()
            # a comes back, resuming after the events it had seen.
            resumed = Agent(ch, mid, a.token)
            await resumed.join(resume_from_seq=seen[-1] + 1)
            pending = (await resumed.expect("decision")).decision
            events = [m.event.seq for m in resumed.received if m.WhichOneof("msg") == "event"]
            assert events and events[0] == seen[-1] + 1
            assert events == list(range(seen[-1] + 1, events[-1] + 1))
            # Reconnecting again re-sends the same open decision.
            again = Agent(ch, mid, a.token)
            await again.join(resume_from_seq=10_000)
            assert (await again.expect("decision")).decision.decision_id == pending.decision_id
            await again.answer(pending.decision_id, choose(pending))
            await again.expect("accepted")
            await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))
            replay = await mgrpc.MatchesStub(ch).GetReplay(mpb.GetReplayRequest(match_id=mid))
            assert not any(x.timeout for x in replay.actions)

    run(main())


def test_timeout_fallback_is_seeded_and_reproducible(server: Any) -> None:
    async def one(ch: aio.Channel) -> list[tuple[int, int, bool]]:
        opts = options(GAME, 2, seed=77, decision_ms=10, grace_ms=1,
                       game_options={"rounds": 1})
        created = await create(ch, opts)
        mid = created.match.match_id
        for tok in tokens(created).values():
            agent = Agent(ch, mid, tok)
            await agent.join(no_events=True)
            agent.cancel()  # silent agents: every decision times out
        stub = mgrpc.MatchesStub(ch)

        async def finished() -> mpb.Match | None:
            got = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid))
            return got if got.status == mpb.MATCH_STATUS_FINISHED else None

        got = await wait_until(finished, "every decision timed out to the end")
        assert sum(s.timeouts for s in got.seats) == got.actions
        replay = await stub.GetReplay(mpb.GetReplayRequest(match_id=mid))
        return [(a.seat, a.action_id, a.timeout) for a in replay.actions]

    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            first = await one(ch)
            second = await one(ch)
        assert first == second and all(t for _s, _a, t in first)
        # Each fallback is the seeded choice for (seed, decision id).
        state = engine.make(GAME, 2, 77, {"rounds": 1})
        for step, (seat, action, _t) in enumerate(first):
            legal = list(state.legal_action_ids(seat))
            assert action == fallback_action(77, step * 8 + seat + 1, legal)
            state.apply(seat, action)
        assert state.is_terminal()

    run(main())


def test_forfeit_after_missed_decisions(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            mid, agents, first = await _started(
                ch, seed=16, n=3, decision_ms=500, fallback=mpb.FALLBACK_FORFEIT,
                forfeit_after=2)
            idle = (first + 1) % 3
            players = [a for s, a in enumerate(agents) if s != idle]
            results = await asyncio.gather(*(play_to_end(a, random_chooser(i), timeout=30)
                                             for i, a in enumerate(players)))
            result = results[0]
            assert result.reason == mpb.END_REASON_FORFEIT
            assert result.places[idle] == 3
            assert idle not in result.winners and result.winners
            assert str(idle) in result.detail
            replay = await mgrpc.MatchesStub(ch).GetReplay(mpb.GetReplayRequest(match_id=mid))
            assert [a.seat for a in replay.actions if a.timeout] == [idle]
            assert replay.match.status == mpb.MATCH_STATUS_FINISHED
            # The detail's count and SeatInfo.timeouts agree: the forfeiting miss counts.
            assert "after 2 missed decisions" in result.detail
            assert [s.timeouts for s in replay.match.seats] == [
                2 if s == idle else 0 for s in range(3)]
            got = await mgrpc.MatchesStub(ch).GetMatch(mpb.GetMatchRequest(match_id=mid))
            assert got.seats[idle].timeouts == 2

    run(main())


def test_simultaneous_decisions_are_requested_at_once(server: Any) -> None:
    """Tricky Twist reserve choice: every seat decides at the same time."""
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, options("tricky_twist", 3, seed=17))
            mid = created.match.match_id
            agents = [Agent(ch, mid, t) for _s, t in sorted(tokens(created).items())]
            for agent in agents:
                await agent.join(no_events=True)
            state = engine.make("tricky_twist", 3, 17)
            assert len(state.to_act()) == 3
            reqs = [(await a.expect("decision")).decision for a in agents]
            assert {r.decision_id for r in reqs} == {s + 1 for s in range(3)}
            # Seat 2 answers; seats 0 and 1 keep their open decisions (same ids).
            await agents[2].answer(reqs[2].decision_id, reqs[2].legal_actions[0].id)
            await agents[2].expect("accepted")
            nxt = (await agents[2].expect("decision")).decision
            assert nxt.decision_id == 1 * 8 + 2 + 1
            await agents[0].answer(reqs[0].decision_id, reqs[0].legal_actions[0].id)
            assert (await agents[0].expect("accepted")).accepted.decision_id == 1
            await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))

    run(main())


@pytest.mark.clock
def test_a_seat_keeps_one_deadline_timer_and_each_decision_gets_its_whole_clock(
        server: Any) -> None:
    """A seat asked decision after decision keeps its deadline timer (none made and
    cancelled per decision), and a timer kept from an earlier decision never times
    out a later one before the later one's own deadline."""
    clock_s = 2.0

    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, options(GAME, 2, seed=21, decision_ms=int(clock_s * 1000),
                                               house=["", "random"]))
            mid = created.match.match_id
            me = Agent(ch, mid, tokens(created)[0])
            await me.join(no_events=True)
            seat = server.app.hub.get(mid).seats[0]
            first = (await me.expect("decision")).decision
            timer = seat.timer
            assert timer is not None
            # Answered well into its clock: the kept timer fires that much before
            # the next decision's deadline.
            await asyncio.sleep(clock_s / 2)
            await me.answer(first.decision_id, first.legal_actions[0].id)
            second = (await me.expect("decision", timeout=20)).decision
            asked = asyncio.get_running_loop().time()
            assert seat.timer is timer
            third = (await me.expect("decision", timeout=20)).decision  # after the timeout
            waited = asyncio.get_running_loop().time() - asked
            assert third.decision_id != second.decision_id
            assert waited >= clock_s - 0.2, f"timed out after {waited:.2f} s"
            got = await mgrpc.MatchesStub(ch).GetMatch(mpb.GetMatchRequest(match_id=mid))
            assert got.seats[0].timeouts == 1

    run(main())
