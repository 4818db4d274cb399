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
from twistarena.storage import StoreError
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import play_pb2 as ppb

from .. import logs, metrics
from .durable import store_end, through_outage
from .losses import Acknowledged, LossPolicy, Rewind
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
    """A seat (re)joins: tell it of the rewind it was away for. Returns the seq to
    resend from.

    A seat owed a Rewound gets it whatever seq it resumes from: its stream may
    have ended after its answer's acceptance and before that answer's own
    events (so it resumes exactly at ``to_seq``), or it takes no events at all
    (``no_events``: it always resumes from 0), and either may hold an accepted
    answer the rewind took back. Only what this node acknowledged can show a
    loss: a ``resume_from`` past the stored events is the seat's own number (a
    bug, or anyone's made-up value), never taken for a store that lost events;
    the seat simply gets no backlog (docs/protocol.md, section 4)."""
    memory = referee.hub.acknowledged.get(referee.match_id)
    rewind = memory.rewind if memory is not None else None
    owed = rewind.owed.pop(seat_no, None) if rewind is not None else None
    if owed is None:
        return resume_from
    outbox.send(ppb.ServerMessage(rewound=owed))
    return min(resume_from, int(owed.to_seq))


def resume_spectator_from(referee: MatchReferee, outbox: Outbox, from_seq: int) -> int:
    """As ``resume_seat_from``, for a spectator (told again on every resume past
    the rewind: it keeps no accepted answers to get wrong)."""
    memory = referee.hub.acknowledged.get(referee.match_id)
    rewind = memory.rewind if memory is not None else None
    if rewind is not None and from_seq > rewind.message.to_seq:
        outbox.send(ppb.WatchMessage(rewound=rewind.message))
        return int(rewind.message.to_seq)
    return from_seq


async def recheck(referee: MatchReferee, stored: int) -> None:
    """After the store restarted: its log of the match held ``stored`` entries
    (read without the lock); a loss is handled if it still holds fewer than
    this node acknowledged. Takes the referee's lock."""
    async with referee.lock:
        if referee.over or referee.stopped or stored >= referee.book.log_len:
            return
        try:
            stored = len(await through_outage(
                partial(referee.store.matches.load_log, referee.match_id), lambda: referee.stopped))
        except StoreError:
            return  # the next write of the referee finds out
        if stored < referee.book.log_len:
            await store_lost(referee, f"the store restarted with {stored} of "
                             f"{referee.book.log_len} acknowledged action(s)",
                             referee.book.log_len)


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
                          lost_actions=lost, reason=why)
    for seat in referee.seats:
        if seat.stream is not None:
            seat.stream.send(ppb.ServerMessage(rewound=rewound))
    referee.feed.rewind(referee.spectators, rewound)
    memory = referee.hub.acknowledged.note(referee.match_id, kept)
    memory.rewind = Rewind.after(memory.rewind, rewound, (s.seat for s in referee.seats),
                                 {s.seat for s in referee.seats
                                  if s.stream is not None or s.house_bot})
    await _restore_meta(referee)
    referee.open_decisions()


async def _restore_meta(referee: MatchReferee) -> None:
    """What the store may have lost with the log's tail: the status, who joined."""
    try:
        record = await through_outage(partial(referee.store.matches.load, referee.match_id),
                                    lambda: referee.stopped)
        if record is None:
            raise StoreError(f"match {referee.match_id} is gone from the store")
        fields: dict[str, bytes | str | int] = {
            f"joined:{s.seat}": 1 for s in referee.seats
            if s.joined and s.seat not in record.joined}
        if record.status != referee.status:
            fields["status"] = referee.status
        if fields:
            await through_outage(partial(referee.store.matches.update_meta, referee.match_id,
                                         referee.owner, fields), lambda: referee.stopped)
    except StoreError as exc:
        log.error("store_loss_unrecoverable", match_id=referee.match_id, error=repr(exc))
        referee.stop(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
                     "the store could not record the match; reconnect", redirect=False)
