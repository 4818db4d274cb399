"""A match's events for its streams: each seat sees its own view, spectators the
public one. Public events are serialized once and shared by every stream."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from twistarena import wire
from twistarena.engine import Event, GameInfo, State
from twistarena.v1 import play_pb2 as ppb

from .outbox import Outbox


class Player(Protocol):
    """A seat and its stream, if one is connected (the runner's ``Seat``)."""

    @property
    def seat(self) -> int: ...

    @property
    def stream(self) -> Outbox | None: ...


class EventFeed:
    """Serializes and sends the events of one live match."""

    def __init__(self, state: State, info: GameInfo) -> None:
        self.state = state
        self.info = info
        #: Serialized public events, by seq (shared by every stream that sees them).
        self._public: list[bytes] = []

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

    def view_message(self) -> ppb.WatchMessage:
        """The public view now, for spectators."""
        return ppb.WatchMessage(view=wire.public_view(self.info.id, self.state.public_view()))

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
        if spectators and len(events) > first_event:
            # Serialized once for all of them (the stream's serializer passes bytes).
            view = self.view_message().SerializeToString()
            for spectator in spectators:
                spectator.send(view)
