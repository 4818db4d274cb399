"""Spectators get one public view per batch of changes, after its events.

A match that moves many times in a row sends a spectator each public event as
it happens (or, on a batched stream, all of them in one ``WatchBatch``), then
a single view: the view of the state after the last change, built once for
all spectators (events.EventFeed).
"""

from __future__ import annotations

import asyncio

import pytest
from twistarena import engine, wire
from twistarena.server.match.events import BACKLOG_BATCH, EventFeed, spectator_messages
from twistarena.server.match.outbox import Outbox
from twistarena.v1 import play_pb2 as ppb


async def _until_view(spectator: Outbox) -> list[ppb.WatchMessage]:
    """The messages up to and including the first that carries a view."""
    received: list[ppb.WatchMessage] = []
    while not received or not _has_view(received[-1]):
        received.append(ppb.WatchMessage.FromString(
            await asyncio.wait_for(spectator.get(), 10)))
    return received


def _has_view(message: ppb.WatchMessage) -> bool:
    kind = message.WhichOneof("msg")
    return kind == "view" or (kind == "batch" and message.batch.HasField("view"))


def _events(messages: list[ppb.WatchMessage]) -> list[object]:
    return [e for m in messages
            for e in (m.batch.events if m.WhichOneof("msg") == "batch" else [m.event])
            if m.WhichOneof("msg") in ("event", "batch")]


@pytest.mark.parametrize("batched", [False, True], ids=["a-message-each", "batched"])
def test_a_burst_of_changes_sends_every_event_then_one_view_of_the_latest_state(
        batched: bool) -> None:
    async def main() -> None:
        state = engine.make("twisted", 2, 7, {})
        info = engine.game("twisted")
        feed = EventFeed(state, info)
        spectators = [Outbox(), Outbox()]
        for spectator in spectators:
            feed.backlog(spectator, 0, batched)  # the deal, and the view after it
            await _until_view(spectator)
        for _ in range(6):
            first = len(state.events)
            seat = state.to_act()[0]
            state.apply(seat, state.legal_action_ids(seat)[0])
            feed.send_new(first, [], set(spectators))
        deal = len(engine.make("twisted", 2, 7, {}).events)
        for spectator in spectators:
            received = await _until_view(spectator)
            assert len(received) == (1 if batched else len(state.events) - deal + 1)
            assert _events(received) == [wire.event(i, ev.view(None), info)
                                         for i, ev in enumerate(state.events) if i >= deal]
            last = received[-1]
            view = last.batch.view if batched else last.view
            assert view == wire.public_view("twisted", state.public_view())
        # One view for the whole burst: nothing else is due.
        await asyncio.sleep(0)
        assert feed._view_timer is None
        assert all(not s._items for s in spectators)

    asyncio.run(main())


def test_a_long_backlog_goes_in_batches_with_the_view_in_the_last() -> None:
    events = [wire.event(i, {"kind": "x"}, engine.game("twisted")).SerializeToString()
              for i in range(2 * BACKLOG_BATCH + 1)]
    messages = [ppb.WatchMessage.FromString(m)
                for m in spectator_messages(events, b"", batched=True)]
    assert [len(m.batch.events) for m in messages] == [BACKLOG_BATCH, BACKLOG_BATCH, 1]
    assert [m.batch.HasField("view") for m in messages] == [False, False, True]
    assert [e.seq for e in _events(messages)] == list(range(len(events)))


def test_after_a_rewind_a_batched_spectator_gets_the_events_from_where_the_match_went_back_to(
        ) -> None:
    async def main() -> None:
        info = engine.game("twisted")
        played = engine.make("twisted", 2, 7, {})
        kept = engine.make("twisted", 2, 7, {})  # the store kept the first two actions
        for n in range(5):
            seat = played.to_act()[0]
            action = played.legal_action_ids(seat)[0]
            played.apply(seat, action)
            if n < 2:
                kept.apply(seat, action)
        spectator = Outbox()
        EventFeed(played, info).backlog(spectator, 0, batched=True)
        await _until_view(spectator)
        assert spectator.batch_from == len(played.events)
        feed = EventFeed(kept, info)  # rebuilt from the log the store kept
        to_seq = len(kept.events)
        feed.rewind({spectator}, ppb.Rewound(to_seq=to_seq))
        rewound, batch = await _until_view(spectator)
        assert rewound.rewound.to_seq == to_seq
        assert not batch.batch.events
        assert batch.batch.view == wire.public_view("twisted", kept.public_view())
        seat = kept.to_act()[0]
        kept.apply(seat, kept.legal_action_ids(seat)[-1])
        feed.send_new(to_seq, [], {spectator})
        (batch,) = await _until_view(spectator)
        assert [e.seq for e in batch.batch.events] == list(range(to_seq, len(kept.events)))
        assert batch.batch.view == wire.public_view("twisted", kept.public_view())

    asyncio.run(main())
