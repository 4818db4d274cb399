"""Two runners never play one seat, whichever node handed it out: the seat's
latest hand-out is the store's.

Real parts: two in-process nodes over one Valkey of their own, raw runners
(Connect streams written by hand) and raw Play streams. Runner A, on node1
(where the match runs), is handed a hosted seat and joins it; A's streams drop
and node2 hands the seat to runner B. A comes back with its old hand-out
before B has joined: node1 never saw B, yet A is refused; A's report is
refused too, and B's is the one the version's stats count.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from grpc import aio
from twistarena.clients.sdk import register_agent
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.server.config import Limits, ServerConfig
from twistarena.storage import Holder, Store

from tests.support.agents import Agent, run
from tests.support.hosting import FIRST_LEGAL, store_version
from tests.support.rawrunner import RawRunner, join_status, refused
from tests.support.server import InProcessServer
from tests.support.valkey import ValkeyProcess

TOKEN = "rt_fence-test-token"


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[tuple[ValkeyProcess, InProcessServer, InProcessServer]]:
    valkey = ValkeyProcess().start()
    unlimited = Limits(creates_per_minute=0, live_per_client=0, max_waiting_matches=0,
                       joins_per_minute_per_peer=0, registers_per_hour=0)
    nodes = [InProcessServer(ServerConfig(port=0, redis_url=valkey.url, limits=unlimited,
                                          runner_token=TOKEN, node_id=f"node{i}"))
             for i in (1, 2)]
    try:
        for node in nodes:
            node.start()
        yield valkey, nodes[0], nodes[1]
    finally:
        for node in nodes:
            node.stop()
        valkey.stop()


async def version_stats(url: str, agent_id: str, version_id: str) -> Any:
    store = Store(url, Holder("tests", "", 2000))
    await store.connect()
    try:
        return (await store.versions.stats(agent_id, [version_id]))[version_id]
    finally:
        await store.close()


def test_a_runner_that_lost_its_seat_to_a_runner_of_another_node_plays_and_counts_no_more(
        two_nodes: tuple[ValkeyProcess, InProcessServer, InProcessServer]) -> None:
    valkey, node1, node2 = two_nodes

    async def go() -> None:
        async with aio.insecure_channel(node1.target) as ch1, \
                aio.insecure_channel(node2.target) as ch2:
            a = await RawRunner(ch1, TOKEN).connect()
            a_beats = asyncio.ensure_future(a.keep_alive())
            agent, _ = await register_agent(node1.target, "fenced")
            version = await store_version(valkey.url, agent, {"bot.py": FIRST_LEGAL},
                                          "python3 bot.py")
            tournaments = TournamentClient(node1.target)
            created = await tournaments.create(
                "tricky_twist", [f"agent:{agent}", "heuristic", "random"], players=3,
                parallel=1, decision_ms=30_000)
            first = await a.next_assignment()
            assert first.handoffs == 0
            a_play = Agent(ch1, first.match_id, first.seat_token)
            await a_play.join(no_events=True, handout=1)

            # A's host is cut off: its Connect and Play streams drop; node2 hands the
            # seat to its runner B.
            b = await RawRunner(ch2, TOKEN).connect()
            b_beats = asyncio.ensure_future(b.keep_alive())
            a_beats.cancel()
            a.call.cancel()
            a_play.cancel()
            second = await b.next_assignment()
            assert (second.match_id, second.seat, second.handoffs) == \
                (first.match_id, first.seat, 1)

            # A comes back with its hand-out before B has joined: node1 runs the match
            # and never heard of B, yet refuses A.
            assert await join_status(ch1, first, handout=1) == \
                (grpc.StatusCode.ABORTED, "TAKEN_OVER")

            b_play = Agent(ch1, second.match_id, second.seat_token)
            await b_play.join(no_events=True, handout=2)

            # A's report does not count (the seat is B's); B's does.
            assert await refused(a.report(first, decisions=3)) == grpc.StatusCode.ABORTED
            await b.report(second, decisions=7)
            stats = await version_stats(valkey.url, agent, version.version_id)
            assert (stats.matches, stats.decisions) == (1, 7)

            b_beats.cancel()
            b.call.cancel()
            b_play.cancel()
            await tournaments.cancel(created.tournament_id, "enough")

    run(go(), timeout=60)


def test_a_seat_s_latest_hand_out_never_goes_back_when_nodes_note_them_out_of_order(
        two_nodes: tuple[ValkeyProcess, InProcessServer, InProcessServer]) -> None:
    valkey = two_nodes[0]

    async def go() -> None:
        store = Store(valkey.url, Holder("tests", "", 2000))
        await store.connect()
        try:
            runners = store.runners
            # The second hand-out is noted first (its node was quicker).
            await runners.note_played("m-order:1", "rn_new", "ag_x", "v1", 2)
            await runners.note_played("m-order:1", "rn_old", "ag_x", "v1", 1)
            assert await runners.latest_handout("m-order:1") == 2
            old = await runners.take_played("m-order:1", "rn_old")
            new = await runners.take_played("m-order:1", "rn_new")
            assert old is not None and old.handed_over
            assert new is not None and not new.handed_over
            assert await runners.take_played("m-order:1", "rn_new") is None  # once
            assert await runners.latest_handout("m-never-handed:0") == 0
        finally:
            await store.close()

    run(go())
