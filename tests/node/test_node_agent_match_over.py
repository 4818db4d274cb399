"""The Node agent back after its match ended: refused ``MATCH_OVER``, it reads the
end with ``GetMatch``, and a read that fails once (its server's store or link
blinked) is tried again as a Join is, instead of the agent exiting 2 without
the end that the store holds.

Real parts: the suite's server over Valkey, and a TCP proxy in front of it that
drops the first ``GetMatch`` of the match (then resets, as a link that comes back).
"""

from __future__ import annotations

import asyncio
from typing import Any

from twistarena.clients.sdk import MatchClient
from twistarena.clients.sdk.localbots import seat_agents

from tests.node.test_node_agent import finish_node, start_node
from tests.node.test_node_agent import node as node  # the fixture
from tests.support.agents import run
from tests.support.proxy import TcpProxy, blink_on, get_match_request


async def _scenario(node: str, target: str) -> dict[str, Any]:
    client = MatchClient(target)
    created = await client.create_match("twisted", 2, seed=52, decision_ms=30_000)
    match_id = created.match.match_id
    agents = seat_agents(target, created, ["random"], seed=6)
    ended = (await asyncio.gather(*(a.run() for a in agents)))[0]
    proxy = TcpProxy(int(target.rsplit(":", 1)[1])).start()
    try:
        blink_on(proxy, get_match_request(match_id))
        proc = await start_node(node, proxy.address, match_id, agents[0].token)
        code, line, stderr = await finish_node(proc)
        return {"ended": ended, "code": code, "line": line, "stderr": stderr,
                "tripped": proxy.tripped.is_set()}
    finally:
        proxy.stop()


def test_the_node_agent_reads_the_end_again_when_the_first_read_fails(
        node: str, server: Any) -> None:
    out = run(_scenario(node, server.target), timeout=90)
    assert out["tripped"], "the proxy never saw the GetMatch: no test"
    assert out["code"] == 0, out["stderr"][-2000:]
    assert out["line"]["result"]["scores"] == list(out["ended"].scores), out["line"]
