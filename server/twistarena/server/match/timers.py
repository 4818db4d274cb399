"""A match's own timers, as against its seats' decision timers: the waiting
timeout (seats that never join) and the server's caps on a match's length.

Both are counted from the match's creation on the wall clock, so that a
restart or a move to another node does not extend them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


def cap_reached(max_decisions: int, log_len: int) -> bool:
    """The match has as many actions as the server lets one match have (0: no cap)."""
    return max_decisions > 0 and log_len >= max_decisions


def length_limit_detail(cap: str) -> str:
    """The result's detail of a match ended by a server cap (``cap``: "N decisions", "S s")."""
    return f"the match reached the server's cap of {cap} before its end"


class MatchTimers:
    """The waiting timeout and the wall-time cap of one match; either, while
    armed, keeps its referee alive, so both are cancelled when it stops."""

    def __init__(self, loop: asyncio.AbstractEventLoop, created_ms: int) -> None:
        self.loop = loop
        self.created_s = created_ms / 1000
        self._waiting: asyncio.TimerHandle | None = None
        self._length: asyncio.TimerHandle | None = None

    def _left(self, limit_s: float) -> float:
        return max(0.0, limit_s - (time.time() - self.created_s))

    def arm_waiting(self, timeout_s: float, on_expiry: Callable[[], None]) -> None:
        """Call ``on_expiry`` ``timeout_s`` after creation, unless cancelled first."""
        def expired() -> None:
            self._waiting = None
            on_expiry()
        self._waiting = self.loop.call_later(self._left(timeout_s), expired)

    def arm_length(self, cap_s: float, on_expiry: Callable[[], None]) -> None:
        """Call ``on_expiry`` ``cap_s`` after creation (0: no cap); arming twice is a no-op."""
        if cap_s <= 0 or self._length is not None:
            return
        def expired() -> None:
            self._length = None
            on_expiry()
        self._length = self.loop.call_later(self._left(cap_s), expired)

    def cancel_waiting(self) -> None:
        """The match started (or ended): the waiting timeout no longer applies."""
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None

    def cancel(self) -> None:
        """Both timers off: the match ended or stopped running here."""
        self.cancel_waiting()
        if self._length is not None:
            self._length.cancel()
            self._length = None
