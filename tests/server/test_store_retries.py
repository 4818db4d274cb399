"""A referee's store writes are retried through an outage only while it runs:
once stopped (its lease lapsed, the match moved), no further attempt is made."""

from __future__ import annotations

import asyncio

import pytest
from twistarena.server.match.durable import through_outage
from twistarena.storage import TransientStoreError


def test_a_write_is_not_tried_again_once_its_referee_stopped() -> None:
    attempts: list[bool] = []
    stopped = False

    async def write() -> None:
        attempts.append(stopped)
        raise TransientStoreError("LOADING Valkey is loading the dataset in memory")

    async def scenario() -> None:
        nonlocal stopped
        task = asyncio.ensure_future(through_outage(write, lambda: stopped))
        while len(attempts) < 3:  # bounded: the backoff is 50, 100, 200 ms
            await asyncio.sleep(0.01)
        stopped = True  # during the backoff after the third attempt
        with pytest.raises(TransientStoreError):
            await asyncio.wait_for(task, 5)

    asyncio.run(scenario())
    assert True not in attempts, f"{attempts.count(True)} attempt(s) after the stop"
