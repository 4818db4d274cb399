"""Play calls kept open from one match to the next (``Join.keep_open``).

An agent that plays match after match on one channel need not open a call per
match: it asks the server to keep its stream after MatchOver, and the next
agent on that channel sends its Join on it. Opening a call costs the client
and the server more than the first messages of a short match.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio

#: What writing to a call that has already ended raises.
ENDED_ON_WRITE = (grpc.aio.UsageError, asyncio.InvalidStateError, grpc.aio.AioRpcError)


class KeptStreams:
    """Idle Play calls, per channel, left by agents whose match is over.

    A call is handed to one agent at a time; one that the server has let go
    meanwhile (it waits for the next Join only so long) is found out by the agent
    that takes it, which then opens a call of its own."""

    __slots__ = ("_idle", "limit")

    def __init__(self, limit: int = 256) -> None:
        #: How many idle calls to keep per channel; past it a call is ended.
        self.limit = limit
        self._idle: dict[grpc.aio.Channel, list[Any]] = {}

    def take(self, channel: grpc.aio.Channel) -> Any:
        """An idle call on ``channel`` that has not ended, or None."""
        idle = self._idle.get(channel)
        while idle:
            call = idle.pop()
            if not call.done():
                return call
        return None

    def keep(self, channel: grpc.aio.Channel, call: Any) -> None:
        """Leave ``call`` (its match over, nothing pending on it) for the next agent."""
        idle = self._idle.setdefault(channel, [])
        if len(idle) >= self.limit or call.done():
            call.cancel()
            return
        idle.append(call)

    def close(self) -> None:
        """End every idle call."""
        for idle in self._idle.values():
            for call in idle:
                call.cancel()
        self._idle.clear()

    def __len__(self) -> int:
        return sum(len(idle) for idle in self._idle.values())


async def join_on(kept: KeptStreams | None, channel: grpc.aio.Channel,
                  open_call: Callable[[], Any], join: Any) -> tuple[Any, Any]:
    """``join`` written on a Play call of ``channel``, and the first message read
    back (or EOF): (call, message). The call is one ``kept`` holds, else a new one
    from ``open_call``. A kept call found ended meanwhile (its write fails, or it
    ends with OK before anything comes back) is replaced; anything else a call
    says (a refused Join) is the caller's."""
    while True:
        call = kept.take(channel) if kept is not None else None
        reused = call is not None
        if call is None:
            call = open_call()
        try:
            try:
                await call.write(join)
            except ENDED_ON_WRITE:
                if not reused:
                    raise
                call.cancel()
                continue
            first = await call.read()
            if reused and first is grpc.aio.EOF and await call.code() == grpc.StatusCode.OK:
                continue  # let go by the server before this Join reached it
            return call, first
        except BaseException:
            call.cancel()
            raise
