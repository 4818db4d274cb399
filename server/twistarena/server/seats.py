"""A live match's seats: who plays each, its stream, its open decision and timers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from .outbox import Outbox


@dataclass(slots=True)
class Seat:
    """One seat of a live match: who plays it, its stream, its open decision."""

    seat: int
    name: str
    house_bot: str
    token_hash: str | None
    joined: bool = False
    stream: Outbox | None = None
    #: Its reconnect grace ran out: its decisions time out at once until it returns.
    abandoned: bool = False
    grace_timer: asyncio.TimerHandle | None = None
    # The open decision (0: none).
    decision_id: int = 0
    deadline: float = 0.0  # loop time
    deadline_wall: float = 0.0  # unix time
    timer: asyncio.TimerHandle | None = None
    sent_at: float = 0.0
    #: The open decision's DecisionRequest, serialized but for ``time_left_ms``.
    request: bytes | None = None

    def cancel_deadline(self) -> None:
        """Stop the open decision's timer (answered, settled, or the match moved)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def cancel_grace(self) -> None:
        """Stop the reconnect grace timer (the seat is back, or the match stopped)."""
        if self.grace_timer is not None:
            self.grace_timer.cancel()
            self.grace_timer = None

    def cancel_timers(self) -> None:
        """Stop both timers: neither may fire on a match that is over or moved."""
        self.cancel_deadline()
        self.cancel_grace()
