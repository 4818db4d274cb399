"""One agent = one seat of one match, played over a bidirectional Play stream.

The agent owns everything a bot author should not have to write: joining,
answering each decision with its id, retrying an illegal answer once,
reconnecting with backoff (to the next server in the list) and resuming the
event log where it stopped, and collecting the result.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import grpc
import grpc.aio
import structlog
from twistarena.engine import Action
from twistarena.v1 import match_pb2, match_pb2_grpc, play_pb2, play_pb2_grpc

from .connection import (
    AgentError,
    Backoff,
    bearer,
    describe,
    error_reason,
    is_retryable,
    make_channel,
    parse_servers,
    read_root_cert,
    redirect_target,
    stub,
)
from .convert import JSON, Decision, MatchEvent, MatchResult, Rejection, struct_to_dict

log = structlog.get_logger("twistarena.sdk")

#: A sync bot call slower than this moves the agent's later calls to a thread.
SLOW_CALL_S = 0.005


class Tracer(Protocol):
    """Optional timing hooks (the service benchmark uses them); times are perf_counter()."""

    def decision_received(self, agent: Agent, decision_id: int, t: float) -> None: ...

    def answer_sent(self, agent: Agent, decision_id: int, t: float) -> None: ...

    def accepted(self, agent: Agent, decision_id: int, t: float) -> None: ...


class _Dropped(Exception):
    """The connection was dropped on purpose (``Agent.disconnect``)."""


class NoAnswer(Exception):
    """Raised by a bot that has no answer for this decision (a bridged program that
    crashed, hung or printed garbage): the decision stays open and the match's
    fallback settles it at the deadline, as for any seat that does not answer."""


def _resolve(bot: Any) -> tuple[Callable[..., Any], Callable[[Rejection], Any] | None]:
    """A bot is a callable or an object with ``act`` (and optionally ``on_rejected``)."""
    act = getattr(bot, "act", None)
    if callable(act):
        hook = getattr(bot, "on_rejected", None)
        return act, hook if callable(hook) else None
    if callable(bot):
        return bot, None
    raise TypeError(f"a bot must be callable or have an act() method, got {bot!r}")


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` takes the keyword argument ``name``."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in params)


class Agent:
    """Plays one seat until the match is over; ``await agent.run()`` returns the result.

    Records kept for the caller: ``events`` (what this seat saw, in seq order),
    ``accepted`` (decision id -> action id, from AnswerAccepted, in the order
    acknowledged), ``rejections`` and ``reconnects``.
    """

    def __init__(
        self,
        bot: Any,
        *,
        server: str | Sequence[str],
        match_id: str,
        token: str,
        root_cert: bytes | str | Path | None = None,
        tls: bool = False,
        channel: grpc.aio.Channel | None = None,
        no_events: bool = False,
        on_event: Callable[[MatchEvent], Any] | None = None,
        backoff: Backoff | None = None,
        threaded: bool | None = None,
        tracer: Tracer | None = None,
        on_message: Callable[[play_pb2.ServerMessage], Any] | None = None,
        lazy_observations: bool = False,
        name: str = "",
    ) -> None:
        self._act, self._on_rejected = _resolve(bot)
        self._is_async = inspect.iscoroutinefunction(self._act)
        self._takes_rejection = _accepts(self._act, "rejection")
        #: A bot whose act takes ``decision`` gets the whole Decision (id, time left).
        self._takes_decision = _accepts(self._act, "decision")
        self._threaded = bool(threaded)
        self._adaptive = threaded is None
        self.servers = parse_servers(server)
        self.match_id = match_id
        self.token = token
        self.root_cert = read_root_cert(root_cert)
        self.tls = tls
        #: A caller's channel, to the first server of the list only: a redirect
        #: or failover to another address opens a channel of the agent's own.
        self._shared_channel = channel
        self.no_events = no_events
        self.on_event = on_event
        self.backoff = backoff or Backoff()
        self.tracer = tracer
        self.on_message = on_message
        #: Decode observations and action payloads only when the bot reads them
        #: (read-only Mappings, not dicts).
        self.lazy_observations = lazy_observations
        #: Set once the server has seated this agent (first Joined).
        self.seated = asyncio.Event()
        self.name = name or f"{match_id}/{token[:6]}"
        # What the caller may read.
        self.seat: int | None = None
        self.game_id = ""
        self.num_players = 0
        self.game_options: JSON = {}
        self.events: list[MatchEvent] = []
        self.accepted: dict[int, int] = {}
        self.rejections: list[Rejection] = []
        self.decisions = 0
        self.connects = 0
        self.reconnects = 0
        self.result: MatchResult | None = None
        self.next_seq = 0
        self.address = ""
        # Internal.
        self._metadata = bearer(token)
        self._call: Any = None
        self._write_lock = asyncio.Lock()
        self._pending: dict[int, Decision] = {}
        self._answers: dict[int, int] = {}
        self._asked: dict[int, int] = {}
        self._thinking: dict[int, asyncio.Task[None]] = {}
        self._drop = False
        self._rng = random.Random()
        #: (decision id, action id) a sync bot chose inline, for the session to send.
        self._ready: tuple[int, int] | None = None

    # -- public ------------------------------------------------------------

    async def run(self) -> MatchResult:
        """Play until MatchOver, reconnecting as needed; raise AgentError if hopeless."""
        attempt = 0
        index = 0
        last_ok = time.monotonic()
        #: Where a NOT_OWNER refusal said the match lives: the next attempt goes
        #: there at once; the server list stays the fallback.
        redirect = ""
        try:
            while True:
                self.address = redirect or self.servers[index % len(self.servers)]
                followed, redirect = bool(redirect), ""
                connects_before = self.connects + self.reconnects
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
                    target = redirect_target(error)
                    progressed = self.connects + self.reconnects > connects_before
                    if target and target != self.address and (progressed or not followed):
                        redirect = target
                except _Dropped:
                    log.info("connection dropped", agent=self.name)
                if self.connects + self.reconnects > connects_before:
                    attempt, last_ok = 0, time.monotonic()
                if time.monotonic() - last_ok > self.backoff.give_up_after:
                    raise AgentError(
                        f"{self.name}: no server of {','.join(self.servers)} took the seat "
                        f"for {self.backoff.give_up_after:.0f}s; giving up",
                        grpc.StatusCode.UNAVAILABLE)
                if redirect:
                    log.info("redirected", agent=self.name, to=redirect)
                    continue
                await asyncio.sleep(self.backoff.delay(attempt, self._rng))
                attempt += 1
                index += 1
        finally:
            for task in self._thinking.values():
                task.cancel()
            self._thinking.clear()

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
        shared = self._shared_channel
        if shared is not None and address == self.servers[0]:
            return shared, False
        return make_channel(address, self.root_cert, self.tls), True

    async def _session(self, address: str) -> MatchResult | None:
        channel, own = self._channel_for(address)
        call: Any = None
        self._drop = False
        self._ready = None
        try:
            call = stub(play_pb2_grpc.PlayStub, channel).Play(metadata=self._metadata)
            join = play_pb2.Join(match_id=self.match_id, seat_token=self.token,
                                 resume_from_seq=self.next_seq, no_events=self.no_events)
            await call.write(play_pb2.AgentMessage(join=join))
            self._call = call
            while True:
                try:
                    msg = await call.read()
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    if self._drop and task is not None and not task.cancelling():
                        raise _Dropped() from None
                    raise
                if msg is grpc.aio.EOF:
                    code = await call.code()
                    if code != grpc.StatusCode.OK:
                        raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(),
                                                   await call.trailing_metadata() or
                                                   grpc.aio.Metadata(), await call.details())
                    log.info("stream closed before the match ended", agent=self.name)
                    return None
                if self.on_message is not None:
                    self.on_message(msg)
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
            if call is not None and not call.done():
                call.cancel()
            if own:
                await channel.close()

    async def _handle_error(self, error: grpc.aio.AioRpcError) -> MatchResult | None:
        """Decide what a failed stream means: the result, a retry, or AgentError."""
        code, reason = error.code(), error_reason(error)
        if code == grpc.StatusCode.FAILED_PRECONDITION:
            result = await self._fetch_result()
            if result is not None:
                return result
        if reason == "NOT_OWNER" or is_retryable(error):
            log.info("stream failed; will reconnect", agent=self.name, address=self.address,
                     error=describe(error))
            return None
        raise AgentError(f"{self.name} at {self.address}: {describe(error)}", code,
                         reason) from None

    async def _fetch_result(self) -> MatchResult | None:
        """The match ended while the seat was away: read the result from its record."""
        channel, own = self._channel_for(self.address)
        try:
            match = await stub(match_pb2_grpc.MatchesStub, channel).GetMatch(
                match_pb2.GetMatchRequest(match_id=self.match_id), timeout=10)
        except grpc.aio.AioRpcError:
            return None
        finally:
            if own:
                await channel.close()
        if match.status in (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_CANCELLED):
            return MatchResult.from_proto(match.result)
        return None

    # -- messages -------------------------------------------------------------

    def _handle(self, msg: play_pb2.ServerMessage) -> MatchResult | None:
        kind = msg.WhichOneof("msg")
        if kind == "decision":
            self._on_decision(msg.decision)
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
        return None

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

    def _on_event(self, event: match_pb2.Event) -> None:
        if event.seq < self.next_seq:
            return  # already seen before a reconnect
        item = MatchEvent.from_proto(event)
        self.events.append(item)
        self.next_seq = event.seq + 1
        if self.on_event is not None:
            self.on_event(item)

    def _on_decision(self, req: play_pb2.DecisionRequest) -> None:
        did = req.decision_id
        if self.tracer is not None:
            self.tracer.decision_received(self, did, time.perf_counter())
        if did in self.accepted:
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
        decision = Decision.from_proto(req, self.lazy_observations)
        self._pending[did] = decision
        self.decisions += 1
        if self._is_async or self._threaded or self._takes_decision:
            self._spawn(did, self._decide(decision, None))
        else:
            self._decide_inline(decision)

    def _on_accepted(self, msg: play_pb2.AnswerAccepted) -> None:
        self.accepted[msg.decision_id] = msg.action_id
        self._pending.pop(msg.decision_id, None)
        if self.tracer is not None:
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
            action = await self._ask(decision, rejection)
        except asyncio.CancelledError:
            raise
        except NoAnswer:
            return
        except Exception as error:  # a bot bug must not cost the seat its match
            log.warning("bot raised; playing the first legal action", agent=self.name,
                        decision=did, error=repr(error))
            action = decision.legal_actions[0].id
        self._answers[did] = action
        await self._send_answer(did, action)

    def _decide_inline(self, decision: Decision) -> None:
        """A sync bot asked in the reading loop (no task, no thread): the common case.

        The answer is left in ``_ready`` for the session loop to write; a bot
        that turns out to return an awaitable is awaited in a task instead."""
        did = decision.decision_id
        self._asked[did] = self._asked.get(did, 0) + 1
        try:
            start = time.perf_counter()
            value = self._act(decision.observation, decision.legal_actions)
            if self._adaptive and time.perf_counter() - start > SLOW_CALL_S:
                self._threaded = True
            if inspect.isawaitable(value):
                self._spawn(did, self._finish_inline(decision, value))
                return
            action = value.id if isinstance(value, Action) else int(value)
        except Exception as error:  # a bot bug must not cost the seat its match
            log.warning("bot raised; playing the first legal action", agent=self.name,
                        decision=did, error=repr(error))
            action = decision.legal_actions[0].id
        self._answers[did] = action
        self._ready = (did, action)

    async def _finish_inline(self, decision: Decision, pending: Awaitable[Any]) -> None:
        did = decision.decision_id
        try:
            value = await pending
            action = value.id if isinstance(value, Action) else int(value)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.warning("bot raised; playing the first legal action", agent=self.name,
                        decision=did, error=repr(error))
            action = decision.legal_actions[0].id
        self._answers[did] = action
        await self._send_answer(did, action)

    async def _ask(self, decision: Decision, rejection: Rejection | None) -> int:
        observation, legal = decision.observation, decision.legal_actions
        kwargs: dict[str, Any] = {}
        if self._takes_decision:
            kwargs["decision"] = decision
        if rejection is not None:
            if self._on_rejected is not None:
                self._on_rejected(rejection)
            if self._takes_rejection:
                kwargs["rejection"] = rejection
        if self._is_async:
            value = await self._act(observation, legal, **kwargs)
        elif self._threaded:
            value = await asyncio.to_thread(self._act, observation, legal, **kwargs)
        else:
            start = time.perf_counter()
            value = self._act(observation, legal, **kwargs)
            if self._adaptive and time.perf_counter() - start > SLOW_CALL_S:
                self._threaded = True
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, Action):
            return value.id
        return int(value)

    async def _send_answer(self, decision_id: int, action_id: int) -> None:
        call = self._call
        if call is None:
            return  # disconnected: the server re-sends the decision after the resume
        msg = play_pb2.AgentMessage(answer=play_pb2.Answer(decision_id=decision_id,
                                                           action_id=action_id))
        try:
            async with self._write_lock:
                if self.tracer is not None:
                    self.tracer.answer_sent(self, decision_id, time.perf_counter())
                await call.write(msg)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError) as error:
            log.debug("answer not sent; the stream is gone", agent=self.name, error=repr(error))


async def play(bot: Any, *, server: str | Sequence[str], match_id: str, token: str,
               **options: Any) -> MatchResult:
    """Play one seat to the end and return the result (see ``Agent`` for options)."""
    return await Agent(bot, server=server, match_id=match_id, token=token, **options).run()


def run_agent(bot: Any, *, server: str | Sequence[str], match_id: str, token: str,
              **options: Any) -> MatchResult:
    """``play`` for code without an event loop: blocks until the match is over."""
    return asyncio.run(play(bot, server=server, match_id=match_id, token=token, **options))
