"""The rule-based Twisted bot clearly beats random play (seeded, in-process)."""

from __future__ import annotations

import random
import statistics

import pytest
from twistarena import engine
from twistarena.bots import random_bot
from twistarena.bots.heuristic import heuristic_bot
from twistarena.bots.heuristic.twisted import choose_in_state


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


@pytest.mark.parametrize("players", [2, 4])
def test_choice_read_from_the_state_equals_the_choice_from_the_observation(
        players: int) -> None:
    """Search simulations read the heuristic straight from the state; it must pick what
    the bot picks from the seat's observation (everything public by TW-3.5, its own
    hand, no hidden card), with the same tie-breaking draws, including expert takes
    (TW-4.5) and new rows (TW-3.3)."""
    state = engine.make("twisted", players, 21, {"expert": True})
    bot = heuristic_bot("twisted", 4)
    in_state_rng = random.Random(4)  # the bot's own tie-breaking sequence
    moves = 0
    while not state.is_terminal():
        seat = state.to_act()[0]
        choice = bot(state.observation(seat), state.legal_actions(seat))
        assert choose_in_state(state, seat, in_state_rng) == choice
        state.apply(seat, choice)
        moves += 1
    assert moves > 50
