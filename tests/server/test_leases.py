"""A node writes a match's moves only while it can vouch for the match's lease.

A node paused (SIGSTOP, a long GC, a frozen VM) past its leases wakes with its
agents' answers queued and its watchdog not yet run. Those answers must not be
written: the lease may be another node's by now. The process-level test of a
real pause is in ``tests/system/test_many_nodes.py``; here the state after such
a pause is set up exactly, so that the order of wake-ups does not matter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, MutableMapping
from typing import Any

import grpc
import redis
import structlog
from grpc import aio
from twistarena import engine
from twistarena.server.config import ServerConfig
from twistarena.server.loops import stop_loops
from twistarena.storage import Holder, Store

from tests.support.agents import Agent, create, options, run, tokens
from tests.support.server import InProcessServer

GAME = "twisted"

#: What happens on the node between the decision and its answer.
Meanwhile = Callable[[InProcessServer, str], Coroutine[Any, Any, None]]
Logs = list[MutableMapping[str, Any]]


async def _joined(ch: aio.Channel) -> tuple[str, Agent]:
    """A new match, every seat joined: its id, and the agent whose decision is open."""
    created = await create(ch, options(GAME, 2, seed=5))
    mid = created.match.match_id
    agents = [Agent(ch, mid, tok) for _s, tok in sorted(tokens(created).items())]
    for agent in agents:
        await agent.join()
    return mid, agents[engine.make(GAME, 2, 5).to_act()[0]]


def _answer_after(valkey: Any, meanwhile: Meanwhile
                  ) -> tuple[str, int, int, tuple[grpc.StatusCode, str, str], Logs]:
    """A match with a decision open; the node's watchdog and heartbeat stopped, as
    if it had just woken; ``meanwhile`` runs; then the answer comes. Returns (match
    id, log length before and after the answer, the stream's status, the logs)."""
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url)).start()
    cluster = srv.app.cluster
    assert cluster is not None
    client = redis.Redis.from_url(valkey.url)

    async def freeze_the_lease_keeper() -> None:
        await stop_loops([cluster._tasks.pop("watchdog"), cluster._tasks.pop("beat")],
                         "test")

    async def main() -> tuple[str, int, int, tuple[grpc.StatusCode, str, str]]:
        async with aio.insecure_channel(srv.target) as ch:
            mid, me = await _joined(ch)
            req = (await me.expect("decision")).decision
            srv.call(freeze_the_lease_keeper())
            await meanwhile(srv, mid)
            logged_before = int(client.llen(f"{{m:{mid}}}:log"))
            await me.answer(req.decision_id, req.legal_actions[0].id)
            await me.drain_to_end()
            return mid, logged_before, int(client.llen(f"{{m:{mid}}}:log")), \
                await me.status()

    try:
        with structlog.testing.capture_logs() as logs:
            mid, before, after, status = run(main())
    finally:
        client.close()
        srv.stop()
    return mid, before, after, status, logs


def _lost(logs: Logs) -> list[tuple[list[str], str]]:
    return [(entry["match_ids"], entry["why"]) for entry in logs
            if entry.get("event") == "leases_lost"]


def test_an_answer_after_the_lease_lapsed_unnoticed_is_not_written(valkey: Any) -> None:
    """The lease lapsed locally but neither the watchdog nor a heartbeat has looked:
    the answer that arrives first finds out, stops the match here with NOT_OWNER,
    and nothing reaches the match's log."""
    async def lapse(srv: InProcessServer, mid: str) -> None:
        keeper = srv.app.cluster.keeper  # type: ignore[union-attr]

        async def on_the_server() -> None:
            token, _until = keeper.valid[mid]
            keeper.valid[mid] = (token, time.monotonic() - 0.01)

        srv.call(on_the_server())

    mid, before, after, status, logs = _answer_after(valkey, lapse)
    code, _details, reason = status
    assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "NOT_OWNER"), status
    assert after == before, "an answer was written on a lapsed lease"
    assert _lost(logs) == [([mid], "lease not renewed in time")], logs
    assert not [entry for entry in logs if entry.get("event") == "append_failed"], logs


def test_a_fenced_answer_is_reported_as_a_lost_lease(valkey: Any) -> None:
    """Another node took the lease while this one still thought it valid (a write
    already on its way when the node paused): the store refuses the append, and the
    node counts and logs the lost lease like any other."""
    async def taken_elsewhere(_srv: InProcessServer, mid: str) -> None:
        other = Store(valkey.url, Holder("elsewhere", "127.0.0.1:9", 2000))
        await other.connect()
        try:
            await other.matches.claim(mid, force=True)
        finally:
            await other.close()

    mid, before, after, status, logs = _answer_after(valkey, taken_elsewhere)
    code, _details, reason = status
    assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "NOT_OWNER"), status
    assert after == before
    assert _lost(logs) == [([mid], "the store fenced a write")], logs
    assert [entry["match_id"] for entry in logs if entry.get("event") == "append_failed"] \
        == [mid], logs


def test_a_referee_stopped_while_it_reads_a_loss_does_not_play_on(valkey: Any) -> None:
    """The store restarted without a match's tail; while the referee read what it
    kept (slowly, through the restart), the renewal of its lease was refused and
    the node stopped it, then claimed the match again with a new referee. The
    stopped one must not go on to rewind, reopen the decisions and write: it would
    be a second referee of the match on this node."""
    from twistarena.server.match import rewinds

    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url)).start()

    async def main() -> str:
        async with aio.insecure_channel(srv.target) as ch:
            mid, me = await _joined(ch)
            await me.expect("decision")
            return mid

    async def stopped_then_loss(mid: str) -> None:
        hub = srv.app.hub
        assert hub is not None
        referee = hub.get(mid)
        assert referee is not None
        async with referee.lock:
            referee.stop_not_owner(redirect=False)
            await rewinds.store_lost(referee, "the store kept 0 of 1 acknowledged action(s)", 1)

    try:
        with structlog.testing.capture_logs() as logs:
            mid = run(main())
            srv.call(stopped_then_loss(mid))
    finally:
        srv.stop()
    assert not [e for e in logs if e.get("event") == "store_loss"], logs
