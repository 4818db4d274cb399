"""The Twhist heuristic bot beats random play; every event narrates to one line."""

from __future__ import annotations

import random

import pytest
from twistarena import engine
from twistarena.bots import make_bot, random_bot

GAMES = 40


@pytest.mark.parametrize("n", [3, 5])
def test_heuristic_beats_random(n: int) -> None:
    """Over seeded games with the heuristic in rotating seats against random bots, it wins
    far more than its fair share and scores clearly more stars than the others."""
    wins = 0.0
    margin = 0.0
    for g in range(GAMES):
        me = g % n
        bots = [make_bot("heuristic", "twhist", g) if s == me else random_bot(g * 10 + s)
                for s in range(n)]
        state = engine.make("twhist", n, 500 + g)
        while not state.is_terminal():
            seat = state.to_act()[0]
            state.apply(seat, bots[seat](state.observation(seat), state.legal_actions(seat)))
        scores = state.scores()
        winners = state.winners()
        wins += 1 / len(winners) if me in winners else 0.0
        margin += scores[me] - sum(scores[s] for s in range(n) if s != me) / (n - 1)
    assert wins / GAMES > 1.8 / n  # fair share is 1/n
    assert margin / GAMES > 2.0  # stars ahead of the average opponent


def test_every_event_narrates() -> None:
    """Narration gives one line per event of a whole game, for players and spectators."""
    info = engine.game("twhist")
    state = engine.make("twhist", 4, 8)
    rng = random.Random(8)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
    for viewer in (None, 0):
        lines = [info.narrate(e) for e in state.event_log(viewer)]
        assert all(isinstance(line, str) and line and "\n" not in line for line in lines)
    text = [info.narrate(e) for e in state.event_log(0)]
    assert "your hand" in (text[0] or "")
    assert any(line and " plays " in line for line in text)
    assert any(line and " flips " in line for line in text)
    assert (text[-1] or "").startswith("Game over")
