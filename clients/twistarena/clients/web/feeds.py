"""One upstream Watch per match, fanned out to any number of browsers.

A :class:`MatchFeed` holds the one gRPC Watch stream this gateway keeps for a
match (batched: the node sends the events and the view after them together,
at most ten times a second, so a fast match costs the gateway no more than a
slow one) and the last public view it brought. Every browser watching the match
is a :class:`Viewer` with a bounded queue of already-encoded messages: each
message is encoded once, whatever the number of viewers, and a viewer that
cannot keep up never slows the feed nor grows without bound. When its queue
is full it is emptied and refilled with one snapshot (the latest view and the
recent events), which is all a page needs to draw the table again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import grpc.aio
import structlog
from twistarena.clients.sdk.convert import MatchResult, oneof_to_dict, struct_to_dict
from twistarena.link import Backoff, CallError, follow_stream, stub
from twistarena.v1 import match_pb2, observations_pb2, play_pb2, play_pb2_grpc

log = structlog.get_logger("twistarena.web")

#: Messages a browser may have waiting before it gets a snapshot instead.
VIEWER_QUEUE = 32
#: Recent events kept per match for a newcomer's first snapshot.
RECENT_EVENTS = 200
#: How long a feed nobody watches stays open (a page reload comes back at once).
IDLE_CLOSE_S = 10.0
#: Upstream messages are sent to browsers in batches at most this often, with only
#: the latest view of each batch: a browser's cost is bounded by this rate, not by
#: the match's speed (5 updates a second is as fast as anyone follows a card game).
FLUSH_S = 0.2
#: A feed gives up after a minute without a message from any node.
FEED_BACKOFF = Backoff(give_up_after=60.0)

JSON = dict[str, Any]


#: The last frame of a feed: the match is over (or the feed failed); not sent.
END = b""


def encode(message: JSON) -> bytes:
    """One Server-Sent Events frame."""
    return b"data: " + json.dumps(message, separators=(",", ":")).encode() + b"\n\n"


class Viewer:
    """One browser's place in a feed: a bounded queue of encoded SSE frames."""

    __slots__ = ("queue", "snapshots")

    def __init__(self, size: int = VIEWER_QUEUE) -> None:
        # One place more than ``size`` for the END marker after a snapshot.
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(size + 1)
        #: Times this viewer fell behind and was sent a snapshot instead.
        self.snapshots = 0

    def offer(self, frame: bytes, snapshot: Callable[[], bytes]) -> None:
        """Queue ``frame``; a full queue is replaced by one fresh snapshot."""
        try:
            self.queue.put_nowait(frame)
        except asyncio.QueueFull:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.snapshots += 1
            self.queue.put_nowait(snapshot())
            if not frame:  # END
                self.queue.put_nowait(END)


class MatchFeed:
    """The gateway's one Watch stream of one match and the browsers following it."""

    def __init__(self, match_id: str, servers: list[str], root_cert: bytes | None = None,
                 tls: bool = False, on_node: Callable[[str, str], None] | None = None) -> None:
        self.match_id = match_id
        self.servers = servers
        self.root_cert = root_cert
        self.tls = tls
        self.on_node = on_node
        self.view: JSON | None = None
        self.events: deque[JSON] = deque(maxlen=RECENT_EVENTS)
        self.result: JSON | None = None
        self.error = ""
        self.node = ""
        self.viewers: set[Viewer] = set()
        #: Upstream messages received (the feed's own rate, for /nodes).
        self.received = 0
        self.idle_since = time.monotonic()
        self._task: asyncio.Task[None] | None = None
        self._cached_snapshot: bytes | None = None
        #: What arrived since the last flush: events, the latest view (still a
        #: message: decoded only once per batch), the end.
        self._pending: list[JSON] = []
        self._view_msg: observations_pb2.PublicView | None = None
        self._flushed = asyncio.Event()
        self._last_flush = 0.0
        #: The match went back (the store lost its tail): the next flush sends
        #: every browser a fresh snapshot instead of what was pending.
        self._resync = False
        self._locate_only = False

    # -- browsers ----------------------------------------------------------
    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"watch {self.match_id}")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    def snapshot(self) -> bytes:
        """Everything a page needs to draw the match now (encoded once per change)."""
        if self._view_msg is not None:
            self.view = oneof_to_dict(self._view_msg)
            self._view_msg = None
            self._pending.append({"type": "view", "view": self.view})
        if self._cached_snapshot is None:
            self._cached_snapshot = encode({
                "type": "snapshot", "match_id": self.match_id, "node": self.node,
                "view": self.view, "events": list(self.events), "result": self.result,
                "error": self.error})
        return self._cached_snapshot

    def subscribe(self) -> Viewer:
        viewer = Viewer()
        viewer.queue.put_nowait(self.snapshot())
        if self.done:
            viewer.queue.put_nowait(END)
            return viewer
        self.viewers.add(viewer)
        self.start()
        return viewer

    def unsubscribe(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)
        if not self.viewers:
            self.idle_since = time.monotonic()

    async def frames(self, viewer: Viewer) -> AsyncIterator[bytes]:
        """A viewer's frames until the match is over (the feed then sends ``END``)."""
        while frame := await viewer.queue.get():
            yield frame

    def _publish(self, message: JSON) -> None:
        """Send ``message`` at once, after what is pending."""
        self._pending.append(message)
        self._flush()

    def _flush(self) -> None:
        """One frame for every browser: the pending events, then the latest view."""
        if self._resync:
            self._resync = False
            self._cached_snapshot = None
            frame = self.snapshot()
            self._pending = []  # all in the snapshot
            self._last_flush = time.monotonic()
            for viewer in self.viewers:
                viewer.offer(frame, self.snapshot)
            return
        if self._view_msg is not None:
            self.view = oneof_to_dict(self._view_msg)
            self._view_msg = None
            view_message: JSON | None = {"type": "view", "view": self.view}
        else:
            view_message = None
        messages = self._pending
        self._pending = []
        if view_message is not None:
            # The view goes before an end, after the events that led to it.
            at = next((i for i, m in enumerate(messages) if m["type"] != "event"),
                      len(messages))
            messages.insert(at, view_message)
        if not messages:
            return
        self._cached_snapshot = None
        self._last_flush = time.monotonic()
        if not self.viewers:
            return
        frame = b"".join(encode(m) for m in messages)
        for viewer in self.viewers:
            viewer.offer(frame, self.snapshot)

    async def _flush_soon(self) -> None:
        """Flush at most every ``FLUSH_S`` while messages arrive."""
        while True:
            await asyncio.sleep(max(0.0, self._last_flush + FLUSH_S - time.monotonic()))
            self._flush()
            await self._flushed.wait()
            self._flushed.clear()

    # -- upstream ----------------------------------------------------------
    def _handle(self, msg: play_pb2.WatchMessage) -> bool:
        """Apply one upstream message; True when the match is over."""
        self.received += 1
        kind = msg.WhichOneof("msg")
        if kind == "batch":
            for ev in msg.batch.events:
                self._event(ev)
            if msg.batch.HasField("view"):
                self._view(msg.batch.view)
        elif kind == "view":
            self._view(msg.view)
        elif kind == "event":
            self._event(msg.event)
        elif kind == "rewound":
            # Events from to_seq on are void; they come again as the match goes on.
            to_seq = msg.rewound.to_seq
            while self.events and self.events[-1]["seq"] >= to_seq:
                self.events.pop()
            self._resync = True
            self._cached_snapshot = None
            self._flushed.set()
        elif kind == "match_over":
            self.result = MatchResult.from_proto(msg.match_over.result).to_json()
            self._publish({"type": "over", "result": self.result})
            return True
        return False

    def _view(self, view: observations_pb2.PublicView) -> None:
        self._view_msg = view
        self._cached_snapshot = None
        self._flushed.set()

    def _event(self, ev: match_pb2.Event) -> None:
        if self.events and ev.seq <= self.events[-1]["seq"]:
            return  # already had it before a reconnection
        event = {"seq": ev.seq, "kind": ev.kind, "text": ev.text,
                 "data": struct_to_dict(ev.data)}
        self.events.append(event)
        self._pending.append({"type": "event", "event": event})
        self._cached_snapshot = None
        self._flushed.set()

    async def _run(self) -> None:
        flusher = asyncio.create_task(self._flush_soon())
        try:
            await self._follow()
        finally:
            flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await flusher
            self._flush()
            for viewer in self.viewers:
                viewer.offer(END, self.snapshot)

    async def locate(self) -> None:
        """Only find the node serving the match (``on_node``), then stop."""
        self._locate_only = True
        await self._follow()

    async def _follow(self) -> None:
        """Follow the match until it ends: reconnect, resume after the last event,
        go straight to the owner a refusal names and spare a server for its retry
        hint (``twistarena.link``'s policy)."""
        def open_watch(channel: grpc.aio.Channel) -> AsyncIterator[play_pb2.WatchMessage]:
            next_seq = self.events[-1]["seq"] + 1 if self.events else 0
            # Batched: events and views arrive together, a few times a second.
            return stub(play_pb2_grpc.WatchStub, channel).Watch(  # type: ignore[no-any-return]
                play_pb2.WatchRequest(match_id=self.match_id, from_seq=next_seq, batched=True))

        stream = follow_stream(self.servers, self.root_cert, self.tls, open_watch,
                               f"watch {self.match_id}", FEED_BACKOFF)
        try:
            async with contextlib.aclosing(stream) as messages:
                async for address, msg in messages:
                    if self.node != address:
                        self.node = address
                        if self.on_node is not None:
                            self.on_node(self.match_id, address)
                    if self._locate_only or self._handle(msg):
                        return
        except CallError as error:
            self.error = error.refusal
            self._publish({"type": "error", "error": self.error, "reason": error.reason})
            log.info("watch_failed", match_id=self.match_id, error=self.error)


class FeedHub:
    """The feeds of one gateway: at most one per match, closed when nobody watches."""

    def __init__(self, servers: list[str], root_cert: bytes | None = None,
                 tls: bool = False, on_node: Callable[[str, str], None] | None = None) -> None:
        self.servers = servers
        self.root_cert = root_cert
        self.tls = tls
        self.on_node = on_node
        self.feeds: dict[str, MatchFeed] = {}

    def feed(self, match_id: str) -> MatchFeed:
        feed = self.feeds.get(match_id)
        if feed is None or (feed.done and not feed.viewers and feed.result is None):
            feed = MatchFeed(match_id, self.servers, self.root_cert, self.tls, self.on_node)
            self.feeds[match_id] = feed
        return feed

    async def sweep(self) -> None:
        """Close feeds nobody has watched for a while."""
        now = time.monotonic()
        for match_id, feed in list(self.feeds.items()):
            if not feed.viewers and now - feed.idle_since > IDLE_CLOSE_S:
                del self.feeds[match_id]
                await feed.close()

    async def close(self) -> None:
        for feed in self.feeds.values():
            await feed.close()
        self.feeds.clear()

    def viewer_count(self) -> int:
        return sum(len(f.viewers) for f in self.feeds.values())
