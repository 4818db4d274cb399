"""A live match's seats: who plays each, its stream, its open decision and timers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

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
    #: The highest runner hand-out that joined the seat (``Join.handout``), or that
    #: the store named as the seat's latest: a Join with a lower one comes from a
    #: runner that lost the seat and is refused.
    handout: int = 0
    grace_timer: asyncio.TimerHandle | None = None
    #: When (ms since the epoch) its stream was seen gone while the match ran (0: it
    #: is here, or the match is waiting): kept with the match, so that the grace
    #: runs from then on whichever node runs the match.
    away_ms: int = 0
    # The open decision (0: none).
    decision_id: int = 0
    deadline: float = 0.0  # loop time
    deadline_wall: float = 0.0  # unix time
    #: Fires at ``timer_at`` (loop time), at or before ``deadline``: set for the
    #: open decision, or kept from an earlier one (``asking.arm_timer``).
    timer: asyncio.TimerHandle | None = None
    timer_at: float = 0.0
    sent_at: float = 0.0
    #: The open decision's DecisionRequest, serialized but for ``time_left_ms``.
    request: bytes | None = None
    #: The log length ``request`` was built at: a request re-sent after others
    #: acted is built again (the same id and deadline, the observation of now).
    request_at: int = 0
    #: The seat's stream asked for batched delivery (``Join.batched``): what it is
    #: told waits for its next message (see ``events.EventFeed.hold_accepted``).
    batched: bool = False
    #: What waits for that message: the seat's events (serialized, in its view)
    #: and the acceptance of its latest answer (a serialized AnswerAccepted).
    waiting_events: list[bytes] = field(default_factory=list)
    waiting_accepted: bytes = b""
    #: Loop time the oldest of them began to wait (0: nothing waits).
    waiting_since: float = 0.0

    def take_waiting(self) -> tuple[bytes, list[bytes]]:
        """What waits for the seat's next message (the acceptance, the events), now
        on its way."""
        accepted, events = self.waiting_accepted, self.waiting_events
        self.waiting_accepted, self.waiting_events, self.waiting_since = b"", [], 0.0
        return accepted, events

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
