"""One referee per live match: the seats' streams, the clock, the answers.

Flow of one decision: the engine says who acts and what is legal; each acting
seat gets a DecisionRequest (a house bot answers in-process); an answer is
checked against the engine, appended to the log in Redis (fenced and batched),
only then acknowledged and applied; the new events go to every seat in its
own view and to spectators in the public view; the next decisions open.

The referee's parts live beside it: ``hub`` (the node's referees), ``seats``
(a seat and its timers), ``decisions`` (open decisions and their ids, from the
state and log alone), ``events`` (what each stream is sent), ``outbox`` (a
stream's queue), ``durable`` (store writes retried through an outage),
``rewinds`` (a store that lost acknowledged actions), ``matchtimers`` (the
waiting timeout and the length caps), ``matchend`` (scoring an end) and
``records`` (a stored match as a message).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Any

import grpc
from twistarena import engine, wire
from twistarena.engine import State
from twistarena.storage import FencedError, LogConflict, LogEntry, MatchRecord, StoreError
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import play_pb2 as ppb

from .. import logs, metrics
from . import rewinds
from .decisions import ACCEPTED, DecisionBook, Reply, late, seat_of
from .durable import append_entry, store_end, through_outage
from .end import end_status, match_result
from .events import EventFeed
from .housebots import house_action
from .hub import Hub
from .outbox import Close, Outbox
from .records import game_options, match_proto
from .seats import Seat
from .timecontrol import Clock, fallback_action
from .timers import MatchTimers, cap_reached, length_limit_detail

log = logs.get("twistarena.referee")

#: An answer arriving this long after its deadline is late even if the timer has not fired.
LATE_TOLERANCE_S = 0.02

#: The seats joining a waiting match within this long of the first are stored in one
#: write (sooner when the last seat joins: that write also starts the match).
JOIN_WINDOW_S = 0.02

#: How the stream of a seat whose joined flag could not be stored is closed (it joins again).
JOIN_FAILED = (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
               "this server could not record the seat's join; reconnect")
JOIN_BROKE = (grpc.StatusCode.INTERNAL, "INTERNAL_ERROR",
              "the server failed to record the seat's join (it is logged); reconnect")

#: How often one entry is appended when the store's log turns out to run past the
#: referee's own (``_catch_up``): each try applies what the store held first.
OWN_LOG_ATTEMPTS = 3

_DECIDED_ANSWER = metrics.DECISIONS.labels("answer")
_DECIDED_TIMEOUT = metrics.DECISIONS.labels("timeout")
_DECIDED_HOUSE = metrics.DECISIONS.labels("house")


class MatchReferee:
    """Runs one live match on this node: rebuilt from its log, then driven by
    answers, timers and house bots, every change under ``lock``."""

    def __init__(self, hub: Hub, record: MatchRecord, owner: str,
                 log_entries: Sequence[LogEntry], fresh: State | None = None) -> None:
        """``fresh``: the match's engine state as created, if at hand (a match just
        created here); else it is built from the record."""
        self.hub = hub
        self.store = hub.store
        self.loop = asyncio.get_running_loop()
        self.record = record
        self.match_id = record.match_id
        self._match_id_field = wire.match_id_field(record.match_id)
        self._joined_bytes = b""
        #: Seats joining now: their joined flags wait for one write (``_flush_joins``),
        #: and their streams for its outcome (set once it is known).
        self._joining: list[Seat] = []
        #: The seats whose joined flags are being written (told nothing yet).
        self._storing_joins: list[Seat] = []
        self._join_timer: asyncio.TimerHandle | None = None
        self._join_written: asyncio.Future[None] | None = None
        self.owner = owner
        opts = record.options
        self.game_id = opts.game_id
        self.num_players = opts.num_players
        self.info = engine.game(self.game_id)
        self.state: State = fresh if fresh is not None else engine.make(
            self.game_id, self.num_players, record.seed, game_options(opts))
        self.clock = Clock.from_proto(opts.time_control)
        self.lock = asyncio.Lock()
        self.over = record.status in wire.MATCH_OVER
        self.status = record.status
        self.result = record.result
        self.seats: list[Seat] = []
        for s in range(self.num_players):
            spec = opts.seats[s] if len(opts.seats) == self.num_players else mpb.SeatSpec()
            self.seats.append(Seat(s, spec.name, spec.house_bot, record.token_hashes.get(s),
                                   joined=s in record.joined))
        self.spectators: set[Outbox] = set()
        self.book = DecisionBook(self.state)
        self.feed = EventFeed(self.state, self.info, self.seats)
        #: Kept encodings of this match's observation parts and actions.
        self.observations = wire.ObservationEncoder(self.game_id)
        self.vocabulary = wire.match_vocabulary(self.game_id, self.num_players,
                                                self.state.options)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.timers = MatchTimers(self.loop, record.created_ms)
        #: No longer run here (drained, ownership lost): the store keeps the match
        #: live. The status every stream of the match got, and any later one gets.
        self.stopped_by: Close | None = None
        for seat_no, action, timeout in log_entries:
            self.book.advance(seat_no, action, timeout)

    @property
    def stopped(self) -> bool:
        """No longer run here (drained, ownership lost): the store keeps the match live."""
        return self.stopped_by is not None

    def replay(self, entries: Sequence[LogEntry]) -> None:
        """Rebuild the state from a log the store kept (after it lost the tail);
        every decision opens again. Lock held."""
        self.state = engine.make(self.game_id, self.num_players, self.record.seed,
                                 game_options(self.record.options))
        self.book = DecisionBook(self.state)
        self.feed.stop()
        self.feed = EventFeed(self.state, self.info, self.seats)
        for seat in self.seats:
            seat.cancel_deadline()
            seat.decision_id = 0
            seat.request = None
        for seat_no, action, timeout in entries:
            self.book.advance(seat_no, action, timeout)

    # -- lifecycle -----------------------------------------------------------

    def _spawn(self, coro: Any) -> None:
        task = self.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            metrics.ERRORS.labels("runner").inc()
            log.error("referee_task_failed", match_id=self.match_id,
                      error=repr(task.exception()))

    async def start(self) -> None:
        """Resume where the log left off: finish, start running, or wait for the seats."""
        async with self.lock:
            known = self.hub.acknowledged.get(self.match_id)
            if known is not None and (known.actions > self.book.log_len or (
                    known.status and not self.over)):
                await rewinds.lost_at_start(self, known)
            if self.over or self.stopped:
                return
            if self.state.is_terminal():
                await self.finish(mpb.END_REASON_COMPLETED, "")
                return
            if cap_reached(self.hub.max_match_decisions, self.book.log_len):
                await self._end_for_length(f"{self.hub.max_match_decisions} decisions")
                return
            if await self._start_when_seated():
                return
            if self.status == mpb.MATCH_STATUS_RUNNING:
                self._run()
            elif self.waiting_timeout_s > 0:
                self.timers.arm_waiting(self.waiting_timeout_s, self._waiting_expired)

    async def _start_when_seated(self, joining: Sequence[Seat] = ()) -> bool:
        """A waiting match starts running once every seat has joined (house bots
        always have). True if it started now. ``joining``: seats joining now, noted
        in the same write as the start (store calls fewer per match). Lock held."""
        if self.status != mpb.MATCH_STATUS_WAITING or not all(
                s.joined or s.house_bot or s in joining for s in self.seats):
            return False
        await self._set_status(mpb.MATCH_STATUS_RUNNING,
                               {f"joined:{s.seat}": 1 for s in joining})
        for s in joining:
            s.joined = True
        self._run()
        return True

    def _run(self) -> None:
        """Play on: absent players' grace periods start, the open decisions go out,
        the cap on the match's wall time is armed."""
        self.timers.arm_length(self.hub.max_match_s, self._length_expired)
        for seat in self.seats:
            if not seat.house_bot and seat.stream is None:
                self._start_grace(seat)
        self.open_decisions()

    @property
    def waiting_timeout_s(self) -> float:
        """How long after creation a match not yet started is abandoned (0: never):
        the match's own join timeout, else the server's waiting timeout."""
        return self.clock.waiting_s or self.hub.waiting_timeout_s

    def _length_expired(self) -> None:
        self._spawn(self._end_for_time())

    async def _end_for_time(self) -> None:
        async with self.lock:
            if not (self.over or self.stopped):
                await self._end_for_length(f"{self.hub.max_match_s:g} s")

    async def _end_for_length(self, cap: str) -> None:
        """End a match that reached a server cap on its length. Lock held."""
        await self.finish(mpb.END_REASON_LENGTH_LIMIT, length_limit_detail(cap))

    def _waiting_expired(self) -> None:
        self._spawn(self._abandon())

    async def _abandon(self) -> None:
        """End a match that never started: some seat did not join in time."""
        async with self.lock:
            await self._flush_joins()
            if self.over or self.stopped or self.status != mpb.MATCH_STATUS_WAITING:
                return
            missing = [s.seat for s in self.seats if not (s.joined or s.house_bot)]
            await self.finish(
                mpb.END_REASON_ABANDONED,
                f"seat(s) {', '.join(map(str, missing))} did not join within "
                f"{self.waiting_timeout_s:g} s of the match's creation")

    def stop_not_owner(self, redirect: bool) -> None:
        """Stop here because another node owns the match now, or may (a lapsed lease)."""
        self.stop(grpc.StatusCode.UNAVAILABLE, "NOT_OWNER",
                  "this server no longer owns the match; reconnect", redirect)

    def stop(self, code: grpc.StatusCode, reason: str, details: str,
             redirect: bool = True) -> None:
        """Stop running this match here (drain, lost ownership); Redis keeps it live.

        ``redirect``: the streams' handlers look the new owner up in the store
        before closing; False when the store is unreachable or this node's leases
        lapsed (the look-up would wait on a dead link, or name a stale owner)."""
        self.stopped_by = Close(code, reason, details, redirect)
        # Seats whose join is not stored yet were told nothing (their Joined waits
        # for the write): they get the status alone, and join again.
        unstored = [s for s in (*self._joining, *self._storing_joins) if not s.joined]
        self._drop_joins()
        self.timers.cancel()
        for seat in unstored:
            if seat.stream is not None:
                seat.stream.close_unsent(code, reason, details, redirect)
                seat.stream = None
        self.feed.flush_all()
        self.feed.stop()
        for seat in self.seats:
            seat.cancel_timers()
            if seat.stream is not None:
                seat.stream.close(code, reason, details, redirect)
                seat.stream = None
        for spectator in self.spectators:
            spectator.close(code, reason, details, redirect)
        self.spectators.clear()
        for task in list(self._tasks):
            if task is not asyncio.current_task():
                task.cancel()
        self.hub.forget(self)

    async def _set_status(self, status: int, also: Mapping[str, int] = MappingProxyType({})
                          ) -> None:
        """Store the match's status (and the fields ``also`` names, in the same write)."""
        await through_outage(partial(self.store.matches.update_meta, self.match_id, self.owner,
                                     {**also, "status": status}), lambda: self.stopped)
        self.status = status
        if status != mpb.MATCH_STATUS_WAITING:
            self.timers.cancel_waiting()

    # -- seats and spectators --------------------------------------------------

    def _joined(self) -> bytes:
        """This match's Joined but for the seat, encoded at the first join (its game
        options are a large Struct)."""
        if not self._joined_bytes:
            self._joined_bytes = wire.joined_without_seat(
                self.match_id, self.game_id, self.num_players, self.state.options,
                self.record.options.time_control)
        return self._joined_bytes

    async def attach(self, seat_no: int, outbox: Outbox, resume_from: int,
                     handout: int = 0, handed: int = 0) -> None:
        """A Play stream joined ``seat_no`` (taking it over from an older stream).

        ``handout`` fences seats played by runners: a stream whose hand-out is older
        than one that already joined, or than the seat's latest hand-out (``handed``,
        the store's: another runner may have it and not have joined yet), is closed
        (TAKEN_OVER) instead, so a runner that lost the seat never plays it again.

        A seat not joined yet is noted joined only once its flag is stored, in one
        write with the seats joining a waiting match at about the same time
        (``_flush_joins``), and its stream gets Joined only then (the handler writes
        the stream once this returns); a seat whose write failed has its stream
        closed instead and joins again."""
        written: asyncio.Future[None] | None = None
        async with self.lock:
            seat = self.seats[seat_no]
            seat.handout = max(seat.handout, handed)
            if handout < seat.handout:
                outbox.close(grpc.StatusCode.ABORTED, "TAKEN_OVER",
                             f"seat {seat_no} was handed to another runner since")
                return
            seat.handout = max(seat.handout, handout)
            if not self._greet(seat, outbox, resume_from):
                return
            opened = seat.decision_id
            if not seat.joined:
                if seat not in self._joining:
                    self._joining.append(seat)
                if self.status == mpb.MATCH_STATUS_WAITING and not self._seated():
                    if self._join_timer is None:
                        self._join_timer = self.loop.call_later(JOIN_WINDOW_S,
                                                                self._join_window_over)
                    if self._join_written is None:
                        self._join_written = self.loop.create_future()
                    written = self._join_written
                elif await self._flush_joins() or not seat.joined:
                    return
            if written is None:
                if await self._start_when_seated():  # again if a start failed before
                    return
                if opened and seat.decision_id == opened == self.book.open_id(seat_no):
                    # A still-open decision: send it again, same id, with the time
                    # left (and, on a batched stream, the backlog).
                    if seat.abandoned or seat.timer is None:
                        self._arm_timer(seat, self.clock.decision_s)
                    self._send_request(seat)
        if written is not None:
            await asyncio.shield(written)

    def _greet(self, seat: Seat, outbox: Outbox, resume_from: int) -> bool:
        """Give ``seat`` to ``outbox``: Joined, the events it missed, the end if the
        match is over. False when the stream was closed or finished here. Lock held."""
        if self._refused(outbox):
            return False
        seat_no = seat.seat
        old = seat.stream
        if old is not None and old is not outbox:
            old.close(grpc.StatusCode.ABORTED, "TAKEN_OVER",
                      f"another stream took over seat {seat_no}")
        seat.stream = outbox
        seat.abandoned = False
        seat.cancel_grace()
        # A stream resumes from its own seq. A batched one is told the acceptance
        # of the seat's latest answer again: it may have waited for a message
        # that a dropped stream or a crashed server never sent.
        seat.take_waiting()
        seat.batched = outbox.batched
        latest = self.book.latest_acceptance(seat_no) if outbox.batched else None
        if latest is not None:
            self.feed.hold_accepted(seat, wire.accepted(*latest))
        outbox.send(wire.joined_message(self._joined(), seat_no))
        resume_from = rewinds.resume_seat_from(self, seat_no, outbox, resume_from)
        if outbox.batched:
            if not outbox.no_events:
                self.feed.seat_backlog(seat, resume_from)
        elif not outbox.no_events:
            for seq in range(max(0, resume_from), len(self.state.events)):
                outbox.send(wire.event_server_message(self.feed.for_seat(seq, seat_no)))
        if self.over:
            self.feed.flush(seat)
            outbox.send(ppb.ServerMessage(match_over=ppb.MatchOver(result=self.result)))
            outbox.finish()
            return False
        return True

    def _seated(self) -> bool:
        """Every seat has joined, is joining now or is a house bot."""
        return all(s.joined or s.house_bot or s in self._joining for s in self.seats)

    def _join_window_over(self) -> None:
        self._join_timer = None
        self._spawn(self._write_joins())

    async def _write_joins(self) -> None:
        async with self.lock:
            await self._flush_joins()

    async def _flush_joins(self) -> bool:
        """Store the joined flags of the seats joining now in one fenced write, with
        the start when they complete the seating (True: it started), and note them
        joined. Called when the last seat joins, ``JOIN_WINDOW_S`` after the first
        of them, and before whatever else would end a waiting match (the seats
        joining then count as joined, as if they came first). A match that ended or
        moved meanwhile stores nothing; a failed write closes the joining seats'
        streams (they join again). Lock held."""
        joining = [s for s in self._joining if not s.joined]
        written, self._join_written = self._join_written, None
        self._drop_joins()
        self._storing_joins = joining
        try:
            if not joining or self.over or self.stopped:
                return False
            try:
                if await self._start_when_seated(joining):
                    return True
                await through_outage(partial(
                    self.store.matches.update_meta, self.match_id, self.owner,
                    {f"joined:{s.seat}": 1 for s in joining}), lambda: self.stopped)
            except Exception as exc:
                stored = isinstance(exc, StoreError)
                (log.warning if stored else log.error)(
                    "join_failed", match_id=self.match_id, seats=[s.seat for s in joining],
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
            self._storing_joins = []
            if written is not None and not written.done():
                written.set_result(None)

    def _drop_joins(self) -> None:
        """Forget the seats joining now (stored, or the match stopped here: their
        streams were closed, and go on to say so)."""
        self._joining.clear()
        written, self._join_written = self._join_written, None
        if written is not None and not written.done():
            written.set_result(None)
        if self._join_timer is not None:
            self._join_timer.cancel()
            self._join_timer = None

    def _refused(self, outbox: Outbox) -> bool:
        """Close ``outbox`` as the referee's streams were closed if it has stopped: a
        stream that found the referee just before it stopped would otherwise wait
        for messages that never come. Lock held."""
        stop = self.stopped_by
        if stop is None:
            return False
        outbox.close(stop.code, stop.reason, stop.details, stop.redirect)
        return True

    def detach(self, seat_no: int, outbox: Outbox) -> None:
        """A seat's stream ended; its reconnect grace period starts."""
        seat = self.seats[seat_no]
        if seat.stream is outbox:
            seat.stream = None
            if not self.over and not self.stopped:
                self._start_grace(seat)

    def _start_grace(self, seat: Seat) -> None:
        if seat.grace_timer is not None:
            seat.grace_timer.cancel()
        seat.grace_timer = self.loop.call_later(self.clock.grace_s, self._grace_expired, seat)

    def _grace_expired(self, seat: Seat) -> None:
        seat.grace_timer = None
        if seat.stream is not None or self.over:
            return
        seat.abandoned = True
        if seat.decision_id:
            self._arm_timer(seat, 0.0)

    async def watch(self, outbox: Outbox, from_seq: int, batched: bool = False) -> None:
        """A spectator joins: the public events from ``from_seq``, the view, then live
        (``batched``: events and views together, see ``events``)."""
        async with self.lock:
            if self._refused(outbox):
                return
            from_seq = rewinds.resume_spectator_from(self, outbox, from_seq)
            self.feed.backlog(outbox, from_seq, batched)
            if self.over:
                outbox.send(ppb.WatchMessage(match_over=ppb.MatchOver(result=self.result)))
                outbox.finish()
                return
            self.spectators.add(outbox)

    def unwatch(self, outbox: Outbox) -> None:
        """A spectator's stream ended."""
        self.spectators.discard(outbox)

    # -- decisions -------------------------------------------------------------

    def open_decisions(self) -> None:
        """Send every decision the engine opened and this referee has not sent yet
        (a house bot's is played in a task of its own). Lock held."""
        if self.over or self.stopped or self.status != mpb.MATCH_STATUS_RUNNING:
            return
        for seat_no in self.book.opened:
            seat = self.seats[seat_no]
            did = self.book.decision_id(seat_no)
            if seat.decision_id == did:
                continue
            seat.decision_id = did
            seat.request = None
            if seat.house_bot:
                self.loop.call_soon(self._spawn, self._bot_move(seat_no, did))
                continue
            self._arm_timer(seat, 0.0 if seat.abandoned else self.clock.decision_s)
            if seat.stream is not None:
                self._send_request(seat)

    def _arm_timer(self, seat: Seat, delay: float) -> None:
        if seat.timer is not None:
            seat.timer.cancel()
        now = self.loop.time()
        seat.deadline = now + delay
        seat.deadline_wall = time.time() + delay
        seat.request = None
        seat.timer = self.loop.call_later(delay, self._on_deadline, seat.seat, seat.decision_id)

    def _on_deadline(self, seat_no: int, did: int) -> None:
        seat = self.seats[seat_no]
        seat.timer = None
        if seat.decision_id == did and not self.over:
            self._spawn(self._timeout(seat_no, did))

    def _send_request(self, seat: Seat) -> None:
        assert seat.stream is not None
        left = max(0.0, seat.deadline - self.loop.time())
        body = seat.request
        if body is None or seat.request_at != self.book.log_len:
            built = metrics.REQUESTS_BUILT
            built.value += 1
            # CPU time (a preempted build costs nothing) of one build in
            # TIME_EVERY: reading a thread's clock is a system call.
            timed = built.value % metrics.TIME_EVERY == 0
            started = time.thread_time_ns() if timed else 0
            seat_no, state = seat.seat, self.state
            body = wire.decision_body(
                self._match_id_field, seat.decision_id, seat_no,
                self.observations.encode(state.observation_parts(seat_no)),
                self.vocabulary.encoded(state.vocabulary_version(),
                                        self.book.legal[seat_no],  # the open decision's
                                        state.describe, seat_no),
                int(seat.deadline_wall * 1e9))
            seat.request, seat.request_at = body, self.book.log_len
            if timed:
                metrics.REQUESTS_TIMED.value += 1
                metrics.REQUEST_BUILD_SECONDS.value += (time.thread_time_ns() - started) / 1e9
        seat.sent_at = time.perf_counter()
        if seat.waiting_since:
            message = wire.request_message(body, int(left * 1000), *seat.take_waiting())
        else:
            message = wire.request_message(body, int(left * 1000))
        seat.stream.send(message)

    async def answer(self, seat_no: int, decision_id: int, action_id: int,
                     stream: Outbox, fallback: bool = False) -> Reply:
        """An agent's answer, from ``stream``: decided here, and the reply (accepted
        or rejected, see ``_reply``) goes back in-band. ``fallback``: the agent has
        no answer and asks for the match's fallback now (a missed deadline, early).
        Not to be cancelled once called: an append cut off from its apply would
        leave the store a move ahead of the match (the stream's reader is let
        finish it, see ``services.Play._read``)."""
        async with self.lock:
            reply = await self._decide_answer(seat_no, decision_id, action_id, fallback)
            if reply is None:
                # The store lost actions and the match went back: if the same
                # decision is open again, this answer settles it there.
                reply = await self._decide_answer(seat_no, decision_id, action_id, fallback)
            if reply is None:
                reply = Reply(False, ppb.STALE_DECISION,
                              "the match was rewound; answer the decisions sent after it")
            if not reply.accepted:  # an accepted one was told before its events
                self._reply(stream, decision_id, action_id, reply)
            return reply

    async def _decide_answer(self, seat_no: int, decision_id: int, action_id: int,
                             fallback: bool) -> Reply | None:
        """Judge an answer and, if it stands, commit it; None when the match was
        rewound meanwhile. Lock held."""
        seat = self.seats[seat_no]
        if self.over:
            return Reply(False, ppb.STALE_DECISION, "the match is over")
        if self.stopped:
            # An answer that waited for the lock while the match was handed over
            # or its lease lost: its new owner asks again; an append here would
            # only be fenced.
            return Reply(False, ppb.STALE_DECISION, "the match is no longer run here")
        if seat_of(decision_id) != seat_no:
            return Reply(False, ppb.UNKNOWN_DECISION,
                         f"decision {decision_id} was never sent to seat {seat_no}")
        open_id = seat.decision_id if seat_no in self.book.opened else 0
        if open_id != decision_id or self.status != mpb.MATCH_STATUS_RUNNING:
            return self.book.why_not_open(seat_no, decision_id)
        if self.loop.time() > seat.deadline + LATE_TOLERANCE_S:
            await self._settle_timeout_locked(seat_no, decision_id)
            return late(decision_id)
        if fallback:
            # Settled like a missed deadline (the same seeded action, logged as a
            # timeout); like one, it is not acknowledged.
            await self._settle_timeout_locked(seat_no, decision_id)
            return ACCEPTED
        # The open decision's legal ids (the engine checks again as it applies);
        # the engine says why an action is not among them.
        if action_id not in self.book.legal[seat_no]:
            illegal = self.state.check(seat_no, action_id)
            if illegal is not None:
                return Reply(False, ppb.ILLEGAL_ACTION, illegal.message, may_retry=True)
        sent_at = seat.sent_at
        if not await self._commit(seat_no, action_id, False):
            if self.stopped or self.over:
                return Reply(False, ppb.STALE_DECISION, "the match is no longer run here")
            return None
        if sent_at:
            metrics.DECISION_LATENCY.observe(time.perf_counter() - sent_at)
        _DECIDED_ANSWER.inc()
        return ACCEPTED

    @staticmethod
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

    async def _timeout(self, seat_no: int, did: int) -> None:
        async with self.lock:
            seat = self.seats[seat_no]
            if (self.over or self.stopped or seat.decision_id != did
                    or self.book.open_id(seat_no) != did):
                return
            await self._settle_timeout_locked(seat_no, did)

    async def _settle_timeout_locked(self, seat_no: int, did: int) -> None:
        if self.clock.forfeit_after and self.book.timeouts[seat_no] + 1 >= self.clock.forfeit_after:
            self.book.timeouts[seat_no] += 1  # the miss that forfeits counts like the others
            misses = self.book.timeouts[seat_no]
            await self.finish(mpb.END_REASON_FORFEIT,
                               f"seat {seat_no} forfeited after {misses} missed decisions",
                               forfeit=seat_no)
            return
        action = fallback_action(self.record.seed, did, self.book.legal[seat_no])
        if await self._commit(seat_no, action, True):
            _DECIDED_TIMEOUT.inc()

    async def _bot_move(self, seat_no: int, did: int) -> None:
        async with self.lock:
            seat = self.seats[seat_no]
            if self.over or self.stopped or self.book.open_id(seat_no) != did:
                return
            try:
                action = await house_action(seat.house_bot, self.game_id, self.state, seat_no,
                                            self.record.seed)
            except Exception as exc:  # a bot bug must not stop the match
                log.warning("house_bot_failed", match_id=self.match_id, seat=seat_no,
                            error=repr(exc))
                action = -1
            if self.over or self.stopped:
                return
            if action not in self.book.legal[seat_no]:
                action = fallback_action(self.record.seed, did, self.book.legal[seat_no])
            if await self._commit(seat_no, action, False):
                _DECIDED_HOUSE.inc()

    async def _commit(self, seat_no: int, action: int, timeout: bool) -> bool:
        """Append, then apply and broadcast. Lock held. False when the match is lost
        here, or the decision was settled by entries the store held already."""
        entry = (seat_no, action, timeout)
        if not self.hub.leases.vouch(self):
            return False
        did = self.book.decision_id(seat_no)
        for _attempt in range(OWN_LOG_ATTEMPTS):
            try:
                await append_entry(self.store, self.match_id, self.owner, self.book.log_len,
                                   entry, lambda: self.stopped)
            except LogConflict as conflict:
                if conflict.actual < self.book.log_len:
                    await rewinds.store_lost(
                        self, f"the store kept {conflict.actual} of {self.book.log_len} "
                        "acknowledged action(s)", self.book.log_len)
                    return False
                if not await self._catch_up(conflict):
                    log.error("append_failed", match_id=self.match_id, error=repr(conflict))
                    self.stop(grpc.StatusCode.UNAVAILABLE, "NOT_OWNER",
                              "another server recorded moves of the match; reconnect")
                    return False
                if self.over or self.stopped or self.book.open_id(seat_no) != did:
                    return False
                continue  # the decision is still open after the stored entries
            except FencedError as exc:
                log.error("append_failed", match_id=self.match_id, error=repr(exc))
                self.hub.leases.fenced(self)
                return False
            except StoreError as exc:
                log.error("append_failed", match_id=self.match_id, error=repr(exc))
                self.stop(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
                          "this server can no longer record moves of the match; reconnect",
                          redirect=False)
                return False
            await self._apply(entry)
            return True
        return False

    async def _catch_up(self, conflict: LogConflict) -> bool:
        """The store's log of the match runs past this referee's while this node
        holds its lease (appends are fenced): only this node wrote those entries,
        and an append that lost its apply is a bug. It is logged loudly and the
        entries applied, rather than the match stopped here: the other seats'
        streams and clocks do not pay for it. False when the stored log does not
        extend this referee's (or cannot be read): someone else wrote it. Lock held."""
        known = self.book.log_len
        try:
            entries = await through_outage(partial(self.store.matches.load_log, self.match_id),
                                           lambda: self.stopped)
        except StoreError:
            return False
        if len(entries) <= known or entries[:known] != self.book.entries:
            return False
        metrics.ERRORS.labels("runner").inc()
        log.error("own_log_ahead", match_id=self.match_id, applied=known,
                  stored=len(entries), error=repr(conflict))
        for entry in entries[known:]:
            if self.over or self.stopped:
                break
            await self._apply(entry)
        return True

    async def _apply(self, entry: LogEntry) -> None:
        """Apply a stored entry and broadcast it: the answer's acceptance, the new
        events, then the end or the next decisions. Lock held."""
        seat_no, action, timeout = entry
        seat = self.seats[seat_no]
        self.hub.acknowledged.note(self.match_id, self.book.log_len + 1)
        seat.cancel_deadline()
        seat.decision_id = 0
        seat.request = None
        first_event = len(self.state.events)
        did = self.book.decision_id(seat_no)
        self.book.advance(seat_no, action, timeout)
        if not timeout and not seat.house_bot:
            if seat.batched:
                self.feed.hold_accepted(seat, wire.accepted(did, action))
            else:
                self._reply(seat.stream, did, action, ACCEPTED)
        self.feed.send_new(first_event, self.seats, self.spectators)
        if self.state.is_terminal():
            await self.finish(mpb.END_REASON_COMPLETED, "")
        elif cap_reached(self.hub.max_match_decisions, self.book.log_len):
            await self._end_for_length(f"{self.hub.max_match_decisions} decisions")
        else:
            self.open_decisions()

    # -- the end ---------------------------------------------------------------

    async def finish(self, reason: int, detail: str, forfeit: int | None = None) -> None:
        """Record the result, tell everyone, close the streams. Lock held."""
        if not self.hub.leases.vouch(self):
            return
        status = end_status(reason)
        present = [s.joined or bool(s.house_bot) for s in self.seats]
        result = match_result(self.state, present, reason, detail, forfeit)
        stored = result.SerializeToString()
        try:
            await store_end(self.store, self.match_id, self.owner, status, stored,
                            self.book.entries, lambda: self.stopped)
        except LogConflict as conflict:
            # The store came back without the log this end was computed from.
            await rewinds.store_lost(
                self, f"the end was computed on {self.book.log_len} action(s); the store "
                f"kept {conflict.actual}", self.book.log_len)
            return
        except FencedError as exc:
            log.error("finish_failed", match_id=self.match_id, error=repr(exc))
            self.hub.leases.fenced(self)
            return
        except StoreError as exc:
            log.error("finish_failed", match_id=self.match_id, error=repr(exc))
            self.stop(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
                      "this server can no longer record the match; reconnect", redirect=False)
            return
        self.hub.acknowledged.note_end(self.match_id, self.book.log_len, stored, status)
        self.timers.cancel()
        self.over = True
        self.status = status
        self.result = result
        metrics.MATCHES_ENDED.labels(mpb.EndReason.Name(reason)).inc()
        over = ppb.ServerMessage(match_over=ppb.MatchOver(result=result))
        self.feed.flush_all()
        self.feed.stop()
        for seat in self.seats:
            seat.cancel_timers()
            seat.decision_id = 0
            if seat.stream is not None:
                seat.stream.send(over)
                seat.stream.finish()
                seat.stream = None
        self.feed.send_view(self.spectators)  # the last view; no other is due
        if self.spectators:
            watch_over = ppb.WatchMessage(match_over=ppb.MatchOver(result=result))
            for spectator in self.spectators:
                spectator.send(watch_over)
                spectator.finish()
            self.spectators.clear()
        if self.hub.export is not None:
            self._spawn(self.hub.export.keep(self.record, result, self.book.entries))
        log.info("match_over", match_id=self.match_id, reason=mpb.EndReason.Name(reason),
                 scores=list(result.scores), actions=self.book.log_len)
        self.hub.forget(self)

    async def cancel(self, detail: str) -> bool:
        """End the match as cancelled; False when it was already over."""
        async with self.lock:
            await self._flush_joins()
            if self.over:
                return False
            await self.finish(mpb.END_REASON_CANCELLED, detail or "cancelled")
            return self.over

    # -- reporting -------------------------------------------------------------

    def to_proto(self) -> mpb.Match:
        """The match as ``GetMatch`` shows it, live figures included."""
        return match_proto(self.record, self.status, self.result, self.book.log_len,
                           self.book.timeouts, [s.stream is not None for s in self.seats])
