"""Spectators get every event at once and one public view per batch of changes.

A match that moves many times in a row sends its spectators each public event
as it happens, then a single view: the view of the state after the last
change, built once for all of them (events.EventFeed).
"""

from __future__ import annotations

import asyncio

from twistarena import engine, wire
from twistarena.server.events import EventFeed
from twistarena.server.outbox import Outbox
from twistarena.v1 import play_pb2 as ppb


def test_a_batch_of_changes_sends_every_event_then_one_view_of_the_latest_state() -> None:
    async def main() -> None:
        state = engine.make("twisted", 2, 7, {})
        info = engine.game("twisted")
        feed = EventFeed(state, info)
        spectators = [Outbox(), Outbox()]
        first = 0  # the deal's events too
        for _ in range(6):
            seat = state.to_act()[0]
            state.apply(seat, state.legal_action_ids(seat)[0])
            feed.send_new(first, [], set(spectators))
            first = len(state.events)
        for spectator in spectators:
            received = []
            while not received or received[-1].WhichOneof("msg") != "view":
                raw = await asyncio.wait_for(spectator.get(), 10)
                received.append(ppb.WatchMessage.FromString(raw))
            events = [m.event for m in received[:-1]]
            assert [e.seq for e in events] == list(range(len(state.events)))
            assert events == [wire.event(i, ev.view(None), info)
                              for i, ev in enumerate(state.events)]
            assert received[-1].view == wire.public_view("twisted", state.public_view())
        # One view for the whole batch: nothing else is due.
        await asyncio.sleep(0)
        assert feed._view_timer is None
        assert all(not s._items for s in spectators)

    asyncio.run(main())
