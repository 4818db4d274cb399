"""The store comes back without its latest writes: never silent.

An OS crash of the store's machine under ``appendfsync everysec`` is simulated
the way it happens: Valkey is killed (-9) and its AOF cut back to the size it
had a moment before (what the disk held at the last fsync), then Valkey starts
again on the same port and directory. Agents had been told some of the lost
actions were accepted. Counted per match, from the two AOFs: acknowledged
actions the store no longer has. Each such match must show the loss to every
seat (a Rewound, or a VOIDED end), in the node's log and in its metrics, and
end legally. ``--durability always`` is checked the same way with a plain
kill -9 (process crash): nothing acknowledged may be lost.
"""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest
from twistarena.clients.sdk import Agent

from tests.clients.helpers import replay_problems, run
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import (
    accepted_total,
    acknowledged_lost,
    aof_incr_file,
    finish_all,
    fsynced_aof_size,
    metric,
    read_logs,
    records,
    serve,
    start_matches,
)

MATCHES = 4


async def _scenario(policy: str, cut_back: bool) -> dict[str, Any]:
    valkey = ValkeyProcess().start()
    restarted: ValkeyProcess | None = None
    node = serve("--redis-url", valkey.url, "--on-store-loss", policy, "--lease-ms", "1000")
    tasks: list[asyncio.Task[Any]] = []
    try:
        client, created, agents, tasks = await start_matches(node.target, MATCHES, seed=70,
                                                            delay=0.02)
        ids = [r.match.match_id for r in created]
        await wait_until(lambda: accepted_total(agents) >= 20, "play started", timeout=30)
        aof = aof_incr_file(valkey.data_dir)
        cut = await asyncio.to_thread(fsynced_aof_size, valkey.port, aof)
        mark = accepted_total(agents)
        await wait_until(lambda: accepted_total(agents) >= mark + 20, "more play", timeout=30)
        valkey.kill()
        accepted = {id(a): dict(a.accepted) for a in agents}
        full = await asyncio.to_thread(read_logs, valkey.data_dir, ids)
        if cut_back:
            with aof.open("r+b") as f:
                f.truncate(cut)
        kept = await asyncio.to_thread(read_logs, valkey.data_dir, ids)
        restarted = ValkeyProcess(valkey.data_dir, port=valkey.port).start()
        results = await finish_all(tasks, agents, node)
        replays = {mid: await client.get_replay(mid) for mid in ids}
        lost = {mid: sum(acknowledged_lost(accepted[id(a)], a.seat, full[mid], len(kept[mid]))
                         for a in agents if a.match_id == mid) for mid in ids}
        return {"agents": agents, "results": results, "replays": replays, "lost": lost,
                "records": records(node),
                "metric_lost": metric(node, "twistarena_lost_actions_total"),
                "metric_losses": metric(node, "twistarena_store_losses_total")}
    finally:
        for task in tasks:
            task.cancel()
        node.cleanup()
        if restarted is not None:
            restarted.kill()
        valkey.kill()
        shutil.rmtree(valkey.data_dir, ignore_errors=True)


def _agents_of(out: dict[str, Any], match_id: str) -> list[Agent]:
    return [a for a in out["agents"] if a.match_id == match_id]


@pytest.mark.parametrize("policy", ["rewind", "void"])
def test_a_lost_tail_is_announced_never_silent(policy: str) -> None:
    out = run(_scenario(policy, cut_back=True), timeout=150)
    lost: dict[str, int] = out["lost"]
    print("acknowledged-then-lost per match:", lost)
    assert sum(lost.values()) > 0, "the fault lost nothing acknowledged: no test"
    losses = {r["match_id"]: r for r in out["records"] if r.get("event") == "store_loss"}
    for match_id, count in lost.items():
        replay = out["replays"][match_id]
        assert replay_problems(replay) == [], match_id
        if not count:
            continue
        assert match_id in losses, f"{match_id} lost {count} acknowledged actions silently"
        assert losses[match_id]["policy"] == policy
        reason = replay.match.result.reason
        if policy == "rewind":
            assert reason == 1, replay.match.result  # COMPLETED, after the rewind
            for agent in _agents_of(out, match_id):
                assert agent.rewinds, f"seat {agent.seat} of {match_id} was not told"
                assert agent.rewinds[0].to_seq <= len(replay.events)
        else:
            assert replay.match.result.detail.startswith("void"), replay.match.result
            assert list(replay.match.result.winners) == []
    assert out["metric_losses"] >= sum(1 for c in lost.values() if c)
    assert out["metric_lost"] >= sum(lost.values())


def test_process_crash_loses_nothing_acknowledged() -> None:
    out = run(_scenario("rewind", cut_back=False), timeout=150)
    assert out["lost"] and sum(out["lost"].values()) == 0, out["lost"]
    assert all(r.reason == "COMPLETED" for r in out["results"])
    assert not [r for r in out["records"] if r.get("event") == "store_loss"]
