"""The rule-based Tricky Twist bot must clearly beat random play."""

from __future__ import annotations

from twistarena import engine
from twistarena.bots import make_bot, random_bot
from twistarena.bots.heuristic.tricky_twist import make


def _match(n: int, seed: int, hero: int) -> engine.State:
    state = engine.make("tricky_twist", n, seed)
    bots = [make(seed) if s == hero else random_bot(seed * 10 + s) for s in range(n)]
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply(seat, bots[seat](state.observation(seat), state.legal_actions(seat)))
    return state


def test_heuristic_beats_random_by_a_clear_margin() -> None:
    """Over 40 seeded 4-player games (seat rotated) the bot wins far more than its
    random share of 1/4 and outscores the random players on average."""
    games, wins, hero_total, others_total = 40, 0, 0.0, 0.0
    for seed in range(games):
        hero = seed % 4
        state = _match(4, seed, hero)
        scores = state.scores()
        wins += hero in state.winners()
        hero_total += scores[hero]
        others_total += sum(scores) - scores[hero]
    assert wins >= games // 2  # random share: 10
    assert hero_total / games > 1.3 * others_total / (3 * games)


def test_heuristic_is_registered_and_plays_three_players() -> None:
    bot = make_bot("heuristic", "tricky_twist", 3)
    state = engine.make("tricky_twist", 3, 9)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply(seat, bot(state.observation(seat), state.legal_actions(seat)))
    assert len(state.scores()) == 3
