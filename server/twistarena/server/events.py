"""A match's events for its streams: each seat sees its own view, spectators the
public one. Public events are serialized once and shared by every stream.

Spectators get every public event at once, in order, but the public view that
follows them at most every ``VIEW_EVERY_S``: the view of a batch of changes
is built and serialized once, after the batch, for all spectators together.
So a match moves as fast with spectators as without.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from typing import Protocol

from twistarena import wire
from twistarena.engine import Event, GameInfo, State
from twistarena.v1 import play_pb2 as ppb

from .outbox import Outbox

#: Spectators are sent the public view at most this often while the match moves
#: (10 a second: as fast as anyone follows a card game).
VIEW_EVERY_S = 0.1


class Player(Protocol):
    """A seat and its stream, if one is connected (the runner's ``Seat``)."""

    @property
    def seat(self) -> int:
        """The seat's number."""
        ...

    @property
    def stream(self) -> Outbox | None:
        """The seat's connected stream, if any."""
        ...


class EventFeed:
    """Serializes and sends the events of one live match."""

    def __init__(self, state: State, info: GameInfo) -> None:
        self.state = state
        self.info = info
        #: Serialized public events, by seq (shared by every stream that sees them).
        self._public: list[bytes] = []
        #: The serialized view message and the (actions, events) it was built at.
        self._view: tuple[tuple[int, int], bytes] | None = None
        #: The spectators' next view, when one is due, and when the last one was sent.
        self._view_timer: asyncio.TimerHandle | None = None
        self._view_sent_at = 0.0

    def for_seat(self, seq: int, seat: int) -> bytes:
        """Event ``seq`` as ``seat`` sees it, serialized."""
        ev: Event = self.state.events[seq]
        if ev.private.get(seat):
            return wire.event(seq, ev.view(seat), self.info).SerializeToString()
        return self.public(seq)

    def public(self, seq: int) -> bytes:
        """Event ``seq`` in the public view, serialized once and kept."""
        cached = self._public
        while len(cached) <= seq:
            n = len(cached)
            cached.append(wire.event(n, self.state.events[n].view(None),
                                     self.info).SerializeToString())
        return cached[seq]

    def view_message(self) -> bytes:
        """The public view now as a serialized ``WatchMessage``, built once per change."""
        at = (len(self.state.history), len(self.state.events))
        if self._view is None or self._view[0] != at:
            message = ppb.WatchMessage(view=wire.public_view(self.info.id,
                                                             self.state.public_view()))
            self._view = (at, message.SerializeToString())
        return self._view[1]

    def stop(self) -> None:
        """No more views for spectators from this feed (the match is over, stopped
        here, or rebuilt from its log with a new feed)."""
        if self._view_timer is not None:
            self._view_timer.cancel()
            self._view_timer = None

    def send_new(self, first_event: int, players: Sequence[Player],
                 spectators: Collection[Outbox]) -> None:
        """Send the events from ``first_event`` on: to each player's stream in its
        seat's view, to the spectators in the public view, then the new public view."""
        events = self.state.events
        for seq in range(first_event, len(events)):
            ev = events[seq]
            public_msg: bytes | None = None
            for player in players:
                stream = player.stream
                if stream is None or stream.no_events:
                    continue
                if ev.private.get(player.seat):
                    stream.send(wire.event_server_message(wire.event(
                        seq, ev.view(player.seat), self.info).SerializeToString()))
                else:
                    if public_msg is None:
                        public_msg = wire.event_server_message(self.public(seq))
                    stream.send(public_msg)
            if spectators:
                watch_msg = wire.event_watch_message(self.public(seq))
                for spectator in spectators:
                    spectator.send(watch_msg)
        if spectators and len(events) > first_event and self._view_timer is None:
            loop = asyncio.get_running_loop()
            wait = max(0.0, self._view_sent_at + VIEW_EVERY_S - loop.time())
            self._view_timer = loop.call_later(wait, self._send_view, spectators)

    def _send_view(self, spectators: Collection[Outbox]) -> None:
        """The view after the latest batch of changes, to every spectator (the
        stream's serializer passes the shared bytes as they are)."""
        self._view_timer = None
        if not spectators:
            return
        self._view_sent_at = asyncio.get_running_loop().time()
        view = self.view_message()
        for spectator in spectators:
            spectator.send(view)
