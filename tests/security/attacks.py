"""The attacks of the hostile-client suite, each bounded in time, as a canary
sees them; also a command that measures a running server under each one:

    python -m tests.security.attacks ATTACKER_TARGET CANARY_TARGET SERVER_PID [SECONDS]

(for a server started with ``--host :: --insecure``: 127.0.0.1:PORT and [::1]:PORT,
so that the two are different client addresses)
prints, per attack, the canary's decisions a second and the server's RSS (MB)
and open file descriptors at the end of the attack.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from grpc import aio
from twistarena.v1 import match_pb2, match_pb2_grpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc

from tests.security.hostile import canary_rate, every_rpc
from tests.support.agents import create, options, tokens

SMALL_WINDOW = (("grpc.http2.bdp_probe", 0),)
Attack = Callable[[str, float], Awaitable[None]]


async def _until(seconds: float, step: Callable[[], Awaitable[Any]]) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with contextlib.suppress(aio.AioRpcError, TimeoutError):
            await asyncio.wait_for(step(), max(0.05, end - time.monotonic()))


async def create_flood(target: str, seconds: float) -> None:
    """Waiting 5-seat matches as fast as the server takes them (issue: 3,646 in 20 s)."""
    async with aio.insecure_channel(target) as ch:
        async def batch() -> None:
            await asyncio.gather(*(create(ch, options("twhist", 5)) for _ in range(8)),
                                 return_exceptions=True)
            await asyncio.sleep(0.02)
        await _until(seconds, batch)


async def unread_watchers(target: str, seconds: float, count: int = 40) -> None:
    """Spectators that never read, on one match of the attacker's that runs on
    its own (its one remote seat is silent and times out every 50 ms)."""
    channels = [aio.insecure_channel(target, options=SMALL_WINDOW) for _ in range(10)]
    calls: list[Any] = []
    try:
        created = await create(channels[0], options("twhist", 3, decision_ms=50,
                                                    house=("", "random", "random")))
        mid = created.match.match_id
        seat = pgrpc.PlayStub(channels[0]).Play()
        await seat.write(ppb.AgentMessage(join=ppb.Join(match_id=mid,
                                                        seat_token=tokens(created)[0])))
        calls.append(seat)
        for i in range(count):
            calls.append(pgrpc.WatchStub(channels[i % len(channels)]).Watch(
                ppb.WatchRequest(match_id=mid)))
        await asyncio.sleep(seconds)
        with contextlib.suppress(aio.AioRpcError):  # it may be over already
            await match_pb2_grpc.MatchesStub(channels[0]).CancelMatch(
                match_pb2.CancelMatchRequest(match_id=mid, reason="attack over"))
    finally:
        for call in calls:
            call.cancel()
        for ch in channels:
            await ch.close()


async def takeover_flood(target: str, seconds: float) -> None:
    """One seat token joining over and over, each stream taking the seat (about
    100 Joins a second, as in the issue: 1,000 streams in 10 s)."""
    async with aio.insecure_channel(target) as ch:
        created = await create(ch, options("twisted", 2))
        mid, token = created.match.match_id, tokens(created)[0]

        async def join() -> None:
            calls = [pgrpc.PlayStub(ch).Play() for _ in range(10)]
            for call in calls:
                await call.write(ppb.AgentMessage(join=ppb.Join(match_id=mid, seat_token=token)))
            for call in calls:
                with contextlib.suppress(aio.AioRpcError):
                    await call.read()
                call.cancel()
            await asyncio.sleep(0.1)
        await _until(seconds, join)


async def idle_connections(target: str, seconds: float, count: int = 200) -> None:
    """TCP connections that never send the HTTP/2 preface."""
    host, port = target.rsplit(":", 1)
    loop = asyncio.get_running_loop()
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.setblocking(False)
            socks.append(sock)
            with contextlib.suppress(OSError):
                await loop.sock_connect(sock, (host, int(port)))
        await asyncio.sleep(seconds)
    finally:
        for sock in socks:
            sock.close()


async def garbage(target: str, seconds: float) -> None:
    """Undecodable requests to every RPC (about 150 a second)."""
    rpcs = every_rpc()
    async with aio.insecure_channel(target) as ch:
        async def round_() -> None:
            calls = [rpc.call(ch, b"\xff\xfe\x01" * 5, timeout=2) for rpc in rpcs]
            for call in calls:
                with contextlib.suppress(aio.AioRpcError, asyncio.CancelledError):
                    if hasattr(call, "__aiter__"):
                        async for _m in call:
                            break
                        call.cancel()
                    else:
                        await call
            await asyncio.sleep(0.1)
        await _until(seconds, round_)


ATTACKS: dict[str, Attack] = {
    "create_flood": create_flood, "unread_watchers": unread_watchers,
    "takeover_flood": takeover_flood, "idle_connections": idle_connections,
    "garbage": garbage,
}


async def under(attacker: str, canary: str, attack: Attack, seconds: float) -> float:
    """The canary's rate while ``attack`` runs (it starts half a second earlier).
    The canary reaches the server from another address than the attacker, as
    another client would (per-address quotas are not shared)."""
    task = asyncio.ensure_future(attack(attacker, seconds + 1.0))
    try:
        await asyncio.sleep(0.5)
        return await canary_rate(canary, seconds)
    finally:
        await task


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def _measure(target: str, canary: str, pid: int, seconds: float) -> None:
    quiet = await canary_rate(canary, seconds)
    print(f"quiet: canary {quiet:.0f} decisions/s, rss {_rss_mb(pid):.0f} MB, "
          f"fds {len(os.listdir(f'/proc/{pid}/fd'))}", flush=True)
    for name, attack in ATTACKS.items():
        task = asyncio.ensure_future(attack(target, seconds + 1.0))
        await asyncio.sleep(0.5)
        rate = await canary_rate(canary, seconds)
        rss, fds = _rss_mb(pid), len(os.listdir(f"/proc/{pid}/fd"))
        await task
        print(f"{name}: canary {rate:.0f} decisions/s ({rate / quiet:.0%} of quiet), "
              f"rss {rss:.0f} MB, fds {fds}", flush=True)


if __name__ == "__main__":
    asyncio.run(_measure(sys.argv[1], sys.argv[2], int(sys.argv[3]),
                         float(sys.argv[4]) if len(sys.argv) > 4 else 5.0))
