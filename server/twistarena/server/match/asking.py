"""The referee's asking stage: the decisions the engine opened go out, each
with its deadline armed; a house bot's is played in a task of its own.

The functions take the referee they act on and run with its lock held (the
deadline callback excepted: it only spawns the settling task).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from twistarena import wire
from twistarena.v1 import match_pb2 as mpb

from .. import metrics
from .seats import Seat

if TYPE_CHECKING:
    from .referee import MatchReferee


def open_decisions(referee: MatchReferee) -> None:
    """Send every decision the engine opened and the referee has not sent yet."""
    if referee.over or referee.stopped or referee.status != mpb.MATCH_STATUS_RUNNING:
        return
    for seat_no in referee.book.opened:
        seat = referee.seats[seat_no]
        did = referee.book.decision_id(seat_no)
        if seat.decision_id == did:
            continue
        seat.decision_id = did
        seat.request = None
        if seat.house_bot:
            referee.loop.call_soon(referee.spawn, referee.bot_move(seat_no, did))
            continue
        arm_timer(referee, seat, 0.0 if seat.abandoned else referee.clock.decision_s)
        if seat.stream is not None:
            send_request(referee, seat)


def arm_timer(referee: MatchReferee, seat: Seat, delay: float) -> None:
    """Set the seat's open decision to time out ``delay`` seconds from now.

    A timer already set to fire no later than that is kept: once it fires it is
    set again for the deadline then open (``_on_deadline``). A seat asked decision
    after decision keeps one timer, instead of one made and cancelled per decision."""
    now = referee.loop.time()
    deadline = seat.deadline = now + delay
    seat.deadline_wall = time.time() + delay
    seat.request = None
    if seat.timer is not None:
        if seat.timer_at <= deadline:
            return
        seat.timer.cancel()
    seat.timer_at = deadline
    seat.timer = referee.loop.call_later(delay, _on_deadline, referee, seat.seat)


#: A deadline timer firing this close before the deadline counts as on time
#: (the loop's clock resolution).
DEADLINE_SLACK_S = 0.001


def _on_deadline(referee: MatchReferee, seat_no: int) -> None:
    """The seat's timer fired: its open decision, if any, times out once its own
    deadline has come (the timer may have been set for an earlier decision's)."""
    seat = referee.seats[seat_no]
    seat.timer = None
    did = seat.decision_id
    if not did or referee.over:
        return
    now = referee.loop.time()
    if seat.deadline - now > DEADLINE_SLACK_S:
        seat.timer_at = seat.deadline
        seat.timer = referee.loop.call_later(seat.deadline - now, _on_deadline, referee,
                                             seat_no)
        return
    referee.spawn(referee.timeout(seat_no, did))


def send_request(referee: MatchReferee, seat: Seat) -> None:
    """Send the seat's open decision on its stream, with the time left (built
    again only when others acted since it was last built)."""
    assert seat.stream is not None
    left = max(0.0, seat.deadline - referee.loop.time())
    body = seat.request
    if body is None or seat.request_at != referee.book.log_len:
        built = metrics.REQUESTS_BUILT
        built.value += 1
        # CPU time (a preempted build costs nothing) of one build in
        # TIME_EVERY: reading a thread's clock is a system call.
        timed = built.value % metrics.TIME_EVERY == 0
        started = time.thread_time_ns() if timed else 0
        seat_no, state = seat.seat, referee.state
        body = wire.decision_body(
            referee.match_id_field, seat.decision_id, seat_no,
            referee.observations.encode_seat(state, seat_no),
            referee.vocabulary.encoded(state.vocabulary_version(),
                                       referee.book.legal[seat_no],  # the open decision's
                                       state.describe, seat_no),
            int(seat.deadline_wall * 1e9))
        seat.request, seat.request_at = body, referee.book.log_len
        if timed:
            metrics.REQUESTS_TIMED.value += 1
            metrics.REQUEST_BUILD_SECONDS.value += (time.thread_time_ns() - started) / 1e9
    seat.sent_at = time.perf_counter()
    if seat.waiting_since:
        message = wire.request_message(body, int(left * 1000), *seat.take_waiting())
    else:
        message = wire.request_message(body, int(left * 1000))
    seat.stream.send(message)
