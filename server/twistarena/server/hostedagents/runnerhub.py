"""The Runners service: hosted agents' seats handed to runner processes.

A hosted seat (a tournament entrant ``agent:ID``, a hosted practice match) is
put in the store's line of waiting seats (``storage.runners``) by whichever
node creates its match. Every node with runners connected takes seats from
that line for its freest runner (most free slots, then the one that waited
longest) and sends the SeatAssignment down that runner's Connect stream. So a
runner may connect to any node: the store, not the node, decides who plays
what, and a seat is never handed to two runners.

A runner's seats live as long as its Connect stream. When the stream ends (the
runner was killed, or cut off) its node puts the seats back at the front of the
line at once; a runner silent for ``SILENT_MS`` is cut off; and should the node
itself die, its runners' seats stop being renewed and any node's sweep puts
them back after ``HOLD_MS``. The next runner joins with the same seat token,
within the seat's reconnect grace, and the match goes on.

A runner sees only what its seats need: FetchVersion serves a version's
archive only to the runner holding a seat that plays it, and ReportSeat takes
only reports of seats the runner was given (each once). A seat handed out
again carries a higher hand-out (``Join.handout``), kept in the store: the
runners that had it before are refused on every node, their Joins and their
reports (``ABORTED``, ``TAKEN_OVER``), so one seat is never played, nor
counted, by two programs.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc import aio
from prometheus_client import Counter, Gauge
from twistarena.storage import StoreError
from twistarena.storage.runners import RunnerStore, parse_seat_key, seat_key
from twistarena.storage.versions import MatchReport, SeatLogRecord, StepLogRecord, VersionStore
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import runners_pb2 as rpb
from twistarena.v1 import runners_pb2_grpc as rgrpc
from twistarena.wire import RUNNER_SESSION_KEY

from .. import auth, logs
from ..config import ServerConfig
from ..loops import stop_loops
from ..match.decisions import DECISION_ID_STRIDE
from ..rpc import fail, require_admin, shown

log = logs.get("twistarena.runners")

#: A runner sends a heartbeat this often...
HEARTBEAT_MS = 1000
#: ...and one silent this long is cut off (its seats go to other runners).
SILENT_MS = 5000
#: A seat held by a runner that stopped renewing it (its node died) goes back
#: to the line after this long: longer than a live node takes to cut off its
#: silent runner (SILENT_MS, checked every HEARTBEAT_MS) and give its seats back
#: itself, so that no sweep hands out a seat whose runner's stream is still open.
HOLD_MS = SILENT_MS + 2 * HEARTBEAT_MS
#: Nodes look for waiting seats this often (at once when one is created here).
POLL_S = 0.2
#: Expired holds are swept this often.
SWEEP_S = 1.0
#: A version's archive is sent in pieces of this size.
CHUNK = 1 << 20
RUNNER_TOKEN_PREFIX = "rt_"

RUNNERS = Gauge("twistarena_runners", "Runners connected to this node")
RUNNERS_CACHE_BYTES = Gauge("twistarena_runners_cache_bytes",
                            "Bytes in the version caches of the runners connected to this "
                            "node, as their heartbeats last said")
RUNNERS_CACHE_MAX_BYTES = Gauge("twistarena_runners_cache_max_bytes",
                                "The bounds of those caches, added up")
SEATS_HANDED = Counter("twistarena_runner_seats_total",
                       "Hosted seats handed to runners", ["kind"])


@dataclass(eq=False)
class Session:
    """One runner connected to this node: its slots, its seats and its outbox."""

    runner_id: str
    name: str
    slots: int
    key_hash: str
    seats: set[str] = field(default_factory=set)
    outbox: asyncio.Queue[rpb.RunnerCommand] = field(default_factory=asyncio.Queue)
    last_heard: float = field(default_factory=time.monotonic)
    last_given: float = 0.0
    closed: bool = False
    #: Its version cache's bytes and bound, as its last heartbeat said (0: not said).
    cache_bytes: int = 0
    cache_max_bytes: int = 0

    @property
    def free(self) -> int:
        """Slots without a seat."""
        return self.slots - len(self.seats)


class RunnerHub(rgrpc.RunnersServicer):
    """The runners connected to this node, and the loop that hands them seats."""

    def __init__(self, store: RunnerStore, versions: VersionStore,
                 config: ServerConfig) -> None:
        self.store = store
        self.versions = versions
        self.config = config
        self.sessions: dict[str, Session] = {}
        self._wake = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None

    # -- lifecycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Start handing out seats and sweeping expired holds."""
        self._loop = asyncio.get_running_loop().create_task(self._dispatch(),
                                                            name="runners.dispatch")

    async def close(self) -> None:
        """Stop handing out seats; every runner's stream ends (its seats go back)."""
        if self._loop is not None:
            await stop_loops([self._loop], "runners")
        for session in list(self.sessions.values()):
            session.closed = True
            await self._give_back(session, "node stopping")

    def wake(self) -> None:
        """A seat was put in the line: look for a runner now."""
        self._wake.set()

    # -- seats --------------------------------------------------------------------

    async def unplayable(self, agent_ids: Sequence[str]) -> str:
        """A sentence naming the hosted agents that have no active version, or ''."""
        missing = [a for a in agent_ids if await self.versions.active_id(a) is None]
        if not missing:
            return ""
        return (f"hosted agents {missing} have no active version: upload one with "
                "twistarena submit")

    async def hosted_template(self, agent_id: str, tournament_id: str = "",
                              version_id: str = "") -> rpb.SeatAssignment | None:
        """What a runner plays for ``agent_id``, before its match exists: ``version_id``
        (an arena's: the version it rates), else the agent's active version (the
        one active now, for the whole match). None when there is none. Its match
        keeps it from creation (``new_match(hosted=...)``), so a store that lost the
        seat's entry in the runners' line can have it put back."""
        version = await (self.versions.get(agent_id, version_id) if version_id
                         else self.versions.active(agent_id))
        if version is None:
            return None
        return rpb.SeatAssignment(
            agent_id=agent_id, version_id=version.version_id,
            content_hash=version.content_hash, entry=version.entry,
            tournament_id=tournament_id)

    async def seat_hosted(self, options: mpb.MatchOptions, match_id: str, seat: int,
                          seat_token: str, address: str, agent_id: str, kind: str,
                          tournament_id: str = "", version_id: str = "",
                          template: rpb.SeatAssignment | None = None) -> None:
        """Hand a seat of a new match to the runners: they play ``template`` (from
        ``hosted_template``, looked up here if not given). ``kind`` names where the
        match came from, for the logs and metrics (tournament, practice)."""
        if template is None:
            template = await self.hosted_template(agent_id, tournament_id, version_id)
        if template is None:
            # Checked when the match was asked for; nothing to run now: the seat
            # misses its decisions and the match's join timeout ends it.
            log.error("hosted_seat_without_version", match_id=match_id, seat=seat,
                      agent=agent_id)
            return
        assignment = seat_assignment(template, options, match_id, seat, seat_token, address)
        # Not deleted while the match may last (a runner's report ends it sooner).
        await self.versions.note_playing(agent_id, template.version_id,
                                         seat_key(match_id, seat),
                                         int((time.time() + self._longest_match_s()) * 1000))
        serialized = assignment.SerializeToString()
        # The match's copy first (a match created without one: the matchmaking queue's).
        await self.store.keep_with_match(match_id, seat, serialized)
        await self.store.add_seat(seat_key(match_id, seat), serialized)
        SEATS_HANDED.labels(kind).inc()
        log.info("hosted_seat_waiting", match_id=match_id, seat=seat, agent=agent_id,
                 version=template.version_id[:12], kind=kind)
        self.wake()

    def _longest_match_s(self) -> float:
        """How long a match may wait for its seats and then run (a week if uncapped)."""
        waiting = self.config.waiting_timeout_s or 86_400.0
        running = self.config.max_match_s or 6 * 86_400.0
        return waiting + running

    def _freest(self) -> Session | None:
        open_ = [s for s in self.sessions.values() if s.free > 0 and not s.closed]
        if not open_:
            return None
        return max(open_, key=lambda s: (s.free / s.slots, -s.last_given))

    async def _dispatch(self) -> None:
        next_sweep = 0.0
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_S)
            self._wake.clear()
            try:
                if time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + SWEEP_S
                    moved = await self.store.expire()
                    if moved:
                        log.warning("runner_seats_expired", seats=moved)
                await self._hand_out()
            except StoreError as exc:
                log.warning("runner_dispatch_failed", error=repr(exc))

    async def _hand_out(self) -> None:
        while (session := self._freest()) is not None:
            taken = await self.store.take(session.runner_id, HOLD_MS)
            if taken is None:
                return
            assignment = rpb.SeatAssignment.FromString(taken.assignment)
            assignment.handoffs = taken.handoffs
            await self.store.note_played(taken.key, session.runner_id, assignment.agent_id,
                                         assignment.version_id, taken.handoffs + 1)
            session.seats.add(taken.key)
            session.last_given = time.monotonic()
            if session.closed:
                # Its stream ended while the seat was on its way: back to the line.
                await self._give_back(session, "stream ended")
                continue
            session.outbox.put_nowait(rpb.RunnerCommand(assign=assignment))
            log.info("runner_seat_assigned", runner=session.runner_id,
                     match_id=assignment.match_id, seat=assignment.seat,
                     agent=assignment.agent_id, handoffs=taken.handoffs)

    async def _give_back(self, session: Session, why: str) -> None:
        seats, session.seats = sorted(session.seats), set()
        if not seats:
            return
        with contextlib.suppress(StoreError):
            moved = await self.store.give_back(session.runner_id, seats)
            log.warning("runner_seats_given_back", runner=session.runner_id, why=why,
                        seats=seats, moved=moved)
        self.wake()

    # -- the calls ------------------------------------------------------------------

    async def _check_token(self, context: aio.ServicerContext[Any, Any]) -> None:
        token = auth.bearer(context.invocation_metadata())
        if not token:
            await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                       "runners need a runner token: metadata 'authorization: Bearer "
                       "<token>' (serve --runner-token, or Runners.MintRunnerToken)")
        expected = self.config.runner_token
        if expected and auth.same_secret(token, expected):
            return
        if not await self.store.token_known(auth.token_hash(token)):
            await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                       "the runner token is not valid here")

    async def _session_runner(self, context: aio.ServicerContext[Any, Any]) -> str:
        await self._check_token(context)
        key = ""
        for item in context.invocation_metadata() or ():
            if item[0] == RUNNER_SESSION_KEY:
                key = item[1] if isinstance(item[1], str) else item[1].decode(errors="replace")
        runner_id = await self.store.session_runner(auth.token_hash(key)) if key else None
        if runner_id is None and key:
            runner_id = await self._restore_session(auth.token_hash(key))
        if runner_id is None:
            await fail(context, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED_RUNNER",
                       f"metadata {RUNNER_SESSION_KEY!r} must name a live runner session "
                       "(RunnerWelcome.session_key)")
        return runner_id

    async def _restore_session(self, key_hash: str) -> str | None:
        """The runner of a session the store lost but this node still serves (its
        Connect stream is open here): stored again, so its calls go on."""
        for session in self.sessions.values():
            if session.key_hash == key_hash and not session.closed:
                await self.store.open_session(key_hash, session.runner_id, SILENT_MS * 2)
                log.warning("runner_session_restored", runner=session.runner_id)
                return session.runner_id
        return None

    async def Connect(self, request_iterator: AsyncIterator[rpb.RunnerReport],
                      context: aio.ServicerContext[Any, Any]) -> None:
        """A runner's session: hello, then seats down and heartbeats up until it ends."""
        # The hello is read before a refusal: ending a call whose first message is
        # still on its way can reach the client as INTERNAL instead of the status.
        first = await anext(aiter(request_iterator), None)
        await self._check_token(context)
        if first is None or not first.HasField("hello") or first.hello.slots < 1:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                       "the first message of Connect is RunnerHello with slots >= 1")
        hello = first.hello
        key = secrets.token_urlsafe(24)
        session = Session("rn_" + secrets.token_hex(6), hello.name[:100],
                          min(hello.slots, 1000), auth.token_hash(key))
        await self.store.open_session(session.key_hash, session.runner_id, SILENT_MS * 2)
        self.sessions[session.runner_id] = session
        RUNNERS.set(len(self.sessions))
        log.info("runner_connected", runner=session.runner_id, name=session.name,
                 slots=session.slots, peer=context.peer())
        await context.write(rpb.RunnerCommand(welcome=rpb.RunnerWelcome(
            runner_id=session.runner_id, heartbeat_ms=HEARTBEAT_MS, silent_after_ms=SILENT_MS,
            session_key=key)))
        self.wake()
        reader = asyncio.get_running_loop().create_task(self._read(session, request_iterator))
        why = "stream ended"
        try:
            while not reader.done():
                if time.monotonic() - session.last_heard > SILENT_MS / 1000:
                    why = f"silent for {SILENT_MS} ms"
                    break
                with contextlib.suppress(TimeoutError):
                    command = await asyncio.wait_for(session.outbox.get(), HEARTBEAT_MS / 1000)
                    try:
                        await context.write(command)
                    except Exception as exc:  # the runner went away
                        # A runner killed or cut off ends its stream under a write: an
                        # expected end (its seats go back below), not a failed call.
                        why = f"its stream broke: {type(exc).__name__}"
                        break
        finally:
            session.closed = True
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                failure = await asyncio.gather(reader, return_exceptions=True)
                if failure and isinstance(failure[0], Exception):
                    why = f"its reports failed: {failure[0]!r}"
            self.sessions.pop(session.runner_id, None)
            RUNNERS.set(len(self.sessions))
            self._count_caches()
            log.info("runner_disconnected", runner=session.runner_id, why=why,
                     seats=len(session.seats))
            await self._give_back(session, why)

    async def _read(self, session: Session, reports: AsyncIterator[rpb.RunnerReport]) -> None:
        async for report in reports:
            session.last_heard = time.monotonic()
            kind = report.WhichOneof("report")
            if kind == "heartbeat":
                await self.store.renew_session(session.key_hash, session.runner_id,
                                               SILENT_MS * 2)
                self._note_cache(session, report.heartbeat)
                playing = [seat_key(s.match_id, s.seat) for s in report.heartbeat.playing]
                mine = [k for k in playing if k in session.seats]
                for lost in await self.store.renew(session.runner_id, mine, HOLD_MS):
                    session.seats.discard(lost)
                    match_id, seat = parse_seat_key(lost)
                    session.outbox.put_nowait(rpb.RunnerCommand(
                        revoke=rpb.SeatRef(match_id=match_id, seat=seat)))
            elif kind == "done":
                key = seat_key(report.done.match_id, report.done.seat)
                if key in session.seats:
                    session.seats.discard(key)
                    await self.store.done(session.runner_id, key)
                    log.info("runner_seat_done", runner=session.runner_id,
                             match_id=report.done.match_id, seat=report.done.seat)
                    self.wake()

    def _note_cache(self, session: Session, beat: rpb.RunnerHeartbeat) -> None:
        """Keep what a runner says of its cache: a runner whose disk fills past its
        bound (versions in play are never removed) shows on the node, not only
        on the runner's own metrics."""
        over = beat.cache_max_bytes and beat.cache_bytes > beat.cache_max_bytes
        if over and session.cache_bytes <= session.cache_max_bytes:
            log.warning("runner_cache_over_bound", runner=session.runner_id,
                        cache_bytes=beat.cache_bytes, max_bytes=beat.cache_max_bytes)
        session.cache_bytes, session.cache_max_bytes = beat.cache_bytes, beat.cache_max_bytes
        self._count_caches()

    def _count_caches(self) -> None:
        RUNNERS_CACHE_BYTES.set(sum(s.cache_bytes for s in self.sessions.values()))
        RUNNERS_CACHE_MAX_BYTES.set(sum(s.cache_max_bytes for s in self.sessions.values()))

    async def FetchVersion(self, request: rpb.FetchVersionRequest,
                           context: aio.ServicerContext[Any, Any]) -> None:
        """The archive of a version that a seat of this runner plays, in chunks."""
        runner_id = await self._session_runner(context)
        held = await self.store.assignment(seat_key(request.match_id, request.seat))
        wanted = ""
        if held is not None and held[0] == runner_id:
            wanted = rpb.SeatAssignment.FromString(held[1]).content_hash
        if not wanted or wanted != request.content_hash:
            await fail(context, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED_RUNNER",
                       f"archive {shown(request.content_hash)} is not played by a seat of "
                       "this runner")
        archive = await self.versions.archive(wanted)
        if archive is None:
            await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_VERSION",
                       f"archive {shown(wanted)} is not stored")
        digest = hashlib.sha256(archive).hexdigest()
        for offset in range(0, max(len(archive), 1), CHUNK):
            chunk = rpb.VersionChunk(data=archive[offset:offset + CHUNK])
            if offset == 0:
                chunk.total_bytes = len(archive)
                chunk.sha256 = digest
            await context.write(chunk)

    async def ReportSeat(self, request: rpb.ReportSeatRequest,
                         context: aio.ServicerContext[Any, Any]) -> rpb.ReportSeatResponse:
        """Record what a seat's program did, once per runner that played the seat."""
        runner_id = await self._session_runner(context)
        key = seat_key(request.seat.match_id, request.seat.seat)
        played = await self.store.take_played(key, runner_id)
        if played is None:
            await fail(context, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED_RUNNER",
                       "this runner was not given that seat, or already reported it")
        if played.handed_over:
            # Its seat went to another runner, whose report is the one that counts.
            log.warning("runner_report_handed_over", runner=runner_id,
                        match_id=request.seat.match_id, seat=request.seat.seat,
                        handout=played.handout, latest=played.latest)
            await fail(context, grpc.StatusCode.ABORTED, "TAKEN_OVER",
                       f"seat {request.seat.seat} was handed to another runner since "
                       f"(hand-out {played.latest}, this runner's {played.handout})")
        agent_id, version = played.agent_id, played.version_hash
        await self.versions.done_playing(agent_id, version, key)
        stats = request.stats
        steps = tuple(step_log(d) for d in stats.decision_logs)
        await self.versions.record_match(agent_id, version, MatchReport(
            report_id=key, match_id=request.seat.match_id, decisions=stats.decisions,
            cpu_ms_total=stats.cpu_ms_total, cpu_ms_max=stats.cpu_ms_max,
            crashes=stats.crashes, timeouts=stats.timeouts,
            illegal_outputs=stats.illegal_outputs, restarts=stats.restarts,
            stderr_tail=stats.stderr_tail, seat=request.seat.seat, steps=steps))
        if steps:
            await self.versions.record_seat_log(agent_id, SeatLogRecord(
                request.seat.match_id, request.seat.seat, version, list(steps)))
        log.info("runner_seat_reported", runner=runner_id, match_id=request.seat.match_id,
                 seat=request.seat.seat, decisions=request.stats.decisions,
                 crashes=request.stats.crashes, timeouts=request.stats.timeouts)
        return rpb.ReportSeatResponse()

    async def MintRunnerToken(self, request: rpb.MintRunnerTokenRequest,
                              context: aio.ServicerContext[Any, Any]
                              ) -> rpb.MintRunnerTokenResponse:
        """Admin only, with the admin token: a new runner token (the store keeps its
        hash). A server without an admin token mints none, whoever asks: a runner
        token opens other agents' seats and archives."""
        if not self.config.admin_token:
            await fail(context, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED_ADMIN",
                       "this server has no admin token, so it mints no runner tokens "
                       "(serve --runner-token, or runners started by serve)")
        await require_admin(context, self.config)
        token = auth.new_token(RUNNER_TOKEN_PREFIX)
        await self.store.add_token(auth.token_hash(token), request.name[:100])
        log.info("runner_token_minted", name=request.name[:100])
        return rpb.MintRunnerTokenResponse(runner_token=token)


def seat_assignment(template: rpb.SeatAssignment, options: mpb.MatchOptions, match_id: str,
                    seat: int, seat_token: str, address: str) -> rpb.SeatAssignment:
    """A seat's SeatAssignment: ``template`` (``RunnerHub.hosted_template``) for the
    seat of the match with these (resolved) options. ``address`` may be empty (the
    runner joins through the node it is connected to)."""
    tc = options.time_control
    assignment = rpb.SeatAssignment()
    assignment.CopyFrom(template)
    assignment.MergeFrom(rpb.SeatAssignment(
        match_id=match_id, seat=seat, seat_token=seat_token, server_address=address,
        game_id=options.game_id, num_players=options.num_players,
        decision_ms=tc.decision_ms, reconnect_grace_ms=tc.reconnect_grace_ms))
    return assignment


def step_log(log: rpb.DecisionLog) -> StepLogRecord:
    """A decision's log placed on the replay: the step at which it was asked is
    where its decision id says it was opened (``decisions``)."""
    step = (log.decision_id - 1) // DECISION_ID_STRIDE if log.decision_id else 0
    return StepLogRecord(step, log.text, log.failure, log.why)
