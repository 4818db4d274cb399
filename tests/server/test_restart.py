"""kill -9 of a `twistarena serve` process mid-match, restart on the same store:
every live match resumes from its log, agents reconnect, nothing acknowledged is lost."""

from __future__ import annotations

import asyncio
import random
import tempfile
from pathlib import Path
from typing import Any

import grpc
from grpc import aio
from twistarena import engine
from twistarena.server.config import ServerConfig
from twistarena.server.match.decisions import DECISION_ID_STRIDE
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc

from tests.support.agents import Agent, create, options, play_to_end, random_chooser, run, tokens
from tests.support.process import ServeProcess
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until


def _events(agent: Agent) -> list[int]:
    return [m.event.seq for m in agent.received if m.WhichOneof("msg") == "event"]


def test_kill_9_mid_match_then_resume_from_the_log(valkey: Any) -> None:
    """Deterministic: stop at an open decision, kill, restart, same decision id."""
    game, n, seed = "twisted", 3, 21
    first = ServeProcess(["--port", "0", "--redis-url", valkey.url]).start()
    second: ServeProcess | None = None
    try:
        async def before() -> tuple[str, dict[int, str], list[tuple[int, int]], int, int,
                                    list[list[int]]]:
            async with aio.insecure_channel(first.target) as ch:
                created = await create(ch, options(game, n, seed=seed))
                mid = created.match.match_id
                toks = tokens(created)
                agents = {s: Agent(ch, mid, t) for s, t in toks.items()}
                for agent in agents.values():
                    await agent.join()
                state = engine.make(game, n, seed)
                choose = random_chooser(seed)
                acked: list[tuple[int, int]] = []
                for _ in range(15):
                    seat = state.to_act()[0]
                    d = (await agents[seat].expect("decision")).decision
                    action = choose(d)
                    await agents[seat].answer(d.decision_id, action)
                    acc = (await agents[seat].expect("accepted")).accepted
                    assert acc.decision_id == d.decision_id
                    state.apply(seat, action)
                    acked.append((seat, action))
                seat = state.to_act()[0]
                pending = (await agents[seat].expect("decision")).decision
                first.kill()  # no drain: a crash with streams open
                # Every stream ends; what each had received by then is what it saw.
                for agent in agents.values():
                    await agent.drain_to_end(timeout=10)
                seen = [_events(agents[s]) for s in range(n)]
                return mid, toks, acked, seat, int(pending.decision_id), seen

        mid, toks, acked, pending_seat, pending_id, seen = run(before())
        second = ServeProcess(["--port", "0", "--redis-url", valkey.url]).start()
        assert second.port

        async def after() -> None:
            async with aio.insecure_channel(second.target) as ch:
                stub = mgrpc.MatchesStub(ch)
                got = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid))
                assert got.status == mpb.MATCH_STATUS_RUNNING
                assert got.actions == len(acked)
                agents = {s: Agent(ch, mid, t) for s, t in toks.items()}
                for s, agent in agents.items():
                    resume = seen[s][-1] + 1 if seen[s] else 0
                    await agent.join(resume_from_seq=resume)
                d = (await agents[pending_seat].expect("decision")).decision
                assert d.decision_id == pending_id, "the open decision keeps its id"
                for s, agent in agents.items():
                    events = _events(agent)
                    if events:
                        assert events[0] == (seen[s][-1] + 1 if seen[s] else 0)
                await agents[pending_seat].answer(d.decision_id, d.legal_actions[0].id)
                await agents[pending_seat].expect("accepted")
                results = await asyncio.gather(*(
                    play_to_end(a, random_chooser(s), timeout=60) for s, a in agents.items()))
                assert all(r == results[0] for r in results)
                replay = await stub.GetReplay(mpb.GetReplayRequest(match_id=mid))
                log = [(a.seat, a.action_id) for a in replay.actions]
                assert log[:len(acked)] == acked, "acknowledged actions survive the crash"
                assert not any(a.timeout for a in replay.actions)
                final = engine.replay(game, n, seed, {}, log)
                assert final.is_terminal() and list(results[0].scores) == final.scores()

        run(after())
        assert second.terminate() == 0
    finally:
        first.cleanup()
        if second is not None:
            second.cleanup()


def test_a_late_recovery_never_claims_a_match_already_running_here(valkey: Any) -> None:
    """After the store comes back, recovery lists this node's matches and then claims
    them; a seat that reconnected in between has had its match opened on demand. That
    runner must stay the match's only one: a second claim would fence it and leave its
    seats on a runner nothing stops (the match then waits, silently, for seats that
    joined the other one)."""
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url)).start()
    try:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                created = await create(ch, options("twisted", 3, seed=5))
                mid = created.match.match_id
                running = srv.app.hub.get(mid)
                assert running is not None
                claims = srv.app.cluster.claims
                # Recovery's list was read before the on-demand open finished.
                opened = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
                    claims.open_many([mid], "recovery"), srv.loop))
                assert opened == {}
                assert srv.app.hub.get(mid) is running
                # The runner still holds the lease: the seats play on it.
                agents = {s: Agent(ch, mid, t) for s, t in tokens(created).items()}
                for agent in agents.values():
                    await agent.join()
                state = engine.make("twisted", 3, 5)
                seat = state.to_act()[0]
                decision = (await agents[seat].expect("decision")).decision
                await agents[seat].answer(decision.decision_id,
                                          decision.legal_actions[0].id)
                accepted = (await agents[seat].expect("accepted")).accepted
                assert accepted.decision_id == decision.decision_id

        run(main())
    finally:
        srv.stop()


async def _resilient(target: list[str], mid: str, seat: int, token: str,
                     acked: list[tuple[int, int, int]], problems: list[str],
                     deadline: float) -> mpb.MatchResult:
    """An agent that reconnects (to whatever address the server has now) until MatchOver."""
    rng = random.Random(seat)
    last_seq = -1
    loop = asyncio.get_running_loop()
    for _attempt in range(400):
        if loop.time() > deadline:
            break
        try:
            async with aio.insecure_channel(target[0]) as ch:
                agent = Agent(ch, mid, token)
                await agent.join(resume_from_seq=last_seq + 1)
                for _ in range(100_000):
                    msg = await agent.recv(timeout=20)
                    if msg is None:
                        break
                    kind = msg.WhichOneof("msg")
                    if kind == "event":
                        if msg.event.seq != last_seq + 1:
                            problems.append(f"seat {seat}: event {msg.event.seq} after {last_seq}")
                        last_seq = msg.event.seq
                    elif kind == "decision":
                        d = msg.decision
                        await agent.answer(d.decision_id, rng.choice(d.legal_actions).id)
                    elif kind == "accepted":
                        acked.append((seat, msg.accepted.decision_id, msg.accepted.action_id))
                    elif kind == "match_over":
                        return msg.match_over.result
        except (grpc.aio.AioRpcError, AssertionError, TimeoutError, asyncio.InvalidStateError):
            pass
        await asyncio.sleep(0.1)
    raise AssertionError(f"seat {seat} never saw the end")


def test_kill_9_under_load_with_embedded_data_dir() -> None:
    """Agents play flat out; the server (embedded Valkey, --data-dir) is killed twice."""
    game, n, seed = "twhist", 4, 33
    with tempfile.TemporaryDirectory(prefix="ta-data-") as tmp:
        data_dir = Path(tmp)
        procs = [ServeProcess(["--port", "0", "--data-dir", str(data_dir)]).start()]
        try:
            async def main() -> None:
                target = [procs[0].target]
                async with aio.insecure_channel(target[0]) as ch:
                    created = await create(ch, options(game, n, seed=seed))
                mid = created.match.match_id
                acked: list[tuple[int, int, int]] = []
                problems: list[str] = []
                loop = asyncio.get_running_loop()
                deadline = loop.time() + 120
                tasks = [asyncio.ensure_future(_resilient(target, mid, s, t, acked, problems,
                                                          deadline))
                         for s, t in tokens(created).items()]
                for kill_after in (10, 25):
                    await wait_until(lambda: len(acked) >= kill_after,  # noqa: B023 (awaited here)
                                     f"{kill_after} answers acknowledged", interval=0.01)
                    procs[-1].kill()  # returns once the process is gone
                    procs.append(await asyncio.to_thread(
                        ServeProcess(["--port", "0", "--data-dir", str(data_dir)]).start))
                    target[0] = procs[-1].target
                results = await asyncio.wait_for(asyncio.gather(*tasks), 150)
                assert all(r == results[0] for r in results)
                assert not problems, problems
                async with aio.insecure_channel(target[0]) as ch:
                    replay = await mgrpc.MatchesStub(ch).GetReplay(
                        mpb.GetReplayRequest(match_id=mid))
                log = [(a.seat, a.action_id) for a in replay.actions]
                final = engine.replay(game, n, seed, {}, log)
                assert final.is_terminal() and list(results[0].scores) == final.scores()
                # Every acknowledged answer is in the log, at its decision's position.
                assert len({did for _s, did, _a in acked}) == len(acked)
                for seat, did, action in acked:
                    opened_at, of_seat = divmod(did - 1, DECISION_ID_STRIDE)
                    assert of_seat == seat
                    assert log[opened_at] == (seat, action)

            run(main(), timeout=240)
            assert procs[-1].terminate() == 0
            out = procs[-1].output()
            assert '"event": "recovered"' in out
        finally:
            for proc in procs:
                proc.cleanup()
