"""The gRPC servicers: Matches (lifecycle), Play (agents) and Watch (spectators)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any, NoReturn

import grpc
from grpc import aio
from twistarena import engine, wire
from twistarena.storage import LogEntry, MatchRecord
from twistarena.storage.runners import seat_key
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc
from twistarena.wire import pages

from .. import auth, logs, metrics
from ..cluster import Cluster, routing
from ..config import ServerConfig
from ..errors import is_undecodable, status_for
from ..league.arenas import arena_match_ids
from ..limits import Quotas
from ..rpc import fail, is_admin, page_token, require_admin, shown
from . import creation
from .disclosure import Disclosure
from .durable import settled
from .events import spectator_messages
from .outbox import Close, DelayedOutbox, Outbox, Streams
from .records import match_proto, replay_state, timeouts_from_log
from .referee import MatchReferee

log = logs.get("twistarena.services")

DEFAULT_PAGE = 50
MAX_PAGE = 500
#: ListMatches looks at no more than this many index entries per call.
MAX_SCAN = 5000
#: How long a failing stream waits for its status to be sent before letting go.
END_WAIT_S = 0.5


def add_streaming_services(server: aio.Server, play: Play, watch: Watch) -> None:
    """Register Play and Watch as the generated code would, but with a response
    serializer that passes pre-serialized messages (bytes) through unchanged."""
    services: list[tuple[str, str, grpc.RpcMethodHandler[Any, Any]]] = [
        ("twistarena.v1.Play", "Play", grpc.stream_stream_rpc_method_handler(
            play.Play, request_deserializer=ppb.AgentMessage.FromString,
            response_serializer=wire.passthrough_serializer)),
        ("twistarena.v1.Watch", "Watch", grpc.unary_stream_rpc_method_handler(
            watch.Watch, request_deserializer=ppb.WatchRequest.FromString,
            response_serializer=wire.passthrough_serializer)),
    ]
    for service, method, handler in services:
        handlers = {method: handler}
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
        server.add_registered_method_handlers(service, handlers)



async def pump(cluster: Cluster, match_id: str, outbox: Outbox,
               context: aio.ServicerContext[Any, Any], streams: Streams,
               sent: metrics.LoopCounter.Child | None = None) -> None:
    """Write a stream's outbox until it closes: normally, with a redirect to the
    match's owner, or with an error status. A write stuck for a reader that
    does not read is abandoned when the outbox is cut. ``sent``: count the
    messages written there (a Play stream's)."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    outbox.writer = task
    streams.active.add(outbox)
    try:
        while True:
            item = await outbox.get()
            if type(item) is Close:
                if item.code is grpc.StatusCode.OK:
                    return
                if item.reason == "NOT_OWNER" and item.redirect:
                    await routing.redirect(cluster, match_id, context, item.details)
                if item.code is grpc.StatusCode.UNAVAILABLE:
                    # Cut from the store: the hints of a refusal (retry after, owner).
                    await routing.unless_store_down(cluster, match_id, context, item.reason,
                                                    item.details)
                await _end(context, item)
            outbox.writing_since = loop.time()
            if sent is not None:
                # Counted as it is handed to gRPC: a client never reads a
                # message that is not counted yet.
                sent.value += 1
            await context.write(item)
            outbox.last_write = loop.time()
            outbox.writing_since = 0.0
    except asyncio.CancelledError:
        if not outbox.was_cut or task is None:
            raise
        task.uncancel()
        await _end(context, await outbox.get())
    finally:
        streams.active.discard(outbox)


async def _end(context: aio.ServicerContext[Any, Any], close: Close) -> None:
    """Fail the call with ``close``'s status. Its trailers queue behind the
    messages the client has not read yet: a client that never reads gets them
    if it ever does, and the call is over for the server either way."""
    try:
        async with asyncio.timeout(END_WAIT_S):  # in this task: no task of its own
            await fail(context, close.code, close.reason, close.details)
    except TimeoutError:
        raise asyncio.CancelledError from None


class Matches(mgrpc.MatchesServicer):
    """The Matches service: create, get, list and cancel matches, fetch replays."""

    def __init__(self, cluster: Cluster, config: ServerConfig, quotas: Quotas) -> None:
        self.cluster = cluster
        self.hub = hub = cluster.hub
        self.config = config
        self.disclosure = Disclosure(hub, config)
        self.quotas = quotas

    async def CreateMatch(self, request: mpb.CreateMatchRequest,
                          context: aio.ServicerContext[Any, Any]) -> mpb.CreateMatchResponse:
        """Create a match (admin call); see match.proto."""
        await require_admin(context, self.config)
        if request.options.HasField("seed") and self.config.admin_token and not is_admin(
                context, self.config):
            await fail(context, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED_ADMIN",
                       "options.seed needs the admin token: whoever picks the seed knows "
                       "every hand")
        if self.hub.draining:
            await fail(context, grpc.StatusCode.UNAVAILABLE, "DRAINING",
                       "server draining; create the match on another server")
        await routing.unless_store_down(self.cluster, "", context)
        creator = await self.quotas.admit_creation(context, makes_match=True)
        match, tokens = await creation.new_match(self.cluster, request.options)
        self.quotas.created(creator, f"match:{match.match_id}")
        # One info line per match, at its end (``match_over`` names the game too).
        log.debug("match_created", match_id=match.match_id, game=match.options.game_id,
                  players=match.options.num_players)
        visible = await self.disclosure.visible(match, context)
        return mpb.CreateMatchResponse(match=visible, seat_tokens=[
            mpb.SeatToken(seat=seat, token=token) for seat, token in sorted(tokens.items())])

    async def _record(self, match_id: str,
                      context: aio.ServicerContext[Any, Any]) -> MatchRecord:
        await routing.unless_store_down(self.cluster, match_id, context)
        record = await self.hub.store.matches.load(match_id) if match_id else None
        if record is None:
            await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_MATCH",
                       f"no match with id {shown(match_id)}")
        await settled(self.hub.store, record)
        return record

    async def _match(self, match_id: str, context: aio.ServicerContext[Any, Any]) -> mpb.Match:
        referee = self.hub.get(match_id)
        if referee is not None:
            return referee.to_proto()
        record = await self._record(match_id, context)
        entries = await self.hub.store.matches.load_log(match_id)
        return match_proto(record, record.status, record.result, len(entries),
                           timeouts_from_log(entries, record.options.num_players,
                                             record.result))

    async def GetMatch(self, request: mpb.GetMatchRequest,
                       context: aio.ServicerContext[Any, Any]) -> mpb.Match:
        """The match's record, as the caller may see it."""
        return await self.disclosure.visible(await self._match(request.match_id, context), context)

    async def ListMatches(self, request: mpb.ListMatchesRequest,
                          context: aio.ServicerContext[Any, Any]) -> mpb.ListMatchesResponse:
        """Matches newest first, filtered and paged."""
        await routing.unless_store_down(self.cluster, "", context)
        size = request.page_size or DEFAULT_PAGE
        size = min(size, MAX_PAGE)
        if request.arena_id or request.agent_id:
            return await self._arena_matches(request, size, context)
        before = (await page_token(context, pages.parse_cursor(request.page_token))
                  if request.page_token else None)
        statuses = set(request.statuses)
        # Tournaments read for this page (each one once).
        tournaments_read: dict[str, Any] = {}
        store = self.hub.store.matches
        out: list[mpb.Match] = []
        scanned = 0
        last: tuple[int, str] | None = before
        exhausted = False
        while len(out) < size and scanned < MAX_SCAN:
            batch = await store.page(last, min(size * 2, MAX_PAGE))
            if not batch:
                exhausted = True
                break
            scanned += len(batch)
            ids = [mid for mid, _ in batch]
            records = await store.load_many(ids)
            logs_ = await store.load_logs(ids)
            for (mid, created), record, entries in zip(batch, records, logs_, strict=True):
                last = (created, mid)
                if record is None:
                    continue
                msg = self._listed(mid, record, entries)
                if request.game_id and msg.options.game_id != request.game_id:
                    continue
                if statuses and msg.status not in statuses:
                    continue
                out.append(await self.disclosure.visible(msg, context, tournaments_read))
                if len(out) >= size:
                    break
        token = ""
        if not exhausted and last is not None and (len(out) >= size or scanned >= MAX_SCAN):
            token = pages.cursor_token(*last)
        return mpb.ListMatchesResponse(matches=out, next_page_token=token)

    def _listed(self, match_id: str, record: MatchRecord, entries: list[LogEntry]) -> mpb.Match:
        """A listed match: from its referee when it runs here, else from the store."""
        referee = self.hub.get(match_id)
        return referee.to_proto() if referee is not None else match_proto(
            record, record.status, record.result, len(entries),
            timeouts_from_log(entries, record.options.num_players, record.result))

    async def _arena_matches(self, request: mpb.ListMatchesRequest, size: int,
                             context: aio.ServicerContext[Any, Any]) -> mpb.ListMatchesResponse:
        """ListMatches filtered by arena and/or agent: the arenas' rated matches,
        newest first (the page token is an offset)."""
        offset = await page_token(context, pages.parse_offset(request.page_token))
        ids = await arena_match_ids(self.hub.store, request.arena_id, request.agent_id,
                                    offset, size + 1)
        store = self.hub.store.matches
        shown_ids = ids[:size]
        out: list[mpb.Match] = []
        for mid, record, entries in zip(shown_ids, await store.load_many(shown_ids),
                                        await store.load_logs(shown_ids), strict=True):
            if record is not None:
                out.append(await self.disclosure.visible(self._listed(mid, record, entries),
                                                         context))
        token = pages.offset_token(offset + size) if len(ids) > size else ""
        return mpb.ListMatchesResponse(matches=out, next_page_token=token)

    async def CancelMatch(self, request: mpb.CancelMatchRequest,
                          context: aio.ServicerContext[Any, Any]) -> mpb.Match:
        """End a match that is not over (admin call)."""
        await require_admin(context, self.config)
        await routing.unless_store_down(self.cluster, request.match_id, context)
        referee = self.hub.get(request.match_id)
        if referee is None:
            record = await self._record(request.match_id, context)
            if record.status in wire.MATCH_OVER:
                await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER",
                           f"match {shown(request.match_id)} is already over")
            referee = await routing.referee_or_redirect(
                self.cluster, request.match_id, context,
                f"match {shown(request.match_id)} is not run by this server")
        if not await referee.cancel(request.reason):
            await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER",
                       f"match {shown(request.match_id)} is already over")
        log.info("match_cancelled", match_id=request.match_id, reason=request.reason)
        return await self.disclosure.visible(referee.to_proto(), context)

    async def GetReplay(self, request: mpb.GetReplayRequest,
                        context: aio.ServicerContext[Any, Any]) -> mpb.Replay:
        """Options, seed, action log, events and result, once public."""
        record = await self._record(request.match_id, context)
        entries = await self.hub.store.matches.load_log(request.match_id)
        referee = self.hub.get(request.match_id)
        match = referee.to_proto() if referee is not None else match_proto(
            record, record.status, record.result, len(entries),
            timeouts_from_log(entries, record.options.num_players, record.result))
        if not await self.disclosure.may_see_replay(match, context):
            await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "REPLAY_CLOSED",
                       f"the replay of match {shown(request.match_id)} opens when "
                       + ("its tournament block ends" if match.status in wire.MATCH_OVER
                          else "it ends; follow it with Watch"))
        state = replay_state(record, entries)
        info = engine.game(record.options.game_id)
        events = [wire.event(i, ev.view(None), info) for i, ev in enumerate(state.events)]
        actions = [mpb.RecordedAction(seat=s, action_id=a, timeout=t) for s, a, t in entries]
        return mpb.Replay(match=match, actions=actions, events=events)


class Play(pgrpc.PlayServicer):
    """The Play service: one bidirectional stream per seat."""

    def __init__(self, cluster: Cluster, config: ServerConfig, quotas: Quotas,
                 streams: Streams) -> None:
        self.cluster = cluster
        self.hub = cluster.hub
        self.config = config
        self.quotas = quotas
        self.streams = streams
        self.streams_per_token: Counter[str] = Counter()

    async def Play(self, request_iterator: AsyncIterator[ppb.AgentMessage],
                   context: aio.ServicerContext[Any, Any]) -> None:
        """One agent's stream: Join, then decisions and answers until the match ends;
        with ``Join.keep_open``, the next Join after MatchOver plays on, and so on."""
        timeout = self.config.stream_join_timeout_s
        try:
            async with asyncio.timeout(timeout):
                first = await context.read()
        except TimeoutError:
            await fail(context, grpc.StatusCode.DEADLINE_EXCEEDED, "JOIN_TIMEOUT",
                       f"no Join within {timeout:g} s")
        if first is aio.EOF:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                       "the stream ended before Join")
        join: ppb.Join | None = await self._join_of(first, context)
        while join is not None:
            join = await self._play_seat(join, context)

    async def _join_of(self, msg: Any, context: aio.ServicerContext[Any, Any]) -> ppb.Join:
        """The Join a stream's first message (or the first after a match it kept
        the stream for) must be; anything else ends the call."""
        if not isinstance(msg, ppb.AgentMessage):
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                       "the first message is not a valid AgentMessage")
        if msg.WhichOneof("msg") != "join":
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                       "the first message of a Play stream, and of each match a kept "
                       "stream plays next, must be Join")
        metrics.PLAY_RECEIVED.value += 1
        join: ppb.Join = msg.join
        if not join.match_id:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                       "Join.match_id is empty")
        return join

    async def _play_seat(self, join: ppb.Join,
                         context: aio.ServicerContext[Any, Any]) -> ppb.Join | None:
        """Play the seat ``join`` names until its match ends; the next Join when the
        stream is kept (``Join.keep_open``) and one comes, else None (the call ends)."""
        if self.hub.draining:
            await routing.refuse_draining(self.cluster, join.match_id, context)
        await routing.unless_store_down(self.cluster, join.match_id, context)
        token = join.seat_token or auth.bearer(context.invocation_metadata())
        digest = auth.token_hash(token) if token else ""
        referee, seat = await self._locate(join.match_id, digest, context)
        # A runner's Join: the seat's latest hand-out is the store's, whichever node
        # handed it out and whichever runs the match now.
        handed = (await self.hub.store.runners.latest_handout(seat_key(join.match_id, seat))
                  if join.handout else 0)
        # Charged once the seat is found here: a Join turned away because the match
        # is run elsewhere (a failover's redirects) or over costs nothing.
        await self.quotas.admit_join(context, digest, returning=referee.seats[seat].joined)
        if self.streams_per_token[digest] >= self.config.max_streams_per_token:
            await fail(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS",
                       f"at most {self.config.max_streams_per_token} streams per seat token")
        self.streams_per_token[digest] += 1
        metrics.PLAY_STREAMS.inc()
        outbox = self.streams.outbox(no_events=join.no_events, batched=join.batched)
        outbox.unproductive = lambda: referee.status == mpb.MATCH_STATUS_WAITING
        reader: asyncio.Task[Any] | None = None
        kept = False
        try:
            await referee.attach(seat, outbox, join.resume_from_seq, join.handout, handed)
            reader = asyncio.get_running_loop().create_task(
                self._read(context, referee, seat, outbox, join.keep_open))
            await pump(self.cluster, join.match_id, outbox, context, self.streams,
                       metrics.PLAY_SENT)
            # Ended with OK: the match is over and MatchOver was written.
            kept = join.keep_open
        finally:
            if reader is not None and not kept and not outbox.answering:
                reader.cancel()  # one mid-answer returns once the answer is settled
            outbox.closed = True
            referee.detach(seat, outbox)
            metrics.PLAY_STREAMS.dec()
            self.streams_per_token[digest] -= 1
            if self.streams_per_token[digest] <= 0:
                del self.streams_per_token[digest]
        if not kept:
            return None
        assert reader is not None
        return await self._next_join(reader, context)

    async def _next_join(self, reader: asyncio.Task[Any],
                         context: aio.ServicerContext[Any, Any]) -> ppb.Join | None:
        """What a kept stream sends after MatchOver: a Join (the next match), or
        nothing (None: the call ends with OK) within the join timeout or before
        the server stops."""
        stopping = asyncio.get_running_loop().create_future()
        between = self.streams.between_matches
        between.add(stopping)
        try:
            if self.hub.draining:
                stopping.set_result(None)
            await asyncio.wait((reader, stopping), timeout=self.config.stream_join_timeout_s,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            between.discard(stopping)
            came = reader.done()
            if not came:
                reader.cancel()  # also when the call itself is cancelled meanwhile
        if not came:
            return None
        msg = reader.result()
        if msg is aio.EOF:
            return None
        return await self._join_of(msg, context)

    async def _refuse_join(self, context: aio.ServicerContext[Any, Any], digest: str,
                           code: grpc.StatusCode, reason: str, details: str) -> NoReturn:
        """A Join that names no seat still costs its address's and token's budget
        (guessing costs as much as joining)."""
        await self.quotas.admit_join(context, digest)
        await fail(context, code, reason, details)

    async def _locate(self, match_id: str, digest: str,
                      context: aio.ServicerContext[Any, Any]) -> tuple[MatchReferee, int]:
        """The referee and seat of a Join's match and token (``digest``: the token's
        hash, '' without one), or the call ends with why not."""
        referee = self.hub.get(match_id)
        hashes = referee.record.token_hashes if referee is not None else None
        record: MatchRecord | None = None
        if referee is None:
            record = await self.hub.store.matches.load(match_id)
            if record is None:
                await self._refuse_join(context, digest, grpc.StatusCode.NOT_FOUND,
                                        "UNKNOWN_MATCH", f"no match with id {shown(match_id)}")
            hashes = record.token_hashes
        if not digest:
            await self._refuse_join(context, digest, grpc.StatusCode.UNAUTHENTICATED,
                                    "BAD_TOKEN", "no seat token: set Join.seat_token or "
                                    "metadata 'authorization: Bearer <token>'")
        seat = auth.seat_for_digest(digest, hashes or {})
        if seat is None:
            await self._refuse_join(context, digest, grpc.StatusCode.UNAUTHENTICATED,
                                    "BAD_TOKEN", "the token is not a seat token of match "
                                    f"{shown(match_id)}")
        if referee is None:
            assert record is not None
            await settled(self.hub.store, record)
            if record.status in wire.MATCH_OVER:
                if seat in record.owed:
                    return await self._told_the_end(record), seat
                await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER",
                           f"match {shown(match_id)} is over")
            referee = await routing.referee_or_redirect(
                self.cluster, match_id, context,
                f"match {shown(match_id)} is not run by this server right now; retry")
        return referee, seat

    async def _told_the_end(self, record: MatchRecord) -> MatchReferee:
        """A match over whose seat is still owed a Rewound (away when the match
        was rewound, and not back before it ended): rather than refused, the
        seat is told, by a referee of the ended match read from the store that
        runs nothing and writes nothing: Joined, the Rewound, the events from
        where it resumes, and MatchOver. Refused, it would keep as accepted the
        answers that the store lost."""
        entries = await self.hub.store.matches.load_log(record.match_id)
        return MatchReferee(self.hub, record, "", entries)

    async def _read(self, context: aio.ServicerContext[Any, Any], referee: MatchReferee,
                    seat: int, outbox: Outbox, keep_open: bool = False) -> Any:
        """Hand the stream's answers to the referee. On a kept stream
        (``keep_open``), once the match is over: the first message that is not an
        answer (the next Join, or whatever it is), or EOF, is the task's result."""
        received = metrics.PLAY_RECEIVED
        try:
            while True:
                msg = await context.read()
                if keep_open and outbox.finished:
                    if msg is aio.EOF or is_undecodable(msg) or msg.WhichOneof("msg") != "answer":
                        return msg
                    received.value += 1
                    continue  # for the match that is over: nothing to say
                if msg is aio.EOF:
                    return msg
                received.value += 1
                if is_undecodable(msg):
                    outbox.close(grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                                 "a message on this stream is not a valid AgentMessage")
                    return None
                kind = msg.WhichOneof("msg")
                if kind == "answer":
                    answer = msg.answer
                    # Not cancelled meanwhile (``_play_seat``): an answer that reached
                    # the node is stored and applied, or neither, whether or not its
                    # stream is still there.
                    outbox.answering = True
                    try:
                        await referee.answer(seat, answer.decision_id, answer.action_id,
                                             outbox, answer.fallback)
                    finally:
                        outbox.answering = False
                    if outbox.closed and not (keep_open and outbox.finished):
                        return None  # the stream ended while the answer was settled
                elif kind == "join":
                    outbox.close(grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                                 "Join was already sent on this stream")
                    return None
                else:
                    outbox.close(grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                                 "an AgentMessage must hold a Join or an Answer")
                    return None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if outbox.closed:  # the call is ending anyway (abort, takeover, match over)
                return None
            log.warning("play_read_failed", match_id=referee.match_id, seat=seat,
                        error=repr(exc))
            outbox.close(*status_for(exc, "Play"))
            return None


class Watch(pgrpc.WatchServicer):
    """The Watch service: a spectator's stream of the public view."""

    def __init__(self, cluster: Cluster, config: ServerConfig, streams: Streams) -> None:
        self.cluster = cluster
        self.hub = hub = cluster.hub
        self.streams = streams
        self.disclosure = Disclosure(hub, config)
        #: The broadcast delay of live spectator streams (0: none).
        self.delay_s = config.spectator_delay_s

    async def Watch(self, request: ppb.WatchRequest,
                    context: aio.ServicerContext[Any, Any]) -> None:
        """A spectator's stream: the public events and views of one match."""
        if not request.match_id:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                       "WatchRequest.match_id is empty")
        await routing.unless_store_down(self.cluster, request.match_id, context)
        if not await self.disclosure.may_watch(request.match_id, context):
            await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "REPLAY_CLOSED",
                       f"match {shown(request.match_id)} deals the cards of a duplicate "
                       "tournament block that has games left to play; watch it when the "
                       "block ends")
        referee = self.hub.get(request.match_id)
        if referee is None:
            referee = await routing.live_referee_or_redirect(self.cluster, request.match_id,
                                                             context)
        # A match that is over has nothing left to hide: its events go at once.
        outbox = DelayedOutbox(self.delay_s, self.streams.limits.stream_queue) if (
            referee is not None and self.delay_s > 0) else self.streams.outbox()
        if referee is not None:
            live = referee
            outbox.unproductive = lambda: live.status == mpb.MATCH_STATUS_WAITING
            await referee.watch(outbox, request.from_seq, request.batched)
        else:
            record = await self.hub.store.matches.load(request.match_id)
            if record is None:
                await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_MATCH",
                           f"no match with id {shown(request.match_id)}")
            if record.status not in wire.MATCH_OVER:
                await fail(context, grpc.StatusCode.UNAVAILABLE, "NOT_OWNER",
                           f"match {shown(request.match_id)} is not run by this server right now")
            await settled(self.hub.store, record)
            entries = await self.hub.store.matches.load_log(request.match_id)
            state = replay_state(record, entries)
            info = engine.game(record.options.game_id)
            events = [wire.event_bytes(seq, state.events[seq].view(None), info)
                      for seq in range(max(0, request.from_seq), len(state.events))]
            view = wire.public_view_bytes(record.options.game_id, state.public_view())
            for message in spectator_messages(events, view, request.batched):
                outbox.send(message)
            outbox.send(ppb.WatchMessage(match_over=ppb.MatchOver(result=record.result)))
            outbox.finish()
        metrics.WATCH_STREAMS.inc()
        try:
            await pump(self.cluster, request.match_id, outbox, context, self.streams)
        finally:
            metrics.WATCH_STREAMS.dec()
            if referee is not None:
                referee.unwatch(outbox)
