"""What a node keeps per match must go when the match ends (or after a bound),
or a long-running node grows with every match it ever ran."""

from __future__ import annotations

from typing import Any

from grpc import aio
from twistarena.server.match.losses import AckMemory
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc

from tests.support.agents import create, options, run
from tests.support.waiting import wait_until

MATCHES = 6


def test_a_node_keeps_no_runner_or_append_encoding_of_an_ended_match(server: Any) -> None:
    hub = server.app.hub
    appender = server.app.store.appender

    async def main() -> list[str]:
        async with aio.insecure_channel(server.target) as ch:
            stub = mgrpc.MatchesStub(ch)
            ids = [(await create(ch, options("twisted", 2, seed=700 + i,
                                             house=("random", "random")))).match.match_id
                   for i in range(MATCHES)]

            async def all_over() -> bool:
                got = [await stub.GetMatch(mpb.GetMatchRequest(match_id=mid)) for mid in ids]
                return all(m.status == mpb.MATCH_STATUS_FINISHED for m in got)

            await wait_until(all_over, f"{MATCHES} house-bot matches finished", timeout=60)
            return ids

    ids = run(main())
    assert not set(ids) & set(hub.referees)
    assert [mid for mid in ids if appender.keeps(mid)] == []


def test_the_end_of_a_match_is_remembered_for_a_bounded_time() -> None:
    now = [0.0]
    memory = AckMemory(ended_kept_s=60.0, clock=lambda: now[0])
    memory.note("live", 3)
    for i in range(5):
        memory.note_end(f"m{i}", 10, b"result", mpb.MATCH_STATUS_FINISHED)
        now[0] += 10.0
    assert memory.get("m0") is not None and memory.get("m0").status  # type: ignore[union-attr]
    now[0] = 95.0
    memory.note_end("last", 10, b"result", mpb.MATCH_STATUS_FINISHED)
    # Ended over 60 s ago (m0 at 0 s ... m3 at 30 s): forgotten; the rest stays.
    assert [m for m in ("m0", "m1", "m2", "m3", "m4") if memory.get(m)] == ["m4"]
    assert memory.get("live") is not None and memory.get("last") is not None
    assert len(memory) == 3
