"""A seat that comes back after its match ended is refused ``MATCH_OVER`` and reads
the end with ``GetMatch`` (docs/protocol.md): a read that fails once (its server's
store or link blinked, as a node's does in a failover) is tried again, on any of
the agent's servers, as its Joins are. Read once, the agent gave up without the
end that the store holds.

Real parts: the suite's server over Valkey, and a TCP proxy in front of it that
drops the first ``GetMatch`` of the match (then resets, as a link that comes back).
"""

from __future__ import annotations

from typing import Any

from twistarena.bots import make_bot
from twistarena.clients.sdk import Agent, Backoff

from tests.support.proxy import get_match_blinks

from .helpers import played_out, run


async def _scenario(target: str) -> dict[str, Any]:
    match_id, token, ended = await played_out(target, seed=51)
    proxy = get_match_blinks(target, match_id)
    try:
        late = Agent(make_bot("random", "twisted", 1), server=[proxy.address], match_id=match_id,
                     token=token, backoff=Backoff(initial=0.05, maximum=0.3, give_up_after=20))
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
