"""A runner's calls written by hand (no ``twistarena runner``): its Connect stream,
its heartbeats, FetchVersion and ReportSeat, for tests of what the server lets a
runner do."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import grpc
import pytest
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import runners_pb2 as rpb
from twistarena.v1 import runners_pb2_grpc as rgrpc
from twistarena.wire import RUNNER_SESSION_KEY

from tests.support.agents import Agent

SESSION_KEY = RUNNER_SESSION_KEY


class RawRunner:
    """A runner's Connect stream, written by hand."""

    def __init__(self, channel: grpc.aio.Channel, token: str) -> None:
        self.stub: Any = rgrpc.RunnersStub(channel)  # type: ignore[no-untyped-call]
        self.token = token
        self.call: Any = None
        self.welcome = rpb.RunnerWelcome()
        #: When it last wrote on its Connect stream (the server's silence counts from there).
        self.last_written = 0.0
        #: The seats it was handed, which its heartbeats say it plays.
        self.playing: list[rpb.SeatRef] = []

    def metadata(self, session: bool = True) -> tuple[tuple[str, str], ...]:
        pairs: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {self.token}"),) if self.token else ())
        return (*pairs, (SESSION_KEY, self.welcome.session_key)) if session else pairs

    async def connect(self) -> RawRunner:
        self.call = self.stub.Connect(metadata=self.metadata(session=False))
        # A write to a call the server already ended fails on its own; the read
        # after it tells why.
        self.last_written = asyncio.get_running_loop().time()
        with contextlib.suppress(grpc.aio.AioRpcError):
            await self.call.write(rpb.RunnerReport(hello=rpb.RunnerHello(slots=1, name="raw")))
        self.welcome = (await self.call.read()).welcome
        return self

    async def keep_alive(self) -> None:
        """Heartbeats naming its seats, as a live runner sends them (until cancelled)."""
        while True:
            self.last_written = asyncio.get_running_loop().time()
            await self.call.write(rpb.RunnerReport(heartbeat=rpb.RunnerHeartbeat(
                playing=self.playing)))
            await asyncio.sleep(self.welcome.heartbeat_ms / 1000 / 2)

    async def next_assignment(self) -> rpb.SeatAssignment:
        while True:
            command = await asyncio.wait_for(self.call.read(), 15)
            if command.WhichOneof("command") == "assign":
                self.playing.append(rpb.SeatRef(match_id=command.assign.match_id,
                                                seat=command.assign.seat))
                return command.assign

    async def fetch(self, assignment: rpb.SeatAssignment) -> bytes:
        call = self.stub.FetchVersion(rpb.FetchVersionRequest(
            match_id=assignment.match_id, seat=assignment.seat,
            content_hash=assignment.content_hash), metadata=self.metadata())
        return b"".join([chunk.data async for chunk in call])

    async def report(self, assignment: rpb.SeatAssignment, decisions: int = 7) -> None:
        await self.stub.ReportSeat(rpb.ReportSeatRequest(
            seat=rpb.SeatRef(match_id=assignment.match_id, seat=assignment.seat),
            stats=rpb.SeatStats(decisions=decisions, timeouts=1, cpu_ms_total=14.0,
                                cpu_ms_max=5.0, stderr_tail=b"it went wrong")),
            metadata=self.metadata())


async def refused(call: Any) -> grpc.StatusCode:
    """The status a call ended with (it must fail)."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return caught.value.code()


async def join_status(channel: grpc.aio.Channel, assignment: rpb.SeatAssignment,
                      handout: int) -> tuple[grpc.StatusCode, str]:
    """(code, reason) a Join of the assigned seat with ``handout`` ended with; it must
    not have been told Joined."""
    play = Agent(channel, assignment.match_id, assignment.seat_token)
    await play.send(ppb.AgentMessage(join=ppb.Join(
        match_id=assignment.match_id, seat_token=assignment.seat_token, no_events=True,
        handout=handout)))
    await play.drain_to_end()
    code, _details, reason = await play.status()
    assert not any(m.WhichOneof("msg") == "joined" for m in play.received)
    return code, reason
