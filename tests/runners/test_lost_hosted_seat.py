"""A hosted seat the store lost while it kept the seat's match is put back in the
runners' line by the node that opens the match next, and the seat's hand-out
fence still refuses the runner that had it before.

Real parts: two in-process nodes over one Valkey of their own, raw runners
(Connect streams written by hand) and raw Play streams. Runner A is handed
the seat; node1 drains; Valkey is killed -9 and its AOF cut right after the
match's creation write (an OS crash), so the store comes back with the match
waiting and without the seat in the runners' line or its hand-out. Node2,
started then, opens the match.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import grpc
from grpc import aio
from twistarena.clients.sdk import register_agent
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.server.config import Limits, ServerConfig
from twistarena.storage import Holder, Store

from tests.support.agents import Agent, run
from tests.support.hosting import FIRST_LEGAL, store_version
from tests.support.rawrunner import RawRunner, join_status
from tests.support.server import InProcessServer
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import aof_incr_file

TOKEN = "rt_lost-seat-token"


def _node(url: str, name: str) -> InProcessServer:
    unlimited = Limits(creates_per_minute=0, live_per_client=0, max_waiting_matches=0,
                       joins_per_minute_per_peer=0, registers_per_hour=0)
    return InProcessServer(ServerConfig(port=0, redis_url=url, limits=unlimited,
                                        runner_token=TOKEN, node_id=name, lease_ms=1000))


def _commands(aof: bytes) -> Iterator[tuple[int, list[bytes]]]:
    """(offset, arguments) of each command an AOF holds, in order."""
    at = 0
    while at < len(aof):
        start = at
        end = aof.index(b"\r\n", at)
        count, at = int(aof[at + 1:end]), end + 2
        args = []
        for _ in range(count):
            end = aof.index(b"\r\n", at)
            size = int(aof[at + 1:end])
            args.append(aof[end + 2:end + 2 + size])
            at = end + 2 + size + 2
        yield start, args


def _cut_after_creation(aof: Path, match_id: str) -> bool:
    """Cut the AOF where an OS crash right after the match's creation would: the
    match's creation write kept, every write of its seat for the runners lost.
    Whether the creation write held the hosted seat's assignment."""
    data = aof.read_bytes()
    meta = f"{{m:{match_id}}}:meta".encode()
    created = kept = False
    for offset, args in _commands(data):
        if not created:
            created = meta in args and b"created_ms" in args
            kept = any(a.startswith(b"hosted:") for a in args)
            continue
        if any(b"{runners}" in a or b":playing:" in a or a.startswith(b"hosted:")
               for a in args):
            with aof.open("r+b") as f:
                f.truncate(offset)
            return kept
    raise AssertionError("no write of the hosted seat after the match's creation")


def test_a_hosted_seat_the_store_lost_goes_back_to_the_runners_when_its_match_opens() -> None:
    valkey = ValkeyProcess().start()
    node1 = _node(valkey.url, "node1").start()
    node2: InProcessServer | None = None
    restarted: ValkeyProcess | None = None
    try:
        async def go() -> None:
            nonlocal node2
            async with aio.insecure_channel(node1.target) as ch1:
                a = await RawRunner(ch1, TOKEN).connect()
                agent, _ = await register_agent(node1.target, "lost-seat")
                await store_version(valkey.url, agent, {"bot.py": FIRST_LEGAL},
                                    "python3 bot.py")
                await TournamentClient(node1.target).create(
                    "tricky_twist", [f"agent:{agent}", "heuristic", "random"], players=3,
                    parallel=1, decision_ms=30_000)
                first = await a.next_assignment()
                assert first.handoffs == 0  # runner A plays it as hand-out 1
                key = f"{first.match_id}:{first.seat}"
                a.call.cancel()
            await asyncio.to_thread(node1.stop)
            valkey.kill()
            kept = await asyncio.to_thread(_cut_after_creation, aof_incr_file(valkey.data_dir),
                                    first.match_id)
            nonlocal restarted
            restarted = await asyncio.to_thread(
                ValkeyProcess(valkey.data_dir, port=valkey.port).start)
            node2 = await asyncio.to_thread(_node(valkey.url, "node2").start)
            hub = node2.app.hub
            assert hub is not None
            await wait_until(lambda: first.match_id in hub.referees,
                             "node2 opens the waiting match", timeout=20)
            async with aio.insecure_channel(node2.target) as ch2:
                b = await RawRunner(ch2, TOKEN).connect()
                beats = asyncio.ensure_future(b.keep_alive())
                second = await b.next_assignment()
                assert kept, "the creation write keeps the hosted seat's assignment"
                assert (second.match_id, second.seat, second.seat_token) == \
                    (first.match_id, first.seat, first.seat_token)
                # A hand-out of the seat may have been lost with it: B's is past it.
                assert second.handoffs + 1 > first.handoffs + 1, second.handoffs
                # Runner A, back with its hand-out, is refused.
                assert await join_status(ch2, first, handout=first.handoffs + 1) == \
                    (grpc.StatusCode.ABORTED, "TAKEN_OVER")
                played = Agent(ch2, second.match_id, second.seat_token)
                await played.join(no_events=True, handout=second.handoffs + 1)
                # Put back once: while B holds it, putting it back again adds nothing.
                store = Store(valkey.url, Holder("tests", "", 2000))
                await store.connect()
                try:
                    assert not await store.runners.add_seat(key, second.SerializeToString(),
                                                            lost=True)
                    assert await store.runners.waiting() == 0
                finally:
                    await store.close()
                beats.cancel()
                b.call.cancel()
                played.cancel()

        run(go(), timeout=90)
    finally:
        for node in (node1, node2):
            if node is not None:
                node.stop()
        for store in (restarted, valkey):
            if store is not None:
                store.stop()
