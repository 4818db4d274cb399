"""The JavaScript agent (clients/node) plays real matches against Python bots.

Proves that the contract is language-agnostic: the Node agent reads the
.proto files at run time, plays one seat over real gRPC against a real server
and Valkey, reconnects and resumes, and its result agrees with the replay.

Needs Node.js and ``clients/node/node_modules``: run ``npm ci --prefix clients/node``
first. A missing install fails these tests (it never skips them).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from grpc import aio
from twistarena import engine
from twistarena.clients.sdk.localbots import strategy_agent
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc

from tests.support.agents import Agent, create, options, play_to_end, random_chooser, run, tokens
from tests.support.process import ServeProcess
from tests.support.valkey import free_port
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "clients" / "node"
AGENT_JS = NODE_DIR / "agent.js"
INSTALL = "npm ci --prefix clients/node"
NODE_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def node() -> str:
    """The node executable; fails (never skips) when Node.js or the npm install is missing."""
    exe = shutil.which("node")
    if exe is None:
        pytest.fail("tests/node need Node.js (>= 18.11) on PATH: `node` was not found")
    for package in ("@grpc/grpc-js", "@grpc/proto-loader"):
        if not (NODE_DIR / "node_modules" / package / "package.json").is_file():
            pytest.fail(f"clients/node/node_modules/{package} is missing: run `{INSTALL}` "
                        "(from the repository root) before the tests")
    return exe


async def start_node(node: str, target: str, match_id: str, token: str,
                     *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        node, str(AGENT_JS), "--server", target, "--match", match_id, "--token", token, *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=str(ROOT))


async def finish_node(proc: asyncio.subprocess.Process,
                      timeout: float = NODE_TIMEOUT_S) -> tuple[int, dict[str, Any], str]:
    """Wait for the agent; returns (exit code, its JSON result line, stderr)."""
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        out, err = await proc.communicate()
        raise AssertionError(f"the Node agent did not finish in {timeout:g} s; stderr:\n"
                             f"{err.decode(errors='replace')[-3000:]}") from None
    stderr = err.decode(errors="replace")
    lines = [line for line in out.decode(errors="replace").splitlines() if line.strip()]
    line: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    assert proc.returncode is not None
    return proc.returncode, line, stderr


def match_options(game_id: str, n: int, seed: int, house: dict[int, str],
                  game_options: dict[str, Any] | None = None) -> mpb.MatchOptions:
    opts = mpb.MatchOptions(game_id=game_id, num_players=n, seed=seed)
    opts.seats.extend(mpb.SeatSpec(name=f"seat{s}", house_bot=house.get(s, ""))
                      for s in range(n))
    if game_options:
        opts.game_options.update(game_options)
    return opts


def check_against_replay(replay: mpb.Replay, line: dict[str, Any], node_seat: int,
                         events: bool = True) -> None:
    """The Node agent's result and counters agree with the re-simulated action log."""
    match = replay.match
    result = match.result
    assert match.status == mpb.MATCH_STATUS_FINISHED
    assert result.reason == mpb.END_REASON_COMPLETED
    opts = match.options
    game_options = dict(opts.game_options.items())
    final = engine.replay(opts.game_id, opts.num_players, match.seed,
                          {k: int(v) if isinstance(v, float) and v.is_integer() else v
                           for k, v in game_options.items()},
                          [(a.seat, a.action_id) for a in replay.actions])
    assert final.is_terminal()
    assert list(result.scores) == final.scores()
    assert list(result.places) == final.places()
    assert len(replay.events) == len(final.events)

    assert line["completed"] is True
    assert line["seat"] == node_seat
    assert line["game_id"] == opts.game_id
    assert line["result"] == {
        "scores": list(result.scores), "places": list(result.places),
        "winners": list(result.winners), "reason": mpb.EndReason.Name(result.reason),
        "detail": result.detail,
    }
    mine = [a for a in replay.actions if a.seat == node_seat]
    assert mine, "the Node agent's seat never acted"
    assert not any(a.timeout for a in mine), "a Node agent decision was settled by the fallback"
    assert line["accepted"] == len(mine)
    assert line["decisions"] == len(mine)
    if events:
        assert line["events"] == len(replay.events), "every event exactly once"
        assert line["event_gaps"] == 0
        assert line["duplicate_events"] == 0


# game, players, the Node agent's seat and arguments, SDK agent seats, house bot seats
CASES: list[tuple[str, int, int, Sequence[str], Sequence[int], dict[int, str]]] = [
    ("tricky_twist", 4, 1, ("--strategy", "random", "--seed", "11"), (0,),
     {2: "random", 3: "heuristic"}),
    ("twisted", 3, 0, ("--strategy", "rule", "--seed", "12", "--bearer"), (2,),
     {1: "heuristic"}),
    ("twhist", 5, 3, ("--strategy", "random", "--seed", "13", "--drop-every", "4"), (0,),
     {1: "random", 2: "heuristic", 4: "random"}),
]


async def _play(node: str, target: str, game_id: str, n: int, node_seat: int,
                node_args: Sequence[str], sdk_seats: Sequence[int],
                house: dict[int, str], seed: int) -> tuple[int, dict[str, Any], str,
                                                          list[Any], mpb.Replay]:
    async with aio.insecure_channel(target) as ch:
        created = await create(ch, match_options(game_id, n, seed, house))
        mid = created.match.match_id
        toks = tokens(created)
        assert sorted(toks) == sorted([node_seat, *sdk_seats])
        proc = await start_node(node, target, mid, toks[node_seat], *node_args)
        sdk_agents = [strategy_agent("heuristic", seed + s, server=target, match_id=mid,
                                     token=toks[s], name=f"{mid}/seat{s}") for s in sdk_seats]
        try:
            sdk_results = await asyncio.wait_for(
                asyncio.gather(*(a.run() for a in sdk_agents)), NODE_TIMEOUT_S)
        except BaseException:
            proc.kill()
            await proc.wait()
            raise
        code, line, stderr = await finish_node(proc)
        replay = await mgrpc.MatchesStub(ch).GetReplay(mpb.GetReplayRequest(match_id=mid))
    return code, line, stderr, list(sdk_results), replay


@pytest.mark.parametrize(("game_id", "n", "node_seat", "node_args", "sdk_seats", "house"), CASES,
                         ids=[c[0] for c in CASES])
def test_node_agent_plays_a_full_match(node: str, server: Any, game_id: str, n: int,
                                       node_seat: int, node_args: Sequence[str],
                                       sdk_seats: Sequence[int], house: dict[int, str]) -> None:
    seed = 4200 + n
    code, line, stderr, sdk_results, replay = run(
        _play(node, server.target, game_id, n, node_seat, node_args, sdk_seats, house, seed),
        timeout=90)
    assert code == 0, f"exit code {code}; stderr:\n{stderr[-3000:]}"
    assert line["rejections"] == 0, f"answers of the Node agent were rejected: {stderr[-3000:]}"
    assert line["rejections_by_reason"] == {}
    check_against_replay(replay, line, node_seat)
    for result in sdk_results:
        assert result.reason == "COMPLETED"
        assert list(result.scores) == line["result"]["scores"]
    if "--drop-every" in node_args:
        # Each drop happened with a decision open: the server sent it again (same id)
        # after the resume, and no event was lost or repeated (checked above).
        assert line["drops"] >= 2
        assert line["reconnects"] == line["drops"]
        assert line["resent_decisions"] == line["drops"]
    else:
        assert line["reconnects"] == 0
    if game_id == "twisted":
        _check_twist_rule(replay, node_seat, line)


def _check_twist_rule(replay: mpb.Replay, seat: int, line: dict[str, Any]) -> None:
    """--strategy rule in Twisted: a twist whenever one is legal; a take only when forced."""
    match = replay.match
    state = engine.make("twisted", match.options.num_players, match.seed)
    twists = 0
    for act in replay.actions:
        if act.seat == seat:
            kinds = {a.id: a.payload["kind"] for a in state.legal_actions(seat)}
            chosen = kinds[act.action_id]
            if "twist" in kinds.values():
                assert chosen == "twist", f"{act.action_id} chosen while a twist was legal"
                twists += 1
            elif chosen == "take":
                assert set(kinds.values()) == {"take"}, "took the row with other choices"
        state.apply(act.seat, act.action_id)
    assert twists == line["rule_hits"]


def test_node_agent_answers_again_after_an_illegal_action(node: str, server: Any) -> None:
    """AnswerRejected(ILLEGAL_ACTION, may_retry): the agent picks another legal action."""

    async def scenario() -> tuple[int, dict[str, Any], str, mpb.Replay]:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, match_options("twisted", 2, 77, {1: "random"},
                                                     {"rounds": 1}))
            mid = created.match.match_id
            proc = await start_node(node, server.target, mid, tokens(created)[0],
                                    "--strategy", "random", "--probe-illegal", "--no-events")
            code, line, stderr = await finish_node(proc)
            replay = await mgrpc.MatchesStub(ch).GetReplay(mpb.GetReplayRequest(match_id=mid))
        return code, line, stderr, replay

    code, line, stderr, replay = run(scenario(), timeout=60)
    assert code == 0, stderr[-3000:]
    assert line["rejections_by_reason"] == {"ILLEGAL_ACTION": 1}
    assert "ILLEGAL_ACTION" in stderr
    assert line["answers"] == line["accepted"] + 1
    check_against_replay(replay, line, 0, events=False)
    assert line["events"] == 0  # Join.no_events


def test_node_agent_exits_2_on_a_bad_token(node: str, server: Any) -> None:
    async def scenario() -> tuple[int, dict[str, Any], str]:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, options("twisted", 2))
            proc = await start_node(node, server.target, created.match.match_id,
                                    "not-a-seat-token")
            return await finish_node(proc, timeout=30)

    code, line, stderr = run(scenario(), timeout=40)
    assert code == 2
    assert line == {}
    assert "UNAUTHENTICATED [BAD_TOKEN]" in stderr


def test_node_agent_stops_when_taken_over_and_reports_a_cancel(node: str, server: Any) -> None:
    """A second agent with the same token takes the seat (the first exits 2 with
    TAKEN_OVER); CancelMatch ends the match: the second prints the result and exits 4."""

    async def scenario() -> tuple[tuple[int, dict[str, Any], str], tuple[int, dict[str, Any], str]]:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, options("twisted", 2))  # seat 1 never joins: WAITING
            mid = created.match.match_id
            token = tokens(created)[0]
            stub = mgrpc.MatchesStub(ch)

            async def connected() -> None:
                async def seated() -> bool:
                    match = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid))
                    return match.seats[0].connected

                # A cold Node.js start on a loaded machine.
                await wait_until(seated, "the Node agent took its seat", timeout=30)

            first = await start_node(node, server.target, mid, token)
            await connected()
            second = await start_node(node, server.target, mid, token, "--bearer")
            first_out = await finish_node(first, timeout=30)
            await connected()
            await stub.CancelMatch(mpb.CancelMatchRequest(match_id=mid, reason="test over"))
            second_out = await finish_node(second, timeout=30)
        return first_out, second_out

    (code1, line1, err1), (code2, line2, err2) = run(scenario(), timeout=60)
    assert code1 == 2, err1[-2000:]
    assert "ABORTED [TAKEN_OVER]" in err1
    assert line1 == {}
    assert code2 == 4, err2[-2000:]
    assert line2["completed"] is False
    assert line2["result"]["reason"] == "END_REASON_CANCELLED"
    assert line2["result"]["detail"] == "test over"


def test_node_agent_resumes_after_the_server_is_killed(node: str, valkey: Any) -> None:
    """kill -9 of the server mid-match; a new server on the same store and port resumes
    the match from its log; the Node agent reconnects with resume_from_seq and finishes."""
    port = free_port()
    target = f"127.0.0.1:{port}"
    args = ["--port", str(port), "--redis-url", valkey.url]
    first = ServeProcess(args).start()
    second: ServeProcess | None = None
    try:
        async def scenario() -> tuple[int, dict[str, Any], str, mpb.Replay, int, int]:
            nonlocal second
            choose = random_chooser(5)
            async with aio.insecure_channel(target) as ch:
                created = await create(ch, options("twisted", 2, seed=91,
                                                   game_options={"rounds": 1}))
                mid = created.match.match_id
                toks = tokens(created)
                proc = await start_node(node, target, mid, toks[0], "--strategy", "rule",
                                        "--seed", "3")
                python_seat = Agent(ch, mid, toks[1])
                await python_seat.join(no_events=True)
                for _ in range(5):
                    decision = (await python_seat.expect("decision", timeout=20)).decision
                    await python_seat.answer(decision.decision_id, choose(decision))
                    await python_seat.expect("accepted")
                # Hold this decision open: the Node agent now waits for its turn,
                # its stream to the server open.
                held = (await python_seat.expect("decision", timeout=20)).decision
                stub = mgrpc.MatchesStub(ch)

                async def node_seated() -> bool:
                    match = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid))
                    return match.seats[0].connected

                await wait_until(node_seated, "the Node agent holds its seat")
                first.kill()
            second = ServeProcess(args).start()
            async with aio.insecure_channel(target) as ch:
                again = Agent(ch, mid, toks[1])
                await again.join(no_events=True)
                resent = (await again.expect("decision", timeout=20)).decision
                await again.answer(resent.decision_id, choose(resent))
                await play_to_end(again, choose, timeout=NODE_TIMEOUT_S)
                code, line, stderr = await finish_node(proc)
                replay = await mgrpc.MatchesStub(ch).GetReplay(
                    mpb.GetReplayRequest(match_id=mid))
            return code, line, stderr, replay, held.decision_id, resent.decision_id

        code, line, stderr, replay, held_id, resent_id = run(scenario(), timeout=90)
        assert held_id == resent_id, "the open decision keeps its id across the restart"
        assert code == 0, stderr[-3000:]
        assert line["reconnects"] >= 1
        assert line["rejections"] == 0
        assert "UNAVAILABLE" in stderr
        check_against_replay(replay, line, 0)
    finally:
        first.cleanup()
        if second is not None:
            second.cleanup()
