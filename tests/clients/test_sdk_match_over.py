"""A seat that comes back after its match ended is refused ``MATCH_OVER`` and reads
the end with ``GetMatch`` (docs/protocol.md): a read that fails once (its server's
store or link blinked, as a node's does in a failover) is tried again, on any of
the agent's servers, as its Joins are. Read once, the agent gave up without the
end that the store holds.

Real parts: the suite's server over Valkey, and a TCP proxy in front of it that
drops the first ``GetMatch`` of the match (then resets, as a link that comes back).
"""

from __future__ import annotations

import asyncio
from typing import Any

from twistarena.bots import make_bot
from twistarena.clients.sdk import Agent, Backoff, MatchClient
from twistarena.clients.sdk.localbots import seat_agents

from tests.support.proxy import TcpProxy, blink_on, get_match_request

from .helpers import run


async def _scenario(target: str) -> dict[str, Any]:
    client = MatchClient(target)
    created = await client.create_match("twisted", 2, seed=51, decision_ms=30_000)
    match_id = created.match.match_id
    agents = seat_agents(target, created, ["random"], seed=5)
    ended = (await asyncio.gather(*(a.run() for a in agents)))[0]
    proxy = TcpProxy(int(target.rsplit(":", 1)[1])).start()
    try:
        blink_on(proxy, get_match_request(match_id))
        late = Agent(make_bot("random", "twisted", 1), server=[proxy.address], match_id=match_id,
                     token=agents[0].token,
                     backoff=Backoff(initial=0.05, maximum=0.3, give_up_after=20))
        heard = await late.run()
        return {"ended": ended, "heard": heard, "tripped": proxy.tripped.is_set(),
                "failures": late.stream_failures}
    finally:
        proxy.stop()


def test_a_seat_back_after_the_end_reads_it_again_when_the_first_read_fails(
        server: Any) -> None:
    out = run(_scenario(server.target), timeout=60)
    assert out["tripped"], "the proxy never saw the GetMatch: no test"
    assert [reason for _code, reason in out["failures"]] == ["MATCH_OVER"]
    assert out["heard"] == out["ended"]
