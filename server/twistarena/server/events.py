"""A match's events for its streams: each seat sees its own view, spectators the
public one. Public events are serialized once and shared by every stream.

Spectators get the public view after a batch of changes, at most every
``VIEW_EVERY_S``: built and serialized once for all of them, so a match moves
as fast with spectators as without. A spectator gets each public event at
once, as a message of its own, or, on a batched stream
(``WatchRequest.batched``), with the view in one ``WatchBatch``: then a
spectator costs the match one message per batch, however fast it plays.
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
#: A batched stream's backlog goes in batches of at most this many events, so
#: that a long match's log never makes one message too large for gRPC.
BACKLOG_BATCH = 256


def spectator_messages(events: Sequence[bytes], view: bytes, batched: bool) -> list[bytes]:
    """What a spectator joining is sent: ``events`` (serialized public Events) and
    the view after them (a serialized PublicView), as a message each or in batches
    (the view in the last)."""
    if not batched:
        return [*map(wire.event_watch_message, events), wire.view_watch_message(view)]
    starts = range(0, len(events), BACKLOG_BATCH)
    return [*(wire.batch_watch_message(events[i:i + BACKLOG_BATCH], None)
              for i in starts[:-1]),
            wire.batch_watch_message(events[starts[-1]:] if starts else (), view)]


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
        #: The (actions, events) the view was last built at, and that view
        #: serialized: as a PublicView and as a WatchMessage.
        self._view: tuple[tuple[int, int], tuple[bytes, bytes]] | None = None
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

    def public_view(self) -> bytes:
        """The public view now, a serialized ``PublicView``, built once per change."""
        return self._view_now()[0]

    def view_message(self) -> bytes:
        """The public view now as a serialized ``WatchMessage``."""
        return self._view_now()[1]

    def _view_now(self) -> tuple[bytes, bytes]:
        at = (len(self.state.history), len(self.state.events))
        if self._view is None or self._view[0] != at:
            view = wire.public_view(self.info.id, self.state.public_view()).SerializeToString()
            self._view = (at, (view, wire.view_watch_message(view)))
        return self._view[1]

    def stop(self) -> None:
        """No view is due any more (the match is over, stopped here, or rebuilt
        from its log with a new feed)."""
        if self._view_timer is not None:
            self._view_timer.cancel()
            self._view_timer = None

    def backlog(self, spectator: Outbox, from_seq: int, batched: bool) -> None:
        """A spectator joins: the public events from ``from_seq`` on, then the view."""
        count = len(self.state.events)
        events = [self.public(seq) for seq in range(max(0, from_seq), count)]
        for message in spectator_messages(events, self.public_view(), batched):
            spectator.send(message)
        if batched:
            spectator.batch_from = count

    def send_new(self, first_event: int, players: Sequence[Player],
                 spectators: Collection[Outbox]) -> None:
        """Send the events from ``first_event`` on: to each player's stream in its
        seat's view, to the spectators in the public view (a batched one's with
        the next view); the view follows within ``VIEW_EVERY_S``."""
        events = self.state.events
        unbatched = [s for s in spectators if s.batch_from is None]
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
            if unbatched:
                watch_msg = wire.event_watch_message(self.public(seq))
                for spectator in unbatched:
                    spectator.send(watch_msg)
        if spectators and len(events) > first_event and self._view_timer is None:
            loop = asyncio.get_running_loop()
            wait = max(0.0, self._view_sent_at + VIEW_EVERY_S - loop.time())
            self._view_timer = loop.call_later(wait, self.send_view, spectators)

    def send_view(self, spectators: Collection[Outbox]) -> None:
        """The view after the latest changes to every spectator, a batched one's
        with the events since its last batch. The bytes are shared: the stream's
        serializer passes them as they are."""
        self.stop()
        if not spectators:
            return
        self._view_sent_at = asyncio.get_running_loop().time()
        count = len(self.state.events)
        batches: dict[int, bytes] = {}
        for spectator in spectators:
            start = spectator.batch_from
            if start is None:
                spectator.send(self.view_message())
                continue
            batch = batches.get(start)
            if batch is None:
                batch = batches[start] = wire.batch_watch_message(
                    [self.public(seq) for seq in range(start, count)], self.public_view())
            spectator.send(batch)
            spectator.batch_from = count

    def rewind(self, spectators: Collection[Outbox], rewound: ppb.Rewound) -> None:
        """Tell the spectators that the match went back to ``rewound.to_seq``, then
        send the view (the store lost its tail; this feed is rebuilt from what it kept)."""
        message = ppb.WatchMessage(rewound=rewound).SerializeToString()
        for spectator in spectators:
            spectator.send(message)
            if spectator.batch_from is not None:
                spectator.batch_from = min(spectator.batch_from, rewound.to_seq)
        self.send_view(spectators)
