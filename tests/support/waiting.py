"""Waiting on observable state with a deadline, instead of sleeping a fixed time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def wait_until(probe: Callable[[], Awaitable[T]], what: str, timeout: float = 20.0,
                     interval: float = 0.05) -> T:
    """Call ``probe`` until it returns something truthy and return that; fail
    with ``what`` when ``timeout`` seconds pass first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await probe()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        await asyncio.sleep(interval)
