"""Two nodes over one store: a hosted seat created on one node is played by a
runner connected to the other.

Real parts: two ``twistarena serve`` nodes (advertised addresses, one Valkey);
only node2 starts a runner. node1 creates the tournament and its hosted seat;
the seat waits in the store's line, node2 hands it to its runner, which plays
it where the match runs. The match ends by the rules.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from twistarena.clients.sdk import register_agent
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.v1 import match_pb2 as mpb

from tests.support.hosting import FIRST_LEGAL, finished_match, store_version
from tests.support.nodes import Node
from tests.support.valkey import ValkeyProcess


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[tuple[ValkeyProcess, Node, Node]]:
    valkey = ValkeyProcess().start()
    token = ["--runner-token", "rt_" + secrets.token_urlsafe(24)]
    node1 = Node("node1", valkey.url, drain_grace=1.0, extra=[*token, "--runners", "0"])
    node2 = Node("node2", valkey.url, drain_grace=1.0,
                 extra=[*token, "--runners", "1", "--runner-slots", "2"])
    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(Node.start, (node1, node2)))
        yield valkey, node1, node2
    finally:
        for node in (node1, node2):
            if node.proc is not None:
                node.terminate()
            node.cleanup()
        valkey.stop()


def test_a_seat_created_on_one_node_is_played_by_a_runner_of_another(
        two_nodes: tuple[ValkeyProcess, Node, Node]) -> None:
    valkey, node1, node2 = two_nodes

    async def go() -> Any:
        agent, _ = await register_agent(node1.address, "far")
        await store_version(valkey.url, agent, {"bot.py": FIRST_LEGAL}, "python3 bot.py")
        created = await TournamentClient(node1.address).create(
            "tricky_twist", [f"agent:{agent}", "heuristic", "random"], players=3, parallel=1)
        mid = f"t{created.tournament_id}-0-0"
        match = await finished_match(f"{node1.address},{node2.address}", mid,
                                     "the hosted seat's match is over")
        await TournamentClient(node1.address).cancel(created.tournament_id, "enough")
        return match, mid

    match, mid = asyncio.run(go())
    assert match.result.reason == mpb.END_REASON_COMPLETED
    created_on = [r for r in node1.records() if r.get("event") == "hosted_seat_waiting"
                  and r.get("match_id") == mid]
    played_by = [r for r in node2.records() if r.get("event") == "runner_seat_assigned"
                 and r.get("match_id") == mid and "pid" not in r]
    assert created_on and played_by
    assert not [r for r in node1.records() if r.get("event") == "runner_seat_assigned"]
