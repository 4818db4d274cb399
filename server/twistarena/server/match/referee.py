"""One referee per live match: the seats' streams, the clock, the answers.

Flow of one decision: the engine says who acts and what is legal; each acting
seat gets a DecisionRequest (a house bot answers in-process); an answer is
checked against the engine, appended to the log in Redis (fenced and batched),
only then acknowledged and applied; the new events go to every seat in its
own view and to spectators in the public view; the next decisions open.

The referee holds a live match's state and its lifecycle (start, run, stop,
finish); each stage of a decision's flow is a module of its own, given the
referee to act on: ``seating`` (streams taking seats, joins stored in one
write, grace, spectators), ``asking`` (the open decisions sent, their deadlines
armed) and ``settling`` (an answer, a missed deadline or a house bot's move
judged, appended, applied and broadcast). Its other parts: ``hub`` (the node's
referees), ``seats`` (a seat and its timers), ``decisions`` (open decisions and
their ids, from the state and log alone), ``events`` (what each stream is
sent), ``outbox`` (a stream's queue), ``durable`` (store writes retried through
an outage), ``rewinds`` (a store that lost acknowledged actions), ``timers``
(the waiting timeout and the length caps), ``end`` (scoring an end) and
``records`` (a stored match as a message).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Any

import grpc
from twistarena import engine, wire
from twistarena.engine import State
from twistarena.storage import FencedError, LogConflict, LogEntry, MatchRecord, StoreError
from twistarena.storage.runners import seat_key
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import play_pb2 as ppb

from .. import logs, metrics
from . import asking, rewinds, seating, settling
from .decisions import DecisionBook, Reply
from .durable import store_end, through_outage
from .end import end_status, match_result
from .events import EventFeed
from .hub import Hub
from .outbox import Close, Outbox
from .records import game_options, match_proto
from .seats import Seat
from .timecontrol import Clock
from .timers import MatchTimers, cap_reached, length_limit_detail

log = logs.get("twistarena.referee")


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
        self.match_id_field = wire.match_id_field(record.match_id)
        self._joined_bytes = b""
        #: Seats joining now: their joined flags wait for one write (``seating.flush_joins``),
        #: and their streams for its outcome (set once it is known).
        self.joining: list[Seat] = []
        #: The seats whose joined flags are being written (told nothing yet).
        self.storing_joins: list[Seat] = []
        self.join_timer: asyncio.TimerHandle | None = None
        self.join_written: asyncio.Future[None] | None = None
        self.owner = owner
        opts = record.options
        self.game_id = opts.game_id
        self.num_players = opts.num_players
        self.info = engine.game(self.game_id)
        #: Created on this node a moment ago: its hosted seats are being handed
        #: to the runners by its creator, not put back.
        self.created_here = fresh is not None
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
                                   joined=s in record.joined,
                                   away_ms=record.away_ms.get(s, 0)))
        #: Orders the writes of the seats' state kept with the match: ``away_ms``
        #: and the Rewound each is owed (``seating.store_away``, ``rewinds``).
        self.away_lock = asyncio.Lock()
        #: Seat -> the Rewound it is owed (it was away when the match was rewound),
        #: kept with the match so that whichever node runs it tells the seat.
        self.owed: dict[int, ppb.Rewound] = {
            seat: ppb.Rewound.FromString(raw) for seat, raw in record.owed.items()}
        #: The latest rewind, told to a spectator that resumes past it.
        self.rewound: ppb.Rewound | None = (
            ppb.Rewound.FromString(record.rewound) if record.rewound else None)
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

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` as a task of this match: cancelled when it stops here, its
        failure counted and logged."""
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
            if self.record.hosted and not self.created_here:
                self.spawn(self._hosted_seats_back())
            if cap_reached(self.hub.max_match_decisions, self.book.log_len):
                await self.end_for_length(f"{self.hub.max_match_decisions} decisions")
                return
            if await self.start_when_seated():
                return
            if self.status == mpb.MATCH_STATUS_RUNNING:
                self._run()
            elif self.waiting_timeout_s > 0:
                self.timers.arm_waiting(self.waiting_timeout_s, self._waiting_expired)

    async def _hosted_seats_back(self) -> None:
        """Put back in the runners' line the hosted seats that neither wait there
        nor are held by a runner: a store that came back without a seat's entry
        but with its match (an AOF cut between the two writes) would otherwise
        leave the seat unplayed and the match waiting for it until its timeout."""
        for seat, assignment in sorted(self.record.hosted.items()):
            key = seat_key(self.match_id, seat)
            try:
                if await self.store.runners.add_seat(key, assignment, lost=True):
                    log.warning("hosted_seat_put_back", match_id=self.match_id, seat=seat)
            except StoreError as exc:
                log.warning("hosted_seat_not_put_back", match_id=self.match_id, seat=seat,
                            error=repr(exc))

    async def start_when_seated(self, joining: Sequence[Seat] = ()) -> bool:
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
        """Play on: absent players' grace periods start (or go on from when the
        match's store says they left, under an earlier owner), the open decisions
        go out, the cap on the match's wall time is armed."""
        self.timers.arm_length(self.hub.max_match_s, self._length_expired)
        absent = [s for s in self.seats if not s.house_bot and s.stream is None]
        for seat in absent:
            seating.start_grace(self, seat, away=True)
        if absent:
            self.spawn(seating.store_away(self))
        self.open_decisions()

    @property
    def waiting_timeout_s(self) -> float:
        """How long after creation a match not yet started is abandoned (0: never):
        the match's own join timeout, else the server's waiting timeout."""
        return self.clock.waiting_s or self.hub.waiting_timeout_s

    def _length_expired(self) -> None:
        self.spawn(self._end_for_time())

    async def _end_for_time(self) -> None:
        async with self.lock:
            if not (self.over or self.stopped):
                await self.end_for_length(f"{self.hub.max_match_s:g} s")

    async def end_for_length(self, cap: str) -> None:
        """End a match that reached a server cap on its length. Lock held."""
        await self.finish(mpb.END_REASON_LENGTH_LIMIT, length_limit_detail(cap))

    def _waiting_expired(self) -> None:
        self.spawn(self._abandon())

    async def _abandon(self) -> None:
        """End a match that never started: some seat did not join in time."""
        async with self.lock:
            await seating.flush_joins(self)
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
        unstored = [s for s in (*self.joining, *self.storing_joins) if not s.joined]
        seating.drop_joins(self)
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
    # -- the stages' entry points (see ``seating``, ``asking``, ``settling``) -----

    def joined_bytes(self) -> bytes:
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
        (``seating.flush_joins``), and its stream gets Joined only then (the handler
        writes the stream once this returns); a seat whose write failed has its
        stream closed instead and joins again."""
        await seating.attach(self, seat_no, outbox, resume_from, handout, handed)

    def detach(self, seat_no: int, outbox: Outbox) -> None:
        """A seat's stream ended; its reconnect grace period starts."""
        seating.detach(self, seat_no, outbox)

    async def watch(self, outbox: Outbox, from_seq: int, batched: bool = False) -> None:
        """A spectator joins: the public events from ``from_seq``, the view, then live
        (``batched``: events and views together, see ``events``)."""
        await seating.watch(self, outbox, from_seq, batched)

    def unwatch(self, outbox: Outbox) -> None:
        """A spectator's stream ended."""
        self.spectators.discard(outbox)

    def open_decisions(self) -> None:
        """Send every decision the engine opened and this referee has not sent yet
        (a house bot's is played in a task of its own). Lock held."""
        asking.open_decisions(self)

    def arm_timer(self, seat: Seat, delay: float) -> None:
        """Set the seat's open decision to time out ``delay`` seconds from now."""
        asking.arm_timer(self, seat, delay)

    def send_request(self, seat: Seat) -> None:
        """Send the seat's open decision on its stream. Lock held."""
        asking.send_request(self, seat)

    def answer(self, seat_no: int, decision_id: int, action_id: int,
               stream: Outbox, fallback: bool = False) -> Coroutine[Any, Any, Reply]:
        """An agent's answer, from ``stream``: decided here, and the reply (accepted
        or rejected) goes back in-band. ``fallback``: the agent has no answer and
        asks for the match's fallback now (a missed deadline, early). Not to be
        cancelled once called: an append cut off from its apply would leave the
        store a move ahead of the match (the stream's reader is let finish it, see
        ``services.Play._read``). Awaited as ``settling.answer`` itself: the frame
        every answer's awaits pass through is spared."""
        return settling.answer(self, seat_no, decision_id, action_id, stream, fallback)

    async def timeout(self, seat_no: int, did: int) -> None:
        """The seat's decision ``did`` missed its deadline, unless settled meanwhile."""
        await settling.timeout(self, seat_no, did)

    async def bot_move(self, seat_no: int, did: int) -> None:
        """A house bot plays the seat's open decision ``did``."""
        await settling.bot_move(self, seat_no, did)

    # -- the end ---------------------------------------------------------------

    async def finish(self, reason: int, detail: str, forfeit: int | None = None) -> None:
        """Record the result, tell everyone, close the streams. Lock held."""
        if self.stopped or not self.hub.leases.vouch(self):
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
            # EndStored too: another end of the match is stored, and it is final.
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
            self.spawn(self.hub.export.keep(self.record, result, self.book.entries))
        log.info("match_over", match_id=self.match_id, game=self.game_id,
                 players=self.num_players, reason=mpb.EndReason.Name(reason),
                 scores=list(result.scores), actions=self.book.log_len)
        self.hub.forget(self)

    async def cancel(self, detail: str) -> bool:
        """End the match as cancelled; False when it was already over."""
        async with self.lock:
            await seating.flush_joins(self)
            if self.over:
                return False
            await self.finish(mpb.END_REASON_CANCELLED, detail or "cancelled")
            return self.over

    # -- reporting -------------------------------------------------------------

    def to_proto(self) -> mpb.Match:
        """The match as ``GetMatch`` shows it, live figures included."""
        return match_proto(self.record, self.status, self.result, self.book.log_len,
                           self.book.timeouts, [s.stream is not None for s in self.seats])
