"""A search strategy hosted as a network agent searches from what its seat is sent:
it decides exactly as the same bot does in-process with the engine state."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from structlog.testing import capture_logs
from twistarena import engine
from twistarena.bots import make_bot
from twistarena.clients.sdk import MatchClient
from twistarena.clients.sdk.localbots import StrategyBot, seat_agents

from ..clients.helpers import run
from .replayed import decisions_match_the_log


@pytest.mark.parametrize(("game_id", "players", "options"),
                         [("twisted", 2, {"expert": True}), ("tricky_twist", 3, {}),
                          ("twhist", 4, {})])
def test_ismcts_from_observations_decides_as_with_the_state(game_id: str, players: int,
                                                            options: dict) -> None:
    state = engine.make(game_id, players, 11, options)
    hosted = StrategyBot("ismcts-fast", 4, lambda: (game_id, options))
    local = make_bot("ismcts-fast", game_id, 4, options)
    heuristic = make_bot("heuristic", game_id, 5)
    searched = 0
    with capture_logs() as logs:
        for _ in range(60):
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            obs, legal = state.observation(seat), state.legal_actions(seat)
            if seat == 0:
                action = hosted.act(obs, legal)
                assert action == local.act_with_state(state, seat)  # type: ignore[attr-defined]
                searched += len(legal) > 1
            else:
                action = heuristic(obs, legal)
            state.apply(seat, action)
    assert searched >= 5
    assert not [e for e in logs if e["log_level"] == "warning"]


def test_ismcts_plays_a_whole_match_over_grpc_as_it_would_in_process(server: Any) -> None:
    """Over the real server, every action of the ismcts seat is the one the same
    bot picks in-process from the replayed state: full strength over the network."""

    async def play() -> Any:
        client = MatchClient(server.target)
        created = await client.create_match("twisted", 2, seed=77, decision_ms=30_000)
        agents = seat_agents(server.target, created, ["ismcts-fast", "heuristic"], seed=3)
        results = await asyncio.gather(*(a.run() for a in agents))
        return results[0], await client.get_replay(created.match.match_id)

    result, replay = run(play())
    assert result.reason == "COMPLETED"
    bot = make_bot("ismcts-fast", "twisted", 3 * 101 + 0)  # seat_agents' seed for seat 0
    assert decisions_match_the_log(replay, "twisted", 2, 77, 0, bot) >= 10
