"""kill -9 of ``twistarena serve`` during 20 live matches, then a restart.

The store (a real Valkey) outlives the server. Agents reconnect with backoff
and resume; every match finishes, and every answer an agent saw acknowledged
is in the final action log at its position with its action.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from twistarena.bots import make_bot
from twistarena.clients.sdk import Agent, Backoff, MatchClient
from twistarena.tools.processes import CLI, ServerProcess

from tests.clients.helpers import acknowledged_in_log, replay_problems, run
from tests.support.valkey import free_port
from tests.support.waiting import wait_until

MATCHES = 20


def _serve(redis_url: str, port: int) -> ServerProcess:
    return ServerProcess([sys.executable, "-c", CLI, "serve", "--host", "127.0.0.1",
                          "--port", str(port), "--redis-url", redis_url,
                          "--log-format", "json", "--open-local-admin"])


def _slow_random(game_id: str, seed: int) -> Any:
    inner = make_bot("random", game_id, seed)

    async def act(observation: Any, legal_actions: Any) -> int:
        await asyncio.sleep(0.004)
        return inner(observation, legal_actions)

    return act


async def _scenario(redis_url: str) -> dict[str, Any]:
    # The restart reuses the port: one the kernel never hands to an outgoing
    # connection (a reconnecting agent's) while no server listens on it.
    port = free_port()
    first = _serve(redis_url, port)
    address = await asyncio.to_thread(first.start)
    client = MatchClient(address)
    games = [("tricky_twist", 3), ("twisted", 2), ("twhist", 4), ("tricky_twist", 4)]
    created = []
    for i in range(MATCHES):
        game_id, players = games[i % len(games)]
        created.append(await client.create_match(game_id, players, seed=500 + i,
                                                 decision_ms=60_000,
                                                 reconnect_grace_ms=60_000))
    agents: list[Agent] = []
    for i, response in enumerate(created):
        game_id = response.match.options.game_id
        for token in response.seat_tokens:
            agents.append(Agent(_slow_random(game_id, i * 10 + token.seat), server=address,
                                match_id=response.match.match_id, token=token.token,
                                backoff=Backoff(initial=0.05, maximum=1.0, give_up_after=60)))
    tasks = [asyncio.ensure_future(a.run()) for a in agents]
    second: ServerProcess | None = None
    try:
        async def playing() -> bool:  # every match under way, on average
            return sum(len(a.accepted) for a in agents) >= MATCHES

        await wait_until(playing, "the agents play before the kill", timeout=60)
        acknowledged_before = sum(len(a.accepted) for a in agents)
        first.kill()  # SIGKILL: no drain, nothing flushed; returns once it is gone
        second = _serve(redis_url, port)
        await asyncio.to_thread(second.start)
        results = await asyncio.wait_for(asyncio.gather(*tasks), 120)
        replays = {r.match.match_id: await client.get_replay(r.match.match_id)
                   for r in created}
    finally:
        for task in tasks:
            task.cancel()
        first.kill()
        if second is not None:
            await asyncio.to_thread(second.stop)
    return {"agents": agents, "results": results, "replays": replays,
            "acknowledged_before": acknowledged_before}


def test_kill_9_and_restart_loses_no_acknowledged_action(valkey: Any) -> None:
    out = run(_scenario(valkey.url), timeout=170)
    agents: list[Agent] = out["agents"]
    assert out["acknowledged_before"] > 0
    assert all(r.reason == "COMPLETED" for r in out["results"])
    live_at_kill = [a for a in agents if a.reconnects > 0]
    assert len({a.match_id for a in live_at_kill}) >= MATCHES // 2, "matches were not live"
    for match_id, replay in out["replays"].items():
        mine = [a for a in agents if a.match_id == match_id]
        assert acknowledged_in_log(mine, replay) == [], match_id
        assert replay_problems(replay) == [], match_id
