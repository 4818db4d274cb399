"""A tournament's games on another node: cancelling the tournament ends them, and a
game whose match did not finish ranks nobody.

Real parts: two in-process nodes over one Valkey of their own, real gRPC clients.
The nodes advertise no address, so a tournament's games run on the node that
drives it (the one it was created on) and the other node is the one that is
asked to cancel it. An entrant that never joins keeps every game waiting.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from twistarena.clients.sdk import AgentError, MatchClient, register_agent
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.server.config import Limits, ServerConfig
from twistarena.v1 import match_pb2
from twistarena.v1 import tournaments_pb2 as tpb

from tests.support.agents import run
from tests.support.server import InProcessServer
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until

Nodes = tuple[InProcessServer, InProcessServer]


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[Nodes]:
    valkey = ValkeyProcess().start()
    unlimited = Limits(creates_per_minute=0, live_per_client=0, max_waiting_matches=0,
                       joins_per_minute_per_peer=0, registers_per_hour=0)
    nodes = [InProcessServer(ServerConfig(port=0, redis_url=valkey.url, limits=unlimited,
                                          node_id=f"node{i}")) for i in (1, 2)]
    try:
        for node in nodes:
            node.start()
        yield nodes[0], nodes[1]
    finally:
        for node in nodes:
            node.stop()
        valkey.stop()


def running_on(nodes: Nodes, match_id: str) -> InProcessServer | None:
    """The node whose referee runs the match, if one does."""
    return next((n for n in nodes if n.app.hub is not None and match_id in n.app.hub.referees),
                None)


async def stored_status(node: InProcessServer, match_id: str) -> int | None:
    """The match's status as the store holds it (None before it is created)."""
    try:
        return (await MatchClient(node.target).get_match(match_id)).status
    except AgentError:
        return None


async def waiting_tournament(node: InProcessServer, name: str, parallel: int) -> str:
    """A round robin of a registered agent that never joins and two house bots."""
    absent, _ = await register_agent(node.target, name)
    created = await TournamentClient(node.target).create(
        "tricky_twist", [absent, "heuristic", "random"], players=3, parallel=parallel,
        decision_ms=30_000)
    return created.tournament_id


def test_cancelling_a_tournament_on_another_node_ends_the_games_its_owner_runs(
        two_nodes: Nodes) -> None:
    async def go() -> None:
        tid = await waiting_tournament(two_nodes[0], "absent-a", parallel=2)
        games = [f"t{tid}-0-0", f"t{tid}-0-1"]
        owners = [await wait_until(lambda m=m: running_on(two_nodes, m), f"{m} runs")
                  for m in games]
        owner = owners[0]
        assert owners[1] is owner
        elsewhere = two_nodes[1] if owner is two_nodes[0] else two_nodes[0]

        cancelled = await TournamentClient(elsewhere.target).cancel(tid, "enough")
        assert cancelled.status == tpb.TOURNAMENT_CANCELLED
        for mid in games:
            await wait_until(lambda m=mid: _is_cancelled(owner, m),
                             f"{mid}, run by {owner.config.node_id}, cancelled", timeout=10)
            assert running_on(two_nodes, mid) is None
        record = await TournamentClient(elsewhere.target).get(tid)
        assert (record.games_done, list(record.standings)) == (0, [])
        assert not any(g.places for g in record.games)

    run(go(), timeout=60)


async def _is_cancelled(node: InProcessServer, match_id: str) -> bool:
    return await stored_status(node, match_id) == match_pb2.MATCH_STATUS_CANCELLED


def test_a_game_whose_match_was_cancelled_ranks_nobody_and_the_tournament_goes_on(
        two_nodes: Nodes) -> None:
    async def go() -> None:
        tid = await waiting_tournament(two_nodes[1], "absent-b", parallel=1)
        first, second = f"t{tid}-0-0", f"t{tid}-0-1"
        owner = await wait_until(lambda: running_on(two_nodes, first), f"{first} runs")
        await MatchClient(owner.target).cancel_match(first, "not this one")
        # With one game at a time, the second is created once the first is recorded.
        await wait_until(lambda: stored_status(owner, second), f"{second} created")

        record = await TournamentClient(two_nodes[0].target).get(tid)
        game = next(g for g in record.games if g.match_id == first)
        assert (list(game.places), list(game.scores)) == ([], [])
        assert (record.games_done, list(record.standings)) == (0, [])
        assert record.status == tpb.TOURNAMENT_RUNNING
        await TournamentClient(two_nodes[0].target).cancel(tid, "enough")
        await wait_until(lambda: _is_cancelled(owner, second), f"{second} cancelled",
                         timeout=10)

    run(go(), timeout=60)
