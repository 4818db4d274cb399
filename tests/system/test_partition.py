"""A node cut from its store turns agents away at once, and its matches move on.

Three nodes share one Valkey, each through a TCP proxy of its own. The link of
the node that owns the most matches goes silent (no FIN, no RST). Its leases
lapse, the other nodes take its matches over, and its agents (SDK, every node
in their server list) must find the new owners: the cut node answers every
call that needs the store at once with UNAVAILABLE, STORE_UNAVAILABLE and a
``twistarena-retry-after-ms`` hint, and the agents try another node before it.
Every match of the cut node must acknowledge an answer elsewhere within its
lease plus 1 s of the cut.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from typing import Any

import grpc
import pytest
import redis
from twistarena.clients.sdk import MatchClient
from twistarena.wire import RETRY_AFTER_KEY

from tests.clients.helpers import Acknowledgements, replay_problems, run
from tests.support import agents as raw
from tests.support.nodes import Node, health_not_serving, owners
from tests.support.proxy import TcpProxy
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import finish_all, start_matches

LEASE_MS = 1000
MATCHES = 6


async def _refusal(address: str, match_id: str, token: str) -> dict[str, Any]:
    """A Join to the cut node: how fast and how it is refused."""
    async with grpc.aio.insecure_channel(address) as channel:
        agent = raw.Agent(channel, match_id, token)
        started = time.monotonic()
        with contextlib.suppress(AssertionError):  # refused: the status says how
            await agent.join()
        took = time.monotonic() - started
        code, _details, reason = await agent.status()
        trailers = dict(await agent.call.trailing_metadata() or ())
    return {"took": took, "code": code, "reason": reason, "trailers": trailers}


async def _partition() -> dict[str, Any]:
    valkey = ValkeyProcess().start()
    proxies = [TcpProxy(valkey.port).start() for _ in range(3)]
    nodes = [Node(f"node{i + 1}", f"redis://{p.address}/0", lease_ms=LEASE_MS)
             for i, p in enumerate(proxies)]
    tasks: list[asyncio.Task[Any]] = []
    loop = asyncio.get_running_loop()
    acks = Acknowledgements()
    try:
        for node in nodes:
            node.start()
        addresses = [n.address for n in nodes]
        _client, created, agents, tasks = await start_matches(
            addresses[0], MATCHES, seed=500, game=("twhist", 3), delay=0.01, tracer=acks)
        for agent in agents:
            agent.servers = addresses[:]
        ids = [r.match.match_id for r in created]
        await wait_until(lambda: all(acks.count(m) >= 3 for m in ids),
                         "every match played", timeout=30)
        admin = redis.Redis(port=valkey.port)
        owned = {mid: row.get("node", "") for mid, row in owners(admin, ids).items()}
        admin.close()
        victim_id, _count = Counter(owned.values()).most_common(1)[0]
        victim = next(i for i, n in enumerate(nodes) if n.node_id == victim_id)
        moved = [mid for mid, node_id in owned.items() if node_id == victim_id]
        proxies[victim].cut()
        cut = loop.time()
        await wait_until(lambda: health_not_serving(addresses[victim]),
                         "the cut node says NOT_SERVING", timeout=10)
        token = next(t.token for r in created if r.match.match_id == moved[0]
                     for t in r.seat_tokens)
        refusal = await _refusal(addresses[victim], moved[0], token)
        results = await finish_all(tasks, agents, nodes[(victim + 1) % 3].proc)  # type: ignore[arg-type]
        cut_off = addresses[victim]
        first_ack = {mid: min((t for t, where in acks.at[mid]
                               if t > cut and where != cut_off), default=float("inf")) - cut
                     for mid in moved}
        every = MatchClient(addresses)
        replays = {mid: await every.get_replay(mid) for mid in ids}
        return {"refusal": refusal, "first_ack": first_ack, "results": results,
                "replays": replays, "victim": victim_id}
    finally:
        for task in tasks:
            task.cancel()
        for node in nodes:
            node.cleanup()
        for proxy in proxies:
            proxy.stop()
        valkey.stop()


@pytest.mark.clock
def test_a_cut_node_turns_agents_away_and_its_matches_acknowledge_within_a_lease() -> None:
    out = run(_partition(), timeout=180)
    refusal, first_ack = out["refusal"], out["first_ack"]
    print(f"partition of {out['victim']}: Join refused in {refusal['took'] * 1000:.0f} ms "
          f"({refusal['reason']}, {refusal['trailers']}); first acknowledgement elsewhere "
          f"per match {', '.join(f'{s:.2f}' for s in sorted(first_ack.values()))} s after the "
          f"cut (lease {LEASE_MS / 1000:g} s)")
    assert refusal["code"] == grpc.StatusCode.UNAVAILABLE
    assert refusal["reason"] == "STORE_UNAVAILABLE"
    assert int(refusal["trailers"][RETRY_AFTER_KEY]) > 0
    assert refusal["took"] < 0.5, refusal
    assert all(r.reason == "COMPLETED" for r in out["results"])
    for match_id, replay in out["replays"].items():
        assert replay_problems(replay) == [], match_id
    assert max(first_ack.values()) <= LEASE_MS / 1000 + 1.0, first_ack
