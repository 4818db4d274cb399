"""``Answer.fallback``: an agent with no answer has its decision settled by the match's
fallback at once, exactly as at a missed deadline (the same seeded action, logged
as a timeout, counted toward a forfeit), and a fallback asked for a decision that
is not open is refused like any answer."""

from __future__ import annotations

from typing import Any

from grpc import aio
from twistarena.server.match.timecontrol import fallback_action
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb

from tests.support.agents import Agent, create, options, run, tokens

GAME = "twisted"


async def _fallback(agent: Agent, decision_id: int) -> None:
    await agent.send(ppb.AgentMessage(answer=ppb.Answer(decision_id=decision_id, action_id=-5,
                                                        fallback=True)))


async def _next_of(agent: Agent, kinds: tuple[str, ...]) -> ppb.ServerMessage:
    for _ in range(1000):
        msg = await agent.recv(20)
        assert msg is not None, "the stream ended"
        if msg.WhichOneof("msg") in kinds:
            return msg
    raise AssertionError(f"none of {kinds} came")


def test_fallback_settles_the_decision_now_as_a_timeout(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            # A deadline of an hour: only the asked-for fallback can settle it in time.
            created = await create(ch, options(GAME, 2, seed=13, decision_ms=3_600_000,
                                               house=["", "random"]))
            mid = created.match.match_id
            me = Agent(ch, mid, tokens(created)[0])
            await me.join(no_events=True)
            req = (await me.expect("decision")).decision
            legal = [a.id for a in req.legal_actions]
            await _fallback(me, req.decision_id)
            following = (await me.expect("decision", timeout=20)).decision
            assert following.decision_id != req.decision_id
            assert not [m for m in me.received if m.WhichOneof("msg") in ("accepted", "rejected")]

            # The settled decision cannot be asked for again; an unknown one never could.
            await _fallback(me, req.decision_id)
            stale = (await me.expect("rejected")).rejected
            assert stale.reason in (ppb.STALE_DECISION, ppb.LATE_ANSWER)
            await _fallback(me, following.decision_id + 1)
            unknown = (await me.expect("rejected")).rejected
            assert unknown.reason == ppb.UNKNOWN_DECISION

            # Every later decision too, to the end of the match.
            decision = following
            while True:
                await _fallback(me, decision.decision_id)
                msg = await _next_of(me, ("decision", "match_over"))
                if msg.WhichOneof("msg") == "match_over":
                    break
                decision = msg.decision
            stub = mgrpc.MatchesStub(ch)
            replay = await stub.GetReplay(mpb.GetReplayRequest(match_id=mid))
            mine = [a for a in replay.actions if a.seat == 0]
            assert mine and all(a.timeout for a in mine)
            assert mine[0].action_id == fallback_action(replay.match.seed, req.decision_id, legal)
            match = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid))
            assert match.seats[0].timeouts == len(mine)

    run(main())


def test_fallbacks_count_toward_a_forfeit(server: Any) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, options(GAME, 2, seed=14, decision_ms=3_600_000,
                                               fallback=mpb.FALLBACK_FORFEIT, forfeit_after=2,
                                               house=["", "random"]))
            me = Agent(ch, created.match.match_id, tokens(created)[0])
            await me.join(no_events=True)
            for _ in range(2):
                await _fallback(me, (await me.expect("decision")).decision.decision_id)
            over = (await me.expect("match_over", timeout=20)).match_over
            assert over.result.reason == mpb.END_REASON_FORFEIT

    run(main())
