"""Streams that drop at any moment cost nobody a move: an answer that reached the
server is stored and applied whether or not its stream is still there (or
neither), a decision whose answer is logged is never sent again, no stream is
closed for what another seat did, and a decision shows the seat's state as of
its delivery, also when it is delivered again after a Join.

The server here reaches Valkey through a slow link, so that an append is under
way for long enough that a stream cancelled right after its answer is cancelled
while the answer is being stored."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
import structlog
from grpc import aio
from twistarena import engine, wire
from twistarena.server.config import Limits, ServerConfig
from twistarena.server.match.decisions import DECISION_ID_STRIDE
from twistarena.storage import LogEntry
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import observations_pb2 as opb
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc

from tests.support import agents as raw
from tests.support.agents import Agent, play_one, play_to_end, random_chooser
from tests.support.proxy import TcpProxy
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until

#: Seconds each chunk between the server and Valkey waits: an append takes a few
#: times this, long enough for a cancel sent right after an answer to land in it.
LINK_DELAY_S = 0.01

#: Log events that mean the server disagreed with its own log.
CONFLICTS = ("append_failed", "own_log_ahead")


@pytest.fixture(scope="module")
def slow_store_server(valkey: Any) -> Iterator[InProcessServer]:
    proxy = TcpProxy(valkey.port)
    proxy.delay = LINK_DELAY_S
    proxy.start()
    unlimited = Limits(creates_per_minute=0, live_per_client=0, max_waiting_matches=0,
                       joins_per_minute_per_peer=0, joins_per_minute_per_token=0)
    srv = InProcessServer(ServerConfig(port=0, redis_url=f"redis://{proxy.address}/0",
                                       limits=unlimited))
    try:
        yield srv.start()
    finally:
        srv.stop()
        proxy.stop()


def _stored_log(srv: InProcessServer, match_id: str) -> list[LogEntry]:
    return srv.call(srv.app.hub.store.matches.load_log(match_id))


def _answered_in(entries: list[LogEntry], decision_id: int) -> bool:
    """Whether the log holds the entry that settled ``decision_id`` (the first entry
    of its seat at or after the log length the decision opened at)."""
    opened_at, seat = divmod(decision_id - 1, DECISION_ID_STRIDE)
    return any(s == seat for s, _action, _timeout in entries[opened_at:])


def _conflicts(logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in logs if entry.get("event") in CONFLICTS]


def test_an_answer_whose_stream_is_cancelled_right_after_is_applied_and_costs_nobody(
        slow_store_server: InProcessServer) -> None:
    srv = slow_store_server

    async def main() -> tuple[int, int]:
        async with aio.insecure_channel(srv.target) as ch:
            created = await raw.create(ch, raw.options("twisted", 2, seed=47))
            mid, seat_tokens = created.match.match_id, raw.tokens(created)
            steady = Agent(ch, mid, seat_tokens[1])
            await steady.join(no_events=True)
            steady_play = asyncio.ensure_future(
                play_to_end(steady, random_chooser(1), timeout=60))
            choose = random_chooser(0)
            answered: set[int] = set()
            drops = resent = 0
            loop = asyncio.get_running_loop()
            end = loop.time() + 8.0
            while drops < 25 and loop.time() < end and not steady_play.done():
                dropper = Agent(ch, mid, seat_tokens[0])
                await dropper.join(no_events=True)
                decision = (await dropper.expect("decision")).decision
                if decision.decision_id in answered:
                    # Sent again: only if the answer never reached the log.
                    entries = await asyncio.to_thread(_stored_log, srv, mid)
                    assert not _answered_in(entries, decision.decision_id), (
                        f"decision {decision.decision_id} was sent again although its "
                        "answer is logged")
                    resent += 1
                await dropper.answer(decision.decision_id, choose(decision))
                dropper.cancel()
                answered.add(decision.decision_id)
                drops += 1
            back = Agent(ch, mid, seat_tokens[0])
            await back.join(no_events=True)
            # The other seat's stream never closed: both play on to the end.
            results = await asyncio.gather(play_to_end(back, choose, timeout=60), steady_play)
            assert results[0] == results[1]
            assert results[0].reason == mpb.END_REASON_COMPLETED
            return drops, resent

    with structlog.testing.capture_logs() as logs:
        drops, _resent = raw.run(main())
    assert drops >= 10
    assert not _conflicts(logs), _conflicts(logs)


def test_an_entry_stored_but_not_applied_is_applied_on_the_next_conflict_without_a_stop(
        server: Any) -> None:
    """The bug path: this node's log runs past its runner (an append whose apply
    was lost). The next append finds it: logged loudly, applied, and no stream
    of the match closes."""
    async def main() -> mpb.MatchResult:
        async with aio.insecure_channel(server.target) as ch:
            created = await raw.create(ch, raw.options("twisted", 2, seed=48))
            mid = created.match.match_id
            agents = [Agent(ch, mid, tok) for _s, tok in sorted(raw.tokens(created).items())]
            for agent in agents:
                await agent.join()
            first = engine.make("twisted", 2, 48).to_act()[0]
            me, other = agents[first], agents[1 - first]
            decision = (await me.expect("decision")).decision
            legal = [a.id for a in decision.legal_actions]
            assert len(legal) >= 2
            runner = server.app.hub.get(mid)
            # Stored under this node's lease, never applied.
            async def stored_behind_the_runner() -> int:
                return await runner.store.appender.append(mid, runner.owner, 0,
                                                          [(first, legal[0], False)])
            assert server.call(stored_behind_the_runner()) == 1
            await me.answer(decision.decision_id, legal[1])
            accepted = (await me.expect("accepted")).accepted
            assert (accepted.decision_id, accepted.action_id) == (decision.decision_id, legal[0])
            rejected = (await me.expect("rejected")).rejected
            assert rejected.reason == ppb.DUPLICATE_ANSWER
            results = await asyncio.gather(play_to_end(me, random_chooser(1)),
                                           play_to_end(other, random_chooser(2)))
            assert results[0] == results[1]
            replay = await mgrpc.MatchesStub(ch).GetReplay(mpb.GetReplayRequest(match_id=mid))
            assert (replay.actions[0].seat, replay.actions[0].action_id) == (first, legal[0])
            return results[0]

    with structlog.testing.capture_logs() as logs:
        result = raw.run(main())
    assert result.reason == mpb.END_REASON_COMPLETED
    assert [e["event"] for e in _conflicts(logs)] == ["own_log_ahead"]


def test_a_decision_delivered_after_a_join_shows_the_state_at_delivery(server: Any) -> None:
    game, n, seed = "tricky_twist", 4, 4747

    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            created = await raw.create(ch, raw.options(game, n, seed=seed))
            mid = created.match.match_id
            agents = [Agent(ch, mid, tok) for _s, tok in sorted(raw.tokens(created).items())]
            for agent in agents:
                await agent.join()
            first = (await agents[0].expect("decision")).decision
            agents[0].cancel()
            state = engine.make(game, n, seed)
            assert 0 in state.to_act()
            choose = random_chooser(5)
            picks = 0
            # The other seats pick their reserves while seat 0 is away.
            for _ in range(100):
                others = [s for s in state.to_act() if s != 0]
                if not others:
                    break
                await play_one(agents[others[0]], others[0], choose, state)
                picks += 1
            assert picks >= 3 and 0 in state.to_act()
            back = Agent(ch, mid, agents[0].token)
            await back.join()
            again = (await back.expect("decision")).decision
            assert again.decision_id == first.decision_id
            assert again.deadline == first.deadline
            assert again.observation == wire.observation(game, state.observation(0))
            assert again.observation != first.observation
            await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))

    raw.run(main())


# -- random drops and resumes ------------------------------------------------------------


@dataclass
class Delivery:
    """A decision as a seat received it, and how many of its events came before."""

    seat: int
    decision_id: int
    observation: opb.Observation
    events_before: int


@dataclass
class Tally:
    """What the seats and spectators of one match saw go wrong, and their decisions."""

    deliveries: list[Delivery] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    drops: int = 0


async def _join_or_over(agent: Agent, resume_from: int) -> bool:
    """Join; False when the match is over already (its end was missed)."""
    try:
        await agent.join(resume_from_seq=resume_from)
    except AssertionError:
        code, _details, reason = await agent.status()
        if (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER"):
            return False
        raise
    return True


async def _dropping_seat(ch: aio.Channel, match_id: str, token: str, seat: int,
                         rng: random.Random, tally: Tally) -> None:
    """Play a seat on streams that drop at random (a decision open, an answer just
    written, an event just read) and resume from the last event, an earlier one or 0."""
    seen = 0
    #: Why the last stream's answer could not be written (the server had ended it).
    write_failed = ""
    for _stream in range(500):
        resume = rng.choice((seen, rng.randint(0, seen), 0))
        agent = Agent(ch, match_id, token)
        if not await _join_or_over(agent, resume):
            return
        if write_failed:
            # The server ends a seat's stream only with its match (cancelled at
            # the end of the test): a live match that ended one is a fault.
            tally.problems.append(f"seat {seat}'s answer could not be written on a live "
                                  f"match: {write_failed}")
            return
        count = resume
        for _message in range(5000):
            msg = await agent.recv(timeout=20)
            if msg is None:
                tally.problems.append(f"seat {seat}'s stream ended: {await agent.status()}")
                return
            kind = msg.WhichOneof("msg")
            roll = rng.random()
            if kind == "event":
                if msg.event.seq != count:
                    tally.problems.append(f"seat {seat} got event {msg.event.seq} for {count}")
                count += 1
                seen = max(seen, count)
                if roll < 0.02:
                    break
            elif kind == "decision":
                decision = msg.decision
                observation = opb.Observation()
                observation.CopyFrom(decision.observation)
                tally.deliveries.append(Delivery(seat, decision.decision_id, observation,
                                                 count))
                if roll < 0.1:
                    break  # dropped with the decision open
                try:
                    await agent.answer(decision.decision_id,
                                       rng.choice(decision.legal_actions).id)
                except grpc.aio.AioRpcError as exc:
                    # The match was cancelled between the decision and the answer:
                    # the server ended the stream, and gRPC fails the write (as
                    # INTERNAL, before the end's own status is read). Join again
                    # to learn whether the match is over.
                    write_failed = f"{exc.code()} {exc.details()}"
                    break
                if roll < 0.35:
                    break  # dropped right after the answer
            elif kind == "rejected":
                tally.problems.append(f"seat {seat}: {msg.rejected}")
            elif kind == "match_over":
                return
        agent.cancel()
        tally.drops += 1
    tally.problems.append(f"seat {seat} never saw the end")


async def _spectator(ch: aio.Channel, match_id: str, tally: Tally) -> None:
    call = pgrpc.WatchStub(ch).Watch(ppb.WatchRequest(match_id=match_id))
    async for msg in call:
        if msg.WhichOneof("msg") == "match_over":
            return
    tally.problems.append(f"a spectator's stream ended: {await call.code()}")


def _check_deliveries(game: str, n: int, seed: int, actions: list[mpb.RecordedAction],
                      deliveries: list[Delivery]) -> list[str]:
    """Every delivered decision showed the engine's observation at its delivery
    (the log prefix its seat's events had reached) and was not answered in the log
    before it."""
    state = engine.make(game, n, seed)
    at: dict[int, list[tuple[int, list[opb.Observation]]]] = {}

    def note(k: int) -> None:
        at.setdefault(len(state.events), []).append(
            (k, [wire.observation(game, state.observation(s)) for s in range(n)]))

    note(0)
    for k, action in enumerate(actions, 1):
        state.apply(action.seat, action.action_id)
        note(k)
    entries = [(a.seat, a.action_id, a.timeout) for a in actions]
    problems = []
    for d in deliveries:
        shown = at.get(d.events_before, [])
        if not any(views[d.seat] == d.observation for _k, views in shown):
            problems.append(f"decision {d.decision_id} of seat {d.seat} after "
                            f"{d.events_before} events shows another state")
        if shown and _answered_in(entries[:shown[0][0]], d.decision_id):
            problems.append(f"decision {d.decision_id} was sent after its answer was logged")
    return problems


async def _random_match(ch: aio.Channel, game: str, n: int, seed: int,
                        max_actions: int) -> tuple[list[str], int]:
    """Play a match on seats whose streams drop at random, and a spectator, until
    ``max_actions`` are logged (then cancel it); what went wrong, and the drops."""
    created = await raw.create(ch, raw.options(game, n, seed=seed, decision_ms=60_000,
                                       grace_ms=60_000))
    mid = created.match.match_id
    tally = Tally()
    rng = random.Random(seed)
    watcher = asyncio.ensure_future(_spectator(ch, mid, tally))
    seats = [asyncio.ensure_future(_dropping_seat(ch, mid, tok, s, random.Random(rng.random()),
                                                  tally))
             for s, tok in sorted(raw.tokens(created).items())]
    stub = mgrpc.MatchesStub(ch)

    async def far_enough() -> bool:
        got = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid))
        return bool(tally.problems) or got.actions >= max_actions or got.status not in (
            mpb.MATCH_STATUS_RUNNING, mpb.MATCH_STATUS_WAITING)

    await wait_until(far_enough, f"{max_actions} actions of {game}", timeout=30)
    await stub.CancelMatch(mpb.CancelMatchRequest(match_id=mid))
    await asyncio.gather(watcher, *seats)
    replay = await stub.GetReplay(mpb.GetReplayRequest(match_id=mid))
    actions = list(replay.actions)
    problems = [f"{game}: {p}" for p in tally.problems]
    problems += [f"{game}: the fallback settled a decision at action {i}"
                 for i, a in enumerate(actions) if a.timeout]
    problems += [f"{game}: {p}" for p in _check_deliveries(game, n, seed, actions,
                                                           tally.deliveries)]
    return problems, tally.drops


def test_random_drops_and_resumes_cost_no_move_and_show_the_state_of_now(
        slow_store_server: InProcessServer) -> None:
    async def main() -> tuple[list[str], int]:
        async with aio.insecure_channel(slow_store_server.target) as ch:
            found = await asyncio.gather(
                _random_match(ch, "tricky_twist", 4, 4701, 40),
                _random_match(ch, "twisted", 2, 4702, 40),
                _random_match(ch, "twhist", 4, 4703, 40))
        return [p for problems, _ in found for p in problems], sum(d for _, d in found)

    with structlog.testing.capture_logs() as logs:
        problems, drops = raw.run(main(), timeout=90)
    assert not problems, problems
    assert not _conflicts(logs), _conflicts(logs)
    assert drops >= 10
