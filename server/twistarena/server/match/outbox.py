"""The messages waiting for one stream (Play or Watch), written by its handler in order.

A match never waits for a reader: it puts messages in the stream's outbox and
goes on. So that a reader that does not keep up cannot make the server hold
its messages without bound, an outbox is bounded: past ``limit`` messages
waiting (besides the backlog it was given before its first write) it is cut,
and ``Streams`` cuts a stream whose write has been stuck for a while and closes
one that has had nothing to say for a long time while its match waits for
players. A cut stream ends with ``RESOURCE_EXHAUSTED`` (reason ``SLOW_READER``);
its client may come back (a spectator with ``from_seq``, an agent with
``resume_from_seq``), and a seat keeps its reconnect grace.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from .. import logs, metrics
from ..config import Limits

log = logs.get("twistarena.streams")

#: How often ``Streams`` looks for stuck and idle streams.
WATCH_EVERY_S = 0.5

SLOW_READER = "SLOW_READER"


@dataclass(frozen=True, slots=True)
class Close:
    """Sentinel in an outbox: end the call with this status."""

    code: grpc.StatusCode
    reason: str
    details: str
    #: NOT_OWNER: look the match's owner up and name it in the status.
    redirect: bool = True


class Outbox:
    """Messages for one stream, written by its RPC handler in order.

    Items are messages or their serialized bytes (the handlers' serializer
    passes bytes through), or a ``Close``."""

    __slots__ = ("_allowance", "_items", "_loop", "_waiter", "answering", "batch_from",
                 "batched", "closed", "finished", "last_write", "limit", "no_events",
                 "unproductive", "was_cut", "writer", "writing_since")

    def __init__(self, no_events: bool = False, limit: int = 0, batched: bool = False) -> None:
        self._items: deque[Any] = deque()
        self._loop = asyncio.get_running_loop()
        self._waiter: asyncio.Future[None] | None = None
        self.closed = False
        #: Ended normally (``finish``): a Play stream's match is over, MatchOver sent.
        self.finished = False
        self.no_events = no_events
        #: A Play stream that asked for batched delivery (``Join.batched``).
        self.batched = batched
        #: A batched spectator's next event seq (``WatchRequest.batched``); None:
        #: every event and view is a message of its own.
        self.batch_from: int | None = None
        #: Messages that may wait beyond the backlog (0: unbounded).
        self.limit = limit
        #: Backlog still waiting (None: the first write has not started yet).
        self._allowance: int | None = None
        #: The task writing this outbox, and since when its write is pending (0: none).
        self.writer: asyncio.Task[Any] | None = None
        self.writing_since = 0.0
        self.last_write = self._loop.time()
        #: Whether the stream has nothing to do now (its match waits for players);
        #: None: idleness is never a reason to close it.
        self.unproductive: Callable[[], bool] | None = None
        self.was_cut = False
        #: A Play stream's reader is handing an answer to the referee: it is let
        #: finish rather than cancelled as the stream ends (``services.Play._read``).
        self.answering = False

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def send(self, msg: Any) -> None:
        """Queue a message (dropped once the outbox is closed; a reader too far
        behind is cut, see ``cut``)."""
        if self.closed:
            return
        items = self._items
        items.append(msg)
        allowance = self._allowance
        if self.limit and allowance is not None and len(items) > self.limit + allowance \
                and self._due(self.limit + allowance):
            self.cut(f"more than {self.limit} messages waited for this stream")
            return
        self._wake()

    def _due(self, index: int) -> bool:
        """Whether the message at ``index`` in the queue could be sent now."""
        return True

    def close(self, code: grpc.StatusCode, reason: str, details: str,
              redirect: bool = True) -> None:
        """Queue the end of the call with this status; nothing after it."""
        if not self.closed:
            self.closed = True
            self._items.append(Close(code, reason, details, redirect))
            self._wake()

    def close_unsent(self, code: grpc.StatusCode, reason: str, details: str,
                     redirect: bool = True) -> None:
        """End the call with this status, dropping what waits: for a stream whose
        handler has not begun writing, so that its reader gets the status only."""
        if not self.closed:
            self._items.clear()
        self.close(code, reason, details, redirect)

    def finish(self) -> None:
        """End the call normally."""
        if not self.closed:
            self.finished = True
        self.close(grpc.StatusCode.OK, "", "")

    def cut(self, why: str) -> None:
        """End the stream now, dropping what waits: its reader does not keep up."""
        if self.closed:
            return
        metrics.ERRORS.labels("slow_reader").inc()
        self.was_cut = True
        self._items.clear()
        self.close(grpc.StatusCode.RESOURCE_EXHAUSTED, SLOW_READER,
                   f"{why}: the stream is cut; reconnect and resume from the last seq "
                   "you received")
        writer = self.writer
        if self.writing_since and writer is not None and not writer.done():
            writer.cancel()  # the pending write waits for a reader that does not read

    async def get(self) -> Any:
        """The next message (or a ``Close``), waiting for one if needed."""
        items = self._items
        if self._allowance is None:
            self._allowance = len(items)
        while not items:
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self._allowance:
            self._allowance -= 1
        return items.popleft()


class Streams:
    """The outboxes being written on this server, watched for stuck writes and
    for idleness."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.active: set[Outbox] = set()
        #: Kept Play streams waiting for their next Join (``Join.keep_open``): set
        #: when the server stops, so that they end now rather than at gRPC's grace.
        self.between_matches: set[asyncio.Future[None]] = set()
        self._task: asyncio.Task[None] | None = None

    def outbox(self, no_events: bool = False, batched: bool = False) -> Outbox:
        """A new outbox bounded by the server's stream queue limit."""
        return Outbox(no_events, self.limits.stream_queue, batched)

    def start(self) -> None:
        """Start watching for stuck and idle streams."""
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def close(self) -> None:
        """Stop watching; end the kept streams waiting for a Join."""
        for waiting in self.between_matches:
            if not waiting.done():
                waiting.set_result(None)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(WATCH_EVERY_S)
            self.sweep(loop.time())

    def sweep(self, now: float) -> None:
        """Cut stuck writers; close streams idle while their match waits for players."""
        stalled = self.limits.stalled_write_s
        idle = self.limits.idle_stream_s
        for outbox in list(self.active):
            if outbox.closed:
                continue
            if outbox.writing_since:
                if stalled and now - outbox.writing_since > stalled:
                    outbox.cut(f"a message waited over {stalled:g} s for this stream's reader")
            elif idle and now - outbox.last_write > idle and _unproductive(outbox):
                metrics.ERRORS.labels("idle_stream").inc()
                outbox.close(grpc.StatusCode.DEADLINE_EXCEEDED, "IDLE_STREAM",
                             f"nothing happened on this stream for {idle:g} s (its match "
                             "waits for players); reconnect later (serve --idle-stream)")


def _unproductive(outbox: Outbox) -> bool:
    check = outbox.unproductive
    return check is not None and check()


class DelayedOutbox(Outbox):
    """A spectator's outbox under the broadcast delay: each message leaves
    ``delay_s`` after it was sent, so nothing reaches the spectator sooner
    (``serve --spectator-delay-ms``). A Close still comes after them all."""

    __slots__ = ("delay_s",)

    def __init__(self, delay_s: float, limit: int = 0) -> None:
        super().__init__(limit=limit)
        self.delay_s = delay_s

    def send(self, msg: Any) -> None:
        """Queue ``msg`` to leave ``delay_s`` from now."""
        super().send(_Held(self._loop.time() + self.delay_s, msg))

    def _due(self, index: int) -> bool:
        # Messages held back by the delay are not the reader's fault.
        item = self._items[index]
        return type(item) is not _Held or item.until <= self._loop.time()

    async def get(self) -> Any:
        """The next message, once its delay has passed."""
        item = await super().get()
        if type(item) is _Held:
            wait = item.until - self._loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            return item.msg
        return item


@dataclass(frozen=True, slots=True)
class _Held:
    """A message of a DelayedOutbox and the loop time it may leave at."""

    until: float
    msg: Any
