"""loops.stop_loops: a loop that swallows a cancel is cancelled again."""

from __future__ import annotations

import asyncio

import structlog
from twistarena.server.loops import stop_loops


def test_a_loop_that_swallows_its_first_cancel_is_stopped_by_the_next() -> None:
    """The lost cancel seen in the heartbeat and tournament loops: the loop goes
    on after one cancel. ``stop_loops`` cancels again, so it ends, unnamed."""
    swallowed = 0

    async def swallows_once() -> None:
        nonlocal swallowed
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if swallowed:
                    raise
                swallowed += 1

    async def scenario() -> tuple[asyncio.Task[None], list[str]]:
        task = asyncio.get_running_loop().create_task(swallows_once(), name="once")
        await asyncio.sleep(0)
        with structlog.testing.capture_logs() as logs:
            await stop_loops([task], "test")
        return task, [e["event"] for e in logs]

    task, events = asyncio.run(scenario())
    assert swallowed == 1
    assert task.cancelled()
    assert "loop_did_not_stop" not in events
