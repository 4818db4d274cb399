"""What a runner may do: only with a runner token, and only for the seats it was given.

Raw runners (Connect streams written by hand) on an in-process server and a store
of this file's own (a runner is handed any hosted seat waiting in its store, and
what the session's store holds depends on the files run before in that process):
one is handed a hosted seat; the other may neither fetch that seat's version nor
report on it; the holder may, once. When the holder's stream ends the seat goes to
the other runner, and when that one goes silent (no heartbeat) to a third.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from twistarena.clients.sdk import register_agent
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.storage import Holder, Store
from twistarena.v1 import runners_pb2 as rpb
from twistarena.v1 import runners_pb2_grpc as rgrpc

from tests.conftest import SESSION_RUNNER_TOKEN
from tests.support.hosting import FIRST_LEGAL, store_version
from tests.support.rawrunner import RawRunner, refused
from tests.support.server import InProcessServer
from tests.support.valkey import ValkeyProcess


@pytest.fixture(scope="module")
def valkey() -> Iterator[ValkeyProcess]:
    proc = ValkeyProcess().start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def server(valkey: ValkeyProcess) -> Iterator[InProcessServer]:
    from twistarena.server.config import ServerConfig

    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url,
                                       runner_token=SESSION_RUNNER_TOKEN)).start()
    try:
        yield srv
    finally:
        srv.stop()


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
            # Both alive (heartbeats naming their seats) however long the steps below
            # take: a silent one would be cut off and its seat handed to the other.
            beats = {r: asyncio.ensure_future(r.keep_alive()) for r in (first, second)}
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
            beats[holder].cancel()
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
            # once the runner has said nothing on its stream that long.
            beats[outsider].cancel()
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
