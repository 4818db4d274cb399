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
import time
from collections.abc import Iterator
from typing import Any

import pytest
from twistarena.clients.sdk import Agent
from twistarena.v1 import match_pb2 as mpb
from twistarena.wire import MATCH_OVER

from tests.clients.helpers import replay_problems, run
from tests.support.proxy import TcpProxy
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import (
    accepted_total,
    acknowledged_lost,
    aof_incr_file,
    copy_aof,
    finish_all,
    freeze_once_ended,
    fsynced_aof_size,
    loss_records,
    metric,
    play_past_an_fsync,
    read_logs,
    records,
    serve,
    start_matches,
    tear_down,
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
        aof, cut = await play_past_an_fsync(valkey, agents, 20)
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
        tear_down(tasks, [node], valkey, restarted)


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


# -- the same fault, again and again, on one node and one store --------------------

#: Kill-and-cut runs in a row (one node, one store, crashed once per run).
RUNS = 5
#: Small matches: Twhist, 3 players, about 65 actions each.
SMALL = ("twhist", 3)


class _Crashes:
    """One Valkey (AOF ``everysec``) and one node over it, for every run of the module."""

    def __init__(self) -> None:
        self.valkey = ValkeyProcess().start()
        self.node = serve("--redis-url", self.valkey.url, "--lease-ms", "2000")
        self.summary: list[str] = []

    def close(self) -> None:
        self.node.cleanup()
        self.valkey.kill()
        shutil.rmtree(self.valkey.data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def crashes() -> Iterator[_Crashes]:
    bench = _Crashes()
    try:
        yield bench
    finally:
        print("\n" + "\n".join(bench.summary))
        bench.close()


async def _crash_run(bench: _Crashes, run_no: int, ended: bool) -> dict[str, Any]:
    """Play small matches, cut the AOF back to a size fsynced during play, and
    restart the store at once; ``ended``: kill once every match has ended (and
    was announced), else in the middle of play."""
    valkey, node = bench.valkey, bench.node
    tasks: list[asyncio.Task[Any]] = []
    try:
        client, created, agents, tasks = await start_matches(
            node.target, 3, seed=200 + run_no * 10, game=SMALL, delay=0.01)
        ids = [r.match.match_id for r in created]
        await wait_until(lambda: accepted_total(agents) >= 15, "play started", timeout=30)
        aof = aof_incr_file(valkey.data_dir)
        cut = await asyncio.to_thread(fsynced_aof_size, valkey.port, aof)
        mark = accepted_total(agents)
        if ended:
            await wait_until(lambda: all(t.done() for t in tasks), "every match ended",
                             timeout=60)
        else:
            await wait_until(lambda: accepted_total(agents) >= mark + 25, "more play",
                             timeout=30)
        valkey.kill()
        killed = time.monotonic()
        accepted = {id(a): dict(a.accepted) for a in agents}
        told = {a.match_id: a.result for a in agents if a.result is not None}
        full_dir = copy_aof(valkey.data_dir, "full")
        with aof.open("r+b") as f:
            f.truncate(cut)
        kept_dir = copy_aof(valkey.data_dir, "kept")
        valkey.start()
        restart_s = time.monotonic() - killed
        results = await finish_all(tasks, agents, node)

        async def all_over() -> bool:
            matches = [await client.get_match(mid) for mid in ids]
            return all(m.status in MATCH_OVER for m in matches)

        await wait_until(all_over, "every match over in the store", timeout=20)
        replays = {mid: await client.get_replay(mid) for mid in ids}
        # What a seat that heard the end finds out afterwards (the SDK's stored outcome).
        outcomes = {a.match_id: await a.stored_result() for a in agents}
        full = await asyncio.to_thread(read_logs, full_dir, ids)
        kept = await asyncio.to_thread(read_logs, kept_dir, ids)
        for copy in (full_dir, kept_dir):
            shutil.rmtree(copy, ignore_errors=True)
        lost = {mid: sum(acknowledged_lost(accepted[id(a)], a.seat, full[mid], len(kept[mid]))
                         for a in agents if a.match_id == mid) for mid in ids}
        return {"agents": agents, "results": results, "replays": replays, "lost": lost,
                "told": told, "outcomes": outcomes, "restart_s": restart_s,
                "losses": loss_records(node),
                "failures": [f for a in agents for f in a.stream_failures],
                "noscript": [r for r in records(node) if r.get("event") == "append_failed"
                             and r.get("match_id") in ids and "NOSCRIPT" in str(r.get("error"))]}
    finally:
        for task in tasks:
            task.cancel()


def _silent(out: dict[str, Any]) -> list[str]:
    """Every way the run's losses went unannounced (empty: none)."""
    problems: list[str] = []
    for mid, replay in out["replays"].items():
        stored = replay.match.result
        logged = out["losses"].get(mid, [])
        problems += [f"{mid}: {p}" for p in replay_problems(replay)]
        if out["lost"][mid] and not logged:
            problems.append(f"{mid}: {out['lost'][mid]} acknowledged action(s) lost silently")
        voided = stored.reason == mpb.END_REASON_VOIDED
        if out["lost"][mid] and not voided:
            for agent in _agents_of(out, mid):
                if not agent.rewinds:
                    problems.append(f"{mid}: seat {agent.seat} was not told of the rewind")
        told = out["told"].get(mid)
        if told is not None and not voided and list(told.scores) != list(stored.scores):
            problems.append(f"{mid}: agents were told {told}, the store holds {stored}")
        if voided and not logged:
            problems.append(f"{mid}: voided without a store_loss")
        outcome = out["outcomes"][mid]
        if outcome is None or outcome.reason != mpb.EndReason.Name(stored.reason).removeprefix(
                "END_REASON_"):
            problems.append(f"{mid}: the SDK's stored outcome {outcome} is not {stored}")
    return problems


@pytest.mark.parametrize("run_no", range(RUNS))
def test_kill_and_cut_again_and_again_is_never_silent(crashes: _Crashes, run_no: int) -> None:
    """Every acknowledged-then-lost action is in a Rewound to its seat or a VOIDED
    end; every match whose agents were told it ended is, in the store, FINISHED on
    a log that replays to that result, or VOIDED with its loss logged. Runs 0, 2
    and 4 crash the store after every match ended (the ends are lost: only the
    store's new run id shows it, the restart being too short to be seen)."""
    ended = run_no % 2 == 0
    out = run(_crash_run(crashes, run_no, ended), timeout=150)
    replays = out["replays"]
    rewound = sum(1 for mid in replays if any(a.rewinds for a in _agents_of(out, mid)))
    voided = sum(1 for r in replays.values() if r.match.result.reason == mpb.END_REASON_VOIDED)
    silent = _silent(out)
    crashes.summary.append(
        f"run {run_no} ({'after the ends' if ended else 'in play'}): restart "
        f"{out['restart_s']:.2f} s, acknowledged then lost {sum(out['lost'].values())}, "
        f"matches rewound {rewound}, voided {voided}, silent {len(silent)}")
    assert sum(out["lost"].values()) > 0, "the fault lost nothing acknowledged: no test"
    assert silent == [], silent
    # A script cache the restart emptied is reloaded; the batch is retried.
    assert out["noscript"] == [], out["noscript"][:3]
    assert not [f for f in out["failures"] if f[1] == "STORE_UNAVAILABLE"], out["failures"]


# -- the end of a match waits for its fsync when the store dies ----------------------

#: The fenced write of a match's end: its ``result`` field (the only command that
#: sends it), where the link to the store is cut.
END_WRITE = b"$6\r\nresult\r\n"


async def _end_in_flight(executed: bool) -> dict[str, Any]:
    """One small match whose end is on its way to the store when the link goes
    silent; meanwhile the store crashes and comes back without the log's tail.
    The lease (10 s) outlasts the outage: the node retries the same end.
    ``executed``: the end reaches the store, which executes it and is frozen
    (SIGSTOP) while its WAITAOF waits for the fsync, before the crash."""
    valkey = ValkeyProcess().start()
    proxy = TcpProxy(valkey.port).start()
    node = serve("--redis-url", f"redis://{proxy.address}/0", "--lease-ms", "10000")
    tasks: list[asyncio.Task[Any]] = []
    try:
        client, created, agents, tasks = await start_matches(node.target, 1, seed=300,
                                                            game=SMALL, delay=0.01)
        [mid] = [r.match.match_id for r in created]
        await wait_until(lambda: accepted_total(agents) >= 15, "play started", timeout=30)
        aof = aof_incr_file(valkey.data_dir)
        cut = await asyncio.to_thread(fsynced_aof_size, valkey.port, aof)
        if executed:
            proxy.on_trip = lambda: freeze_once_ended(valkey, mid)
        proxy.trip = (END_WRITE,)
        await wait_until(proxy.tripped.is_set, "the end sent to the store", timeout=60)
        acknowledged = accepted_total(agents)
        valkey.kill()
        with aof.open("r+b") as f:
            f.truncate(cut)
        valkey.start()
        proxy.heal()
        results = await finish_all(tasks, agents, node)
        return {"agents": agents, "results": results, "acknowledged": acknowledged,
                "replay": await client.get_replay(mid), "losses": loss_records(node).get(mid, []),
                "metric_losses": metric(node, "twistarena_store_losses_total")}
    finally:
        for task in tasks:
            task.cancel()
        node.cleanup()
        proxy.stop()
        valkey.kill()
        shutil.rmtree(valkey.data_dir, ignore_errors=True)


@pytest.mark.parametrize("executed", [False, True])
def test_an_end_is_stored_only_on_the_log_it_was_computed_from(executed: bool) -> None:
    """The store comes back with fewer actions than the end was computed on: the
    end is refused by the store's own check, the loss is logged and counted,
    every seat is told of the rewind (none heard the lost end), and the match
    ends on its stored log."""
    out = run(_end_in_flight(executed), timeout=150)
    replay = out["replay"]
    print(f"end in flight: {out['acknowledged']} answers acknowledged, the store kept "
          f"{len(replay.actions)} actions at the end; store_loss: "
          f"{[r['why'] for r in out['losses']]}")
    assert out["losses"], "the end was stored on a log that lost its tail, silently"
    assert out["losses"][0]["why"].startswith("the end was computed on"), out["losses"]
    assert out["metric_losses"] >= 1
    assert replay_problems(replay) == []
    for agent in out["agents"]:
        assert agent.rewinds, f"seat {agent.seat} was not told of the rewind"
    assert all(r.reason == "COMPLETED" for r in out["results"])
