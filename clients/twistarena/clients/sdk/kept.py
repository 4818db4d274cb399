"""Play calls kept open from one match to the next (``Join.keep_open``).

An agent that plays match after match on one channel need not open a call per
match: it asks the server to keep its stream after MatchOver, and the next
agent on that channel sends its Join on it. Opening a call costs the client
and the server more than the first messages of a short match.
"""

from __future__ import annotations

from typing import Any

import grpc.aio


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
