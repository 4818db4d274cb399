"""A referee's answer to a store that lost what the node acknowledged.

The store can come back with fewer actions than the node acknowledged (see
``losses``). Each place that can notice it (a match opened from the store, an
append or an end refused for a shorter log, the check of every acknowledged
match after the store restarted) comes here, and the loss is never silent: counted, logged, and
the node's ``LossPolicy`` applied (rewind: every seat and spectator is told
where the match went back to; void: the match ends).

The functions take the referee they act on and run with its lock held.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import grpc
from twistarena.storage import MatchRecord, StoreError
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import play_pb2 as ppb

from .. import logs, metrics
from .durable import store_end, through_outage
from .losses import Acknowledged, LossPolicy, capped_reason, owed_after
from .outbox import Outbox

if TYPE_CHECKING:
    from .referee import MatchReferee

log = logs.get("twistarena.referee")


async def lost_at_start(referee: MatchReferee, known: Acknowledged) -> None:
    """The match was opened from the store with less than this node acknowledged."""
    if known.actions == referee.book.log_len and known.status:
        # Every action is there; only the announced end was lost: store it again.
        metrics.STORE_LOSSES.labels("end_restored").inc()
        log.error("store_loss", match_id=referee.match_id, policy="end_restored",
                  why="the store lost the announced end of the match",
                  acknowledged=known.actions, kept=referee.book.log_len, lost=0)
        try:
            await store_end(referee.store, referee.match_id, referee.owner, known.status,
                            known.result, referee.book.entries, lambda: referee.stopped)
        except StoreError as exc:
            log.error("finish_failed", match_id=referee.match_id, error=repr(exc))
            referee.stop(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
                         "the store could not record the match; reconnect", redirect=False)
            return
        referee.over, referee.status = True, known.status
        referee.result = mpb.MatchResult.FromString(known.result)
        referee.hub.forget(referee)
        return
    why = (f"the store kept {referee.book.log_len} of {known.actions} acknowledged "
           "action(s)" + (" and lost the announced end" if known.status else ""))
    await store_lost(referee, why, known.actions, void=bool(known.status))


def resume_seat_from(referee: MatchReferee, seat_no: int, outbox: Outbox,
                     resume_from: int) -> int:
    """A seat (re)joins: tell it of the rewind it was away for (it is then owed
    nothing, which the caller stores). Returns the seq to resend from.

    A seat owed a Rewound gets it whatever seq it resumes from: its stream may
    have ended after its answer's acceptance and before that answer's own
    events (so it resumes exactly at ``to_seq``), or it takes no events at all
    (``no_events``: it always resumes from 0), and either may hold an accepted
    answer the rewind took back. Only what a node acknowledged can show a loss:
    a ``resume_from`` past the stored events is the seat's own number (a bug,
    or anyone's made-up value), never taken for a store that lost events; the
    seat simply gets no backlog (docs/protocol.md, section 4)."""
    owed = referee.owed.pop(seat_no, None)
    if owed is None:
        return resume_from
    outbox.send(ppb.ServerMessage(rewound=owed))
    return min(resume_from, int(owed.to_seq))


def resume_spectator_from(referee: MatchReferee, outbox: Outbox, from_seq: int) -> int:
    """As ``resume_seat_from``, for a spectator (told again on every resume past
    the rewind: it keeps no accepted answers to get wrong)."""
    rewound = referee.rewound
    if rewound is not None and from_seq > rewound.to_seq:
        outbox.send(ppb.WatchMessage(rewound=rewound))
        return int(rewound.to_seq)
    return from_seq


def owed_lost(referee: MatchReferee, record: MatchRecord | None) -> bool:
    """The store no longer holds a Rewound the referee owes a seat (a restart
    lost its write, beyond what the store promised to keep)."""
    return record is not None and any(seat not in record.owed for seat in referee.owed)


async def recheck(referee: MatchReferee, stored: int) -> None:
    """After the store restarted: its log of the match held ``stored`` entries
    (read without the lock); a loss is handled if it still holds fewer than
    this node acknowledged, and the Rewounds the referee owes are stored again
    (the restart may have lost them). Takes the referee's lock."""
    async with referee.lock:
        if referee.over or referee.stopped:
            return
        if stored < referee.book.log_len:
            try:
                stored = len(await through_outage(
                    partial(referee.store.matches.load_log, referee.match_id),
                    lambda: referee.stopped))
            except StoreError:
                return  # the next write of the referee finds out
            if stored < referee.book.log_len:
                await store_lost(referee, f"the store restarted with {stored} of "
                                 f"{referee.book.log_len} acknowledged action(s)",
                                 referee.book.log_len)
                return
        if referee.owed and not referee.stopped:
            # The store may have lost the Rewounds owed with nothing acknowledged
            # after them (the log shows no loss then): stored again.
            log.warning("rewound_owed_restored", match_id=referee.match_id,
                        seats=sorted(referee.owed))
            await _store_rewind(referee)


async def store_lost(referee: MatchReferee, why: str, acknowledged: int,
                     void: bool = False) -> None:
    """The store has fewer actions than this node acknowledged: the policy
    applied. A log that is not a prefix of what was acknowledged is always void."""
    try:
        entries = await through_outage(partial(referee.store.matches.load_log, referee.match_id),
                                     lambda: referee.stopped)
    except StoreError as exc:
        log.error("store_loss_unreadable", match_id=referee.match_id, error=repr(exc))
        referee.stop(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
                     "the store could not be read; reconnect", redirect=False)
        return
    if referee.stopped:
        # Stopped while the log was read (its lease lost): the node that runs the
        # match now, maybe this one again, handles the loss; a stopped referee
        # that went on would be a second writer of the match.
        return
    kept = len(entries)
    lost = max(0, acknowledged - kept)
    consistent = entries == referee.book.entries[:kept]
    policy = LossPolicy.VOID if void or not consistent else referee.hub.on_store_loss
    metrics.STORE_LOSSES.labels(policy.value).inc()
    metrics.LOST_ACTIONS.inc(lost)
    log.error("store_loss", match_id=referee.match_id, policy=policy.value, why=why,
              acknowledged=acknowledged, kept=kept, lost=lost, consistent=consistent)
    referee.feed.flush_all()  # what waited for batched seats, before they hear of the loss
    if entries != referee.book.entries:
        referee.replay(entries)
    if policy is LossPolicy.VOID:
        await referee.finish(mpb.END_REASON_VOIDED,
                             f"void: {why}; {lost} acknowledged action(s) lost")
        return
    rewound = ppb.Rewound(to_seq=len(referee.state.events), actions=kept,
                          lost_actions=lost, reason=capped_reason(why))
    told = {s.seat for s in referee.seats if s.stream is not None or s.house_bot}
    away = [s.seat for s in referee.seats if s.seat not in told]
    owed_before = referee.owed
    referee.rewound = rewound
    while True:
        # Stored before anyone is told and before the kept log takes a new
        # action: a node that opens the match later, after this one died, tells
        # the seats away. Not stored, nobody was told: this node still remembers
        # what it acknowledged, and finds the loss again when it runs the match.
        referee.owed = owed_after(owed_before, rewound, away)
        if not await _store_rewind(referee):
            referee.owed = owed_before
            return
        # A stream that ended while that was written will not be told: owed too.
        gone = [s.seat for s in referee.seats
                if s.seat in told and s.stream is None and not s.house_bot]
        if not gone:
            break
        told.difference_update(gone)
        away += gone
    for seat in referee.seats:
        if seat.stream is not None:
            seat.stream.send(ppb.ServerMessage(rewound=rewound))
    referee.feed.rewind(referee.spectators, rewound)
    referee.hub.acknowledged.note(referee.match_id, kept)
    referee.open_decisions()


async def _store_rewind(referee: MatchReferee) -> bool:
    """Store, durable, what a rewind leaves with the match: the Rewound owed to
    each seat away (``rewound:<seat>``, empty for the others), the latest one
    (``rewound``, for spectators), and what the store may have lost with the
    log's tail (the status, who joined). False when that failed: the referee
    is stopped."""
    try:
        async with referee.away_lock:
            record = await through_outage(partial(referee.store.matches.load, referee.match_id),
                                          lambda: referee.stopped)
            if record is None:
                raise StoreError(f"match {referee.match_id} is gone from the store")
            fields: dict[str, bytes | str | int] = {
                f"joined:{s.seat}": 1 for s in referee.seats
                if s.joined and s.seat not in record.joined}
            if record.status != referee.status:
                fields["status"] = referee.status
            fields.update(owed_fields(referee))
            if referee.rewound is not None:
                fields["rewound"] = referee.rewound.SerializeToString()
            await through_outage(partial(referee.store.matches.update_meta, referee.match_id,
                                         referee.owner, fields), lambda: referee.stopped)
            await through_outage(partial(referee.store.confirm_durable, referee.match_id),
                                 lambda: referee.stopped)
    except StoreError as exc:
        log.error("store_loss_unrecoverable", match_id=referee.match_id, error=repr(exc))
        referee.stop(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
                     "the store could not record the match; reconnect", redirect=False)
        return False
    return not referee.stopped


def owed_fields(referee: MatchReferee) -> dict[str, bytes | str | int]:
    """The ``rewound:<seat>`` field of every seat but the house bots: the Rewound
    it is owed, or empty."""
    return {f"rewound:{s.seat}": (referee.owed[s.seat].SerializeToString()
                                  if s.seat in referee.owed else b"")
            for s in referee.seats if not s.house_bot}
