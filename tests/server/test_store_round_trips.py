"""What a match costs once: its creation and lease claim travel in one round trip
to the store, its engine state is built once; seats joining together are stored
in one fenced write, and the match starts only once every flag is stored."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis
from grpc import aio
from twistarena import engine
from twistarena.server.config import ServerConfig
from twistarena.server.match import seating
from twistarena.storage import keys
from twistarena.storage.scripts import Script
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb

from tests.support.agents import Agent, create, options, run, tokens
from tests.support.monitor import Monitor
from tests.support.proxy import TcpProxy
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until

FENCED_HSET = Script.read("fenced_hset").sha


def _meta_writes(commands: list[list[str]], match_id: str) -> list[dict[str, str]]:
    """The fields of each fenced write of the match's metadata, in order."""
    meta = keys.match_meta(match_id)
    writes = []
    for args in commands:
        if args[:2] == ["EVALSHA", FENCED_HSET] and args[3] == meta:
            fields = args[7:]  # after: sha, 2 keys, token, mode
            writes.append(dict(zip(fields[::2], fields[1::2], strict=True)))
    return writes


def _join(match_id: str, token: str) -> ppb.AgentMessage:
    return ppb.AgentMessage(join=ppb.Join(match_id=match_id, seat_token=token))


async def _joining(server: Any, match_id: str, count: int) -> None:
    """Wait until ``count`` seats of the match wait for their joins' write."""
    await wait_until(lambda: len(server.app.hub.get(match_id).joining) == count,
                     f"{count} seats joining match {match_id}")


def test_seats_joining_together_are_stored_in_one_write_before_the_start(
        server: Any, valkey: Any) -> None:
    async def main() -> tuple[str, list[dict[str, str]]]:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, options("twhist", 4, seed=7))
            mid = created.match.match_id
            agents = [Agent(ch, mid, t) for _s, t in sorted(tokens(created).items())]
            with Monitor(valkey.port) as monitor:
                await asyncio.gather(*(a.join(batched=True) for a in agents))
                # The match runs: the first seat to act is asked.
                await agents[engine.make("twhist", 4, 7).to_act()[0]].expect("decision")
                commands = await asyncio.to_thread(monitor.commands)
            return mid, _meta_writes(commands, mid)

    mid, writes = run(main(), timeout=60)
    running = str(mpb.MATCH_STATUS_RUNNING)
    # One write per seat before: three flags, then the last with the start.
    assert 1 <= len(writes) < 4, writes
    start = next(i for i, w in enumerate(writes) if w.get("status") == running)
    stored = {f for w in writes[:start + 1] for f in w if f.startswith("joined:")}
    assert stored == {f"joined:{s}" for s in range(4)}, (mid, writes)


def test_joins_waiting_for_their_write_are_stored_before_a_cancel_or_abandonment(
        server: Any, valkey: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The seats that joined count as joined when the match ends before their
    write was due (a window no test waits out)."""
    monkeypatch.setattr(seating, "JOIN_WINDOW_S", 60.0)

    async def main() -> tuple[str, mpb.Match]:
        async with aio.insecure_channel(server.target) as ch:
            stub = mgrpc.MatchesStub(ch)
            cancelled = await create(ch, options("twisted", 3, seed=8))
            mid = cancelled.match.match_id
            early = [Agent(ch, mid, token) for _s, token in sorted(tokens(cancelled).items())[:2]]
            for agent in early:  # Joined comes once the flags are stored: not waited for
                await agent.send(_join(mid, agent.token))
            await _joining(server, mid, 2)
            await stub.CancelMatch(mpb.CancelMatchRequest(match_id=mid))
            for agent in early:  # stored before the cancel: Joined, then the end
                await agent.expect("joined")
                await agent.expect("match_over")
            abandoned = await create(ch, options("twisted", 2, seed=9, join_ms=300))
            amid = abandoned.match.match_id
            joined = Agent(ch, amid, tokens(abandoned)[1])
            await joined.send(_join(amid, joined.token))
            await joined.expect("joined")
            over = await joined.expect("match_over")
            return mid, over.match_over

    mid, over = run(main(), timeout=60)
    meta = redis.Redis(port=valkey.port).hgetall(keys.match_meta(mid))
    assert {b"joined:0", b"joined:1"} <= set(meta) and b"joined:2" not in meta, meta
    # The seat that joined was present: it shares first place, the missing one is last.
    assert over.result.reason == mpb.END_REASON_ABANDONED
    assert list(over.result.places) == [2, 1], over.result


def test_a_match_created_here_claims_its_lease_in_the_write_that_stores_it(
        valkey: Any) -> None:
    proxy = TcpProxy(valkey.port).start()
    srv = InProcessServer(ServerConfig(port=0, redis_url=f"redis://{proxy.address}/0"))
    try:
        srv.start()

        async def main() -> str:
            async with aio.insecure_channel(srv.target) as ch:
                proxy.sent = []
                created = await create(ch, options("twisted", 2, seed=3))
                return created.match.match_id

        mid = run(main(), timeout=60)
        claim = Script.read("lease_claim").sha.encode()
        lease = keys.match_lease(mid).encode()
        claims = [c for c in proxy.sent or [] if claim in c and lease in c]
        assert len(claims) == 1, claims
        assert keys.match_meta(mid).encode() in claims[0], "the claim went on its own"
        runner = srv.app.hub.get(mid)
        assert runner is not None and runner.owner.startswith(srv.app.cluster.node_id)
    finally:
        srv.stop()
        proxy.stop()


def test_a_created_match_is_played_on_the_state_that_checked_its_options(
        server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[Any, ...]] = []
    make = engine.make

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(args[:3])
        return make(*args, **kwargs)

    monkeypatch.setattr(engine, "make", counted)

    async def main() -> str:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, options("twhist", 4, seed=2024))
            return created.match.match_id

    mid = run(main(), timeout=60)
    assert server.app.hub.get(mid) is not None
    assert made.count(("twhist", 4, 2024)) == 1, made


def test_a_seat_is_told_it_joined_only_once_its_join_is_stored(
        server: Any, valkey: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Acknowledged means stored: Joined reaches the first seat of a match that
    waits for another only after the write of its flag (the window's end)."""
    monkeypatch.setattr(seating, "JOIN_WINDOW_S", 0.3)
    store = redis.Redis(port=valkey.port)

    async def main() -> tuple[bytes | None, bytes | None]:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, options("twisted", 2, seed=12))
            mid = created.match.match_id
            first = Agent(ch, mid, tokens(created)[0])
            await first.send(_join(mid, first.token))
            await _joining(server, mid, 1)
            before = store.hget(keys.match_meta(mid), "joined:0")
            await first.expect("joined")
            return before, store.hget(keys.match_meta(mid), "joined:0")

    before, after = run(main(), timeout=60)
    assert before is None and after == b"1"
