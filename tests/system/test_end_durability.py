"""The end of a match is told to anyone only once the store says it is durable.

The node that ran the match waits for its end's WAITAOF (tests/system/
test_store_loss.py freezes the store while it waits), but any node reads the
end from the store as soon as the store executed it. A node without the
match's runner that reads a fresh end must confirm it durable before telling
it: no seat may hear an end the store then loses (every end a seat heard is the
stored end, or the seat learned of the void).
"""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import redis
from twistarena.clients.sdk import Agent, Backoff
from twistarena.v1 import match_pb2 as mpb

from tests.clients.helpers import replay_problems, run
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
        return {"agents": [*agents, late], "results": results,
                "replay": await client.get_replay(mid),
                "losses": loss_records(node_a).get(mid, [])}
    finally:
        for task in tasks:
            task.cancel()
        node_a.cleanup()
        node_b.cleanup()
        valkey.kill()
        shutil.rmtree(valkey.data_dir, ignore_errors=True)


def _check(out: dict[str, Any]) -> None:
    """Every seat heard the end the store holds, after a loss that is not silent."""
    replay = out["replay"]
    stored = replay.match.result
    assert replay.match.status in (mpb.MATCH_STATUS_FINISHED, mpb.MATCH_STATUS_CANCELLED)
    assert replay_problems(replay) == []
    assert out["losses"], "the store lost acknowledged actions silently"
    stored_reason = mpb.EndReason.Name(stored.reason).removeprefix("END_REASON_")
    for agent, heard in zip(out["agents"], out["results"], strict=True):
        assert heard.reason == stored_reason, (
            f"seat {agent.seat} heard {heard.reason}, the store holds {stored}")
        assert list(heard.scores) == list(stored.scores)


def test_an_end_read_before_its_fsync_is_not_told() -> None:
    """A node without the match's runner reads an end the store has not made
    durable: it must not tell it (the seat hears the end that stays)."""
    out = run(_end_read_before_its_fsync(), timeout=150)
    _check(out)
    assert out["replay"].match.result.reason == mpb.END_REASON_VOIDED
