"""What a runner may do: only with a runner token, and only for the seats it was given.

Raw runners (Connect streams written by hand) on the session's in-process
server: one is handed a hosted seat; the other may neither fetch that seat's
version nor report on it; the holder may, once. When the holder's stream ends
the seat goes to the other runner, and when that one goes silent (no
heartbeat) to a third.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from typing import Any

import grpc
import pytest
from twistarena.clients.sdk import register_agent
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.storage import Holder, Store
from twistarena.v1 import runners_pb2 as rpb
from twistarena.v1 import runners_pb2_grpc as rgrpc
from twistarena.wire import RUNNER_SESSION_KEY

from tests.support.hosting import FIRST_LEGAL, store_version


class RawRunner:
    """A runner's Connect stream, written by hand."""

    def __init__(self, channel: grpc.aio.Channel, token: str) -> None:
        self.stub: Any = rgrpc.RunnersStub(channel)  # type: ignore[no-untyped-call]
        self.token = token
        self.call: Any = None
        self.welcome = rpb.RunnerWelcome()
        #: When it last wrote on its Connect stream (the server's silence counts from there).
        self.last_written = 0.0

    def metadata(self, session: bool = True) -> tuple[tuple[str, str], ...]:
        pairs: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {self.token}"),) if self.token else ())
        return (*pairs, (RUNNER_SESSION_KEY, self.welcome.session_key)) if session else pairs

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
        """Heartbeats, as a live runner sends them (until cancelled)."""
        while True:
            self.last_written = asyncio.get_running_loop().time()
            await self.call.write(rpb.RunnerReport(heartbeat=rpb.RunnerHeartbeat()))
            await asyncio.sleep(self.welcome.heartbeat_ms / 1000 / 2)

    async def next_assignment(self) -> rpb.SeatAssignment:
        while True:
            command = await asyncio.wait_for(self.call.read(), 15)
            if command.WhichOneof("command") == "assign":
                return command.assign

    async def fetch(self, assignment: rpb.SeatAssignment) -> bytes:
        call = self.stub.FetchVersion(rpb.FetchVersionRequest(
            match_id=assignment.match_id, seat=assignment.seat,
            content_hash=assignment.content_hash), metadata=self.metadata())
        return b"".join([chunk.data async for chunk in call])

    async def report(self, assignment: rpb.SeatAssignment) -> None:
        await self.stub.ReportSeat(rpb.ReportSeatRequest(
            seat=rpb.SeatRef(match_id=assignment.match_id, seat=assignment.seat),
            stats=rpb.SeatStats(decisions=7, timeouts=1, cpu_ms_total=14.0, cpu_ms_max=5.0,
                                stderr_tail=b"it went wrong")), metadata=self.metadata())


async def refused(call: Any) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return caught.value.code()


def test_a_runner_sees_only_the_seats_it_was_given(server: Any, valkey: Any) -> None:
    async def go() -> None:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub: Any = rgrpc.RunnersStub(channel)  # type: ignore[no-untyped-call]
            # A server without an admin token mints no runner token, even from here.
            assert await refused(stub.MintRunnerToken(rpb.MintRunnerTokenRequest(
                name="test"))) == grpc.StatusCode.PERMISSION_DENIED
            token = server.config.runner_token

            # No token, a wrong token: nothing.
            assert await refused(RawRunner(channel, "").connect()) == \
                grpc.StatusCode.UNAUTHENTICATED
            assert await refused(RawRunner(channel, "rt_wrong").connect()) == \
                grpc.StatusCode.UNAUTHENTICATED

            first = await RawRunner(channel, token).connect()
            second = await RawRunner(channel, token).connect()
            agent, _ = await register_agent(server.target, "hosted")
            version = await store_version(valkey.url, agent, {"bot.py": FIRST_LEGAL},
                                          "python3 bot.py")
            tournaments = TournamentClient(server.target)
            created = await tournaments.create("tricky_twist", [f"agent:{agent}", "heuristic",
                                                                "random"], players=3, parallel=1)
            waiting = [asyncio.ensure_future(r.next_assignment()) for r in (first, second)]
            done, _pending = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            [task] = done
            holder, outsider = (first, second) if task is waiting[0] else (second, first)
            assignment = task.result()
            assert assignment.agent_id == agent
            assert assignment.content_hash == version.content_hash
            assert assignment.handoffs == 0

            # The other runner may not fetch the version nor report on the seat...
            assert await refused(outsider.fetch(assignment)) == \
                grpc.StatusCode.PERMISSION_DENIED
            assert await refused(outsider.report(assignment)) == \
                grpc.StatusCode.PERMISSION_DENIED
            # ...nor may a runner without its session key.
            assert await refused(stub.FetchVersion(rpb.FetchVersionRequest(
                match_id=assignment.match_id, seat=assignment.seat,
                content_hash=assignment.content_hash),
                metadata=holder.metadata(session=False)).read()) == \
                grpc.StatusCode.PERMISSION_DENIED

            # The holder fetches the very bytes of the version and reports once.
            archive = await holder.fetch(assignment)
            assert hashlib.sha256(archive).hexdigest() == version.content_hash
            await holder.report(assignment)
            assert await refused(holder.report(assignment)) == \
                grpc.StatusCode.PERMISSION_DENIED
            store = Store(valkey.url, Holder("tests", "", 2000))
            await store.connect()
            stats = (await store.versions.stats(agent, [version.version_id]))[
                version.version_id]
            await store.close()
            assert (stats.matches, stats.decisions, stats.timeouts) == (1, 7, 1)

            # The holder's stream ends: the seat goes to the other runner at once.
            holder.call.cancel()
            taken_over = await waiting[[first, second].index(outsider)]
            assert (taken_over.match_id, taken_over.seat) == \
                (assignment.match_id, assignment.seat)
            assert taken_over.handoffs == 1
            assert hashlib.sha256(await outsider.fetch(taken_over)).hexdigest() == \
                version.content_hash
            assert await refused(holder.fetch(assignment)) == \
                grpc.StatusCode.PERMISSION_DENIED

            # A runner that goes silent (no heartbeat) is cut off: its seat moves on,
            # once the runner has said nothing on its stream (since its hello) that long.
            third = await RawRunner(channel, token).connect()
            beating = asyncio.ensure_future(third.keep_alive())
            moved = await third.next_assignment()
            assert (moved.match_id, moved.seat, moved.handoffs) == \
                (assignment.match_id, assignment.seat, 2)
            assert asyncio.get_running_loop().time() - outsider.last_written >= \
                outsider.welcome.silent_after_ms / 1000
            assert await outsider.call.read() is grpc.aio.EOF
            beating.cancel()
            third.call.cancel()
            await tournaments.cancel(created.tournament_id, "enough")

    asyncio.run(go())
