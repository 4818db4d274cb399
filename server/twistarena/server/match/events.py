"""A match's events for its streams: each seat sees its own view, spectators the
public one. Public events are serialized once and shared by every stream.

Spectators get the public view after a batch of changes, at most every
``VIEW_EVERY_S``: built and serialized once for all of them, so a match moves
as fast with spectators as without. A spectator gets each public event at
once, as a message of its own, or, on a batched stream
(``WatchRequest.batched``), with the view in one ``WatchBatch``: then a
spectator costs the match one message per batch, however fast it plays.

A seat gets each event as a message of its own, or, on a batched stream
(``Join.batched``), with its next message: the events and the acceptance of
its answer wait on the ``Seat`` for its next DecisionRequest to carry them, or
for a ``SeatBatch`` once the oldest has waited ``SEAT_WAIT_S`` (and before
MatchOver, a rewind or a stop). A decision then costs about one message each
way instead of one per event and seat.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence

from twistarena import wire
from twistarena.engine import Event, GameInfo, State
from twistarena.v1 import play_pb2 as ppb

from .outbox import Outbox
from .seats import Seat

#: Spectators are sent the public view at most this often while the match moves
#: (10 a second: as fast as anyone follows a card game).
VIEW_EVERY_S = 0.1
#: A batched stream's backlog goes in batches of at most this many events, so
#: that a long match's log never makes one message too large for gRPC.
BACKLOG_BATCH = 256
#: On a batched Play stream, what waits for a seat's next message waits at most
#: this long (docs/protocol.md): long enough that a seat asked every few
#: decisions gets it with its requests, short enough for a display to follow.
SEAT_WAIT_S = 0.5


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


class EventFeed:
    """Serializes and sends the events of one live match."""

    def __init__(self, state: State, info: GameInfo, seats: Sequence[Seat] = ()) -> None:
        self.state = state
        self.info = info
        #: The match's seats (a batched one's waiting events are flushed from here).
        self.seats = seats
        #: When the next batched seat's wait is up (None: nothing waits).
        self._seat_timer: asyncio.TimerHandle | None = None
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
            return wire.event_bytes(seq, ev.view(seat), self.info)
        return self.public(seq)

    def public(self, seq: int) -> bytes:
        """Event ``seq`` in the public view, serialized once and kept."""
        cached = self._public
        while len(cached) <= seq:
            n = len(cached)
            cached.append(wire.event_bytes(n, self.state.events[n].view(None), self.info))
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
            view = wire.public_view_bytes(self.info.id, self.state.public_view())
            self._view = (at, (view, wire.view_watch_message(view)))
        return self._view[1]

    def stop(self) -> None:
        """No view is due any more (the match is over, stopped here, or rebuilt
        from its log with a new feed), nor a seat's batch."""
        self.stop_view()
        if self._seat_timer is not None:
            self._seat_timer.cancel()
            self._seat_timer = None

    def stop_view(self) -> None:
        """No view is due any more (one is being sent)."""
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

    def send_new(self, first_event: int, players: Sequence[Seat],
                 spectators: Collection[Outbox]) -> None:
        """Send the events from ``first_event`` on: to each player's stream in its
        seat's view (a batched one's wait for its next message), to the
        spectators in the public view (a batched one's with the next view); the
        view follows within ``VIEW_EVERY_S``."""
        events = self.state.events
        unbatched = [s for s in spectators if s.batch_from is None]
        info = self.info
        for seq in range(first_event, len(events)):
            ev = events[seq]
            private = ev.private
            public = self.public(seq)
            public_msg: bytes | None = None
            for player in players:
                stream = player.stream
                if stream is None or stream.no_events:
                    continue
                seat = player.seat
                seen = wire.event_bytes(seq, ev.view(seat), info) if private.get(seat) \
                    else public
                if player.batched:
                    # ``_hold``, inlined: once per event and seat.
                    player.waiting_events.append(seen)
                    if not player.waiting_since:
                        self._waits(player)
                elif seen is not public:
                    stream.send(wire.event_server_message(seen))
                else:
                    if public_msg is None:
                        public_msg = wire.event_server_message(public)
                    stream.send(public_msg)
            if unbatched:
                watch_msg = wire.event_watch_message(public)
                for spectator in unbatched:
                    spectator.send(watch_msg)
        if spectators and len(events) > first_event and self._view_timer is None:
            loop = asyncio.get_running_loop()
            wait = max(0.0, self._view_sent_at + VIEW_EVERY_S - loop.time())
            self._view_timer = loop.call_later(wait, self.send_view, spectators)

    # -- batched seats ---------------------------------------------------------

    def _hold(self, seat: Seat, event: bytes) -> None:
        """``event`` waits for the seat's next message."""
        seat.waiting_events.append(event)
        if not seat.waiting_since:
            self._waits(seat)

    def hold_accepted(self, seat: Seat, accepted: bytes) -> None:
        """The acceptance of a batched seat's answer (a serialized AnswerAccepted)
        waits for its next message."""
        seat.waiting_accepted = accepted
        if not seat.waiting_since:
            self._waits(seat)

    def _waits(self, seat: Seat) -> None:
        """Something began to wait for the seat: a SeatBatch is due within
        ``SEAT_WAIT_S`` unless a DecisionRequest carries it first."""
        loop = asyncio.get_running_loop()
        seat.waiting_since = loop.time()
        if self._seat_timer is None:
            self._seat_timer = loop.call_later(SEAT_WAIT_S, self._flush_late)

    def _flush_late(self) -> None:
        """Send what has waited ``SEAT_WAIT_S`` to its seat; wait for the next one."""
        self._seat_timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        due = 0.0
        for seat in self.seats:
            since = seat.waiting_since
            if not since or seat.stream is None:
                continue
            if now - since >= SEAT_WAIT_S - 0.001:
                self.flush(seat)
            elif not due or since < due:
                due = since
        if due:
            self._seat_timer = loop.call_later(due + SEAT_WAIT_S - now, self._flush_late)

    def flush(self, seat: Seat) -> None:
        """Send a batched seat what waits for it now, as a SeatBatch."""
        if seat.waiting_since and seat.stream is not None:
            seat.stream.send(wire.seat_batch_message(*seat.take_waiting()))

    def flush_all(self) -> None:
        """Send every batched seat what waits for it (before MatchOver, a rewind, a stop)."""
        for seat in self.seats:
            self.flush(seat)

    def seat_backlog(self, seat: Seat, from_seq: int) -> None:
        """A batched seat (re)joins: its events from ``from_seq`` wait for its next
        message, all but the last ``BACKLOG_BATCH`` sent at once in batches."""
        count = len(self.state.events)
        for seq in range(max(0, from_seq), count):
            self._hold(seat, self.for_seat(seq, seat.seat))
            if len(seat.waiting_events) >= BACKLOG_BATCH and seq + 1 < count:
                self.flush(seat)

    # -- spectators' views -------------------------------------------------------

    def send_view(self, spectators: Collection[Outbox]) -> None:
        """The view after the latest changes to every spectator, a batched one's
        with the events since its last batch. The bytes are shared: the stream's
        serializer passes them as they are."""
        self.stop_view()
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
