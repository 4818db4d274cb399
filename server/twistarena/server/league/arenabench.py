"""Benchmark of the arenas at scale: ``python -m twistarena.server.league.arenabench``.

It starts a server in this process (its own embedded Valkey, loopback port),
stores ``--agents`` registered agents rated in one arena (each in a few rated
matches, through the same ``Ladder`` the scheduler uses), then measures:

- ``GetLeaderboard`` over real gRPC: latency of ``--calls`` calls of 50 rows
  at random pages (each with its first rows' rating history), p50/p99/max;
- the scheduler: ``--enrolled`` of those agents enrolled with a hosted
  version, the arena at ``--rate`` matches a minute, the real scheduler run
  for ``--seconds``: the process's CPU share meanwhile (the scheduler, the
  matches it creates and their seats handed to runners; no runner plays them)
  and the CPU of one planning tick (rungs from the store, tables picked).

Figures are printed as one JSON line. The issue's targets: p99 under 50 ms
with 10,000 agents; the scheduler under 5% of a core at 100 matches a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import statistics
import time
from collections import Counter
from typing import Any

import grpc
from twistarena.server.app import App
from twistarena.server.config import Limits, ServerConfig
from twistarena.server.league.arenaplay import TICK_S
from twistarena.storage.versions import VersionRecord, version_id
from twistarena.v1 import arenas_pb2 as apb
from twistarena.v1 import arenas_pb2_grpc as agrpc
from twistarena.wire import pages

ARENA = "twisted-2"
#: A stored version's archive (never run here: no runner plays these seats).
ARCHIVE = b"arena benchmark version"


async def seed(app: App, agents: int, matches_each: int, rng: random.Random) -> list[str]:
    """Register ``agents`` agents and rate each in about ``matches_each`` matches."""
    assert app.leaguehosting is not None
    ids = [(await app.leaguehosting.agents.register(f"bench-{i}"))[0] for i in range(agents)]
    await app.leaguehosting.arenas.open(apb.CreateArenaRequest(game_id="twisted", num_players=2))
    ladder = app.leaguehosting.ladder
    for n in range(agents * matches_each // 2):
        a, b = rng.sample(ids, 2)
        await ladder.record(ARENA, f"bench-{n}", [f"{a}@1", f"{b}@1"],
                            rng.choice(([1, 2], [2, 1])), True)
    return ids


async def leaderboard_latency(address: str, agents: int, calls: int,
                              rng: random.Random) -> dict[str, float]:
    """Milliseconds per GetLeaderboard of 50 rows at random pages."""
    took: list[float] = []
    async with grpc.aio.insecure_channel(address) as channel:
        stub = agrpc.ArenasStub(channel)  # type: ignore[no-untyped-call]
        for _ in range(calls):
            offset = rng.randrange(0, max(1, agents - 50))
            start = time.perf_counter()
            await stub.GetLeaderboard(apb.GetLeaderboardRequest(
                arena_id=ARENA, page_size=50, page_token=pages.offset_token(offset)))
            took.append((time.perf_counter() - start) * 1000)
    took.sort()
    return {"p50_ms": round(statistics.median(took), 2),
            "p99_ms": round(took[int(len(took) * 0.99) - 1], 2),
            "max_ms": round(took[-1], 2)}


async def enroll_hosted(app: App, ids: list[str]) -> None:
    """Give each agent an active hosted version and enroll it in the arena."""
    assert app.store is not None
    digest = hashlib.sha256(ARCHIVE).hexdigest()
    for agent_id in ids:
        record = VersionRecord(agent_id, version_id(digest, "true", ""), digest, "true", "", "",
                               len(ARCHIVE), len(ARCHIVE), 1, int(time.time() * 1000))
        stored, _new = await app.store.versions.put(record, ARCHIVE)
        await app.store.versions.activate(agent_id, stored.version_id)
        await app.store.arenas.enroll(ARENA, agent_id)


async def scheduler_cost(app: App, rate: int, seconds: float) -> dict[str, float]:
    """CPU of one planning tick, and the process's CPU share while the real
    scheduler runs the arena at ``rate`` matches a minute."""
    assert app.store is not None and app.leaguehosting is not None
    scheduler = app.leaguehosting.scheduler
    arena = await app.store.arenas.get(ARENA)
    assert arena is not None
    arena.matches_per_minute, arena.max_concurrent_per_agent = rate, 2
    arena.status = apb.ARENA_STATUS_RUNNING
    ticks: list[float] = []
    for _ in range(10):
        start = time.process_time()
        await scheduler.planner.plan(arena, Counter(), 2)
        ticks.append(time.process_time() - start)
    await app.store.arenas.put(arena)  # now the running scheduler seats tables
    matches_before = len(await app.store.arenas.live(ARENA))
    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.sleep(seconds)
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    created = len(await app.store.arenas.live(ARENA)) - matches_before
    return {"planning_tick_ms": round(statistics.median(ticks) * 1000, 2),
            "ticks_per_s": round(1 / TICK_S, 1),
            "matches_created": created, "window_s": round(wall, 1),
            "process_cpu_share": round(cpu / wall, 4)}


async def main(args: argparse.Namespace) -> dict[str, Any]:
    """Seed, measure, return the figures."""
    rng = random.Random(args.seed)
    config = ServerConfig(host="127.0.0.1", port=0, limits=Limits(),
                          waiting_timeout_s=args.seconds * 4)
    app = App(config)
    await app.start()
    try:
        started = time.monotonic()
        ids = await seed(app, args.agents, 2, rng)
        seeded = time.monotonic() - started
        # The arena is paused while measuring the reads: no scheduling meanwhile.
        assert app.store is not None
        arena = await app.store.arenas.get(ARENA)
        assert arena is not None
        arena.status = apb.ARENA_STATUS_PAUSED
        await app.store.arenas.put(arena)
        board = await leaderboard_latency(app.address, args.agents, args.calls, rng)
        await enroll_hosted(app, ids[:args.enrolled])
        scheduling = await scheduler_cost(app, args.rate, args.seconds)
        return {"agents": args.agents, "seed_s": round(seeded, 1), "leaderboard": board,
                "enrolled": args.enrolled, "rate_per_min": args.rate,
                "scheduler": scheduling}
    finally:
        await app.stop()


def cli() -> int:
    """The command line: figures as one JSON line."""
    parser = argparse.ArgumentParser(prog="python -m twistarena.server.league.arenabench",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--enrolled", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=100, help="matches per minute")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)
    figures = asyncio.run(main(parser.parse_args()))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(cli())
