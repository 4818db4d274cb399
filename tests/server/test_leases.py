"""A node writes a match's moves only while it can vouch for the match's lease.

A node paused (SIGSTOP, a long GC, a frozen VM) past its leases wakes with its
agents' answers queued and its watchdog not yet run. Those answers must not be
written: the lease may be another node's by now. The process-level test of a
real pause is in ``tests/system/test_many_nodes.py``; here the state after such
a pause is set up exactly, so that the order of wake-ups does not matter.
"""

from __future__ import annotations

import time
from typing import Any

import grpc
import redis
import structlog
from grpc import aio
from twistarena import engine
from twistarena.server.config import ServerConfig
from twistarena.server.loops import stop_loops

from tests.support.agents import Agent, create, options, run, tokens
from tests.support.server import InProcessServer

GAME = "twisted"


def test_an_answer_after_the_lease_lapsed_unnoticed_is_not_written(valkey: Any) -> None:
    """The lease lapsed locally but neither the watchdog nor a heartbeat has looked:
    the answer that arrives first finds out, stops the match here with NOT_OWNER,
    and nothing reaches the match's log."""
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url)).start()
    cluster = srv.app.cluster
    assert cluster is not None
    client = redis.Redis.from_url(valkey.url)

    async def freeze_the_clock_keepers() -> None:
        """As if the node had just woken: its loops have not run since the pause."""
        await stop_loops([cluster._tasks.pop("watchdog"), cluster._tasks.pop("beat")],
                         "test")

    async def lapse(match_id: str) -> None:
        token, _until = cluster.keeper.valid[match_id]
        cluster.keeper.valid[match_id] = (token, time.monotonic() - 0.01)

    async def main() -> tuple[str, int, int, tuple[grpc.StatusCode, str, str]]:
        async with aio.insecure_channel(srv.target) as ch:
            created = await create(ch, options(GAME, 2, seed=5))
            mid = created.match.match_id
            agents = [Agent(ch, mid, tok) for _s, tok in sorted(tokens(created).items())]
            for agent in agents:
                await agent.join()
            me = agents[engine.make(GAME, 2, 5).to_act()[0]]
            req = (await me.expect("decision")).decision
            srv.call(freeze_the_clock_keepers())
            srv.call(lapse(mid))
            logged_before = int(client.llen(f"{{m:{mid}}}:log"))
            await me.answer(req.decision_id, req.legal_actions[0].id)
            await me.drain_to_end()
            return mid, logged_before, int(client.llen(f"{{m:{mid}}}:log")), \
                await me.status()

    try:
        with structlog.testing.capture_logs() as logs:
            mid, logged_before, logged_after, status = run(main())
    finally:
        client.close()
        srv.stop()
    code, _details, reason = status
    assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "NOT_OWNER"), status
    assert logged_after == logged_before, "an answer was written on a lapsed lease"
    lost = [entry for entry in logs if entry.get("event") == "leases_lost"]
    assert [entry["match_ids"] for entry in lost] == [[mid]], logs
    assert lost[0]["why"] == "lease not renewed in time"
    assert not [entry for entry in logs if entry.get("event") == "append_failed"], logs
