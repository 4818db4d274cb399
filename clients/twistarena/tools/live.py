"""Live matches held open: memory per live match and a connect storm (``bench service``).

Agents that never answer keep matches live without load, so the node's and the
store's RSS growth per live match can be read; then a storm of agents joins at
once, and the time until every one is seated is reported.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from twistarena.clients.sdk import Agent, MatchClient
from twistarena.clients.sdk.connection import make_channel
from twistarena.engine import Action

from .processes import ServerProcess

Progress = Callable[[str, float, float], None]

#: A decision clock long enough that no fallback fires during a run.
LONG_CLOCK_MS = 600_000


def _noop(phase: str, done: float, total: float) -> None:
    return None


async def _idle_bot(observation: Any, legal_actions: Sequence[Action]) -> int:
    """Never answers (the clock is long): keeps a match live without load."""
    await asyncio.Event().wait()
    return legal_actions[0].id


async def _create_many(client: MatchClient, game: str, players: int, count: int,
                       concurrency: int = 32) -> list[Any]:
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> Any:
        async with gate:
            return await client.create_match(game, players, seed=i, decision_ms=LONG_CLOCK_MS)

    return list(await asyncio.gather(*(one(i) for i in range(count))))


async def _seat_all(agents: list[Agent], timeout: float,
                    tasks: list[asyncio.Future[Any]]) -> float:
    """Start every agent at once; seconds until all are seated (inf on timeout)."""
    t0 = time.perf_counter()
    tasks.extend(asyncio.ensure_future(agent.run()) for agent in agents)
    try:
        await asyncio.wait_for(asyncio.gather(*(a.seated.wait() for a in agents)), timeout)
    except TimeoutError:
        return float("inf")
    return time.perf_counter() - t0


async def _stop(tasks: list[asyncio.Future[Any]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def live_matches(server: ServerProcess, game: str, players: int, count: int,
                       storm: int, progress: Progress = _noop) -> dict[str, Any]:
    """RSS per live match with agents connected, then a connect storm."""
    address = server.address
    client = MatchClient(address)
    out: dict[str, Any] = {"live_matches": count, "players": players, "game": game}
    rss0, valkey0 = server.rss_bytes(), server.helper_rss_bytes()
    progress("creating live matches", 0, 1)
    created = await _create_many(client, game, players, count)
    channels = [make_channel(address) for _ in range(max(1, count // 8))]
    agents: list[Agent] = []
    for i, match in enumerate(created):
        for token in match.seat_tokens:
            agents.append(Agent(_idle_bot, server=address, match_id=match.match.match_id,
                                token=token.token, no_events=True,
                                channel=channels[i % len(channels)]))
    progress("seating live agents", 0, 1)
    tasks: list[asyncio.Future[Any]] = []
    seat_s = await _seat_all(agents, 180, tasks)
    await asyncio.sleep(1.0)
    rss1, valkey1 = server.rss_bytes(), server.helper_rss_bytes()
    out.update({
        "live_agents": len(agents),
        "live_seating_s": round(seat_s, 3),
        "server_rss_before_mb": round(rss0 / 2**20, 1),
        "server_rss_after_mb": round(rss1 / 2**20, 1),
        "server_rss_per_live_match_kb": round((rss1 - rss0) / count / 1024, 1),
        "valkey_rss_per_live_match_kb": round((valkey1 - valkey0) / count / 1024, 1),
        "all_live_seated": all(a.seated.is_set() for a in agents),
    })
    storm_matches: list[Any] = []
    storm_agents: list[Agent] = []
    if storm:
        progress("connect storm: creating matches", 0, 1)
        storm_matches = await _create_many(client, game, players, -(-storm // players))
        for match in storm_matches:
            for token in match.seat_tokens:
                if len(storm_agents) < storm:
                    storm_agents.append(Agent(_idle_bot, server=address,
                                              match_id=match.match.match_id,
                                              token=token.token, no_events=True))
        progress("connect storm", 0, 1)
        storm_s = await _seat_all(storm_agents, 60, tasks)
        out.update({
            "storm_agents": len(storm_agents),
            "storm_seated": sum(1 for a in storm_agents if a.seated.is_set()),
            "storm_seconds": round(storm_s, 3) if storm_s != float("inf") else None,
            "storm_within_30s": storm_s <= 30.0,
        })
    progress("stopping agents", 0, 1)
    await _stop(tasks)
    await asyncio.gather(*(c.close() for c in channels), return_exceptions=True)
    return out
