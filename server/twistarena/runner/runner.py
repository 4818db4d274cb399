"""``twistarena runner``: plays the seats the server hands it with hosted agents'
programs.

One Connect stream (runners.proto) per runner: it says how many seats it plays
at once, and the server sends seat assignments down it. For each seat the
runner fetches the version's archive (once per content hash: ``VersionCache``),
starts the program in the sandbox as the seat joins (``ProgramBot``) and plays
the seat over Play through the program bridge, like any remote agent: the
server stays the only referee. After the match it reports what the program did
(ReportSeat) and frees the slot. Its channels and retries are
``twistarena.link``'s; it never imports the author's SDK.

Heartbeats go on their own clock, whatever else the stream carries: the node
renews the session and the seats' holds on them, so a runner finishing many
seats a second stays alive. A seat whose program cannot be started (its
archive cannot be fetched or unpacked, anything else) is not left waiting: the
runner joins it and leaves every decision to the match's fallback, so the match
goes on by its forfeit rules, and reports the seat as a crash with the reason
(the version's stats and its owner's failure log say why). Each seat is joined
with its hand-out number (``Join.handout``): a runner that lost a seat to
another can never play it again.

A seat lives as long as the Connect stream it came on: when the stream ends
(the server restarted, the network failed) the runner stops every program it
runs, since the server has given those seats to other runners meanwhile, and
connects again with backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import structlog
from twistarena import wire
from twistarena.bridge import (
    ProgramBot,
    UnstartableProgram,
    bridged_agent,
    play_unstartable,
    run_bridged,
)
from twistarena.link import (
    EVERY_FAILURE,
    FOREVER,
    CallError,
    Failover,
    bearer,
    call_error,
    describe,
    is_retryable,
    make_channel,
    stub,
)
from twistarena.v1 import runners_pb2 as rpb
from twistarena.v1 import runners_pb2_grpc as rgrpc

from .cache import CacheError, VersionCache
from .seatstats import seat_program, seat_stats, unstartable_stats

log = structlog.get_logger("twistarena.runner")

SESSION_KEY = wire.RUNNER_SESSION_KEY
#: Reconnection delays: quick at first, at most 10 s apart, never giving up.
RECONNECT = FOREVER
#: A runner reconnects after anything but a refused token.
RECONNECT_ON = EVERY_FAILURE - {grpc.StatusCode.UNAUTHENTICATED}
#: Longest FetchVersion or ReportSeat call.
CALL_TIMEOUT_S = 60.0
#: Seats a runner plays at once unless told (``--slots``).
DEFAULT_SLOTS = 8


@dataclass(frozen=True, slots=True)
class RunnerOptions:
    """What ``twistarena runner`` is given."""

    servers: Sequence[str]
    runner_token: str
    slots: int = DEFAULT_SLOTS
    cache_dir: Path = Path.home() / ".cache" / "twistarena" / "versions"
    #: "bwrap" (the default: refuse to run programs without bubblewrap) or "none".
    sandbox: str = "bwrap"
    name: str = ""
    root_cert: bytes | None = None
    tls: bool = False


class Runner:
    """One runner process: its Connect session and the seats it plays."""

    def __init__(self, options: RunnerOptions) -> None:
        self.options = options
        self.cache = VersionCache(options.cache_dir)
        self.name = options.name or f"{socket.gethostname()}/{os.getpid()}"
        self.seats: dict[tuple[str, int], asyncio.Task[None]] = {}
        self.runner_id = ""
        self._session_key = ""
        self._done: asyncio.Queue[rpb.SeatRef] = asyncio.Queue()
        self._channel: grpc.aio.Channel | None = None

    # -- the session -----------------------------------------------------------------

    async def run(self) -> None:
        """Connect, play what is handed out, connect again after any failure: forever
        (``twistarena.link``'s policy: the owner a refusal names at once, a server
        spared for its retry hint, else backoff); only a refused token ends it."""
        failover = Failover(self.options.servers, RECONNECT)
        while True:
            address = failover.next_address()
            began = time.monotonic()
            try:
                await self._session(address)
            except grpc.aio.AioRpcError as error:
                log.warning("runner_session_failed", server=address, error=describe(error))
                if not is_retryable(error, RECONNECT_ON):
                    raise call_error(address, error) from None
                failover.refused(error)
            if time.monotonic() - began > 10.0:
                failover.progressed()
            delay = failover.delay()
            log.info("runner_reconnecting", to=failover.redirect or failover.turns.current,
                     in_s=round(delay, 2))
            await asyncio.sleep(delay)

    def _metadata(self, session: bool = False) -> tuple[tuple[str, str], ...]:
        pairs = bearer(self.options.runner_token)
        if session:
            pairs = (*pairs, (SESSION_KEY, self._session_key))
        return pairs

    async def _session(self, address: str) -> None:
        channel = make_channel(address, self.options.root_cert, self.options.tls,
                               [("grpc.max_receive_message_length", 4 << 20)])
        self._channel = channel
        call: Any = stub(rgrpc.RunnersStub, channel).Connect(metadata=self._metadata())
        heartbeat: asyncio.Task[None] | None = None
        try:
            # A write to a call the server already refused fails on its own (INTERNAL);
            # the read after it gives the real status.
            with contextlib.suppress(grpc.aio.AioRpcError):
                await call.write(rpb.RunnerReport(hello=rpb.RunnerHello(
                    slots=self.options.slots, name=self.name)))
            first = await call.read()
            if first is grpc.aio.EOF:
                await self._raise_status(call)
                return
            welcome = first.welcome
            self.runner_id, self._session_key = welcome.runner_id, welcome.session_key
            log.info("runner_connected", server=address, runner=self.runner_id,
                     name=self.name, pid=os.getpid(), slots=self.options.slots,
                     sandbox=self.options.sandbox)
            heartbeat = asyncio.get_running_loop().create_task(
                self._beat(call, welcome.heartbeat_ms / 1000))
            while True:
                command = await call.read()
                if command is grpc.aio.EOF:
                    await self._raise_status(call)
                    log.warning("runner_stream_ended", server=address)
                    return
                kind = command.WhichOneof("command")
                if kind == "assign":
                    self._start_seat(command.assign, address)
                elif kind == "revoke":
                    self._stop_seat((command.revoke.match_id, command.revoke.seat), "revoked")
        finally:
            if heartbeat is not None:
                heartbeat.cancel()
            # The server gives these seats to other runners now: stop their programs.
            for key in list(self.seats):
                self._stop_seat(key, "session ended")
            await asyncio.gather(*self.seats.values(), return_exceptions=True)
            self.seats.clear()
            call.cancel()
            await channel.close()
            self._channel = None

    @staticmethod
    async def _raise_status(call: Any) -> None:
        code = await call.code()
        if code != grpc.StatusCode.OK:
            raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(),
                                       await call.trailing_metadata() or grpc.aio.Metadata(),
                                       await call.details())

    async def _beat(self, call: Any, every_s: float) -> None:
        """A heartbeat with the seats being played (and the cache's bytes and bound,
        so the node sees a runner's disk filling) every ``every_s``, and each seat
        done as soon as it is: heartbeats keep their own clock, however many seats
        end meanwhile (the node renews the session and the holds on heartbeats)."""
        next_beat = time.monotonic()
        while True:
            left = next_beat - time.monotonic()
            if left <= 0:
                playing = [rpb.SeatRef(match_id=m, seat=s) for m, s in self.seats]
                await call.write(rpb.RunnerReport(heartbeat=rpb.RunnerHeartbeat(
                    playing=playing, cache_bytes=self.cache.total_bytes,
                    cache_max_bytes=self.cache.max_bytes)))
                next_beat = time.monotonic() + every_s
                continue
            with contextlib.suppress(TimeoutError):
                done = await asyncio.wait_for(self._done.get(), left)
                await call.write(rpb.RunnerReport(done=done))

    # -- seats --------------------------------------------------------------------

    def _start_seat(self, assignment: rpb.SeatAssignment, address: str) -> None:
        key = (assignment.match_id, assignment.seat)
        if key in self.seats:
            return
        log.info("runner_seat_assigned", runner=self.runner_id, match_id=assignment.match_id,
                 seat=assignment.seat, agent=assignment.agent_id,
                 version=assignment.version_id[:12], handoffs=assignment.handoffs)
        task = asyncio.get_running_loop().create_task(self._seat(assignment, address))
        self.seats[key] = task
        task.add_done_callback(lambda _t: self._seat_over(key, task))

    def _stop_seat(self, key: tuple[str, int], why: str) -> None:
        task = self.seats.get(key)
        if task is not None and not task.done():
            log.info("runner_seat_stopped", match_id=key[0], seat=key[1], why=why)
            task.cancel()

    def _seat_over(self, key: tuple[str, int], task: asyncio.Task[None]) -> None:
        if self.seats.get(key) is task:
            del self.seats[key]
            if not task.cancelled():
                error = task.exception()
                if error is not None:
                    log.error("runner_seat_crashed", match_id=key[0], seat=key[1],
                              error=repr(error))
                self._done.put_nowait(rpb.SeatRef(match_id=key[0], seat=key[1]))

    async def _seat(self, assignment: rpb.SeatAssignment, address: str) -> None:
        """Play one seat to the end, then report what its program did."""
        match_id, seat = assignment.match_id, assignment.seat
        try:
            code_dir = await self.cache.ensure(assignment.content_hash,
                                               lambda: self._fetch(assignment))
            bot: ProgramBot = seat_program(assignment, code_dir, self.options.sandbox)
        except Exception as error:  # whatever it is, the seat must not wait
            await self._fail_seat(assignment, address, _why(error))
            return
        # run_bridged starts the program and joins once it waits for its first
        # message: the match starts when its last seat joins, and its first decision
        # must not find a program still loading.
        agent = bridged_agent(bot, **self._agent_options(assignment, address))
        try:
            result = await run_bridged(agent, bot)
        except CallError as error:
            log.warning("runner_seat_failed", match_id=match_id, seat=seat, error=str(error))
            return
        stats = seat_stats(bot)
        log.info("runner_seat_over", runner=self.runner_id, match_id=match_id, seat=seat,
                 places=list(result.places),
                 decisions=stats.decisions, crashes=stats.crashes, timeouts=stats.timeouts,
                 restarts=stats.restarts)
        await self._report(assignment, stats)

    def _agent_options(self, assignment: rpb.SeatAssignment, address: str) -> dict[str, Any]:
        """How an agent plays the seat: on its match's server first, fenced by the
        seat's hand-out."""
        servers = [assignment.server_address or address,
                   *(s for s in self.options.servers if s != assignment.server_address)]
        return {"server": servers, "match_id": assignment.match_id,
                "token": assignment.seat_token, "no_events": True,
                "root_cert": self.options.root_cert, "tls": self.options.tls,
                "handout": assignment.handoffs + 1,
                "name": f"{assignment.agent_id}/{assignment.match_id}/{assignment.seat}"}

    async def _fail_seat(self, assignment: rpb.SeatAssignment, address: str,
                         why: str) -> None:
        """A seat whose program cannot be started: joined, every decision left to the
        match's fallback (its forfeit rules decide the rest), reported as a crash
        with the reason, so that the match does not wait and the owner learns why."""
        match_id, seat = assignment.match_id, assignment.seat
        log.warning("runner_seat_unstartable", match_id=match_id, seat=seat,
                    agent=assignment.agent_id, version=assignment.version_id[:12], why=why)
        bot = UnstartableProgram(why)
        try:
            await play_unstartable(bot, **self._agent_options(assignment, address))
        except CallError as error:
            log.warning("runner_seat_failed", match_id=match_id, seat=seat, error=str(error))
            return
        await self._report(assignment, unstartable_stats(bot.decisions, why))

    async def _fetch(self, assignment: rpb.SeatAssignment) -> bytes:
        assert self._channel is not None
        started = time.monotonic()
        call: Any = stub(rgrpc.RunnersStub, self._channel).FetchVersion(
            rpb.FetchVersionRequest(match_id=assignment.match_id, seat=assignment.seat,
                                    content_hash=assignment.content_hash),
            metadata=self._metadata(session=True), timeout=CALL_TIMEOUT_S)
        parts = [chunk.data async for chunk in call]
        data = b"".join(parts)
        log.info("runner_version_fetched", version=assignment.version_id[:12],
                 bytes=len(data), ms=round((time.monotonic() - started) * 1000))
        return data

    async def _report(self, assignment: rpb.SeatAssignment, stats: rpb.SeatStats) -> None:
        channel = self._channel
        if channel is None:
            return
        try:
            await stub(rgrpc.RunnersStub, channel).ReportSeat(
                rpb.ReportSeatRequest(seat=rpb.SeatRef(match_id=assignment.match_id,
                                                       seat=assignment.seat), stats=stats),
                metadata=self._metadata(session=True), timeout=CALL_TIMEOUT_S)
        except grpc.aio.AioRpcError as error:
            log.warning("runner_report_failed", match_id=assignment.match_id,
                        seat=assignment.seat, error=describe(error))


def _why(error: BaseException) -> str:
    """A failure to start a seat, in one line for the logs and the owner."""
    if isinstance(error, grpc.aio.AioRpcError):
        return describe(error)
    if isinstance(error, CacheError):
        return str(error)
    return f"{type(error).__name__}: {error}"
