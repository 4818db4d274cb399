"""The rule-based Twisted bot clearly beats random play (seeded, in-process)."""

from __future__ import annotations

import statistics

import pytest
from twistarena import engine
from twistarena.bots import random_bot
from twistarena.bots.heuristic import heuristic_bot


@pytest.mark.parametrize("players", [2, 3, 4])
def test_heuristic_beats_random(players: int) -> None:
    """Against random seats, the bot wins far more than its fair share and outscores them."""
    games = 30
    wins = 0
    margins = []
    for g in range(games):
        hero = g % players
        bots = [heuristic_bot("twisted", g) if s == hero else random_bot(100 * g + s)
                for s in range(players)]
        state = engine.make("twisted", players, 5000 + g)
        while not state.is_terminal():
            seat = state.to_act()[0]
            state.apply(seat, bots[seat](state.observation(seat), state.legal_actions(seat)))
        scores = state.scores()
        wins += hero in state.winners()
        margins.append(scores[hero] - statistics.mean(s for i, s in enumerate(scores)
                                                      if i != hero))
    assert wins >= 0.75 * games  # fair share is 1/players
    assert statistics.mean(margins) > 10


def test_bot_only_answers_legal_ids() -> None:
    """The bot picks among the legal actions, including after a take (new row)."""
    state = engine.make("twisted", 3, 1, {"expert": True})
    bot = heuristic_bot("twisted", 1)
    while not state.is_terminal():
        seat = state.to_act()[0]
        choice = bot(state.observation(seat), state.legal_actions(seat))
        assert choice in state.legal_action_ids(seat)
        state.apply(seat, choice)
