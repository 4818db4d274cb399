"""``twistarena serve --workers 2``: two nodes behind one port, on one embedded Valkey.

Matches created through the shared address are placed on either worker; a
Play stream that reaches the other one is redirected to the owner's own port,
and agents that connect to the shared address play every match to its end.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import grpc
from twistarena.clients.cli import build_parser
from twistarena.clients.cli.workers import (
    RESTARTS,
    STABLE_S,
    Worker,
    passed_flags,
    worker_count,
)
from twistarena.clients.sdk import MatchClient
from twistarena.clients.sdk.localbots import seat_agents
from twistarena.tools.processes import children, is_helper
from twistarena.v1 import match_pb2, play_pb2, play_pb2_grpc
from twistarena.wire import OWNER_KEY, RETRY_AFTER_KEY

from tests.clients.helpers import run
from tests.support.process import ServeProcess
from tests.support.waiting import wait_until


async def _refusal(channel: grpc.aio.Channel, match_id: str, token: str) -> str:
    """The owner a Join on ``channel`` is redirected to ('' when it is seated there).

    While the match is still being placed (workers learning of each other) the
    refusal names no owner but a time to retry after: the Join is retried then."""
    deadline = time.monotonic() + 30
    while True:
        call = play_pb2_grpc.PlayStub(channel).Play()
        try:
            await call.write(play_pb2.AgentMessage(join=play_pb2.Join(
                match_id=match_id, seat_token=token, no_events=True)))
            reply = await asyncio.wait_for(call.read(), 10)
            assert reply is not grpc.aio.EOF and reply.WhichOneof("msg") == "joined"
            return ""
        except grpc.aio.AioRpcError as error:
            trailers = dict(error.trailing_metadata() or ())
            assert error.code() == grpc.StatusCode.UNAVAILABLE, error.details()
            if OWNER_KEY in trailers:
                return str(trailers[OWNER_KEY])
            assert time.monotonic() < deadline, error.details()
            await asyncio.sleep(int(trailers[RETRY_AFTER_KEY]) / 1000)
        finally:
            call.cancel()


async def _one_match_per_worker(target: str) -> dict[str, match_pb2.CreateMatchResponse]:
    """Matches created through the shared address until one is run by each of the two
    workers, keyed by the owner a Join on one connection is sent to ('' for its own)."""
    client = MatchClient(target)
    deadline = time.monotonic() + 60
    seen: dict[str, match_pb2.CreateMatchResponse] = {}
    async with grpc.aio.insecure_channel(target) as channel:
        # One connection lands on one worker; matches are placed on both (once a
        # worker that was just started again has joined the cluster).
        while len(seen) < 2:
            assert time.monotonic() < deadline, f"placed on one worker only: {seen}"
            created = await client.create_match("twisted", 2, decision_ms=60_000)
            owner = await _refusal(channel, created.match.match_id,
                                   created.seat_tokens[0].token)
            seen.setdefault(owner, created)
            await asyncio.sleep(0.1)
    return seen


async def _play_to_the_end(target: str, matches: list[match_pb2.CreateMatchResponse]) -> None:
    """Agents given the shared address play each match to its end."""
    client = MatchClient(target)
    for created in matches:
        agents = seat_agents(target, created, ["random"], seed=1, no_events=True)
        results = await asyncio.wait_for(asyncio.gather(*(a.run() for a in agents)), 60)
        assert all(r is not None for r in results)
        record = await client.get_match(created.match.match_id)
        assert record.status == match_pb2.MATCH_STATUS_FINISHED


def test_two_workers_share_one_address_and_redirect_to_the_owner() -> None:
    # Matches are created until both workers run one: no per-client creation quota.
    server = ServeProcess(["--port", "0", "--workers", "2", "--no-web",
                           "--creates-per-minute", "0"]).start(60)
    try:
        async def scenario() -> None:
            seen = await _one_match_per_worker(server.target)
            redirect = next(owner for owner in seen if owner)
            assert redirect != server.target
            # The named worker runs the match: a Join there is seated.
            match = seen[redirect]
            async with grpc.aio.insecure_channel(redirect) as direct:
                assert await _refusal(direct, match.match.match_id,
                                      match.seat_tokens[1].token) == ""
            await _play_to_the_end(server.target, list(seen.values()))

        run(scenario(), 150)
        assert server.terminate() == 0
    finally:
        server.cleanup()


def test_workers_get_every_flag_given_but_those_the_supervisor_sets() -> None:
    parser = build_parser()
    args = parser.parse_args(["serve", "--workers", "3", "--port", "7000", "--lease-ms", "500",
                              "--insecure", "--host", "0.0.0.0", "--no-web"])
    assert passed_flags(args.serve_parser, args) == ["--host", "0.0.0.0", "--lease-ms", "500",
                                                     "--insecure"]
    assert worker_count("auto") >= 1


def test_a_crashing_worker_is_started_again_later_and_later() -> None:
    worker = Worker(["unused"], threading.Semaphore(0))
    worker.started_at = 100.0
    # Exits soon after each start: the wait doubles (jitter: half to all of it) up to 30 s.
    caps = []
    for _ in range(8):
        now = worker.started_at + 1.0
        delay = worker.plan_restart(now)
        cap = min(RESTARTS.maximum, RESTARTS.initial * 2 ** worker.crashes)
        assert cap / 2 <= delay <= cap and worker.restart_at == now + delay
        caps.append(cap)
        worker.started_at = now + delay
    assert caps == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    # A life longer than STABLE_S starts the count over.
    delay = worker.plan_restart(worker.started_at + STABLE_S + 1)
    assert worker.crashes == 0 and delay <= RESTARTS.initial


def test_a_killed_worker_is_started_again_and_the_address_serves_on() -> None:
    # Matches are created until both workers run one: no per-client creation quota.
    server = ServeProcess(["--port", "0", "--workers", "2", "--no-web",
                           "--creates-per-minute", "0"]).start(60)
    try:
        assert server.proc is not None
        supervisor = server.proc.pid
        nodes = [p for p in children(supervisor) if not is_helper(p)]
        assert len(nodes) == 2
        os.kill(nodes[0], signal.SIGKILL)

        def restarted() -> list[int]:
            now = [p for p in children(supervisor) if not is_helper(p)]
            return now if len(now) == 2 and nodes[0] not in now else []

        async def scenario() -> None:
            await wait_until(restarted, "a new worker in place of the killed one", timeout=30)
            # Both workers run matches again, and play them to the end.
            seen = await _one_match_per_worker(server.target)
            await _play_to_the_end(server.target, list(seen.values()))

        run(scenario(), 150)
        assert "worker 0 exited with code -9; starting it again in" in server.output()
        assert server.terminate() == 0
    finally:
        server.cleanup()
