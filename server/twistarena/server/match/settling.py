"""The referee's settling stage: an open decision settled by an answer, a missed
deadline or a house bot; the action appended to the store (fenced), only then
applied, acknowledged and broadcast.

The functions take the referee they act on; ``answer``, ``timeout`` and
``bot_move`` take its lock, the others run with it held.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING

import grpc
from twistarena import wire
from twistarena.storage import FencedError, LogConflict, LogEntry, StoreError
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import play_pb2 as ppb

from .. import logs, metrics
from . import rewinds
from .decisions import ACCEPTED, Reply, late, seat_of
from .durable import append_entry, through_outage
from .housebots import house_action
from .outbox import Outbox
from .timecontrol import fallback_action
from .timers import cap_reached

if TYPE_CHECKING:
    from .referee import MatchReferee

log = logs.get("twistarena.referee")

#: An answer arriving this long after its deadline is late even if the timer has not fired.
LATE_TOLERANCE_S = 0.02

#: How often one entry is appended when the store's log turns out to run past the
#: referee's own (``_catch_up``): each try applies what the store held first.
OWN_LOG_ATTEMPTS = 3

_DECIDED_ANSWER = metrics.DECISIONS.labels("answer")
_DECIDED_TIMEOUT = metrics.DECISIONS.labels("timeout")
_DECIDED_HOUSE = metrics.DECISIONS.labels("house")


async def answer(referee: MatchReferee, seat_no: int, decision_id: int, action_id: int,
                 stream: Outbox, fallback: bool = False) -> Reply:
    """An agent's answer (see ``MatchReferee.answer``)."""
    async with referee.lock:
        reply = await _decide_answer(referee, seat_no, decision_id, action_id, fallback)
        if reply is None:
            # The store lost actions and the match went back: if the same
            # decision is open again, this answer settles it there.
            reply = await _decide_answer(referee, seat_no, decision_id, action_id, fallback)
        if reply is None:
            reply = Reply(False, ppb.STALE_DECISION,
                          "the match was rewound; answer the decisions sent after it")
        if not reply.accepted:  # an accepted one was told before its events
            _reply(stream, decision_id, action_id, reply)
        return reply


async def _decide_answer(referee: MatchReferee, seat_no: int, decision_id: int,
                         action_id: int, fallback: bool) -> Reply | None:
    """Judge an answer and, if it stands, commit it; None when the match was
    rewound meanwhile."""
    seat = referee.seats[seat_no]
    if referee.over:
        return Reply(False, ppb.STALE_DECISION, "the match is over")
    if referee.stopped:
        # An answer that waited for the lock while the match was handed over
        # or its lease lost: its new owner asks again; an append here would
        # only be fenced.
        return Reply(False, ppb.STALE_DECISION, "the match is no longer run here")
    if seat_of(decision_id) != seat_no:
        return Reply(False, ppb.UNKNOWN_DECISION,
                     f"decision {decision_id} was never sent to seat {seat_no}")
    open_id = seat.decision_id if seat_no in referee.book.opened else 0
    if open_id != decision_id or referee.status != mpb.MATCH_STATUS_RUNNING:
        return referee.book.why_not_open(seat_no, decision_id)
    if referee.loop.time() > seat.deadline + LATE_TOLERANCE_S:
        await _settle_timeout(referee, seat_no, decision_id)
        return late(decision_id)
    if fallback:
        # Settled like a missed deadline (the same seeded action, logged as a
        # timeout); like one, it is not acknowledged.
        await _settle_timeout(referee, seat_no, decision_id)
        return ACCEPTED
    # The open decision's legal ids (the engine checks again as it applies);
    # the engine says why an action is not among them.
    if action_id not in referee.book.legal[seat_no]:
        illegal = referee.state.check(seat_no, action_id)
        if illegal is not None:
            return Reply(False, ppb.ILLEGAL_ACTION, illegal.message, may_retry=True)
    sent_at = seat.sent_at
    if not await _commit(referee, seat_no, action_id, False):
        if referee.stopped or referee.over:
            return Reply(False, ppb.STALE_DECISION, "the match is no longer run here")
        return None
    if sent_at:
        metrics.DECISION_LATENCY.observe(time.perf_counter() - sent_at)
    _DECIDED_ANSWER.inc()
    return ACCEPTED


def _reply(stream: Outbox | None, decision_id: int, action_id: int, reply: Reply) -> None:
    """The one place that tells an agent what became of its answer."""
    if not reply.accepted:
        metrics.ANSWERS_REJECTED.labels(ppb.ErrorReason.Name(reply.reason)).inc()
    if stream is None:
        return
    if reply.accepted:
        stream.send(wire.accepted_message(decision_id, action_id))
    else:
        stream.send(ppb.ServerMessage(rejected=ppb.AnswerRejected(
            decision_id=decision_id, action_id=action_id,
            reason=reply.reason, message=reply.message,  # type: ignore[arg-type]
            may_retry=reply.may_retry)))


async def timeout(referee: MatchReferee, seat_no: int, did: int) -> None:
    """The seat's decision ``did`` missed its deadline, unless settled meanwhile."""
    async with referee.lock:
        seat = referee.seats[seat_no]
        if (referee.over or referee.stopped or seat.decision_id != did
                or referee.book.open_id(seat_no) != did):
            return
        await _settle_timeout(referee, seat_no, did)


async def _settle_timeout(referee: MatchReferee, seat_no: int, did: int) -> None:
    book, clock = referee.book, referee.clock
    if clock.forfeit_after and book.timeouts[seat_no] + 1 >= clock.forfeit_after:
        book.timeouts[seat_no] += 1  # the miss that forfeits counts like the others
        misses = book.timeouts[seat_no]
        await referee.finish(mpb.END_REASON_FORFEIT,
                             f"seat {seat_no} forfeited after {misses} missed decisions",
                             forfeit=seat_no)
        return
    action = fallback_action(referee.record.seed, did, book.legal[seat_no])
    if await _commit(referee, seat_no, action, True):
        _DECIDED_TIMEOUT.inc()


async def bot_move(referee: MatchReferee, seat_no: int, did: int) -> None:
    """A house bot plays the seat's open decision ``did`` (its fallback if it fails)."""
    async with referee.lock:
        seat = referee.seats[seat_no]
        if referee.over or referee.stopped or referee.book.open_id(seat_no) != did:
            return
        try:
            action = await house_action(seat.house_bot, referee.game_id, referee.state,
                                        seat_no, referee.record.seed)
        except Exception as exc:  # a bot bug must not stop the match
            log.warning("house_bot_failed", match_id=referee.match_id, seat=seat_no,
                        error=repr(exc))
            action = -1
        if referee.over or referee.stopped:
            return
        if action not in referee.book.legal[seat_no]:
            action = fallback_action(referee.record.seed, did, referee.book.legal[seat_no])
        if await _commit(referee, seat_no, action, False):
            _DECIDED_HOUSE.inc()


async def _commit(referee: MatchReferee, seat_no: int, action: int, timeout: bool) -> bool:
    """Append, then apply and broadcast. False when the match is lost here, or the
    decision was settled by entries the store held already."""
    entry = (seat_no, action, timeout)
    if not referee.hub.leases.vouch(referee):
        return False
    did = referee.book.decision_id(seat_no)
    for _attempt in range(OWN_LOG_ATTEMPTS):
        try:
            await append_entry(referee.store, referee.match_id, referee.owner,
                               referee.book.log_len, entry, lambda: referee.stopped)
        except LogConflict as conflict:
            if conflict.actual < referee.book.log_len:
                await rewinds.store_lost(
                    referee, f"the store kept {conflict.actual} of {referee.book.log_len} "
                    "acknowledged action(s)", referee.book.log_len)
                return False
            if not await _catch_up(referee, conflict):
                log.error("append_failed", match_id=referee.match_id, error=repr(conflict))
                referee.stop(grpc.StatusCode.UNAVAILABLE, "NOT_OWNER",
                             "another server recorded moves of the match; reconnect")
                return False
            if referee.over or referee.stopped or referee.book.open_id(seat_no) != did:
                return False
            continue  # the decision is still open after the stored entries
        except FencedError as exc:
            log.error("append_failed", match_id=referee.match_id, error=repr(exc))
            referee.hub.leases.fenced(referee)
            return False
        except StoreError as exc:
            log.error("append_failed", match_id=referee.match_id, error=repr(exc))
            referee.stop(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
                         "this server can no longer record moves of the match; reconnect",
                         redirect=False)
            return False
        await _apply(referee, entry)
        return True
    return False


async def _catch_up(referee: MatchReferee, conflict: LogConflict) -> bool:
    """The store's log of the match runs past this referee's while this node
    holds its lease (appends are fenced): only this node wrote those entries,
    and an append that lost its apply is a bug. It is logged loudly and the
    entries applied, rather than the match stopped here: the other seats'
    streams and clocks do not pay for it. False when the stored log does not
    extend this referee's (or cannot be read): someone else wrote it."""
    known = referee.book.log_len
    try:
        entries = await through_outage(partial(referee.store.matches.load_log,
                                               referee.match_id), lambda: referee.stopped)
    except StoreError:
        return False
    if len(entries) <= known or entries[:known] != referee.book.entries:
        return False
    metrics.ERRORS.labels("runner").inc()
    log.error("own_log_ahead", match_id=referee.match_id, applied=known,
              stored=len(entries), error=repr(conflict))
    for entry in entries[known:]:
        if referee.over or referee.stopped:
            break
        await _apply(referee, entry)
    return True


async def _apply(referee: MatchReferee, entry: LogEntry) -> None:
    """Apply a stored entry and broadcast it: the answer's acceptance, the new
    events, then the end or the next decisions."""
    seat_no, action, timeout = entry
    seat = referee.seats[seat_no]
    referee.hub.acknowledged.note(referee.match_id, referee.book.log_len + 1)
    # Its timer is kept: the seat's next decision, due later, reuses it.
    seat.decision_id = 0
    seat.request = None
    first_event = len(referee.state.events)
    did = referee.book.decision_id(seat_no)
    referee.book.advance(seat_no, action, timeout)
    if not timeout and not seat.house_bot:
        if seat.batched:
            referee.feed.hold_accepted(seat, wire.accepted(did, action))
        else:
            _reply(seat.stream, did, action, ACCEPTED)
    referee.feed.send_new(first_event, referee.seats, referee.spectators)
    if referee.state.is_terminal():
        await referee.finish(mpb.END_REASON_COMPLETED, "")
    elif cap_reached(referee.hub.max_match_decisions, referee.book.log_len):
        await referee.end_for_length(f"{referee.hub.max_match_decisions} decisions")
    else:
        referee.open_decisions()
