"""Operations: graceful drain on SIGTERM, Prometheus metrics, JSON logs."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.request
from collections.abc import MutableMapping
from typing import Any

import grpc
import redis
import structlog
from grpc import aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from twistarena.server.app import GRPC_STOP_MARGIN_S
from twistarena.server.config import ServerConfig
from twistarena.server.loops import LOOP_STOP_S
from twistarena.storage import keys
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc

from tests.support.agents import Agent, create, options, run, tokens
from tests.support.process import ServeProcess
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until


def test_drain_goes_not_serving_and_closes_streams_with_unavailable(valkey: Any) -> None:
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url)).start()
    try:
        async def main() -> str:
            async with aio.insecure_channel(srv.target) as ch:
                created = await create(ch, options("twisted", 2, seed=3))
                mid = created.match.match_id
                agent = Agent(ch, mid, tokens(created)[0])
                await agent.join()
                watch = health_pb2_grpc.HealthStub(ch).Watch(
                    health_pb2.HealthCheckRequest(service=""))
                first = await asyncio.wait_for(watch.read(), 5)
                assert first.status == health_pb2.HealthCheckResponse.SERVING
                assert srv.loop is not None
                draining = asyncio.wrap_future(
                    asyncio.run_coroutine_threadsafe(srv.app.drain(), srv.loop))
                update = await asyncio.wait_for(watch.read(), 5)
                assert update is aio.EOF or \
                    update.status == health_pb2.HealthCheckResponse.NOT_SERVING
                await agent.drain_to_end()
                code, details, reason = await agent.status()
                assert code == grpc.StatusCode.UNAVAILABLE and reason == "DRAINING"
                assert "draining" in details
                await asyncio.wait_for(draining, 20)
                return mid

        mid = run(main())
    finally:
        srv.stop()
    # The match is still live in the store: another server resumes it.
    again = InProcessServer(ServerConfig(port=0, redis_url=valkey.url)).start()
    try:
        async def check() -> None:
            async with aio.insecure_channel(again.target) as ch:
                got = await mgrpc.MatchesStub(ch).GetMatch(mpb.GetMatchRequest(match_id=mid))
                assert got.status == mpb.MATCH_STATUS_WAITING
                await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))

        run(check())
    finally:
        again.stop()


def test_sigterm_metrics_and_json_logs(valkey: Any) -> None:
    proc = ServeProcess(["--port", "0", "--redis-url", valkey.url, "--metrics-port", "0"]).start()
    try:
        records = [json.loads(line) for line in proc.output().splitlines()
                   if line.startswith("{")]
        listening = next(r for r in records if r["event"] == "listening")
        assert listening["level"] == "info" and "timestamp" in listening
        metrics_port = listening["metrics_port"]

        async def main() -> None:
            async with aio.insecure_channel(proc.target) as ch:
                created = await create(ch, options("twisted", 2,
                                                   house=("random", "random")))

                async def finished() -> bool:
                    got = await mgrpc.MatchesStub(ch).GetMatch(
                        mpb.GetMatchRequest(match_id=created.match.match_id))
                    return got.status == mpb.MATCH_STATUS_FINISHED

                await wait_until(finished, "the house bots finished the match", timeout=10)

        run(main())
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as r:
            body = r.read().decode()
        for name in ("twistarena_live_matches", "twistarena_decisions_total",
                     "twistarena_decision_latency_seconds", "twistarena_redis_append_seconds",
                     "twistarena_errors_total", "twistarena_matches_created_total"):
            assert name in body
        assert 'twistarena_decisions_total{how="house"}' in body
        assert proc.terminate() == 0
        events = [json.loads(line)["event"] for line in proc.output().splitlines()
                  if line.startswith("{")]
        assert "draining" in events and "stopped" in events
    finally:
        proc.cleanup()


def _drain_logged(srv: InProcessServer, timeout: float
                  ) -> tuple[list[MutableMapping[str, Any]], float]:
    """Drain the server: (what it logged meanwhile, how long the drain took)."""
    with structlog.testing.capture_logs() as logs:
        started = time.monotonic()
        srv.call(srv.app.drain(), timeout)
        return logs, time.monotonic() - started


def _events(logs: list[MutableMapping[str, Any]], event: str, key: str) -> list[Any]:
    return [entry.get(key) for entry in logs if entry.get("event") == event]


def test_a_cluster_loop_that_does_not_stop_does_not_hold_the_drain(valkey: Any) -> None:
    """A node's heartbeat loop was once seen still waiting, long after its cancel,
    on a sleep that had ended, and the drain waited for it to the end of its
    grace. The drain now waits ``LOOP_STOP_S`` for its loops, names the one that
    did not stop, and the node still says it leaves."""
    grace = 8.0
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url,
                                       drain_grace_s=grace)).start()
    cluster = srv.app.cluster
    assert cluster is not None
    released = asyncio.Event()

    async def deaf() -> None:
        """Ignores every cancel until released."""
        while not released.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await released.wait()

    async def add_deaf() -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(deaf(), name="deaf")
        cluster._tasks["deaf"] = task
        return task

    client = redis.Redis.from_url(valkey.url)
    try:
        deaf_task = srv.call(add_deaf())
        assert client.zscore(keys.NODES, cluster.node_id) is not None
        logs, took = _drain_logged(srv, 30)
        assert _events(logs, "loop_did_not_stop", "task") == ["deaf"], logs
        assert not deaf_task.done()
        # The leaving heartbeat went out: the node is no longer a member.
        assert client.zscore(keys.NODES, cluster.node_id) is None
        # Not held to the end of the grace (the drain used to wait all of it).
        assert took < grace - 2.0, (took, LOOP_STOP_S)
    finally:
        assert srv.loop is not None
        srv.loop.call_soon_threadsafe(released.set)
        client.close()
        srv.stop()


def test_a_drain_goes_on_when_grpc_stop_never_returns(valkey: Any) -> None:
    """gRPC's own stop once did not return (after connections that never sent the
    HTTP/2 preface): the drain bounds it and finishes, saying which step overran."""
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url,
                                       drain_grace_s=1.0)).start()
    grpc_server = srv.app.server
    assert grpc_server is not None
    real_stop = grpc_server.stop

    async def never_returns(grace: float | None) -> None:
        await asyncio.Event().wait()

    grpc_server.stop = never_returns  # type: ignore[method-assign]
    try:
        logs, took = _drain_logged(srv, 20)
        assert _events(logs, "drain_step_overran", "step") == ["grpc_stop"], logs
        assert any(entry.get("event") == "stopped" for entry in logs)
        # Within the grace and the margin it allows gRPC's stop (1 s + 3 s), not forever.
        assert took < 1.0 + GRPC_STOP_MARGIN_S + 5.0, took
    finally:
        srv.call(real_stop(0), 20)
        srv.stop()
