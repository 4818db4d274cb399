"""An agent whose link goes silent (no FIN, no RST) is seen as gone within the
server's keepalive window, and its seat's reconnect grace starts then.

The agent reaches the node through a proxy that then blackholes the link. The
node must stop counting the seat as connected within keepalive time + timeout
(plus a margin for a loaded machine), close the stream (nothing more is
written into the dead link), and after the reconnect grace the seat's open
decision falls back by its rules: here FALLBACK_FORFEIT after one miss.
"""

from __future__ import annotations

import time
from typing import Any

import grpc
import pytest
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc

from tests.clients.helpers import run
from tests.support import agents as raw
from tests.support.proxy import TcpProxy
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import metric, serve

#: Slack for a loaded 2-core machine on top of the keepalive window.
MARGIN_S = 3.0


async def dead_peer(store_url: str, keepalive_ms: tuple[int, int],
                    grace_ms: int) -> dict[str, Any]:
    """Blackhole a seated agent's link; when the node saw the seat go, and when
    the match ended. Also used to measure the default window by hand."""
    node = serve("--redis-url", store_url, "--keepalive-time-ms", str(keepalive_ms[0]),
                 "--keepalive-timeout-ms", str(keepalive_ms[1]))
    proxy = TcpProxy(node.port).start()
    control = grpc.aio.insecure_channel(node.target)
    through = grpc.aio.insecure_channel(proxy.address)
    try:
        stub = mgrpc.MatchesStub(control)
        resp = await raw.create(control, raw.options(
            "twisted", 2, seed=5, decision_ms=600_000, grace_ms=grace_ms,
            fallback=mpb.FALLBACK_FORFEIT, forfeit_after=1, house=("", "random")))
        match_id = resp.match.match_id
        agent = raw.Agent(through, match_id, raw.tokens(resp)[0])
        await agent.join()
        await agent.expect("decision")  # an open decision, never answered

        async def seat_connected() -> bool:
            match = await stub.GetMatch(mpb.GetMatchRequest(match_id=match_id), timeout=5)
            return match.seats[0].connected

        assert await seat_connected()
        proxy.cut()
        cut = time.monotonic()

        async def gone() -> bool:
            return not await seat_connected()

        await wait_until(gone, "the node saw the silent seat go", timeout=90, interval=0.1)
        seen = time.monotonic() - cut
        streams_left = metric(node, "twistarena_play_streams")

        async def over() -> mpb.Match | None:
            match = await stub.GetMatch(mpb.GetMatchRequest(match_id=match_id), timeout=5)
            return match if match.status == mpb.MATCH_STATUS_FINISHED else None

        ended = await wait_until(over, "the match ended after the grace", timeout=60,
                                 interval=0.1)
        return {"seen_s": seen, "ended_s": time.monotonic() - cut,
                "streams_left": streams_left, "result": ended.result}
    finally:
        await through.close()
        await control.close()
        proxy.stop()
        node.cleanup()


@pytest.mark.clock
def test_a_silent_agent_is_seen_gone_within_the_keepalive_window(
        store: ValkeyProcess) -> None:
    keepalive = (1000, 1000)
    grace_ms = 1500
    out = run(dead_peer(store.url, keepalive, grace_ms), timeout=150)
    window = sum(keepalive) / 1000
    print(f"silent seat seen gone {out['seen_s']:.2f} s after the cut "
          f"(window {window:g} s), match over {out['ended_s']:.2f} s after it")
    assert out["seen_s"] < window + MARGIN_S, out
    assert out["streams_left"] == 0, "the node still holds a stream on the dead link"
    result = out["result"]
    assert result.reason == mpb.END_REASON_FORFEIT, result
    assert list(result.winners) == [1] and "seat 0" in result.detail, result
    # The fallback came from the reconnect grace, started when the seat was seen gone.
    assert out["ended_s"] >= out["seen_s"] + grace_ms / 1000 - 0.2, out
