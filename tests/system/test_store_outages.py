"""The store goes away for a while; matches must neither stall nor be held.

- kill -9 of the embedded Valkey: the node restarts it on its data directory,
  reports NOT_SERVING meanwhile, answers calls with UNAVAILABLE (never
  UNKNOWN), and every live match finishes with nothing acknowledged lost.
- a node cut from its store (a silent link): its streams close as soon as its
  leases lapse, with a retryable status and no stale owner named.
- a store that answers BUSY for a moment (a slow script): appends are retried
  within the lease; no stream is dropped.
- kill -9 of a Valkey Cluster primary in the middle of pipelined appends: every
  append of the failed batch gets an answer, so no match stalls; agents see
  UNAVAILABLE with a reason (never UNKNOWN) and resume once it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from twistarena.storage import keys
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.wire import OWNER_KEY

from tests.clients.helpers import Acknowledgements, acknowledged_in_log, run
from tests.support import agents as raw
from tests.support.nodes import ValkeyCluster
from tests.support.process import ServeProcess
from tests.support.proxy import TcpProxy
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import (
    accepted_total,
    finish_all,
    metric,
    records,
    serve,
    start_matches,
)

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def _health(channel: grpc.aio.Channel) -> int:
    try:
        resp = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=1)
    except grpc.aio.AioRpcError:
        return -1
    return int(resp.status)


async def _embedded_crash(data_dir: Path) -> dict[str, Any]:
    node = serve("--data-dir", str(data_dir))
    tasks: list[asyncio.Task[Any]] = []
    try:
        client, created, agents, tasks = await start_matches(node.target, 3, seed=40)
        await wait_until(lambda: accepted_total(agents) >= 15, "play started", timeout=30)
        pid = int((data_dir / "valkey.pid").read_text())
        channel = grpc.aio.insecure_channel(node.target)
        stub = mgrpc.MatchesStub(channel)
        health: list[int] = []
        codes: set[grpc.StatusCode] = set()
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        back = 0.0
        while time.monotonic() - killed < 30:
            health.append(await _health(channel))
            try:
                await stub.GetMatch(mpb.GetMatchRequest(match_id=created[0].match.match_id),
                                    timeout=2)
                codes.add(grpc.StatusCode.OK)
            except grpc.aio.AioRpcError as error:
                codes.add(error.code())
            if NOT_SERVING in health and health[-1] == SERVING:
                back = time.monotonic() - killed
                break
            await asyncio.sleep(0.02)
        results = await asyncio.wait_for(asyncio.gather(*tasks), 90)
        replays = {r.match.match_id: await client.get_replay(r.match.match_id) for r in created}
        await channel.close()
        return {"health": health, "codes": codes, "back": back, "results": results,
                "replays": replays, "agents": agents}
    finally:
        for task in tasks:
            task.cancel()
        node.cleanup()


def test_embedded_valkey_is_restarted_and_matches_resume() -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="ta-test-embedded-"))
    try:
        out = run(_embedded_crash(data_dir), timeout=150)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    assert NOT_SERVING in out["health"], "health never said NOT_SERVING"
    assert out["back"] > 0, f"health never came back: {out['health'][-5:]}"
    assert out["codes"] <= {grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE}, out["codes"]
    assert all(r.reason == "COMPLETED" for r in out["results"])
    for match_id, replay in out["replays"].items():
        mine = [a for a in out["agents"] if a.match_id == match_id]
        assert acknowledged_in_log(mine, replay) == [], match_id
    print(f"embedded valkey back in {out['back']:.2f} s")


@contextlib.contextmanager
def _store_behind_a_proxy(*serve_args: str) -> Iterator[tuple[TcpProxy, ServeProcess]]:
    """A node whose link to its store runs through a proxy, to be cut."""
    valkey = ValkeyProcess().start()
    proxy = TcpProxy(valkey.port).start()
    node = serve("--redis-url", f"redis://{proxy.address}/0", "--node-id", "cut",
                 "--advertise", "127.0.0.1:1", *serve_args)
    try:
        yield proxy, node
    finally:
        node.cleanup()
        proxy.stop()
        valkey.stop()


async def _partition(lease_ms: int) -> dict[str, Any]:
    with _store_behind_a_proxy("--lease-ms", str(lease_ms)) as (proxy, node):
        channel = grpc.aio.insecure_channel(node.target)
        seats: list[raw.Agent] = []
        for i in range(3):
            resp = await raw.create(channel, raw.options("twisted", 2, seed=90 + i,
                                                         decision_ms=60_000))
            for token in raw.tokens(resp).values():
                seats.append(raw.Agent(channel, resp.match.match_id, token))
        for agent in seats:
            await agent.join()
        proxy.cut()
        cut = time.monotonic()
        closed: list[float] = []
        statuses = []
        for agent in seats:
            await agent.drain_to_end(timeout=30)
            closed.append(time.monotonic() - cut)
            statuses.append(await agent.status())
            trailers = await agent.call.trailing_metadata() or ()
            assert not [k for k, _ in trailers if k == OWNER_KEY], trailers
        await channel.close()
        return {"closed": closed, "statuses": statuses}


def test_a_node_cut_from_its_store_closes_its_streams_when_its_leases_lapse() -> None:
    lease_ms = 1000
    out = run(_partition(lease_ms), timeout=90)
    print(f"streams closed {min(out['closed']):.2f}-{max(out['closed']):.2f} s after the cut")
    for code, _details, reason in out["statuses"]:
        assert code == grpc.StatusCode.UNAVAILABLE and reason == "NOT_OWNER"
    assert max(out["closed"]) < lease_ms / 1000 + 1.0, out["closed"]


async def _drain_cut(grace: float) -> dict[str, Any]:
    with _store_behind_a_proxy("--drain-grace", str(grace)) as (proxy, node):
        async with grpc.aio.insecure_channel(node.target) as channel:
            for i in range(2):  # matches to hand off
                await raw.create(channel, raw.options("twisted", 2, seed=30 + i))
        proxy.cut()
        started = time.monotonic()
        code = await asyncio.to_thread(node.terminate, 60.0)
        return {"code": code, "exit_s": time.monotonic() - started,
                "overran": [r["step"] for r in records(node)
                            if r.get("event") == "drain_step_overran"]}


@pytest.mark.clock
def test_a_node_cut_from_its_store_exits_within_its_drain_grace() -> None:
    """SIGTERM while the store link is silent: every store call of the drain (the
    hand-off, saying the node leaves) is bounded by the grace, not by socket timeouts."""
    grace = 2.0
    out = run(_drain_cut(grace), timeout=90)
    print(f"node cut from its store exited {out['exit_s']:.2f} s after SIGTERM "
          f"(grace {grace:g} s; steps cut short: {out['overran']})")
    assert out["code"] == 0
    assert out["exit_s"] < grace + 1.5, out


async def _busy_store() -> dict[str, Any]:
    valkey = ValkeyProcess().start()
    node = serve("--redis-url", valkey.url, "--lease-ms", "3000")
    admin = redis.Redis(port=valkey.port)
    tasks: list[asyncio.Task[Any]] = []
    try:
        admin.config_set("busy-reply-threshold", 50)
        _client, _created, agents, tasks = await start_matches(node.target, 3, seed=20)
        await wait_until(lambda: accepted_total(agents) >= 15, "play started", timeout=30)
        script = asyncio.ensure_future(asyncio.to_thread(
            redis.Redis(port=valkey.port).eval,
            "local t = redis.call('TIME')[1] + 1 "
            "while tonumber(redis.call('TIME')[1]) < t + 1 do end return 1", 0))
        busy_seen = False
        for _ in range(200):  # until the store answers BUSY (bounded)
            try:
                await asyncio.to_thread(redis.Redis(port=valkey.port).ping)
            except redis.exceptions.BusyLoadingError:
                break
            except redis.exceptions.ResponseError as error:
                busy_seen = str(error).startswith("BUSY")
                break
            await asyncio.sleep(0.01)
        await script
        results = await asyncio.wait_for(asyncio.gather(*tasks), 90)
        return {"busy_seen": busy_seen, "results": results,
                "reconnects": sum(a.reconnects for a in agents)}
    finally:
        for task in tasks:
            task.cancel()
        node.cleanup()
        valkey.stop()


def test_a_busy_store_is_retried_within_the_lease() -> None:
    out = run(_busy_store(), timeout=150)
    assert out["busy_seen"], "the store never answered BUSY: no test"
    assert all(r.reason == "COMPLETED" for r in out["results"])
    assert out["reconnects"] == 0, "a stream was dropped while the store was busy"


async def _primary_killed() -> dict[str, Any]:
    cluster = ValkeyCluster(appendfsync="always").start()
    node = serve("--redis-url", cluster.url, "--lease-ms", "2000")
    tasks: list[asyncio.Task[Any]] = []
    acks = Acknowledgements()
    loop = asyncio.get_running_loop()
    try:
        client, created, agents, tasks = await start_matches(
            node.target, 6, seed=70, tracer=acks)
        await wait_until(lambda: accepted_total(agents) >= 30, "play started", timeout=30)
        errors_before = metric(node, "twistarena_errors_total")
        # The primary holding the most of these matches' logs: one that holds none
        # (random match ids) might never be written to while it is down.
        holders = Counter(cluster.primary_of(keys.match_log(r.match.match_id))
                          for r in created)
        victim = holders.most_common(1)[0][0]
        cluster.kill(victim)
        killed = loop.time()
        # Back once the node has run into the dead primary (a failed batch at least).
        await wait_until(lambda: metric(node, "twistarena_errors_total") > errors_before,
                         "the node noticed the dead primary", timeout=20)
        cluster.restart(victim)
        restarted = loop.time() - killed
        results = await finish_all(tasks, agents, node)
        replays = {r.match.match_id: await client.get_replay(r.match.match_id)
                   for r in created}
        # A match's stall: its longest wait for an acknowledged answer after the kill.
        stalls = {mid: max(b - a for a, b in zip([killed, *after], after, strict=False))
                  for mid, told in acks.at.items()
                  if (after := [t for t, _where in told if t > killed])}
        return {"results": results, "replays": replays, "agents": agents, "stalls": stalls,
                "restarted_s": restarted,
                "failures": [f for a in agents for f in a.stream_failures],
                "call_failures": [r for r in records(node) if r.get("event") == "call_failed"]}
    finally:
        for task in tasks:
            task.cancel()
        node.cleanup()
        cluster.stop()


def test_a_killed_cluster_primary_stalls_no_match() -> None:
    out = run(_primary_killed(), timeout=180)
    stalls = sorted(out["stalls"].values())
    print(f"cluster primary killed, restarted after {out['restarted_s']:.2f} s: stall per match "
          f"(longest wait for an acknowledged answer after the kill) "
          f"{', '.join(f'{s:.2f}' for s in stalls)} s; stream failures "
          f"{sorted({(c.name, r) for c, r in out['failures']})}")
    assert all(r.reason == "COMPLETED" for r in out["results"])
    assert len(stalls) == 6, "a match had no acknowledged answer after the kill"
    for match_id, replay in out["replays"].items():
        mine = [a for a in out["agents"] if a.match_id == match_id]
        assert acknowledged_in_log(mine, replay) == [], match_id
    assert out["call_failures"] == []  # the server failed no call (that would be INTERNAL)
    for code, reason in out["failures"]:
        assert code == grpc.StatusCode.UNAVAILABLE and reason, (code, reason)
