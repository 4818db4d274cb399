"""One agent = one seat of one match, played over a bidirectional Play stream.

The agent owns everything a bot author should not have to write: joining,
answering each decision with its id, retrying an illegal answer once,
reconnecting with backoff (to the next server in the list) and resuming the
event log where it stopped, and collecting the result.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import grpc
import grpc.aio
import structlog
from twistarena import wire
from twistarena.v1 import match_pb2, match_pb2_grpc, play_pb2, play_pb2_grpc

from .botcall import BotCall, NoAnswer, action_id
from .connection import (
    AgentError,
    Backoff,
    Failover,
    bearer,
    describe,
    error_reason,
    is_retryable,
    make_channel,
    parse_servers,
    read_root_cert,
    stub,
    unary,
)
from .convert import JSON, Decision, MatchEvent, MatchResult, Rejection, struct_to_dict
from .kept import ENDED_ON_WRITE, KeptStreams

log = structlog.get_logger("twistarena.sdk")

__all__ = ["Agent", "AgentOptions", "NoAnswer", "Tracer", "play", "run_agent"]


class Tracer(Protocol):
    """Optional timing hooks (the service benchmark uses them); times are perf_counter()."""

    def decision_received(self, agent: Agent, decision_id: int, t: float) -> None: ...

    def answer_sent(self, agent: Agent, decision_id: int, t: float) -> None: ...

    def accepted(self, agent: Agent, decision_id: int, t: float) -> None: ...


class _Dropped(Exception):
    """The connection was dropped on purpose (``Agent.disconnect``)."""


class _StatusLost(Exception):
    """The server ended the stream as an answer was being written to it, and
    grpc.aio reported its own INTERNAL error for the failed write in place of
    the server's status (grpc/grpc#36066): what the server said is unknown, so
    the agent reconnects as after a dropped connection, and the server says it
    again if it still holds."""


#: The details of that INTERNAL error.
WRITE_RACE_DETAILS = "Internal error from Core"


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """How an agent connects, what it keeps and how it calls its bot. Every field
    may also be given to ``Agent``, ``play`` or ``run_agent`` as a keyword."""

    #: PEM root certificate(s) (bytes, text, or a file path): TLS with this trust.
    root_cert: bytes | str | Path | None = None
    #: TLS with the system's trust store.
    tls: bool = False
    #: A caller's channel, to the first server of the list only: a redirect or
    #: failover to another address opens a channel of the agent's own.
    channel: grpc.aio.Channel | None = None
    #: Ask the server not to send events (Join.no_events).
    no_events: bool = False
    #: Batched delivery (Join.batched): events and the acceptance of an answer
    #: come with the seat's next message (at most 500 ms later), about two
    #: messages per decision instead of one per event. The same events, in order.
    batched: bool = True
    #: Called with each event this seat sees.
    on_event: Callable[[MatchEvent], Any] | None = None
    #: Reconnection delays and when to give up.
    backoff: Backoff = field(default_factory=Backoff)
    #: True: a sync bot runs in a thread; False: in the reading loop; None: in
    #: the loop until a call is slow, then in a thread.
    threaded: bool | None = None
    #: Timing hooks (the service benchmark's).
    tracer: Tracer | None = None
    #: Called with every ServerMessage as it arrives.
    on_message: Callable[[play_pb2.ServerMessage], Any] | None = None
    #: Decode observations, action payloads and event data only when read
    #: (read-only Mappings, not dicts).
    lazy_observations: bool = False
    #: The agent's name in logs (default: match id / token prefix).
    name: str = ""
    #: Play calls kept between matches on ``channel`` (Join.keep_open): the agent
    #: joins on a call an agent whose match is over left there, and leaves its
    #: own there when its match ends. For callers that play match after match
    #: on one channel: a call per match costs both ends more than a short
    #: match's first messages. One ``KeptStreams`` may serve many agents.
    kept_streams: KeptStreams | None = None
    #: A runner's hand-out of the seat (Join.handout): the server refuses the Joins
    #: of older hand-outs once a newer one joined. 0: not a runner's seat.
    handout: int = 0


class Agent:
    """Plays one seat until the match is over; ``await agent.run()`` returns the result.

    Records kept for the caller: ``events`` (what this seat saw, in seq order),
    ``accepted`` (decision id -> action id, from AnswerAccepted, in the order
    acknowledged), ``rejections``, ``reconnects`` and ``rewinds`` (each Rewound
    the server sent: the store lost acknowledged actions and the match went
    back; ``events`` and ``accepted`` are cut back to match), and
    ``stream_failures``: the status code and ``twistarena-reason`` of every
    stream that ended in an error, in order (but for a status gRPC lost as an
    answer was written, see ``_StatusLost``).
    """

    def __init__(self, bot: Any, *, server: str | Sequence[str], match_id: str, token: str,
                 options: AgentOptions | None = None, **keywords: Any) -> None:
        """``keywords``: any ``AgentOptions`` field, over ``options``."""
        self.options = opts = dataclasses.replace(options or AgentOptions(), **keywords)
        self.servers = parse_servers(server)
        self.match_id = match_id
        self.token = token
        self.name = opts.name or f"{match_id}/{token[:6]}"
        self.bot = BotCall(bot, opts.threaded, self.name)
        self._root_cert = read_root_cert(opts.root_cert)
        self.tracer = opts.tracer
        #: Set once the server has seated this agent (first Joined).
        self.seated = asyncio.Event()
        # What the caller may read.
        self.seat: int | None = None
        self.game_id = ""
        self.num_players = 0
        self.game_options: JSON = {}
        self.events: list[MatchEvent] = []
        self.accepted: dict[int, int] = {}
        self.rewinds: list[play_pb2.Rewound] = []
        self.rejections: list[Rejection] = []
        self.decisions = 0
        self.connects = 0
        self.reconnects = 0
        self.stream_failures: list[tuple[grpc.StatusCode, str]] = []
        self.result: MatchResult | None = None
        self.next_seq = 0
        self.address = ""
        #: Decisions asked again after their acknowledgement, answered the same
        #: (a loss of the store that no server could announce: ``_answer_again``).
        self.answered_again = 0
        # Internal.
        self._metadata = bearer(token)
        self._call: Any = None
        self._write_lock = asyncio.Lock()
        self._pending: dict[int, Decision] = {}
        self._answers: dict[int, int] = {}
        self._asked: dict[int, int] = {}
        self._thinking: dict[int, asyncio.Task[None]] = {}
        self._drop = False
        #: The stream an answer could not be written to (see _StatusLost).
        self._write_failed: Any = None
        self._rng = random.Random()
        #: (decision id, action id) a sync bot chose inline, for the session to send.
        self._ready: tuple[int, int] | None = None

    # -- public ------------------------------------------------------------

    async def run(self) -> MatchResult:
        """Play until MatchOver, reconnecting as needed; raise AgentError if hopeless."""
        # Where a refusal says the match lives, the next attempt goes at once;
        # the server list stays the fallback.
        failover = Failover(self.servers, self.options.backoff, self._rng)
        try:
            while True:
                self.address = failover.next_address()
                connects_before = self.connects + self.reconnects
                refusal: grpc.aio.AioRpcError | None = None
                try:
                    result = await self._session(self.address)
                    if result is not None:
                        self.result = result
                        return result
                except grpc.aio.AioRpcError as error:
                    result = await self._handle_error(error)
                    if result is not None:
                        self.result = result
                        return result
                    refusal = error
                except _Dropped:
                    log.info("connection dropped", agent=self.name)
                except _StatusLost:
                    log.info("stream ended as an answer was written; reconnecting",
                             agent=self.name, address=self.address)
                if self.connects + self.reconnects > connects_before:
                    failover.progressed()
                if refusal is not None:
                    failover.refused(refusal)
                if failover.exhausted:
                    raise AgentError(
                        f"{self.name}: no server of {','.join(self.servers)} took the seat "
                        f"for {self.options.backoff.give_up_after:.0f}s; giving up",
                        grpc.StatusCode.UNAVAILABLE)
                if failover.redirect:
                    log.info("redirected", agent=self.name, to=failover.redirect)
                await failover.pause()
        finally:
            for task in self._thinking.values():
                task.cancel()
            self._thinking.clear()

    async def stored_result(self) -> MatchResult | None:
        """The match's outcome as the store keeps it (``GetMatch``), None while it
        is not over there or no server answers.

        The result a seat heard in ``MatchOver`` was stored first, but a store
        that later loses it (see docs/protocol.md, section 9) has the match
        VOIDED: a caller that reports or rates outcomes asks here, not the
        stream. Any server of the list answers (redirects are followed)."""
        return await self._read_result(Backoff(give_up_after=10.0))

    async def _read_result(self, backoff: Backoff) -> MatchResult | None:
        """``GetMatch``'s outcome, None while the match is not over or when no
        server answered within ``backoff``: the current server first, then any
        of the list, a failed read tried again as a Join is."""
        try:
            match = await unary(match_pb2_grpc.MatchesStub, "GetMatch",
                                match_pb2.GetMatchRequest(match_id=self.match_id),
                                [self.address, *self.servers] if self.address else self.servers,
                                self._root_cert, tls=self.options.tls, backoff=backoff)
        except AgentError:
            return None
        if match.status in wire.MATCH_OVER:
            return MatchResult.from_proto(match.result)
        return None

    def disconnect(self) -> None:
        """Drop the current stream as a network failure would (the agent reconnects)."""
        call = self._call
        if call is not None:
            self._drop = True
            call.cancel()

    @property
    def connected(self) -> bool:
        return self._call is not None

    # -- one connection -------------------------------------------------------

    def _channel_for(self, address: str) -> tuple[grpc.aio.Channel, bool]:
        """(a channel to ``address``, whether this agent owns it and must close it)."""
        shared = self.options.channel
        if shared is not None and address == self.servers[0]:
            return shared, False
        return make_channel(address, self._root_cert, self.options.tls), True

    async def _session(self, address: str) -> MatchResult | None:
        channel, own = self._channel_for(address)
        kept = None if own else self.options.kept_streams
        call: Any = kept.take(channel) if kept is not None else None
        # Taken from an agent whose match is over: until the server answers the
        # Join, the call may turn out to have ended meanwhile (then a new one).
        reused = call is not None
        result: MatchResult | None = None
        self._drop = False
        self._ready = None
        try:
            if call is None:
                call = stub(play_pb2_grpc.PlayStub, channel).Play(metadata=self._metadata)
            join = play_pb2.Join(match_id=self.match_id, seat_token=self.token,
                                 resume_from_seq=self.next_seq, no_events=self.options.no_events,
                                 batched=self.options.batched, keep_open=kept is not None,
                                 handout=self.options.handout)
            try:
                await call.write(play_pb2.AgentMessage(join=join))
            except ENDED_ON_WRITE:
                if not reused:
                    raise
                call.cancel()
                call = None
                return await self._session(address)
            self._call = call
            while True:
                try:
                    msg = await call.read()
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    if self._drop and task is not None and not task.cancelling():
                        raise _Dropped() from None
                    raise
                except grpc.aio.AioRpcError as failed:
                    self._unless_status_lost(call, failed)
                    raise
                if msg is grpc.aio.EOF:
                    code = await call.code()
                    if reused and code == grpc.StatusCode.OK:
                        # The server let the kept call go before this Join reached it.
                        call = None
                        return await self._session(address)
                    if code != grpc.StatusCode.OK:
                        ended = grpc.aio.AioRpcError(code, grpc.aio.Metadata(),
                                                     await call.trailing_metadata() or
                                                     grpc.aio.Metadata(), await call.details())
                        self._unless_status_lost(call, ended)
                        raise ended
                    log.info("stream closed before the match ended", agent=self.name)
                    return None
                reused = False
                if self.options.on_message is not None:
                    self.options.on_message(msg)
                result = self._handle(msg)
                if result is not None:
                    return result
                ready = self._ready
                if ready is not None:
                    # A sync bot answered while the message was handled: write it now.
                    self._ready = None
                    await self._send_answer(*ready)
        finally:
            self._call = None
            if call is not None:
                if result is not None and kept is not None and not self._write_lock.locked():
                    kept.keep(channel, call)
                elif not call.done():
                    call.cancel()
            if own:
                await channel.close()

    def _unless_status_lost(self, call: Any, error: grpc.aio.AioRpcError) -> None:
        """Raise _StatusLost if ``error`` is not the server's status but grpc.aio's
        own INTERNAL for an answer written to ``call`` as the server ended it."""
        if (call is self._write_failed and error.code() == grpc.StatusCode.INTERNAL
                and error.details() == WRITE_RACE_DETAILS):
            raise _StatusLost() from None

    async def _handle_error(self, error: grpc.aio.AioRpcError) -> MatchResult | None:
        """Decide what a failed stream means: the result, a retry, or AgentError."""
        code, reason = error.code(), error_reason(error)
        self.stream_failures.append((code, reason))
        if code == grpc.StatusCode.FAILED_PRECONDITION:
            # The match ended while the seat was away (MATCH_OVER): its end is in
            # the store. One failed read (the server's store or link blinked) must
            # not leave the seat without it: read under the agent's own backoff.
            result = await self._read_result(self.options.backoff)
            if result is not None:
                return result
        if is_retryable(error):
            log.info("stream failed; will reconnect", agent=self.name, address=self.address,
                     error=describe(error))
            return None
        raise AgentError(f"{self.name} at {self.address}: {describe(error)}", code,
                         reason) from None

    # -- messages -------------------------------------------------------------

    def _handle(self, msg: play_pb2.ServerMessage) -> MatchResult | None:
        kind = msg.WhichOneof("msg")
        if kind == "decision":
            self._on_batch(msg.decision)
            self._on_decision(msg.decision)
        elif kind == "batch":
            self._on_batch(msg.batch)
        elif kind == "accepted":
            self._on_accepted(msg.accepted)
        elif kind == "event":
            self._on_event(msg.event)
        elif kind == "rejected":
            self._on_rejected_msg(msg.rejected)
        elif kind == "joined":
            self._on_joined(msg.joined)
        elif kind == "match_over":
            return MatchResult.from_proto(msg.match_over.result)
        elif kind == "rewound":
            self._on_rewound(msg.rewound)
        return None

    def _on_rewound(self, rewound: play_pb2.Rewound) -> None:
        """The store lost the match's latest actions: forget what it no longer has.

        Decision ids are ``opened_at * 8 + seat + 1``: a decision opened at or
        after the kept log length is void; so may be this seat's latest accepted
        one (the server asks it again if so)."""
        self.rewinds.append(rewound)
        log.warning("match rewound", agent=self.name, to_seq=rewound.to_seq,
                    lost_actions=rewound.lost_actions, reason=rewound.reason)
        self.events = [e for e in self.events if e.seq < rewound.to_seq]
        self.next_seq = min(self.next_seq, rewound.to_seq)
        void = [d for d in self.accepted if (d - 1) // 8 >= rewound.actions]
        kept = [d for d in self.accepted if d not in void]
        if kept:
            void.append(max(kept))
        for did in void:
            self.accepted.pop(did, None)
            self._answers.pop(did, None)

    def _on_joined(self, joined: play_pb2.Joined) -> None:
        if self.connects:
            self.reconnects += 1
            log.info("resumed", agent=self.name, address=self.address, from_seq=self.next_seq)
        else:
            self.connects = 1
            self.seated.set()
        self.seat = joined.seat
        self.game_id = joined.game_id
        self.num_players = joined.num_players
        self.game_options = struct_to_dict(joined.game_options)

    def _on_batch(self, carrier: play_pb2.DecisionRequest | play_pb2.SeatBatch) -> None:
        """What a batched stream's message carried (none on an unbatched one): the
        acceptance came first, then the events."""
        if carrier.HasField("accepted"):
            self._on_accepted(carrier.accepted)
        for event in carrier.events:
            self._on_event(event)

    def _on_event(self, event: match_pb2.Event) -> None:
        if event.seq < self.next_seq:
            return  # already seen before a reconnect
        item = MatchEvent.from_proto(event, self.options.lazy_observations)
        self.events.append(item)
        self.next_seq = event.seq + 1
        if self.options.on_event is not None:
            self.options.on_event(item)

    def _on_decision(self, req: play_pb2.DecisionRequest) -> None:
        did = req.decision_id
        if self.tracer is not None:
            self.tracer.decision_received(self, did, time.perf_counter())
        if did in self.accepted and did not in self._thinking:
            self._answer_again(req)
            return
        # One open decision per seat: a new id settles every older one.
        for old in [d for d in self._pending if d != did]:
            self._pending.pop(old, None)
            task = self._thinking.pop(old, None)
            if task is not None:
                task.cancel()
        if did in self._thinking:
            return  # re-sent after a reconnect; the bot is still thinking
        if did in self._answers and did in self._pending:
            self._spawn(did, self._send_answer(did, self._answers[did]))
            return
        decision = Decision.from_proto(req, self.options.lazy_observations)
        self._pending[did] = decision
        self.decisions += 1
        if self.bot.inline:
            self._decide_inline(decision)
        else:
            self._spawn(did, self._decide(decision, None))

    def _answer_again(self, req: play_pb2.DecisionRequest) -> None:
        """The server asks a decision it had acknowledged: a server only sends an
        open one, so it no longer has that answer, and the Rewound that would
        have said so never reached this seat (the server that acknowledged it
        lost the match before the store came back short). The same answer goes
        again rather than the match waiting on a decision its seat thinks
        settled; it stands if the match is where it was, else the server
        rejects it and the bot is asked."""
        did = req.decision_id
        action = self.accepted.pop(did)
        self.answered_again += 1
        log.warning("acknowledged decision asked again", agent=self.name, decision=did)
        for old in [d for d in self._pending if d != did]:
            self._pending.pop(old, None)
        self._pending[did] = Decision.from_proto(req, self.options.lazy_observations)
        self._answers[did] = action
        self._spawn(did, self._send_answer(did, action))

    def _on_accepted(self, msg: play_pb2.AnswerAccepted) -> None:
        """An answer was acknowledged. A batched stream is told its latest
        acceptance again when it resumes: the tracer hears of each one once."""
        told_before = msg.decision_id in self.accepted
        self.accepted[msg.decision_id] = msg.action_id
        self._pending.pop(msg.decision_id, None)
        if self.tracer is not None and not told_before:
            self.tracer.accepted(self, msg.decision_id, time.perf_counter())

    def _on_rejected_msg(self, msg: play_pb2.AnswerRejected) -> None:
        rejection = Rejection.from_proto(msg)
        self.rejections.append(rejection)
        did = rejection.decision_id
        decision = self._pending.get(did)
        log.info("answer rejected", agent=self.name, decision=did, reason=rejection.reason,
                 message=rejection.message)
        if decision is None:
            return
        if not rejection.may_retry:
            if rejection.reason != "DUPLICATE_ANSWER":
                self._pending.pop(did, None)
            return
        asked = self._asked.get(did, 0)
        if asked < 2:
            self._spawn(did, self._decide(decision, rejection))
        elif asked == 2:
            self._asked[did] = 3
            fallback = decision.legal_actions[0].id
            self._answers[did] = fallback
            self._spawn(did, self._send_answer(did, fallback))

    def _spawn(self, did: int, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._thinking[did] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._thinking.get(did) is done:
                del self._thinking[did]

        task.add_done_callback(forget)

    # -- asking the bot ---------------------------------------------------------

    async def _decide(self, decision: Decision, rejection: Rejection | None) -> None:
        did = decision.decision_id
        self._asked[did] = self._asked.get(did, 0) + 1
        try:
            action: int | None = await self.bot.ask(decision, rejection)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            action = self.bot.failed(decision, error)
        await self._send_decided(did, action)

    async def _send_decided(self, did: int, action: int | None) -> None:
        """Send the bot's action, or (None: it has no answer) ask for the fallback now."""
        if action is None:
            # Settled once the server has it, and never acknowledged: no longer pending,
            # so the next decision does not cancel this task in the middle of its write
            # (which would cancel the whole stream).
            self._pending.pop(did, None)
            await self._send_answer(did, 0, fallback=True)
            return
        self._answers[did] = action
        await self._send_answer(did, action)

    def _decide_inline(self, decision: Decision) -> None:
        """A sync bot asked in the reading loop (no task, no thread): the common case.

        The answer is left in ``_ready`` for the session loop to write; a bot
        that turns out to return an awaitable is awaited in a task instead."""
        did = decision.decision_id
        self._asked[did] = self._asked.get(did, 0) + 1
        try:
            value = self.bot.call(decision)
            if inspect.isawaitable(value):
                self._spawn(did, self._finish_inline(decision, value))
                return
            action: int | None = action_id(value)
        except Exception as error:
            action = self.bot.failed(decision, error)
        if action is None:
            self._spawn(did, self._send_decided(did, None))
        else:
            self._answers[did] = action
            self._ready = (did, action)

    async def _finish_inline(self, decision: Decision, pending: Awaitable[Any]) -> None:
        did = decision.decision_id
        try:
            action: int | None = action_id(await pending)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            action = self.bot.failed(decision, error)
        await self._send_decided(did, action)

    async def _send_answer(self, decision_id: int, action_id: int,
                           fallback: bool = False) -> None:
        call = self._call
        if call is None:
            return  # disconnected: the server re-sends the decision after the resume
        msg = play_pb2.AgentMessage(answer=play_pb2.Answer(
            decision_id=decision_id, action_id=action_id, fallback=fallback))
        try:
            async with self._write_lock:
                if self.tracer is not None:
                    self.tracer.answer_sent(self, decision_id, time.perf_counter())
                await call.write(msg)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError) as error:
            self._write_failed = call
            log.debug("answer not sent; the stream is gone", agent=self.name, error=repr(error))


async def play(bot: Any, *, server: str | Sequence[str], match_id: str, token: str,
               **options: Any) -> MatchResult:
    """Play one seat to the end and return the result (see ``Agent`` for options)."""
    return await Agent(bot, server=server, match_id=match_id, token=token, **options).run()


def run_agent(bot: Any, *, server: str | Sequence[str], match_id: str, token: str,
              **options: Any) -> MatchResult:
    """``play`` for code without an event loop: blocks until the match is over."""
    return asyncio.run(play(bot, server=server, match_id=match_id, token=token, **options))
