"""The Node agent back after its match ended: refused ``MATCH_OVER``, it reads the
end with ``GetMatch``, and a read that fails once (its server's store or link
blinked) is tried again as a Join is, instead of the agent exiting 2 without
the end that the store holds.

Real parts: the suite's server over Valkey, and a TCP proxy in front of it that
drops the first ``GetMatch`` of the match (then resets, as a link that comes back).
"""

from __future__ import annotations

from typing import Any

from tests.clients.helpers import played_out
from tests.node.test_node_agent import finish_node, start_node
from tests.node.test_node_agent import node as node  # the fixture
from tests.support.agents import run
from tests.support.proxy import get_match_blinks


async def _scenario(node: str, target: str) -> dict[str, Any]:
    match_id, token, ended = await played_out(target, seed=52)
    proxy = get_match_blinks(target, match_id)
    try:
        proc = await start_node(node, proxy.address, match_id, token)
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
