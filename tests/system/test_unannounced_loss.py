"""A loss no server can announce: the node that acknowledged the actions is
killed -9 together with the store, whose AOF comes back cut to its last
fsync. The restarted node has no memory of what was acknowledged, so no
Rewound is sent; the seats are asked again decisions they had been told were
accepted. The SDK answers them again, the same way, rather than waiting on a
decision it thinks settled: every match plays on and ends by its rules
(before, they waited out each decision's full time)."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

from tests.clients.helpers import run
from tests.support.valkey import ValkeyProcess, free_port
from tests.system.faults import finish_all, play_past_an_fsync, serve, start_matches


async def _scenario() -> dict[str, Any]:
    valkey = ValkeyProcess().start()
    node = serve("--redis-url", valkey.url, "--port", str(free_port()), "--lease-ms", "1000")
    tasks: list[asyncio.Task[Any]] = []
    try:
        _client, _created, agents, tasks = await start_matches(
            node.target, 2, seed=90, game=("twhist", 3), delay=0.01)
        aof, cut = await play_past_an_fsync(valkey, agents, 15)
        node.kill()
        valkey.kill()
        with aof.open("r+b") as f:
            f.truncate(cut)
        valkey.start()
        node.start()
        # Each decision may take 60 s: a seat that waited on one would not end in time.
        results = await finish_all(tasks, agents, node, timeout=45)
        return {"results": results, "again": sum(a.answered_again for a in agents),
                "rewinds": sum(len(a.rewinds) for a in agents)}
    finally:
        for task in tasks:
            task.cancel()
        node.cleanup()
        valkey.kill()
        shutil.rmtree(valkey.data_dir, ignore_errors=True)


def test_a_seat_asked_again_an_acknowledged_decision_answers_it_again() -> None:
    out = run(_scenario(), timeout=150)
    assert out["rewinds"] == 0, "the restarted node cannot know what was lost"
    assert out["again"] > 0, "the fault lost nothing acknowledged: no test"
    assert all(r.reason == "COMPLETED" for r in out["results"]), out["results"]
