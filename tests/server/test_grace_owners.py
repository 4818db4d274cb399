"""A seat's reconnect grace is the match's, not its owner's: a node that takes a
running match over waits out only what is left of an absent seat's grace.

Real parts: two in-process nodes over one Valkey of their own, real gRPC
streams. The match runs on node A; one seat leaves and never comes back; part
of its grace later A drains and node B, started then, takes the match over. Had B started the
seat's grace afresh (as every new owner once did), a match changing owners
often would never see that seat's decisions time out.
"""

from __future__ import annotations

import asyncio
import time

from grpc import aio
from twistarena.server.config import Limits, ServerConfig
from twistarena.v1 import match_pb2 as mpb

from tests.support.agents import Agent, create, options, run, tokens
from tests.support.server import InProcessServer
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until

GRACE_MS = 6000
#: How long after the seat left node A hands the match over.
HANDED_AFTER_S = 2.5


def _node(url: str, name: str) -> InProcessServer:
    unlimited = Limits(creates_per_minute=0, live_per_client=0, max_waiting_matches=0,
                       joins_per_minute_per_peer=0, registers_per_hour=0)
    return InProcessServer(ServerConfig(port=0, redis_url=url, limits=unlimited,
                                        node_id=name, lease_ms=1000))


def test_a_new_owner_waits_out_only_what_is_left_of_an_absent_seats_grace() -> None:
    valkey = ValkeyProcess().start()
    a = _node(valkey.url, "nodeA").start()
    b: InProcessServer | None = None
    try:
        async def go() -> float:
            async with aio.insecure_channel(a.target) as ch:
                created = await create(ch, options("twisted", 2, seed=3, decision_ms=600_000,
                                                   grace_ms=GRACE_MS))
                mid = created.match.match_id
                agents = [Agent(ch, mid, tok) for _, tok in sorted(tokens(created).items())]
                for agent in agents:
                    await agent.join()
                referee = a.app.hub.referees[mid]  # type: ignore[union-attr]
                await wait_until(lambda: referee.status == mpb.MATCH_STATUS_RUNNING,
                                 "the match runs on node A")
                agents[1].cancel()  # seat 1 leaves for good
                await wait_until(lambda: referee.seats[1].stream is None,
                                 "node A sees seat 1 gone")
                left = time.monotonic()
                await wait_until(lambda: referee.seats[1].away_ms, "node A notes when")
                await asyncio.sleep(HANDED_AFTER_S)  # part of the grace goes by on A
                await asyncio.to_thread(a.stop)
                # B advertises no address: it claims the orphaned match as it starts.
                other = await asyncio.to_thread(_node(valkey.url, "nodeB").start)
                nonlocal b
                b = other
                hub = other.app.hub
                assert hub is not None
                await wait_until(lambda: mid in hub.referees, "node B takes the match over",
                                 timeout=20)
                taken = hub.referees[mid]
                assert not taken.seats[1].abandoned
                await wait_until(lambda: taken.seats[1].abandoned,
                                 "seat 1's grace ends on node B", timeout=20)
                return time.monotonic() - left

        ended_after = run(go(), timeout=60)
        # The grace ends when it would have on node A (plus the detection's
        # slack), not a full grace after the takeover.
        assert GRACE_MS / 1000 - 0.3 <= ended_after < GRACE_MS / 1000 + 1.0, ended_after
    finally:
        for node in (a, b):
            if node is not None:
                node.stop()
        valkey.stop()
