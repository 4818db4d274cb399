"""Waiting on observable state with a deadline, instead of sleeping a fixed time.

The one wait of the test suite: every test that waits for something to happen
polls it here, so a slow machine only makes a test slower, never wrong.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def wait_until(probe: Callable[[], Awaitable[T] | T], what: str, timeout: float = 20.0,
                     interval: float = 0.05) -> T:
    """Call ``probe`` (a plain or an async function) until it returns something
    truthy and return that; fail with ``what`` when ``timeout`` seconds pass first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = probe()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        await asyncio.sleep(interval)
