"""The end of a match is told to anyone only once the store says it is durable.

Valkey (AOF ``everysec``) executes a match's end and is frozen (SIGSTOP) while
the end's WAITAOF is pending: the end is in its memory, not known to be on its
disk. The link is silenced at that moment, so the node hears nothing more of
that write. Valkey is then killed -9, its AOF cut back to a size fsynced during
play (what an OS crash leaves), and started again. No seat may have heard an
end the store does not hold: every end a seat heard is the stored end, or the
seat learned of the void. A node without the match's runner may read the end
from the store before its fsync: it confirms it durable before telling it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from typing import Any

import redis
from twistarena.clients.sdk import Agent, Backoff
from twistarena.v1 import match_pb2 as mpb

from tests.clients.helpers import replay_problems, run
from tests.support.proxy import TcpProxy
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import (
    accepted_total,
    aof_incr_file,
    finish_all,
    fsynced_aof_size,
    loss_records,
    serve,
    start_matches,
)

#: The fenced write of a match's end: its ``result`` field (the only command that sends it).
END_WRITE = b"$6\r\nresult\r\n"


def _freeze_once_ended(valkey: ValkeyProcess, match_id: str) -> None:
    """Wait (bounded) until Valkey has executed the end, then freeze it: its
    WAITAOF cannot answer."""
    client = redis.Redis(host="127.0.0.1", port=valkey.port, socket_timeout=2)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if client.hexists(f"{{m:{match_id}}}:meta", "result"):
                break
            time.sleep(0.001)
    finally:
        client.close()
    assert valkey.proc is not None
    os.kill(valkey.proc.pid, signal.SIGSTOP)


async def _end_waiting_for_fsync(policy: str) -> dict[str, Any]:
    valkey = ValkeyProcess().start()
    proxy = TcpProxy(valkey.port).start()
    node = serve("--redis-url", f"redis://{proxy.address}/0", "--lease-ms", "10000",
                 "--on-store-loss", policy)
    tasks: list[asyncio.Task[Any]] = []
    try:
        client, created, agents, tasks = await start_matches(node.target, 1, seed=310,
                                                            game=("twhist", 3), delay=0.01)
        [mid] = [r.match.match_id for r in created]
        await wait_until(lambda: accepted_total(agents) >= 15, "play started", timeout=30)
        aof = aof_incr_file(valkey.data_dir)
        cut = await asyncio.to_thread(fsynced_aof_size, valkey.port, aof)
        proxy.on_trip = lambda: _freeze_once_ended(valkey, mid)
        proxy.trip = (END_WRITE,)
        await wait_until(proxy.tripped.is_set, "the end sent to the store", timeout=60)
        valkey.kill()  # SIGKILL ends a stopped process too
        with aof.open("r+b") as f:
            f.truncate(cut)
        valkey.start()
        proxy.heal()
        results = await finish_all(tasks, agents, node)
        stored = [await a.stored_result() for a in agents]
        return {"agents": agents, "results": results, "stored": stored,
                "replay": await client.get_replay(mid), "losses": loss_records(node).get(mid, [])}
    finally:
        for task in tasks:
            task.cancel()
        node.cleanup()
        proxy.stop()
        valkey.kill()
        shutil.rmtree(valkey.data_dir, ignore_errors=True)


def _check(out: dict[str, Any]) -> None:
    replay = out["replay"]
    stored = replay.match.result
    assert replay.match.status in (mpb.MATCH_STATUS_FINISHED, mpb.MATCH_STATUS_CANCELLED)
    assert replay_problems(replay) == []
    assert out["losses"], "the store lost acknowledged actions silently"
    stored_reason = mpb.EndReason.Name(stored.reason).removeprefix("END_REASON_")
    for agent, heard in zip(out["agents"], out["results"], strict=True):
        # What the seat heard is what the store holds: never an end it lost.
        assert heard.reason == stored_reason, (
            f"seat {agent.seat} heard {heard.reason}, the store holds {stored}")
        assert list(heard.scores) == list(stored.scores)
    for outcome in out["stored"]:
        assert outcome is not None and outcome.reason == stored_reason


def test_an_end_waiting_for_its_fsync_is_not_announced() -> None:
    out = run(_end_waiting_for_fsync("void"), timeout=150)
    _check(out)
    assert out["replay"].match.result.reason == mpb.END_REASON_VOIDED


# -- an end read from the store before its fsync ------------------------------------


async def _end_read_before_its_fsync() -> dict[str, Any]:
    """Two nodes on one Valkey. Right after a size known fsynced, Valkey stops
    fsyncing (``appendfsync no``: what an OS crash then loses is everything
    after that size). The match ends on node A, whose WAITAOF cannot answer;
    a seat that comes back through node B meanwhile asks how the match went.
    Valkey is then killed -9, its AOF cut to that size, and started again."""
    valkey = ValkeyProcess().start()
    node_a = serve("--redis-url", valkey.url, "--lease-ms", "10000", "--on-store-loss", "void")
    node_b = serve("--redis-url", valkey.url, "--lease-ms", "10000", "--on-store-loss", "void")
    tasks: list[asyncio.Task[Any]] = []
    try:
        client, created, agents, tasks = await start_matches(node_a.target, 1, seed=320,
                                                            game=("twhist", 3), delay=0.01)
        [mid] = [r.match.match_id for r in created]
        await wait_until(lambda: accepted_total(agents) >= 15, "play started", timeout=30)
        aof = aof_incr_file(valkey.data_dir)
        cut = await asyncio.to_thread(fsynced_aof_size, valkey.port, aof)
        store = redis.Redis(host="127.0.0.1", port=valkey.port)
        store.config_set("appendfsync", "no")
        await wait_until(lambda: bool(store.hexists(f"{{m:{mid}}}:meta", "result")),
                         "the end executed by the store", timeout=60)
        store.close()
        token = created[0].seat_tokens[0].token
        late = Agent(lambda observation, legal: legal[0], server=node_b.target, match_id=mid,
                     token=token, backoff=Backoff(initial=0.05, maximum=0.5, give_up_after=60))
        late_task = asyncio.ensure_future(late.run())
        tasks.append(late_task)
        # The late seat asks while the end is not durable (its answer, if any, comes now).
        await asyncio.wait([late_task], timeout=3)
        valkey.kill()
        with aof.open("r+b") as f:
            f.truncate(cut)
        valkey.start()
        results = await finish_all(tasks, [*agents, late], node_a)
        return {"agents": [*agents, late], "results": results, "stored": [],
                "replay": await client.get_replay(mid),
                "losses": loss_records(node_a).get(mid, [])}
    finally:
        for task in tasks:
            task.cancel()
        node_a.cleanup()
        node_b.cleanup()
        valkey.kill()
        shutil.rmtree(valkey.data_dir, ignore_errors=True)


def test_an_end_read_before_its_fsync_is_not_told() -> None:
    """A node without the match's runner reads an end the store has not made
    durable: it must not tell it (the seat hears the end that stays)."""
    out = run(_end_read_before_its_fsync(), timeout=150)
    _check(out)
    assert out["replay"].match.result.reason == mpb.END_REASON_VOIDED
