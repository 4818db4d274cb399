"""A seat's join is stored before the seat is told it joined.

The joins of a match's seats are written together (the last one with the start).
When that write fails, none of the joining seats may have been sent Joined:

- the store refuses the write (out of memory, a real Valkey with ``maxmemory``
  reached): each joining stream ends with UNAVAILABLE ``STORE_UNAVAILABLE`` and
  nothing before it; once the store takes writes again the seats join again and
  play the match to its end;
- the link to the store goes silent as the join is written: the node's lease
  lapses and it stops running the match; the joining streams end with
  UNAVAILABLE and nothing before it either.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import redis
from twistarena.storage import keys
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import play_pb2 as ppb

from tests.clients.helpers import run
from tests.support import agents as raw
from tests.support.proxy import TcpProxy
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import records, serve

#: Every write of a seat's joined flag holds this field name (and no other write).
JOIN_WRITE = b"joined:"


async def _join_refused(agents: list[raw.Agent]) -> list[dict[str, Any]]:
    """Each agent sends Join; what each got before its stream ended, and its status."""
    for agent in agents:
        await agent.send(ppb.AgentMessage(join=ppb.Join(
            match_id=agent.match_id, seat_token=agent.token, batched=True)))
    for agent in agents:
        await agent.drain_to_end(timeout=30)
    return [{"kinds": [m.WhichOneof("msg") for m in agent.received],
             "status": await agent.status()} for agent in agents]


def _told_only(seats: list[dict[str, Any]], reason: str) -> None:
    """Every seat's stream ended with UNAVAILABLE ``reason`` and no message before it."""
    for seat in seats:
        code, _details, got = seat["status"]
        assert (code, got) == (grpc.StatusCode.UNAVAILABLE, reason), seat
        assert seat["kinds"] == [], f"told something of a join never stored: {seat}"


async def _store_out_of_memory() -> dict[str, Any]:
    valkey = ValkeyProcess().start()
    node = serve("--redis-url", valkey.url, "--lease-ms", "10000")
    admin = redis.Redis(port=valkey.port)
    try:
        async with grpc.aio.insecure_channel(node.target) as channel:
            resp = await raw.create(channel, raw.options("twisted", 2, seed=7,
                                                         decision_ms=60_000))
            mid, tokens = resp.match.match_id, raw.tokens(resp)
            admin.config_set("maxmemory-policy", "noeviction")
            admin.config_set("maxmemory", 1)  # every write is refused from now on
            try:
                refused = await _join_refused(
                    [raw.Agent(channel, mid, token) for token in tokens.values()])
            finally:
                admin.config_set("maxmemory", 0)
            stored = sorted(k for k in admin.hkeys(keys.match_meta(mid))
                            if k.startswith(JOIN_WRITE))
            again = [raw.Agent(channel, mid, token) for token in tokens.values()]
            for agent in again:
                await agent.join(batched=True)
            results = await asyncio.gather(*(
                raw.play_to_end(agent, raw.random_chooser(seat), timeout=60)
                for seat, agent in enumerate(again)))
        return {"refused": refused, "results": results, "stored": stored,
                "failed_logs": [r for r in records(node) if r.get("event") == "join_failed"]}
    finally:
        node.cleanup()
        valkey.stop()


def test_a_join_the_store_refuses_is_not_acknowledged_and_the_seats_join_again() -> None:
    out = run(_store_out_of_memory(), timeout=120)
    _told_only(out["refused"], "STORE_UNAVAILABLE")
    assert out["stored"] == [], "a refused join left its flag in the store"
    assert out["failed_logs"] and out["failed_logs"][0]["seats"] == [0, 1], out["failed_logs"]
    assert [r.reason for r in out["results"]] == [mpb.END_REASON_COMPLETED] * 2


async def _link_cut_while_joining() -> dict[str, Any]:
    valkey = ValkeyProcess().start()
    proxy = TcpProxy(valkey.port).start()
    node = serve("--redis-url", f"redis://{proxy.address}/0", "--node-id", "cut",
                 "--advertise", "127.0.0.1:1", "--lease-ms", "1000")
    try:
        async with grpc.aio.insecure_channel(node.target) as channel:
            resp = await raw.create(channel, raw.options("twisted", 2, seed=8,
                                                         decision_ms=60_000))
            agents = [raw.Agent(channel, resp.match.match_id, token)
                      for token in raw.tokens(resp).values()]
            proxy.trip = (JOIN_WRITE,)
            joining = asyncio.ensure_future(_join_refused(agents))
            await wait_until(proxy.tripped.is_set, "the joins sent to the store", timeout=30)
            return {"refused": await asyncio.wait_for(joining, 60)}
    finally:
        node.cleanup()
        proxy.stop()
        valkey.stop()


def test_seats_joining_as_the_node_loses_its_store_are_not_told_they_joined() -> None:
    out = run(_link_cut_while_joining(), timeout=120)
    _told_only(out["refused"], "NOT_OWNER")
