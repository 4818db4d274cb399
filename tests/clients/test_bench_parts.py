"""The parts of ``twistarena bench service``: the engine-only ping-pong server,
the protocol-level random bot, and a service run's end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from twistarena import engine
from twistarena.clients.sdk import MatchClient
from twistarena.clients.sdk.connection import make_channel
from twistarena.clients.sdk.convert import oneof_to_dict
from twistarena.server.metrics import TIME_EVERY
from twistarena.tools.pingpong import EngineGroup
from twistarena.tools.processes import ServerProcess
from twistarena.tools.protocolbot import ProtocolBot
from twistarena.tools.service import (
    DECISION_PREFIX,
    UNLIMITED,
    match_costs,
    real_throughput,
)
from twistarena.tools.servicefigures import read_counters
from twistarena.v1 import match_pb2, play_pb2

from .helpers import run


@pytest.mark.parametrize(("game", "players"), [("tricky_twist", 4), ("twisted", 2),
                                               ("twhist", 4)])
def test_engine_pingpong_sends_the_real_requests_of_a_game(game: str, players: int) -> None:
    """Real requests; an acceptance rides along in the request when the seat that
    answered is asked next (as the service delivers it to a batched seat), else it
    is a message of its own."""
    group = EngineGroup(game, players, seed=7)
    shadow = engine.make(game, players, group.seed, {})
    seat, data = group.request()
    riding = apart = 0
    for _ in range(60):
        assert data[:1] == DECISION_PREFIX
        request = play_pb2.ServerMessage.FromString(data).decision
        assert request.seat == seat and seat in shadow.to_act()
        assert [a.id for a in request.legal_actions] == list(shadow.legal_action_ids(seat))
        assert oneof_to_dict(request.observation) == shadow.observation(seat)
        who, data, acceptance = group.next_after(seat)
        if acceptance:
            accepted = play_pb2.ServerMessage.FromString(acceptance).accepted
            assert who != seat
            apart += 1
        else:
            accepted = play_pb2.ServerMessage.FromString(data).decision.accepted
            assert who == seat
            riding += 1
        assert accepted.decision_id == request.decision_id
        shadow.apply(seat, accepted.action_id)
        if shadow.is_terminal():
            shadow = engine.make(game, players, group.seed, {})
        seat = who
    assert riding and apart


def test_engine_pingpong_starts_a_new_game_when_one_ends() -> None:
    group = EngineGroup("twisted", 2, seed=3)
    first_seed = group.seed
    seat, _data = group.request()
    for _ in range(5000):
        seat, _data, _acceptance = group.next_after(seat)
        if group.seed != first_seed:
            break
    assert group.seed == first_seed + 1 and not group.state.is_terminal()


@pytest.mark.parametrize("batched", [True, False])
def test_protocol_bots_play_a_match_to_the_end(server: Any, batched: bool) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await client.create_match("tricky_twist", 4, seed=5, decision_ms=60_000)
        channel = make_channel(server.target)
        seen: dict[str, list[float]] = {"decision": [], "answer": []}
        bots = [ProtocolBot(channel, created.match.match_id, t.token, t.seat,
                            lambda key, t: seen["decision"].append(t),
                            lambda key, t: seen["answer"].append(t), batched=batched)
                for t in created.seat_tokens]
        try:
            overs = await asyncio.gather(*(b.run() for b in bots))
        finally:
            await channel.close()
        assert all(o.result.reason == match_pb2.END_REASON_COMPLETED for o in overs)
        match = await client.get_match(created.match.match_id)
        assert match.actions == sum(b.answered for b in bots)
        assert all(b.accepted == b.answered > 0 for b in bots)
        assert len(seen["decision"]) == len(seen["answer"]) == match.actions
        assert list(overs[0].result.scores) == list(match.result.scores)

    run(scenario())


def test_the_server_counts_its_play_messages_for_the_bench(server: Any) -> None:
    """``bench service`` divides the server's own counters by its decisions: they
    count every AgentMessage (the Joins too) and every DecisionRequest built."""
    from twistarena.server import metrics

    port = metrics.serve_metrics(0)  # the in-process server's registry, over HTTP

    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await client.create_match("twhist", 3, seed=2, decision_ms=60_000)
        channel = make_channel(server.target)
        before = read_counters([port])
        bots = [ProtocolBot(channel, created.match.match_id, t.token, t.seat,
                            lambda key, t: None, lambda key, t: None)
                for t in created.seat_tokens]
        try:
            await asyncio.gather(*(b.run() for b in bots))
        finally:
            await channel.close()
        after = read_counters([port])
        counted = after.minus(before)
        answered = sum(b.answered for b in bots)
        assert counted.received == answered + len(bots)
        assert counted.requests_built == answered
        # Batched: Joined, a request per decision, the last acceptance and MatchOver.
        assert answered < counted.sent <= answered + 4 * len(bots)
        # One build in TIME_EVERY is timed (reading the thread's clock is a system call).
        assert counted.requests_timed == (after.requests_built // TIME_EVERY
                                          - before.requests_built // TIME_EVERY) > 0
        assert counted.request_build_s > 0

    run(scenario())


def test_ladder_bench_times_every_searched_decision() -> None:
    from twistarena.tools.ladder import decision_seconds

    times = decision_seconds("ismcts-fast", "twisted", 2, 1, 3)
    assert len(times) >= 10 and all(t > 0 for t in times)


@pytest.mark.parametrize("agents", ["protocol", "sdk"])
def test_a_service_run_leaves_no_match_running_for_the_next_run(agents: str) -> None:
    """A run's window ends with matches in progress; left alone, the server would
    play them out by fallback moves once their seats' grace ends, during the
    next run's window. The run cancels them as it stops."""
    server = ServerProcess.serve(*UNLIMITED, "--metrics-port", "0")

    async def scenario() -> tuple[list[Any], list[Any]]:
        await asyncio.to_thread(server.start)
        measured = await real_throughput(server, "tricky_twist", 4, 4, 0.3, 0.7, agents,
                                         events=True)
        assert measured.decisions > 0
        client = MatchClient(server.address)
        live = await client.list_matches(statuses=["waiting", "running"], limit=100)
        cancelled = await client.list_matches(statuses=["cancelled"], limit=100)
        return live, cancelled

    try:
        live, cancelled = run(scenario(), timeout=120)
    finally:
        server.stop()
    assert live == []
    # Four slots of Tricky Twist matches (hundreds of decisions each): matches
    # were in progress when the window ended, and were cancelled.
    assert cancelled


def test_both_phases_reach_the_owner_of_each_match_behind_a_shared_port() -> None:
    """With ``serve --workers 2`` about half the matches are run by the node the
    shared port does not reach first: the per-match phase's seats and cancel, and
    a service run's cancel of what it leaves unfinished, follow the NOT_OWNER
    redirect to the owner instead of failing (no match counted, matches left
    running into the next run)."""
    server = ServerProcess.serve(*UNLIMITED, "--metrics-port", "0", "--workers", "2")

    async def scenario() -> tuple[list[Any], Any]:
        await asyncio.to_thread(server.start)
        measured = await real_throughput(server, "tricky_twist", 4, 6, 0.3, 0.7, "protocol",
                                         events=True)
        assert measured.decisions > 0
        live = await MatchClient(server.address).list_matches(
            statuses=["waiting", "running"], limit=100)
        costs = await match_costs(server, "twhist", 4, 6, 0.3, 1.5, events=True)
        return live, costs

    try:
        live, costs = run(scenario(), timeout=120)
    finally:
        server.stop()
    assert live == []
    assert costs.matches_finished >= 6 and costs.matches_failed == 0
    assert costs.match_cpu_us > 0


def test_service_cpu_ratios_are_medians_of_each_rounds_ratio() -> None:
    """The node's CPU per decision is held against bare gRPC's of the same round: a
    round in which the machine slowed down for every run moves no ratio, and one
    round out of five where only one run was hit is left out by the median."""
    from twistarena.tools.servicecli import cpu_lines
    from twistarena.tools.servicefigures import Report, Throughput

    def run(label: str, per_round_us: list[float]) -> Throughput:
        out = Throughput(label, 1000, 1.0, 0.0, 0.0, 0.0)
        out.window_server_us = per_round_us
        return out

    report = Report({"rounds": 5, "events": True},
                    raw=run("bare", [100, 200, 100, 100, 100]),
                    engine_only=run("engine", [120, 240, 120, 300, 120]),
                    real=run("service", [160, 320, 160, 160, 900]))
    assert report.cpu_ratios() == {"engine_only": 1.2, "real": 1.6}
    assert report.to_json()["grpc_engine_only_server_cpu_to_bare_ratio"] == 1.2
    assert report.engine_only is not None and report.real is not None
    report.engine_only.window_server_us[0] = 0.0  # a window without decisions: left out
    report.real.window_server_us[1] = 0.0
    assert report.cpu_ratios() == {"engine_only": 1.2, "real": 1.6}
    assert report.to_json()["service_server_cpu_rounds_compared"] == 4
    assert "median of 4 of 5 rounds" in cpu_lines(report)[0]
    lines = cpu_lines(report)
    assert "engine only / bare gRPC = 1.200" in lines[0] and "goal ≤ 1.25: met" in lines[0]
    assert "service / bare gRPC = 1.600" in lines[1] and "goal ≤ 1.7: met" in lines[1]
