"""The messages waiting for one stream (Play or Watch), written by its handler in order."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Any

import grpc


@dataclass(frozen=True, slots=True)
class Close:
    """Sentinel in an outbox: end the call with this status."""

    code: grpc.StatusCode
    reason: str
    details: str


class Outbox:
    """Messages for one stream, written by its RPC handler in order.

    Items are messages or their serialized bytes (the handlers' serializer
    passes bytes through), or a ``Close``."""

    __slots__ = ("_items", "_loop", "_waiter", "closed", "no_events")

    def __init__(self, no_events: bool = False) -> None:
        self._items: deque[Any] = deque()
        self._loop = asyncio.get_running_loop()
        self._waiter: asyncio.Future[None] | None = None
        self.closed = False
        self.no_events = no_events

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def send(self, msg: Any) -> None:
        if not self.closed:
            self._items.append(msg)
            self._wake()

    def close(self, code: grpc.StatusCode, reason: str, details: str) -> None:
        if not self.closed:
            self.closed = True
            self._items.append(Close(code, reason, details))
            self._wake()

    def finish(self) -> None:
        self.close(grpc.StatusCode.OK, "", "")

    async def get(self) -> Any:
        """The next message (or a ``Close``), waiting for one if needed."""
        items = self._items
        while not items:
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return items.popleft()
