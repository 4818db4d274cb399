"""A runner's heartbeats carry its version cache's bytes and bound: the node
keeps them per runner and adds them up in its metrics, so a runner whose disk
fills shows where the node is watched."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from prometheus_client import REGISTRY
from twistarena.runner.cache import disk_bytes
from twistarena.runner.runner import Runner, RunnerOptions

from tests.conftest import SESSION_RUNNER_TOKEN
from tests.support.agents import run
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until


def test_a_runners_cache_bytes_reach_the_node(server: InProcessServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / ("ab" * 32)).mkdir(parents=True)  # a version left by an earlier run
    (cache / ("ab" * 32) / "weights.bin").write_bytes(b"\0" * 300_000)
    assert server.app.leaguehosting is not None
    hub = server.app.leaguehosting.runners

    async def scenario() -> None:
        runner = Runner(RunnerOptions(servers=[server.target], runner_token=SESSION_RUNNER_TOKEN,
                                      cache_dir=cache, sandbox="none", name="cache-health"))
        runner.cache.max_bytes = 200_000  # the version above is over it
        held = disk_bytes(cache / ("ab" * 32))
        task = asyncio.create_task(runner.run())
        try:
            session = await wait_until(
                lambda: next((s for s in list(hub.sessions.values())
                              if s.name == "cache-health" and s.cache_bytes), None),
                "the runner's cache in a heartbeat")
            assert (session.cache_bytes, session.cache_max_bytes) == (held, 200_000)
            total = REGISTRY.get_sample_value("twistarena_runners_cache_bytes")
            bound = REGISTRY.get_sample_value("twistarena_runners_cache_max_bytes")
            assert total is not None and total >= held
            assert bound is not None and bound >= 200_000
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await wait_until(lambda: not any(s.name == "cache-health"
                                         for s in list(hub.sessions.values())),
                         "the runner gone from the node")

    run(scenario())
