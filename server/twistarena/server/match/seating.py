"""The referee's seating stage: streams taking seats, waiting-match joins stored
in one write, reconnect grace, spectators coming and going.

A seat not joined yet is noted joined only once its flag is stored, in one write
with the seats joining a waiting match at about the same time (``flush_joins``),
and its stream gets Joined only then; a seat whose write failed has its stream
closed instead and joins again.

The functions take the referee they act on and run with its lock held unless
they say otherwise.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import TYPE_CHECKING

import grpc
from twistarena import wire
from twistarena.storage import StoreError
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import play_pb2 as ppb

from .. import logs
from . import rewinds
from .durable import through_outage
from .outbox import Outbox
from .seats import Seat

if TYPE_CHECKING:
    from .referee import MatchReferee

log = logs.get("twistarena.referee")

#: The seats joining a waiting match within this long of the first are stored in one
#: write (sooner when the last seat joins: that write also starts the match).
JOIN_WINDOW_S = 0.02

#: A seat that left a running match under an earlier owner gets at least this much
#: of its grace (or its whole grace, if shorter) from the node that takes it over.
INHERITED_GRACE_FLOOR_S = 2.0

#: How the stream of a seat whose joined flag could not be stored is closed (it joins again).
JOIN_FAILED = (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
               "this server could not record the seat's join; reconnect")
JOIN_BROKE = (grpc.StatusCode.INTERNAL, "INTERNAL_ERROR",
              "the server failed to record the seat's join (it is logged); reconnect")


async def attach(referee: MatchReferee, seat_no: int, outbox: Outbox, resume_from: int,
                 handout: int = 0, handed: int = 0) -> None:
    """A Play stream joined ``seat_no`` (see ``MatchReferee.attach``). Takes the lock."""
    written: asyncio.Future[None] | None = None
    async with referee.lock:
        seat = referee.seats[seat_no]
        seat.handout = max(seat.handout, handed)
        if handout < seat.handout:
            outbox.close(grpc.StatusCode.ABORTED, "TAKEN_OVER",
                         f"seat {seat_no} was handed to another runner since")
            return
        seat.handout = max(seat.handout, handout)
        if not _greet(referee, seat, outbox, resume_from):
            return
        opened = seat.decision_id
        if not seat.joined:
            if seat not in referee.joining:
                referee.joining.append(seat)
            if referee.status == mpb.MATCH_STATUS_WAITING and not _seated(referee):
                if referee.join_timer is None:
                    referee.join_timer = referee.loop.call_later(
                        JOIN_WINDOW_S, _join_window_over, referee)
                if referee.join_written is None:
                    referee.join_written = referee.loop.create_future()
                written = referee.join_written
            elif await flush_joins(referee) or not seat.joined:
                return
        if written is None:
            if await referee.start_when_seated():  # again if a start failed before
                return
            if opened and seat.decision_id == opened == referee.book.open_id(seat_no):
                # A still-open decision: send it again, same id, with the time
                # left (and, on a batched stream, the backlog).
                if seat.abandoned or seat.timer is None:
                    referee.arm_timer(seat, referee.clock.decision_s)
                referee.send_request(seat)
    if written is not None:
        await asyncio.shield(written)


def _greet(referee: MatchReferee, seat: Seat, outbox: Outbox, resume_from: int) -> bool:
    """Give ``seat`` to ``outbox``: Joined, the events it missed, the end if the
    match is over. False when the stream was closed or finished here."""
    if refused(referee, outbox):
        return False
    seat_no = seat.seat
    old = seat.stream
    if old is not None and old is not outbox:
        old.close(grpc.StatusCode.ABORTED, "TAKEN_OVER",
                  f"another stream took over seat {seat_no}")
    seat.stream = outbox
    seat.abandoned = False
    seat.cancel_grace()
    # Back: its leaving time and the Rewound it is owed (told below) are cleared
    # with the match too.
    if seat.away_ms or seat_no in referee.owed:
        seat.away_ms = 0
        referee.spawn(store_away(referee))
    # A stream resumes from its own seq. A batched one is told the acceptance
    # of the seat's latest answer again: it may have waited for a message
    # that a dropped stream or a crashed server never sent.
    seat.take_waiting()
    seat.batched = outbox.batched
    latest = referee.book.latest_acceptance(seat_no) if outbox.batched else None
    if latest is not None:
        referee.feed.hold_accepted(seat, wire.accepted(*latest))
    outbox.send(wire.joined_message(referee.joined_bytes(), seat_no))
    resume_from = rewinds.resume_seat_from(referee, seat_no, outbox, resume_from)
    if outbox.batched:
        if not outbox.no_events:
            referee.feed.seat_backlog(seat, resume_from)
    elif not outbox.no_events:
        for seq in range(max(0, resume_from), len(referee.state.events)):
            outbox.send(wire.event_server_message(referee.feed.for_seat(seq, seat_no)))
    if referee.over:
        referee.feed.flush(seat)
        outbox.send(ppb.ServerMessage(match_over=ppb.MatchOver(result=referee.result)))
        outbox.finish()
        return False
    return True


def _seated(referee: MatchReferee) -> bool:
    """Every seat has joined, is joining now or is a house bot."""
    return all(s.joined or s.house_bot or s in referee.joining for s in referee.seats)


def _join_window_over(referee: MatchReferee) -> None:
    referee.join_timer = None
    referee.spawn(_write_joins(referee))


async def _write_joins(referee: MatchReferee) -> None:
    async with referee.lock:
        await flush_joins(referee)


async def flush_joins(referee: MatchReferee) -> bool:
    """Store the joined flags of the seats joining now in one fenced write, with
    the start when they complete the seating (True: it started), and note them
    joined. Called when the last seat joins, ``JOIN_WINDOW_S`` after the first
    of them, and before whatever else would end a waiting match (the seats
    joining then count as joined, as if they came first). A match that ended or
    moved meanwhile stores nothing; a failed write closes the joining seats'
    streams (they join again)."""
    joining = [s for s in referee.joining if not s.joined]
    written, referee.join_written = referee.join_written, None
    drop_joins(referee)
    referee.storing_joins = joining
    try:
        if not joining or referee.over or referee.stopped:
            return False
        try:
            if await referee.start_when_seated(joining):
                return True
            await through_outage(partial(
                referee.store.matches.update_meta, referee.match_id, referee.owner,
                {f"joined:{s.seat}": 1 for s in joining}), lambda: referee.stopped)
        except Exception as exc:
            stored = isinstance(exc, StoreError)
            (log.warning if stored else log.error)(
                "join_failed", match_id=referee.match_id, seats=[s.seat for s in joining],
                error=repr(exc))
            for s in joining:
                if s.stream is not None:
                    # Nothing of it was written yet: no Joined for an unstored join.
                    s.stream.close_unsent(*(JOIN_FAILED if stored else JOIN_BROKE),
                                          redirect=False)
            return False
        for s in joining:
            s.joined = True
        return False
    finally:
        referee.storing_joins = []
        if written is not None and not written.done():
            written.set_result(None)


def drop_joins(referee: MatchReferee) -> None:
    """Forget the seats joining now (stored, or the match stopped here: their
    streams were closed, and go on to say so)."""
    referee.joining.clear()
    written, referee.join_written = referee.join_written, None
    if written is not None and not written.done():
        written.set_result(None)
    if referee.join_timer is not None:
        referee.join_timer.cancel()
        referee.join_timer = None


def refused(referee: MatchReferee, outbox: Outbox) -> bool:
    """Close ``outbox`` as the referee's streams were closed if it has stopped: a
    stream that found the referee just before it stopped would otherwise wait
    for messages that never come."""
    stop = referee.stopped_by
    if stop is None:
        return False
    outbox.close(stop.code, stop.reason, stop.details, stop.redirect)
    return True


def detach(referee: MatchReferee, seat_no: int, outbox: Outbox) -> None:
    """A seat's stream ended; its reconnect grace period starts."""
    seat = referee.seats[seat_no]
    if seat.stream is outbox:
        seat.stream = None
        if not referee.over and not referee.stopped:
            start_grace(referee, seat, away=referee.status == mpb.MATCH_STATUS_RUNNING)
            if seat.away_ms:
                referee.spawn(store_away(referee))


def start_grace(referee: MatchReferee, seat: Seat, away: bool = False) -> None:
    """The seat has no stream: after the clock's grace period its decisions time
    out at once until it returns. ``away``: the match runs, so the grace counts
    from when the seat left (``Seat.away_ms``, now if not known): a match that
    changes owners while a seat is gone does not give it a full grace again with
    every new owner, which under churn would stall the match."""
    if seat.grace_timer is not None:
        seat.grace_timer.cancel()
    now_ms = int(time.time() * 1000)
    if away and not seat.away_ms:
        seat.away_ms = now_ms
    grace_s = referee.clock.grace_s
    left_s = grace_s - max(0, now_ms - seat.away_ms) / 1000 if away else grace_s
    if left_s < grace_s:
        # Left under an earlier owner: a seat whose return that owner saw but could
        # not store (the store lost it) still has a moment to follow the redirect.
        left_s = max(left_s, min(grace_s, INHERITED_GRACE_FLOOR_S))
    seat.grace_timer = referee.loop.call_later(left_s, _grace_expired, referee, seat)


async def store_away(referee: MatchReferee) -> None:
    """Keep when each seat left (``Seat.away_ms``), and the Rewound each is still
    owed, with the match, for a node that takes it over. Every call writes the
    seats' state of when it runs, one after the other, so the last write is the
    latest state. A write that fails costs only that: a new owner would then
    give the seat a full grace, or tell a seat that is back of its Rewound
    again when it next joins (it goes back to ``to_seq`` once more and is sent
    the events after it again)."""
    async with referee.away_lock:
        if referee.over or referee.stopped:
            return
        fields: dict[str, bytes | str | int] = {
            f"away:{s.seat}": s.away_ms for s in referee.seats if not s.house_bot}
        if referee.rewound is not None:  # never rewound: no seat was ever owed one
            fields.update(rewinds.owed_fields(referee))
        try:
            await referee.store.matches.update_meta(referee.match_id, referee.owner, fields)
        except StoreError as exc:
            log.warning("seat_away_not_stored", match_id=referee.match_id, error=repr(exc))


def _grace_expired(referee: MatchReferee, seat: Seat) -> None:
    seat.grace_timer = None
    if seat.stream is not None or referee.over:
        return
    seat.abandoned = True
    if seat.decision_id:
        referee.arm_timer(seat, 0.0)


async def watch(referee: MatchReferee, outbox: Outbox, from_seq: int,
                batched: bool = False) -> None:
    """A spectator joins (see ``MatchReferee.watch``). Takes the lock."""
    async with referee.lock:
        if refused(referee, outbox):
            return
        from_seq = rewinds.resume_spectator_from(referee, outbox, from_seq)
        referee.feed.backlog(outbox, from_seq, batched)
        if referee.over:
            outbox.send(ppb.WatchMessage(match_over=ppb.MatchOver(result=referee.result)))
            outbox.finish()
            return
        referee.spectators.add(outbox)
