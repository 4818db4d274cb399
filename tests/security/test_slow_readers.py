"""Readers that do not read: a spectator or a player that never reads its
stream is cut with RESOURCE_EXHAUSTED (SLOW_READER) and may resume; the match
never waits for it. Streams that have nothing to do (their match waits for
players that never come) are closed after their own limit."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from grpc import aio
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc
from twistarena.wire import REASON_KEY

from tests.security.hostile import limited_server
from tests.support.agents import Agent, create, options, play_to_end, random_chooser, run, tokens
from tests.support.waiting import wait_until

#: A client whose receive window never grows: what it does not read stays on the server.
SMALL_WINDOW = (("grpc.http2.bdp_probe", 0),)


async def read_all(call: Any) -> tuple[list[Any], grpc.StatusCode, str]:
    """Every message of a stream, then how it ended (code, reason)."""
    messages = []
    try:
        async for msg in call:
            messages.append(msg)
    except aio.AioRpcError as err:
        reason = next((v for k, v in err.trailing_metadata() or () if k == REASON_KEY), "")
        return messages, err.code(), reason
    return messages, grpc.StatusCode.OK, ""


async def match_status(ch: aio.Channel, mid: str) -> mpb.Match:
    got: mpb.Match = await mgrpc.MatchesStub(ch).GetMatch(mpb.GetMatchRequest(match_id=mid))
    return got


def test_spectators_that_never_read_are_cut_and_may_resume(valkey: Any) -> None:
    with limited_server(valkey, stream_queue=64, stalled_write_s=1.0) as srv:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                created = await create(ch, options("tricky_twist", 4, seed=3,
                                                   house=("random",) * 4))
                mid = created.match.match_id
                channels = [aio.insecure_channel(srv.target, options=SMALL_WINDOW)
                            for _ in range(6)]
                watchers = [pgrpc.WatchStub(c).Watch(ppb.WatchRequest(match_id=mid))
                            for c in channels]

                async def over() -> bool:
                    return (await match_status(ch, mid)).status == mpb.MATCH_STATUS_FINISHED

                # The match does not wait for its spectators...
                await wait_until(over, "the watched match finished", timeout=60)

                async def none_watching() -> bool:
                    return not srv.app.streams.active
                # ...and the server lets go of them.
                await wait_until(none_watching, "every unread watcher cut", timeout=10)
                for call in watchers:
                    messages, code, reason = await read_all(call)
                    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "SLOW_READER")
                    seqs = [m.event.seq for m in messages if m.WhichOneof("msg") == "event"]
                    assert seqs == list(range(len(seqs)))
                    # Resume from the last seq received: the rest, in order, to the end.
                    rest, code, _ = await read_all(pgrpc.WatchStub(ch).Watch(
                        ppb.WatchRequest(match_id=mid, from_seq=len(seqs))))
                    assert code is grpc.StatusCode.OK
                    more = [m.event.seq for m in rest if m.WhichOneof("msg") == "event"]
                    assert more and more[0] == len(seqs)
                    assert more == list(range(len(seqs), len(seqs) + len(more)))
                    assert rest[-1].WhichOneof("msg") == "match_over"
            for c in channels:
                await c.close()
        run(main())


def test_a_player_that_never_reads_is_cut_and_keeps_its_seat(valkey: Any) -> None:
    with limited_server(valkey) as srv:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch, \
                    aio.insecure_channel(srv.target, options=SMALL_WINDOW) as slow_ch:
                created = await create(ch, options("tricky_twist", 4, seed=5, decision_ms=20,
                                                   grace_ms=60_000))
                mid = created.match.match_id
                toks = tokens(created)
                slow = pgrpc.PlayStub(slow_ch).Play()
                await slow.write(ppb.AgentMessage(join=ppb.Join(match_id=mid,
                                                                seat_token=toks[0])))
                agents = [Agent(ch, mid, toks[s]) for s in (1, 2, 3)]
                for agent in agents:
                    await agent.join()
                players = [asyncio.ensure_future(play_to_end(a, random_chooser(i)))
                           for i, a in enumerate(agents)]

                async def seat_dropped() -> bool:
                    got = await match_status(ch, mid)
                    return got.status == mpb.MATCH_STATUS_RUNNING and \
                        not got.seats[0].connected
                await wait_until(seat_dropped, "the unread player stream cut", timeout=30)
                loop = asyncio.get_running_loop()
                started = loop.time()
                # Its seat is kept: the same token joins again and resumes.
                back = Agent(ch, mid, toks[0])
                joined = await back.join(resume_from_seq=0)
                assert joined.seat == 0 and loop.time() - started < 5
                await asyncio.gather(*players, play_to_end(back, random_chooser(9)))
                _messages, code, reason = await read_all(slow)
                assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "SLOW_READER")
        run(main())


def test_streams_idle_while_their_match_waits_are_closed(valkey: Any) -> None:
    with limited_server(valkey, idle_stream_s=1.0) as srv:
        async def main() -> None:
            async with aio.insecure_channel(srv.target) as ch:
                waiting = await create(ch, options("twisted", 2))
                lonely = Agent(ch, waiting.match.match_id, tokens(waiting)[0])
                await lonely.join()
                spectator = pgrpc.WatchStub(ch).Watch(
                    ppb.WatchRequest(match_id=waiting.match.match_id))
                running = await create(ch, options("twisted", 2, decision_ms=600_000))
                mid = running.match.match_id
                thinkers = [Agent(ch, mid, tok) for _s, tok in sorted(tokens(running).items())]
                for agent in thinkers:
                    await agent.join()
                await lonely.drain_to_end(timeout=10)
                code, details, reason = await lonely.status()
                assert (code, reason) == (grpc.StatusCode.DEADLINE_EXCEEDED, "IDLE_STREAM")
                assert "waits for players" in details
                _messages, code, reason = await read_all(spectator)
                assert (code, reason) == (grpc.StatusCode.DEADLINE_EXCEEDED, "IDLE_STREAM")
                # A running match's players may think for as long as their clock allows.
                got = await match_status(ch, mid)
                assert [s.connected for s in got.seats] == [True, True]
        run(main())
